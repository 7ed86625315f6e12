#!/usr/bin/env python3
"""Pointwise kernels tiled in rows and columns (register_tile.cpp: a row of
the innermost index, and rows of the index before it where the row is a
whole channel block, pointwiseRows) against ONNX Runtime.

Models:
  - a Winograd 3 x 3 convolution (`--winograd`, 128 channels over 14 x 14
    and 15 x 15, 7 x 7 and 8 x 8 tiles: the input transform [16 N, C / B,
    T, T, B] is a pointwise kernel whose row is a channel block), and a
    residual block of two;
  - a Transpose scaled, shifted and clamped over [n, 5, 13, 7] (dimensions
    that do not collapse into one), with a symbolic batch;
  - a Transpose scaled and shifted, [n, 8, 40] to [n, 40, 8]: each stored
    row of 8 reads the input 40 apart, the rows before it read it
    contiguously (a transposing copy, tile_choice.cpp's columnOfVectors).
Under zen5-avx512, generic-avx512 and generic-avx2:
  - the heuristic tiles the Winograd input transforms in rows (m = 3, tm
    dividing the tile count), the transposing copy in rows of 10 of the 40
    (m = 1), and leaves every other pointwise kernel (the output
    transforms, which divide their column index, the clamped Transpose's,
    which selects on its column) one row;
  - every pointwise kernel with the heuristic's configuration compiles to it
    and matches ONNX Runtime at batch 1, 3 and 0;
  - the output rank of each is read from the refusal of a tile dimension it
    does not have (m = 40), which must be refused.
Under zen5-avx512, the pointwise kernels of the 15 x 15 convolution and of
the Transposes also run variants given by --kernel-configs (rows of 3 or 5
along each other dimension, which leave partial tiles; rows of 1 and 7
columns; m and n exchanged), each checked to compile to exactly that
configuration (--emit=kernel-configs) and against ONNX Runtime.
Usage: check_pointwise_tiles.py AOTC    (prints "pointwise tiles ok")
"""
import json
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, Net, net_feeds  # noqa: E402
from e2e_graphs import compare_ort  # noqa: E402
from e2e_graphs import run_aotc as compile_aotc  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(57)
tmp = tempfile.mkdtemp()
checks = Checks("pointwise tiles")
fail = checks.fail
PROFILES = ["zen5-avx512", "generic-avx512", "generic-avx2"]


def winograd_conv(hw):
    n = Net(f"wino{hw}", 128, (hw, hw), rng)
    n.output(n.conv("x", 128, 128, k=3))
    return n.model()


def winograd_block():
    n = Net("wino_block", 128, (14, 14), rng)
    a = n.op("Relu", [n.conv("x", 128, 128, k=3)])
    n.output(n.op("Relu", [n.op("Add", [n.conv(a, 128, 128, k=3), "x"])]))
    return n.model()


def transpose_affine():
    """Relu(Transpose(x, [0, 2, 3, 1]) * s + b), clamped below 2."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 5, 13, 7])
    s = nh.from_array(rng.standard_normal(5).astype(np.float32), "s")
    b = nh.from_array(rng.standard_normal(5).astype(np.float32), "b")
    two = nh.from_array(np.array(2.0, np.float32), "two")
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
             h.make_node("Mul", ["t", "s"], ["m"]),
             h.make_node("Add", ["m", "b"], ["a"]),
             h.make_node("Relu", ["a"], ["r"]),
             h.make_node("Min", ["r", "two"], ["y"])]
    g = h.make_graph(nodes, "transpose_affine", [x],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 13, 7, 5])], [s, b, two])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)])


def transpose_rows():
    """Transpose(x, [0, 2, 1]) * s + b over [n, 8, 40]: each output row of 8
    reads x 40 apart, but 40 consecutive rows read x's rows contiguously (a
    transposing copy, tile_choice.cpp's columnOfVectors)."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 8, 40])
    s = nh.from_array(rng.standard_normal(8).astype(np.float32), "s")
    b = nh.from_array(rng.standard_normal(8).astype(np.float32), "b")
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
             h.make_node("Mul", ["t", "s"], ["m"]),
             h.make_node("Add", ["m", "b"], ["y"])]
    g = h.make_graph(nodes, "transpose_rows", [x],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 40, 8])], [s, b])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)])


def configs(path, flags):
    return json.loads(compile_aotc(aotc, [path, "--emit=kernel-configs"] + flags))["kernels"]


