#!/usr/bin/env python3
"""Ops whose output size is counted from data (NonZero, Compress, Unique):
aotc (the sync point mid-run, then the kernels sized by the count) against
ONNX Runtime, interleaved round by round in one process on the CPU device
(ONNX Runtime's threads do not spin between runs; the order alternates).
Prints median milliseconds per run, the ratio, and checks every aotc output
against ONNX Runtime's.

Usage: data_dependent_bench.py --aotc AOTC [--rounds 5] [--runs 10]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper as h
from onnx import TensorProto as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from aotc_ctypes import Model  # noqa: E402


def cases(rng):
    """(name, nodes, inputs [(name, type, shape)], outputs [(name, type, rank)], feeds)."""
    x = rng.standard_normal([1000, 1000]).astype(np.float32)
    sparse = np.where(rng.random(x.shape) < 0.01, x, 0).astype(np.float32)
    half = np.where(rng.random(x.shape) < 0.5, x, 0).astype(np.float32)
    cond = rng.random(1000) < 0.5
    labels = rng.integers(0, 80, 2000).astype(np.int64)
    nz = [h.make_node("NonZero", ["x"], ["y"])]
    return [
        ("nonzero_1Mx1pct", nz, [("x", T.FLOAT, [1000, 1000])], [("y", T.INT64, 2)], {"x": sparse}),
        ("nonzero_1Mx50pct", nz, [("x", T.FLOAT, [1000, 1000])], [("y", T.INT64, 2)], {"x": half}),
        ("compress_rows_1000x1000", [h.make_node("Compress", ["x", "c"], ["y"], axis=0)],
         [("x", T.FLOAT, [1000, 1000]), ("c", T.BOOL, [1000])], [("y", T.FLOAT, 2)], {"x": x, "c": cond}),
        ("unique_2000_labels", [h.make_node("Unique", ["x"], ["y", "i", "v", "n"])],
         [("x", T.INT64, [2000])],
         [("y", T.INT64, 1), ("i", T.INT64, 1), ("v", T.INT64, 1), ("n", T.INT64, 1)], {"x": labels}),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--aotc", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    print(f"{'case':26} {'aotc ms':>9} {'ORT ms':>9} {'aotc/ORT':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, nodes, ins, outs, feeds in cases(rng):
            g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in ins],
                             [h.make_tensor_value_info(n, t, [None] * r) for n, t, r in outs])
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
            lib = path[:-5] + ".so"
            r = subprocess.run([args.aotc, "compile", path, "-o", lib], capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(r.stderr)
            m = Model(lib, device="cpu")
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            inputs = [feeds[n] for n, _, _ in ins]
            bufs = [np.empty(1 << 24, np.uint8) for _ in outs]
            got, want = m.run(inputs), sess.run(None, feeds)
            for a, b in zip(got, want):
                if a.shape != b.shape or not np.array_equal(a, b):
                    raise SystemExit(f"{name}: aotc differs from ONNX Runtime")
            times = {"aotc": [], "ort": []}
            for k in range(args.rounds):
                order = ["aotc", "ort"] if k % 2 == 0 else ["ort", "aotc"]
                for who in order:
                    for _ in range(args.runs):
                        t0 = time.perf_counter()
                        if who == "aotc":
                            m.run(inputs, out_buffers=bufs)
                        else:
                            sess.run(None, feeds)
                        times[who].append((time.perf_counter() - t0) * 1e3)
            a, o = statistics.median(times["aotc"]), statistics.median(times["ort"])
            print(f"{name:26} {a:9.3f} {o:9.3f} {a / o:9.2f}", flush=True)


if __name__ == "__main__":
    main()
