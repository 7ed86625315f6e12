#!/usr/bin/env python3
"""Launch overhead of aotc's wrapper on a GPU, per kernel: how long the host takes to enqueue a
run (argument binding and clEnqueueNDRangeKernel for every kernel), and how long the device sits
between kernels.

Usage: launch_overhead.py [--device gpu] [--batches 1,8] [--runs 50] NAME=MODEL.so:CxHxW ...
  (shapes as in sweep_network_configs.py: 128i is int64 token ids; weights random by name)
Per case and batch it prints:
  pipelined  ms per run, 20 runs enqueued back to back (aotc_container_run_device_async) and one
             clFinish: the device's pace when the host keeps ahead of it
  enqueue    host ms per run spent in those 20 calls, and per kernel in us: if it approaches
             pipelined, the host, not the device, sets the pace
  resident   ms per run of aotc_container_run_device (waits for the device every run)
  span/busy  one profiled run: first kernel start to last kernel end, and the kernels' sum; the
             device's idle time between kernels per kernel in us (median gap)
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import Model  # noqa: E402
from sweep_network_configs import make_input, parse_case, weights  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--json")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    results = []
    for case in a.cases:
        name, so, dims, tokens = parse_case(case)
        m = Model(so, device=a.device)
        m.update_constants(weights(m, 7))
        n_kernels = len(m.kernel_summaries())
        cl = m.opencl()
        for batch in [int(b) for b in a.batches.split(",")]:
            x = make_input(dims, tokens, batch)
            outs = m.run([x])
            din = [(cl.buffer(x.nbytes, x), x)]
            dout = [(cl.buffer(max(o.nbytes, 1)), max(o.nbytes, 1)) for o in outs]
            m.run_device(din, dout)
            resident = []
            for _ in range(a.runs):
                t = time.perf_counter()
                m.run_device(din, dout)
                resident.append((time.perf_counter() - t) * 1e3)
            enq, pipe = [], []
            for _ in range(max(5, a.runs // 10)):
                t0 = time.perf_counter()
                runs = [m.run_device_async(din, dout, cl.queue) for _ in range(20)]
                t1 = time.perf_counter()
                cl.finish()
                t2 = time.perf_counter()
                for r in runs:
                    m.wait(r)
                enq.append((t1 - t0) * 1e3 / 20)
                pipe.append((t2 - t0) * 1e3 / 20)
            for b, _ in din + dout:
                cl.release(b)
            m.set_profiling(True)
            spans, busys, gaps = [], [], []
            for i in range(6):
                m.run([x])
                ks = sorted((r for r in m.last_profile() if r["kind"] == "kernel"),
                            key=lambda r: r["start_ns"])
                if i == 0 or not ks:
                    continue
                spans.append((ks[-1]["end_ns"] - ks[0]["start_ns"]) / 1e6)
                busys.append(sum(r["end_ns"] - r["start_ns"] for r in ks) / 1e6)
                gaps.extend((b["start_ns"] - e["end_ns"]) / 1e3 for e, b in zip(ks, ks[1:]))
            m.set_profiling(False)
            r = {"case": name, "batch": batch, "kernels": n_kernels,
                 "pipelined_ms": statistics.median(pipe), "enqueue_ms": statistics.median(enq),
                 "resident_ms": statistics.median(resident),
                 "span_ms": statistics.median(spans) if spans else None,
                 "busy_ms": statistics.median(busys) if busys else None,
                 "gap_us_median": statistics.median(gaps) if gaps else None}
            r["enqueue_us_per_kernel"] = r["enqueue_ms"] * 1e3 / n_kernels
            results.append(r)
            print(f"{name:22s} b{batch} {n_kernels:4d} kernels: pipelined {r['pipelined_ms']:.3f} ms, "
                  f"enqueue {r['enqueue_ms']:.3f} ms ({r['enqueue_us_per_kernel']:.2f} us/kernel), "
                  f"resident {r['resident_ms']:.3f} ms; profiled span {r['span_ms']:.3f} ms, "
                  f"busy {r['busy_ms']:.3f} ms, gap {r['gap_us_median']:.2f} us/kernel", flush=True)
        del m
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
