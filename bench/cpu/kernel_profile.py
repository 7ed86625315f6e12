#!/usr/bin/env python3
"""aotc's per-kernel times for several builds of one model, alternated:
`aotc run --profile` on each .so in turn, ROUNDS times, then per kernel the
median over rounds of its mean time per call. For comparing kernel
configurations (`aotc compile --kernel-configs`) or compiler versions on
this noisy machine, where only alternated rounds are comparable.

  python3 bench/cpu/kernel_profile.py --dim batch=1 a.so b.so
  AOTC=build/compiler/tools/aotc python3 bench/cpu/kernel_profile.py --rounds 5 --top 40 a.so b.so

Kernel names are matched across the builds (a build that lacks one shows -).
Builds whose kernels differ (a pass that adds copies shifts the names) compare
by groups: --group NAME=REGEX (repeatable) sums, per run, the kernels whose
name matches REGEX (the first group that matches takes a kernel; the others
fall into "other"; AOTC_PERSISTENT=0 times each kernel, not each persistent
launch), e.g. BERT's GEMMs by role:

  AOTC_PERSISTENT=0 python3 bench/cpu/kernel_profile.py --dim batch=8 --rounds 3 --repeat 2 --top 0 \
      --group qkv=attn_q_Mat --group copies='_rows?$' --group fc2=fc2_MatMul a.so b.so
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("so", nargs="+", help="model .so files")
    ap.add_argument("--aotc", default=os.environ.get("AOTC", os.path.join(ROOT, "build/compiler/tools/aotc")))
    ap.add_argument("--dim", action="append", default=[], help="NAME=VALUE, passed to aotc run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20, help="runs per aotc run")
    ap.add_argument("--top", type=int, default=25, help="kernels listed (slowest in the first build)")
    ap.add_argument("--group", action="append", default=[], metavar="NAME=REGEX",
                    help="also sum per run the kernels whose name matches REGEX (repeatable)")
    args = ap.parse_args()
    groups = []
    for g in args.group:
        name, sep, pattern = g.partition("=")
        if not sep:
            sys.exit(f"--group {g}: expected NAME=REGEX")
        groups.append((name, re.compile(pattern)))
    # Per build and group: the group's ms per run, one figure per round.
    grouped = {s: collections.defaultdict(list) for s in args.so}
    kernels = {s: collections.defaultdict(list) for s in args.so}
    busy = {s: [] for s in args.so}
    env = dict(os.environ, AOTC_DEVICE=os.environ.get("AOTC_DEVICE", "cpu"))
    row = re.compile(r"^(\S+)\s.*?\s(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for s in args.so:
                cmd = [args.aotc, "run", s, "--repeat", str(args.repeat),
                       "--profile", os.path.join(tmp, "trace.json")]
                for d in args.dim:
                    cmd += ["--dim", d]
                res = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if res.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed:\n{res.stderr}")
                sums = collections.defaultdict(float)
                for line in res.stdout.splitlines():
                    if m := re.search(r"device busy ([\d.]+) ms", line):
                        busy[s].append(float(m.group(1)))
                    elif m := row.match(line):
                        kernels[s][m.group(1)].append(float(m.group(4)))
                        if groups:
                            g = next((n for n, rx in groups if rx.search(m.group(1))), "other")
                            sums[g] += float(m.group(3)) / args.repeat
                for n in [n for n, _ in groups] + ["other"]:
                    grouped[s][n].append(sums[n])
    for s in args.so:
        print(f"{s}: device busy per run, median of rounds {statistics.median(busy[s]):.3f} ms "
              f"({min(busy[s]):.3f}-{max(busy[s]):.3f})")
    if groups:
        print(f"{'group (ms per run, median of rounds)':40s} "
              + " ".join(f"{'#' + str(i):>9s}" for i in range(len(args.so))))
        for n in [n for n, _ in groups] + ["other"]:
            print(f"{n[:40]:40s} "
                  + " ".join(f"{statistics.median(grouped[s][n]):9.3f}" for s in args.so))
    first = kernels[args.so[0]]
    names = sorted(first, key=lambda k: -statistics.median(first[k]))
    print(f"{'kernel (mean ms per call)':40s} " + " ".join(f"{'#' + str(i):>9s}" for i in range(len(args.so))))
    for k in names[: args.top]:
        cells = [f"{statistics.median(kernels[s][k]):9.4f}" if kernels[s].get(k) else f"{'-':>9s}"
                 for s in args.so]
        print(f"{k[:40]:40s} " + " ".join(cells))


if __name__ == "__main__":
    main()
