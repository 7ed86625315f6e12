#!/usr/bin/env python3
"""Kernel time of GEMM .so files built with different kernel configurations (aotc compile
--kernel-configs), on an OpenCL device: the measuring half of a configuration search.

Usage: sweep_configs.py [--device gpu] [--runs N] NAME=MODEL.so:MxK ...
  Each .so is a weightless MatMul A[M,K] x constant B[K,N] (bench/gpu/suite.sh's GEMMs). B and A
  are random (the same for every .so of one shape); the output is checked against numpy in
  float64 (max |err| / max |ref| <= 1e-4), then N profiled runs give the median kernel time.
Prints one line per .so: name, median kernel ms, TFLOP/s, max rel err.
"""
import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import Model  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    refs = {}
    for case in args.cases:
        name, rest = case.split("=", 1)
        so, shape = rest.rsplit(":", 1)
        mm, kk = (int(x) for x in shape.split("x"))
        try:
            m = Model(so, device=args.device, profile=True)
            (bname, _, bshape), = m.constants()
            key = (mm, kk, tuple(bshape))
            if key not in refs:
                rng = np.random.default_rng(mm * 7 + kk)
                a = rng.standard_normal((mm, kk)).astype(np.float32)
                b = rng.standard_normal(bshape).astype(np.float32)
                refs[key] = (a, b, a.astype(np.float64) @ b.astype(np.float64))
            a, b, ref = refs[key]
            m.update_constants({bname: b})
            got = m.run([a], capacity=ref.size * 4)[0]
            err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
            times = []
            for _ in range(args.runs):
                m.run([a], capacity=ref.size * 4)
                times.append(sum(r["end_ns"] - r["start_ns"] for r in m.last_profile()
                                 if r["kind"] == "kernel") / 1e6)
            t = statistics.median(times)
            flops = 2.0 * mm * kk * bshape[1]
            print(f"{name:<40} {t:9.3f} ms {flops / t / 1e9:7.2f} TFLOP/s  err {err:.1e}"
                  + ("  WRONG" if err > 1e-4 else ""), flush=True)
        except Exception as e:  # one variant failing must not hide the others
            print(f"{name:<40} failed: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    main()
