#!/usr/bin/env python3
"""Runs the differential-fuzzing slice on an OpenCL GPU.

The cases (ONNX backend-test layout, ONNX Runtime's outputs) and their model
.so files are made on the development machine by scripts/gpu_fuzz_slice.sh,
which also records how each case did there (PoCL). Here every .so runs
through the C ABI (aotc_ctypes.py, device `gpu`) and is compared exactly as
`aotc test` compares: integers and bools exactly, floats within
|got - want| <= atol + rtol * |want| (NaN matches NaN).

Usage: fuzz_slice_gpu.py CASES_DIR OUT_DIR [--rtol R] [--atol A] [--jobs N]
  CASES_DIR holds seedN/ (model.onnx, test_data_set_0/), seedN.so and,
  where the cases also ran on PoCL, pocl_results.json ({name: class});
  tolerance.json ({"rtol": R, "atol": A}) overrides the tolerances.
  Writes OUT_DIR/fuzz_gpu_report.json and prints a summary; exits 1 if any
  case is WRONG, ERROR or CRASH on the GPU, or its class differs from PoCL's.
"""
import argparse
import glob
import json
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import Model  # noqa: E402


def compare(got, want, rtol, atol):
    if got.dtype != want.dtype or got.shape != want.shape:
        return "got %s%s, expected %s%s" % (got.dtype, list(got.shape), want.dtype,
                                             list(want.shape))
    if got.dtype.kind not in "f":
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        if bad.size:
            i = int(bad[0])
            return "element %d: got %s, expected %s" % (i, got.reshape(-1)[i], want.reshape(-1)[i])
        return None
    g = got.reshape(-1).astype(np.float64)
    w = want.reshape(-1).astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore"):
        err = np.abs(g - w)
        err[np.isnan(err) | (np.isinf(w) & (g != w))] = np.inf
        ok = both_nan | (err <= atol + rtol * np.abs(w))
    bad = np.flatnonzero(~ok)
    if bad.size:
        i = int(bad[0])
        return "element %d: got %r, expected %r" % (i, g[i], w[i])
    return None


def run_cases(names, cases, out, rtol, atol, log, deadline=None):
    """Runs each case, appending `name<TAB>class<TAB>detail` lines to log;
    stops before a case that would start after `deadline` (epoch seconds)."""
    with open(log, "a") as f:
        for name in names:
            if deadline and time.time() > deadline:
                return
            so = os.path.join(cases, name + ".so")
            d = os.path.join(cases, name, "test_data_set_0")
            refused = os.path.join(cases, name + ".refused")
            if not os.path.exists(so):
                cls, why = "refused", "no .so (refused at compile time)"
                if os.path.exists(refused):  # exit status, then the message
                    rc, _, msg = open(refused).read().partition("\n")
                    cls = "refused" if rc.strip() == "1" and msg.strip() else "CRASH"
                    why = "compile exit %s: %s" % (rc.strip(), msg.strip()[:300])
            else:
                ins = [numpy_helper.to_array(onnx.load_tensor(p))
                       for p in sorted(glob.glob(d + "/input_*.pb"))]
                want = [numpy_helper.to_array(onnx.load_tensor(p))
                        for p in sorted(glob.glob(d + "/output_*.pb"))]
                try:
                    model = Model(so, device="gpu", cache_dir=os.path.join(out, "cache"))
                    got = model.run(ins)
                    why = None
                    for k, (g, w) in enumerate(zip(got, want)):
                        m = compare(g, w, rtol, atol)
                        if m:
                            why = "output %d: %s" % (k, m)
                            break
                    cls = "WRONG" if why else "pass"
                    if cls == "pass":
                        why = model.device_name
                    del model
                except Exception as e:  # noqa: BLE001 - any run failure is recorded
                    cls, why = "ERROR", str(e)[:300].replace("\n", " ")
            f.write("%s\t%s\t%s\n" % (name, cls, (why or "").replace("\t", " ")))
            f.flush()


def read_log(log):
    done = {}
    if os.path.exists(log):
        for line in open(log):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                done[parts[0]] = (parts[1], parts[2])
    return done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("out")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=0,
                    help="epoch seconds after which no case starts; the rest "
                         "are reported as not run")
    ap.add_argument("--worker", help=argparse.SUPPRESS)  # names file
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.worker:
        names = open(args.worker).read().split()
        run_cases(names, args.cases, args.out, args.rtol, args.atol, args.worker + ".log",
                  args.deadline or None)
        return 0
    tol = os.path.join(args.cases, "tolerance.json")
    if os.path.exists(tol):  # the pack's own (semantics cases: exact)
        t = json.load(open(tol))
        args.rtol, args.atol = t["rtol"], t["atol"]
    pocl_path = os.path.join(args.cases, "pocl_results.json")
    pocl = json.load(open(pocl_path)) if os.path.exists(pocl_path) else {}
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(args.cases, "seed*"))
                   if os.path.isdir(p))
    start = time.time()
    # Workers in separate processes: a crash costs one case, which is
    # recorded as CRASH, and the worker restarts after it.
    import subprocess
    chunks = [names[i::args.jobs] for i in range(args.jobs)]
    results = {}
    not_run = []
    pending = []
    for i, chunk in enumerate(chunks):
        lst = os.path.join(args.out, "worker%d" % i)
        pending.append((lst, chunk))
    while pending:
        procs = []
        for lst, chunk in pending:
            with open(lst, "w") as f:
                f.write("\n".join(chunk))
            procs.append((lst, chunk, subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), args.cases, args.out,
                 "--rtol", str(args.rtol), "--atol", str(args.atol),
                 "--deadline", str(args.deadline), "--worker", lst])))
        pending = []
        for lst, chunk, p in procs:
            p.wait()
            done = read_log(lst + ".log")
            results.update({n: done[n] for n in chunk if n in done})
            rest = [n for n in chunk if n not in done]
            if rest and p.returncode == 0:  # stopped at the deadline
                not_run.extend(rest)
            elif rest:
                results[rest[0]] = ("CRASH", "the process died (exit %d)" % p.returncode)
                if rest[1:]:
                    pending.append((lst + "r", rest[1:]))
    device = next((r[1] for r in results.values() if r[0] == "pass"), None)
    counts = {}
    for cls, _ in results.values():
        counts[cls] = counts.get(cls, 0) + 1
    differ = {n: (pocl[n], results[n][0]) for n in results
              if n in pocl and pocl[n] != results[n][0]}
    report = {"device": device, "seconds": time.time() - start, "graphs": len(results),
              "counts": counts, "not_run": sorted(not_run),
              "pocl_counts": {c: list(pocl.values()).count(c) for c in set(pocl.values())},
              "differ_from_pocl": differ,
              "failures": {n: r for n, r in results.items() if r[0] in ("WRONG", "ERROR", "CRASH")}}
    with open(os.path.join(args.out, "fuzz_gpu_report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    print("device:", device)
    print("%d graphs in %.0f s on the GPU: %s; PoCL: %s; not run (deadline): %d" % (
        len(results), report["seconds"], counts, report["pocl_counts"] or "not run",
        len(not_run)))
    for n, r in sorted(report["failures"].items())[:20]:
        print(r[0], n, r[1])
    for n, r in sorted(results.items()):
        if r[0] == "refused":
            print("refused", n, r[1])
    print("differ from PoCL:", len(differ), sorted(differ.items())[:10])
    return 1 if report["failures"] or differ else 0


if __name__ == "__main__":
    sys.exit(main())
