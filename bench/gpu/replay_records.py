#!/usr/bin/env python3
"""Replays the model runs an e2e check recorded on the CPU device
(AOTC_RECORD_DIR, tests/e2e/compiled_model.py) on another OpenCL device,
normally the lent GPU: the same .so files, the same inputs, outputs compared
with what PoCL gave (which the check itself compared against its oracle).

Integer and boolean outputs, and float outputs of records marked exact
(casts), must be bit-identical (NaN matches NaN). Other float outputs must
lie within a tolerance of the largest recorded value that depends on their
type: the devices' float32 arithmetic differs in the last bits (fma
contraction, exp/erf, summation order of other kernels) and a 16-bit store
can round the other way.

Usage: replay_records.py RECORD_DIR [--device gpu] [--json OUT.json]
Prints one line per run and "replay ok" when all match."""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import BF16, Model  # noqa: E402

# of max|recorded output|: two float16 / bfloat16 ulps, float32 and float64 sums
TOLERANCE = {np.dtype(np.float16): 2.0 ** -9, BF16: 2.0 ** -6,
             np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def as_float64(a):
    if a.dtype == BF16:
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return a.astype(np.float64)


def compare(got, want, exact):
    """None if got matches want, else a message."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{got.shape}, recorded {want.dtype}{want.shape}"
    if got.size == 0:
        return None
    tol = TOLERANCE.get(want.dtype)
    if tol is None or exact:  # integers, booleans, exact records: the same bits
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[want.itemsize]
        same = got.view(bits) == want.view(bits)
        if tol is not None:  # any NaN matches any NaN
            same |= np.isnan(as_float64(got)) & np.isnan(as_float64(want))
        bad = np.flatnonzero(~same.reshape(-1))
        return None if len(bad) == 0 else f"{len(bad)} elements differ, first at {bad[0]}"
    g, w = as_float64(got), as_float64(want)
    finite, inf = np.isfinite(w), np.isinf(w)
    if not np.array_equal(np.isnan(g), np.isnan(w)) or not np.array_equal(g[inf], w[inf]):
        return "NaN or infinity where the recorded output has none (or the reverse)"
    scale = max(np.max(np.abs(w[finite])) if finite.any() else 0.0, 1e-30)
    err = np.max(np.abs(g[finite] - w[finite])) / scale if finite.any() else 0.0
    return None if err <= tol else f"max error {err:.2e} of the largest value (tolerance {tol:.1e})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("records")
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--json")
    args = ap.parse_args()
    runs = [json.loads(line) for line in open(os.path.join(args.records, "records.jsonl"))]
    results, failed, device = [], 0, "?"
    loaded, m = None, None  # one container at a time: each holds an OpenCL context
    for r in runs:
        so = os.path.join(args.records, r["so"])
        msg = None
        try:
            if so != loaded:
                m, loaded = None, None
                m, loaded = Model(so, device=args.device), so
                device = m.device_name
            data = np.load(os.path.join(args.records, r["data"]))
            got = m.run([data[f"in{i}"] for i in range(r["inputs"])])
            msgs = [compare(np.asarray(g), data[f"out{i}"], r["exact"]) for i, g in enumerate(got)]
            msg = "; ".join(f"output {i}: {x}" for i, x in enumerate(msgs) if x) or None
            if len(got) != r["outputs"]:
                msg = f"{len(got)} outputs, recorded {r['outputs']}"
        except Exception as e:  # a load or run error is a failed replay, reported
            msg = f"{type(e).__name__}: {e}"
        failed += msg is not None
        results.append({"run": r["data"], "ok": msg is None, "detail": msg})
        print(f"{'ok  ' if msg is None else 'FAIL'} {r['data']}{'' if msg is None else ': ' + msg}")
    print(f"device: {device}; {len(runs) - failed} of {len(runs)} runs match")
    if args.json:
        json.dump({"device": device, "runs": results}, open(args.json, "w"), indent=1)
    print("replay ok" if failed == 0 else f"replay: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
