#!/usr/bin/env python3
"""aotc and ONNX Runtime timed through the suite's own workers (worker.py,
each system in its own process) in three patterns, alternated: aotc's runs
back to back, ONNX Runtime's back to back, and the two interleaved as
run.py times them. Separates what a system costs alone from what the
interleaving adds (cold caches, PoCL's workers asleep after the other
system's run); medians per pattern and round.

  .venv-bench/bin/python bench/cpu/alone_vs_interleaved.py MODEL.so MODEL.onnx 1,3,224,224
  .venv-bench/bin/python bench/cpu/alone_vs_interleaved.py --rounds 3 --runs 50 m.so m.onnx 128,768

The input is one float32 tensor of the given shape (random, seed 0).
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R  # noqa: E402  (the suite's Worker)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("so")
    ap.add_argument("onnx")
    ap.add_argument("shape", help="the input's shape, e.g. 1,3,224,224")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=30, help="runs per pattern and round")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    args.worker_timeout = 600
    shape = [int(v) for v in args.shape.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "in.npz")
        np.savez(inputs, np.random.default_rng(0).random(shape, dtype=np.float32))
        env = dict(os.environ, AOTC_DEVICE=os.environ.get("AOTC_DEVICE", "cpu"))
        aotc = R.Worker("aotc", args.so, inputs, os.path.join(tmp, "a.npz"), args, env=env)
        ort = R.Worker("ort", args.onnx, inputs, os.path.join(tmp, "o.npz"), args)
        ms = lambda t: f"{statistics.median(t) * 1e3:8.3f}" if t else "       -"
        print("round  pattern       aotc ms   ORT ms")
        for r in range(args.rounds):
            for pattern in ("aotc alone", "ORT alone", "interleaved"):
                ta, to = [], []
                for _ in range(args.runs):
                    if pattern != "ORT alone":
                        ta.append(aotc.run())
                    if pattern != "aotc alone":
                        to.append(ort.run())
                print(f"{r:5d}  {pattern:12s} {ms(ta)} {ms(to)}")
        aotc.quit()
        ort.quit()


if __name__ == "__main__":
    main()
