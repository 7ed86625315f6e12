#!/usr/bin/env python3
"""Interior columns (compiler/schedule/column_interior.h) against ONNX Runtime.

A kernel that reads through a padding's selects along its columns (a padded
copy: Pad, a MaxPool's -inf copy, a convolution's zero copy) tiles only the
columns that read the input, without the bounds tests, and computes the
padding's columns one by one. Widths with and without a remainder tile and
below one tile, pads of 0 to 3 on either side, batch 1 and 3, 8- and
16-lane profiles; reflect and edge pads (whose selects are not bounds of
the input) and a crop (negative pads). Every output element is compared
(exactly where no arithmetic is involved), and the constant Pad's kernel
must have the border columns (so the path under test is taken).

Usage: check_column_interior.py AOTC    (prints "column interior: N runs, 0 failed")
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(11)


def model(name, nodes, x_shape, inits=()):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, x_shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, [None] * 4)], list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


CASES = []
for w in (5, 16, 37, 50, 64):
    for pb, pe in ((1, 2), (3, 0), (0, 3), (2, 2), (1, 1)):
        pads = [0, 0, 1, pb, 0, 0, 0, pe]  # rows padded above, columns both sides
        CASES.append((f"pad_w{w}_{pb}_{pe}", model(f"pad_w{w}_{pb}_{pe}", [
            h.make_node("Pad", ["x", "pads", "cv"], ["p"], mode="constant"),
            h.make_node("Relu", ["p"], ["y"])], ["batch", 3, 13, w],
            [h.make_tensor("pads", T.INT64, [8], pads), h.make_tensor("cv", T.FLOAT, [], [0.5])]), w, 0))
for w in (40, 57):
    for s in (1, 2):
        CASES.append((f"maxpool_w{w}_s{s}", model(f"maxpool_w{w}_s{s}", [
            h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[s, s])],
            ["batch", 4, 9, w]), w, 0))
wdw = rng.standard_normal((6, 1, 3, 3)).astype(np.float32)
wfull = rng.standard_normal((5, 6, 3, 3)).astype(np.float32)
for w in (45, 33):
    CASES.append((f"conv_dw_w{w}", model(f"conv_dw_w{w}", [
        h.make_node("Conv", ["x", "wdw"], ["y"], group=6, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                    strides=[2, 2])], ["batch", 6, 11, w], [onnx.numpy_helper.from_array(wdw, "wdw")]), w, 1e-5))
    CASES.append((f"conv_w{w}", model(f"conv_w{w}", [
        h.make_node("Conv", ["x", "wf"], ["y"], kernel_shape=[3, 3], pads=[2, 1, 0, 2])],
        ["batch", 6, 11, w], [onnx.numpy_helper.from_array(wfull, "wf")]), w, 1e-5))
for mode in ("reflect", "edge"):
    CASES.append((f"pad_{mode}", model(f"pad_{mode}", [
        h.make_node("Pad", ["x", "pads"], ["y"], mode=mode)], ["batch", 2, 7, 40],
        [h.make_tensor("pads", T.INT64, [8], [0, 0, 2, 3, 0, 0, 1, 2])]), 40, 0))
CASES.append(("pad_crop", model("pad_crop", [
    h.make_node("Pad", ["x", "pads"], ["y"])], ["batch", 2, 7, 40],
    [h.make_tensor("pads", T.INT64, [8], [0, 0, 1, -3, 0, 0, 0, 2])]), 40, 0))

failed = runs = 0
with tempfile.TemporaryDirectory() as tmp:
    for name, proto, w, tol in CASES:
        path = os.path.join(tmp, name + ".onnx")
        onnx.save(proto, path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for lanes in ("8", "16"):
            so = os.path.join(tmp, f"{name}_{lanes}.so")
            r = subprocess.run([aotc, "compile", path, "-o", so, "--vector-lanes", lanes, "--verify-each"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {name} lanes {lanes}: compile: {r.stderr.strip()}")
                failed += 1
                continue
            if name.startswith("pad_w") and w >= 16:
                loop = subprocess.run([aotc, "compile", path, "--emit=loop", "--vector-lanes", lanes],
                                      capture_output=True, text=True).stdout
                if "for b in" not in loop:
                    print(f"FAIL {name} lanes {lanes}: no border columns in the kernel")
                    failed += 1
            m = Model(so, device="cpu")
            for batch in (1, 3):
                runs += 1
                x = rng.standard_normal(proto.graph.input[0].type.tensor_type.shape.dim and
                                        [batch] + [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim[1:]]
                                        ).astype(np.float32)
                want = sess.run(None, {"x": x})[0]
                got = m.run([x])[0]
                ok = want.shape == got.shape and (np.array_equal(want, got) if tol == 0 else
                                                  np.allclose(want, got, rtol=tol, atol=tol))
                print(f"{'ok  ' if ok else 'FAIL'} {name} lanes {lanes} batch {batch}: {got.shape}")
                failed += not ok
print(f"column interior: {runs} runs, {failed} failed")
sys.exit(1 if failed else 0)
