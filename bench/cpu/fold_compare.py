#!/usr/bin/env python3
"""Models with BatchNormalization left in (an exporter that does not fold it:
torch.onnx.export with TrainingMode.PRESERVE, `export_models.py --keep-names`)
timed as aotc compiles them now (folded into the convolutions by the folding
program), as another aotc build compiles them (--old-aotc: before the fold),
as aotc compiles the exporter-folded export of the same network (--folded
DIR: the ceiling), and in ONNX Runtime, interleaved round by round in one
process on the CPU device (ONNX Runtime's threads do not spin between runs;
the order rotates every round). Prints median milliseconds per run and the ratios,
and checks every aotc output against ONNX Runtime's.

Usage: fold_compare.py --aotc AOTC [--old-aotc OLD] [--folded DIR] --batch 1
           --rounds 5 --runs 10 MODEL.onnx...
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from compare import max_rel_err  # noqa: E402


def compile_so(aotc, onnx_path, out, flags=()):
    r = subprocess.run([aotc, "compile", onnx_path, "-o", out, *flags], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{aotc} compile {onnx_path}: {r.stderr.strip()}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--aotc", required=True)
    ap.add_argument("--old-aotc")
    ap.add_argument("--folded", help="folder with the exporter-folded MODEL.onnx files")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--aotc-flags", default="",
                    help="extra aotc compile flags for every build, e.g. '--vector-lanes host' (bench/cpu.sh's)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    # ORT's pool spins after a run and would slow whatever runs next in this
    # process (the order also rotates every round).
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    flags = a.aotc_flags.split()
    print(f"batch {a.batch}, {a.rounds} rounds x {a.runs} runs, ONNX Runtime {ort.__version__} "
          f"({a.threads} threads); aotc flags '{a.aotc_flags}'; median ms per run")
    for path in a.models:
        name = os.path.splitext(os.path.basename(path))[0]
        systems = {}
        systems["aotc"] = Model(compile_so(a.aotc, path, f"{tmp}/{name}_new.so", flags), device="cpu")
        if a.old_aotc:
            systems["aotc-before"] = Model(compile_so(a.old_aotc, path, f"{tmp}/{name}_old.so", flags),
                                           device="cpu")
        if a.folded:
            systems["aotc-exporter-folded"] = Model(
                compile_so(a.aotc, os.path.join(a.folded, name + ".onnx"), f"{tmp}/{name}_ref.so", flags),
                device="cpu")
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        inp = sess.get_inputs()[0]
        shape = [a.batch] + [d for d in inp.shape[1:]]
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        ref = sess.run(None, {inp.name: x})
        # Output buffers allocated once and reused, as a C host (and
        # bench/cpu/worker.py) does: a fresh 64 MiB buffer per run cost
        # about 0.3 ms a call, charged to aotc alone (conv_mv2_dw14: 0.59
        # against 0.29 ms per call).
        bufs = [np.zeros(max(2 * r.nbytes, 1 << 16), dtype=np.uint8) for r in ref]
        runners = {k: (lambda m=m: m.run([x], out_buffers=bufs)) for k, m in systems.items()}
        runners["ort"] = lambda: sess.run(None, {inp.name: x})
        for k, m in systems.items():
            if k == "aotc-exporter-folded":
                continue  # other weights
            err, why = max_rel_err(m.run([x]), ref, "onnxruntime")
            if err is None or err > 1e-4:
                raise SystemExit(f"{name} {k}: outputs differ from ONNX Runtime ({why or err})")
        times = {k: [] for k in runners}
        for f in runners.values():
            f()  # warm
        order = list(runners)
        for r in range(a.rounds):
            for k in order[r % len(order):] + order[:r % len(order)]:
                f = runners[k]
                for _ in range(a.runs):
                    t = time.perf_counter()
                    f()
                    times[k].append(1e3 * (time.perf_counter() - t))
        med = {k: statistics.median(v) for k, v in times.items()}
        line = ", ".join(f"{k} {v:.2f}" for k, v in med.items())
        ratios = ", ".join(f"{k}/ort {med[k] / med['ort']:.2f}x" for k in med if k != "ort")
        extra = f", before/now {med['aotc-before'] / med['aotc']:.2f}x" if "aotc-before" in med else ""
        print(f"{name}: {line} | {ratios}{extra}")


if __name__ == "__main__":
    main()
