#!/usr/bin/env python3
"""Per-kernel device times of one network compiled with different kernel configurations
(aotc compile --kernel-configs): the measuring half of a configuration search over whole
networks, where every kernel of a variant is timed in its real place.

Usage: sweep_network_configs.py [--device gpu] [--runs N] [--batches 1,8] [--json FILE]
                                NET.VARIANT=MODEL.so:CxHxW ...
  (a shape ending in 'i', such as 128i, is int64 token ids below 1000: BERT's input)
  Variants of one NET (the text before the first dot) get the same random weights (every
  updatable constant; running variances positive) and the same random inputs [batch, C, H, W];
  each variant's output is compared with the first variant's (max |diff| / max |first|, flagged
  above 1e-4), so a configuration that computes something else cannot look fast. Then N
  profiled runs give each kernel's median device time.
Prints per network and batch: the total kernel time of each variant, and per kernel the time
of each variant (the fastest marked with *).
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aotc_ctypes import Model  # noqa: E402


def weights(model, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for name, dtype, shape in model.constants():
        if np.dtype(dtype) == np.bool_:
            # A mask (GPT-2's causal one): lower triangular where square, so that
            # no row is all masked.
            a = np.ones(shape, bool)
            if len(shape) >= 2 and shape[-1] == shape[-2]:
                a = np.tril(a)
        else:
            a = rng.standard_normal(shape).astype(dtype) * 0.1
        if "running_var" in name:
            a = np.abs(a) + 0.5
        out[name] = a
    return out


def parse_case(case):
    """NAME=MODEL.so:CxHxW (a shape ending in 'i': int64 token ids) as (name, so, dims, tokens)."""
    name, rest = case.split("=", 1)
    so, shape = rest.rsplit(":", 1)
    return name, so, tuple(int(d) for d in shape.rstrip("i").split("x")), shape.endswith("i")


def make_input(dims, tokens, batch):
    """A batch of inputs of shape [batch, *dims], seeded by the batch: token ids below 1000, or
    standard normal floats."""
    rng = np.random.default_rng(batch)
    shape = (batch,) + tuple(dims)
    return rng.integers(0, 1000, size=shape).astype(np.int64) if tokens \
        else rng.standard_normal(shape).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--json")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    nets = {}
    for case in a.cases:
        name, so, dims, tokens = parse_case(case)
        nets.setdefault(name.split(".", 1)[0], []).append((name, so, dims, tokens))
    results = {}
    for net, variants in nets.items():
        w = None
        for batch in batches:
            x = make_input(variants[0][2], variants[0][3], batch)
            first = None
            table = {}
            for name, so, _, _ in variants:
                try:
                    m = Model(so, device=a.device, profile=True)
                    if w is None:
                        w = weights(m, 7)
                    m.update_constants(w)
                    out = m.run([x])[0]
                    if first is None:
                        first = out
                    err = float(np.max(np.abs(out - first)) / np.max(np.abs(first)))
                    names = m.kernel_summaries()
                    per = [[] for _ in names]
                    for _ in range(a.runs):
                        m.run([x])
                        for r in m.last_profile():
                            if r["kind"] == "kernel":
                                per[r["index"]].append((r["end_ns"] - r["start_ns"]) / 1e6)
                    med = {names[k][0]: statistics.median(t) for k, t in enumerate(per) if t}
                    table[name] = {"err": err, "total_ms": sum(med.values()), "kernels": med,
                                   "summaries": {n: s for n, s in names}}
                    flag = "" if err <= 1e-4 else "  <-- DIFFERS"
                    print(f"{net} b{batch} {name}: kernels {sum(med.values()):.3f} ms, "
                          f"diff {err:.1e}{flag}", flush=True)
                    del m
                except Exception as e:  # noqa: BLE001  (report and go on with the next variant)
                    print(f"{net} b{batch} {name}: FAILED {e}", flush=True)
            results[f"{net}/b{batch}"] = table
            kernels = sorted({k for v in table.values() for k in v["kernels"]},
                             key=lambda k: int(k[1:].split("_", 1)[0]))
            names = list(table)
            print(f"\n{net} batch {batch}: per-kernel ms ({', '.join(names)})")
            for k in kernels:
                ts = [table[n]["kernels"].get(k) for n in names]
                best = min(t for t in ts if t is not None)
                if best < 0.005:
                    continue
                cells = " ".join(f"{t:7.3f}{'*' if t == best else ' '}" if t is not None
                                 else "      - " for t in ts)
                print(f"  {k[:36]:36s} {cells}")
            print()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
