#!/usr/bin/env python3
"""Per-kernel device times of model .so files on an OpenCL device, from the
runtime's profiler (aotc_container_last_profile), through aotc_ctypes.

Usage: profile_gpu.py [--device gpu] [--runs N] MODEL.so:d0xd1x...[,shape2] ...
  Each model gets random float32 inputs of the given shapes, one warm-up run
  and N profiled runs. Prints, per kernel: what it computes, mean device
  time, share of the device time, GFLOP/s and GB/s from the compiler's
  estimates; and per run: host time, device-busy time, wrapper enqueue time.
  --json FILE writes the same figures.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import Model  # noqa: E402


def profile(path, shapes, device, runs):
    m = Model(path, device=device, profile=True)
    names = m.kernel_summaries()
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    m.run(ins)
    rows, host, busy, enq = {}, [], [], []
    for _ in range(runs):
        m.run(ins)
        recs = m.last_profile()
        dev = 0
        for r in recs:
            t = r["end_ns"] - r["start_ns"]
            if r["kind"] == "run":
                host.append(t)
            elif r["kind"] == "enqueue":
                enq.append(t)
            else:
                key = (names[r["index"]][0] if r["kind"] == "kernel"
                       else "%s #%d" % (r["kind"], r["index"]))
                row = rows.setdefault(key, {"what": names[r["index"]][1] if r["kind"] == "kernel" else "",
                                            "ns": 0, "calls": 0, "flops": 0.0, "bytes": 0.0})
                row["ns"] += t
                row["calls"] += 1
                row["flops"] += r["flops"]
                row["bytes"] += r["bytes"]
                dev += t
        busy.append(dev)
    total = sum(r["ns"] for r in rows.values()) or 1
    print("== %s on %s: %d runs; median host %.3f ms, device busy %.3f ms, enqueue %.3f ms"
          % (os.path.basename(path), m.device_name, runs, np.median(host) / 1e6,
             np.median(busy) / 1e6, np.median(enq) / 1e6))
    for k, r in sorted(rows.items(), key=lambda kv: -kv[1]["ns"]):
        print("  %-40s %-50s %9.4f ms %5.1f%% %9.1f GFLOP/s %8.1f GB/s" % (
            k[:40], r["what"][:50], r["ns"] / r["calls"] / 1e6, 100.0 * r["ns"] / total,
            r["flops"] / r["ns"] if r["ns"] else 0, r["bytes"] / r["ns"] if r["ns"] else 0))
    return {"model": os.path.basename(path), "device": m.device_name, "runs": runs,
            "host_ms_median": np.median(host) / 1e6, "device_busy_ms_median": np.median(busy) / 1e6,
            "enqueue_ms_median": np.median(enq) / 1e6, "kernels": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json")
    a = ap.parse_args()
    out = []
    for spec in a.models:
        path, _, shapes = spec.partition(":")
        shp = [tuple(int(d) for d in s.split("x")) for s in shapes.split(",") if s]
        out.append(profile(path, shp, a.device, a.runs))
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1, default=float)


if __name__ == "__main__":
    main()
