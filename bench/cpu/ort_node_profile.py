#!/usr/bin/env python3
"""ONNX Runtime's per-node times for one model, to set beside aotc's per-kernel
profile (`aotc run --profile`, or kernel_profile.py). ONNX Runtime's own
profiler (enable_profiling), 2 intra-op threads as in the suite, random
inputs with every symbolic dimension set to --batch; prints the median run,
the sum of the node medians and the slowest nodes.

  .venv-bench/bin/python bench/cpu/ort_node_profile.py bench/models/mobilenet_v2.onnx --batch 1

Figures taken while anything else runs on this 2-core machine (a test
suite, a CI rehearsal) are worthless: stop 48's first profiles read 2x.
"""
import argparse
import collections
import json
import os
import tempfile
import time

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=1, help="value of every symbolic dimension")
    ap.add_argument("--runs", type=int, default=50, help="timed runs (after 5 warm-up runs)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top", type=int, default=30, help="nodes listed")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        feeds = {}
        for i in sess.get_inputs():
            shape = [d if isinstance(d, int) else args.batch for d in i.shape]
            if "float" in i.type:
                feeds[i.name] = rng.random(shape, dtype=np.float32)
            else:
                feeds[i.name] = rng.integers(0, 100, shape).astype(np.int64)
        for _ in range(5):
            sess.run(None, feeds)
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            sess.run(None, feeds)
            times.append(time.perf_counter() - t)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    per = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per[(e["name"][: -len("_kernel_time")], e["args"].get("op_name"))].append(e["dur"])
    rows = sorted(((float(np.median(v[-args.runs:])), k) for k, v in per.items()), reverse=True)
    print(f"run median {np.median(times) * 1e3:.3f} ms (profiler on); "
          f"sum of node medians {sum(r[0] for r in rows) / 1e3:.3f} ms")
    for med, (name, op) in rows[: args.top]:
        print(f"{med / 1e3:9.4f} ms  {op or '?':20s} {name}")


if __name__ == "__main__":
    main()