def rank_of(path, flags, kernel):
    """The output rank of a pointwise kernel, from the refusal of a tile
    dimension far beyond it."""
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        json.dump({"kernels": {kernel: {"template": "pointwise", "m": 40, "n": 0, "tm": 2,
                                        "tn": 1, "lanes": 0}}}, f)
    try:
        compile_aotc(aotc, [path, "--emit=kernel-configs", "--kernel-configs", bad] + flags)
    except RuntimeError as e:
        msg = str(e)
        if "output dimensions" in msg:
            return int(msg.split(" has ")[1].split()[0])
        fail(f"{kernel}: refusal without the rank: {msg}")
        return None
    fail(f"{kernel}: m = 40 was not refused")
    return None


def variants(c, rank):
    """Configurations beside the heuristic's c for a kernel of rank dims."""
    out = []
    n = c["n"]
    for m in range(rank):
        if m != n:
            out.append(dict(c, m=m, tm=3 if m % 2 else 5))
    for tn in (1, 7):
        out.append(dict(c, m=-1, tm=1, tn=tn))
    # Rows along the innermost dimension, a column of the one before it.
    if rank >= 2 and n == rank - 1:
        out.append(dict(c, m=rank - 1, n=rank - 2, tm=3, tn=5))
    return out


def run_variant(tag, path, proto, flags, kernel, v, feeds):
    kc = os.path.join(tmp, "kc.json")
    with open(kc, "w") as f:
        json.dump({"kernels": {kernel: v}}, f)
    so = os.path.join(tmp, f"{tag}.so")
    try:
        got = configs(path, flags + ["--kernel-configs", kc])[kernel]
        compile_aotc(aotc, [path, "-o", so, "--kernel-configs", kc] + flags)
    except RuntimeError as e:
        fail(f"{tag}: {v}: {e}")
        return
    checks.check()
    want = {k: v[k] for k in ("m", "n", "tm", "tn")}
    if {k: got.get(k) for k in want} != want:
        fail(f"{tag}: compiled {got}, given {v}")
    compare_ort(checks, f"{tag} {v}", Model(so, device="cpu"), proto, feeds)


def main():
    models = [("wino14", winograd_conv(14), ["--winograd"]),
              ("wino15", winograd_conv(15), ["--winograd"]),
              ("block", winograd_block(), ["--winograd"]),
              ("transpose", transpose_affine(), []),
              ("transpose_rows", transpose_rows(), [])]
    count = 0
    for name, proto, extra in models:
        path = os.path.join(tmp, f"{name}.onnx")
        with open(path, "wb") as f:
            f.write(proto.SerializeToString())
        feeds = net_feeds(proto, rng)
        for profile in PROFILES:
            flags = extra + ["--device-profile", profile]
            heuristic = {k: c for k, c in configs(path, flags).items()
                         if c["template"] == "pointwise"}
            # What the heuristic must pick: rows for the input transforms
            # (one a Winograd convolution), one row for every other
            # pointwise kernel.
            rows = {k: c for k, c in heuristic.items() if c.get("m", -1) >= 0}
            checks.check()
            if name.startswith("wino") or name == "block":
                want = 2 if name == "block" else 1
                if len(rows) != want:
                    fail(f"{name} {profile}: {len(rows)} pointwise kernels in rows, expected "
                         f"{want} (the input transforms): {heuristic}")
                tiles = 8 if name == "wino15" else 7
                for k, c in rows.items():
                    checks.check()
                    if tiles % c["tm"] != 0 or c["m"] != 3:
                        fail(f"{name} {profile}: {k} rows {c}, expected m 3 and tm dividing {tiles}")
            elif name == "transpose_rows":
                # Rows of the index before the stored row: 10 of 40 (the
                # largest divisor up to 16).
                if [(c["m"], c["tm"]) for c in rows.values()] != [(1, 10)] or len(heuristic) != 1:
                    fail(f"{name} {profile}: expected one kernel in rows m 1, tm 10: {heuristic}")
            elif rows:
                fail(f"{name} {profile}: rows where none apply: {rows}")
            for kernel, c in heuristic.items():
                rank = rank_of(path, flags, kernel)
                if rank is None:
                    continue
                vs = [c] + variants(c, rank)
                # The variants of two models under one profile; the
                # heuristic's alone otherwise (the variants' code differs
                # in lanes only across profiles).
                if profile != PROFILES[0] or name not in ("wino15", "transpose", "transpose_rows"):
                    vs = [c]
                for v in vs:
                    count += 1
                    run_variant(f"{name}-{profile}-{count}", path, proto, flags, kernel, v, feeds)
    checks.done()


if __name__ == "__main__":
    main()
