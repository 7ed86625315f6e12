#!/usr/bin/env python3
"""3-D windows and dilated average pooling against ONNX Runtime: Conv over
[n, c, d, h, w] (grouped, depthwise, strided, dilated, padded, 1x1x1), MaxPool
and AveragePool over 3-D windows (ceil_mode, dilations, count_include_pad),
and 2-D average pools with dilations (the divisor counts the dilated taps
inside the input). Odd sizes, batch 1, 2 and 0; tiled, naive and
GPU-profile kernels. The one combination aotc refuses (dilated average
pooling with count_include_pad and ceil_mode, whose divisor ONNX's own
reference and backend test disagree on) must be a clear compile error.
Usage: check_windows_3d.py AOTC
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
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(17)
tmp = tempfile.mkdtemp()
FLAGS = {"tiled": [], "naive": ["--naive-kernels"], "gpu": ["--device-profile", "generic-gpu"]}
failed = runs = 0


def model(name, node, xshape, inits):
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", T.FLOAT, ["b"] + xshape[1:])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return onnx.shape_inference.infer_shapes(h.make_model(g, opset_imports=[h.make_opsetid("", 19)]))


def check(name, proto, xshape):
    global failed, runs
    sess = ort.InferenceSession(proto.SerializeToString())
    for flavour, flags in FLAGS.items():
        path = os.path.join(tmp, f"{name}_{flavour}.onnx")
        onnx.save(proto, path)
        so = path[:-5] + ".so"
        r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            print(f"FAIL {name} {flavour}: compile: {r.stderr.strip()}")
            continue
        m = Model(so, device="cpu")
        for b in (1, 2, 0):
            x = rng.standard_normal([b] + xshape[1:]).astype(np.float32)
            ref = sess.run(None, {"x": x})[0]
            out = m.run([x])[0]
            runs += 1
            if ref.shape != out.shape:
                failed += 1
                print(f"FAIL {name} {flavour} batch {b}: shape {out.shape}, ORT {ref.shape}")
                continue
            err = float(np.abs(ref - out).max() / max(1.0, np.abs(ref).max())) if ref.size else 0.0
            if not np.isfinite(out).all() or err > 1e-4:
                failed += 1
                print(f"FAIL {name} {flavour} batch {b}: relative error {err:.3g}")


CONVS = [  # ci, co, kernel, strides, pads, dilations, group, spatial
    (3, 8, (3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1, (5, 7, 6)),
    (4, 6, (2, 3, 3), (2, 1, 2), (0, 1, 1, 1, 0, 2), (1, 2, 1), 2, (7, 9, 5)),
    (8, 8, (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1), 8, (9, 9, 9)),
    (16, 32, (1, 1, 1), (1, 1, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1, (4, 5, 6)),
]
for i, (ci, co, k, st, pd, dl, g, sp) in enumerate(CONVS):
    w = nh.from_array(rng.standard_normal((co, ci // g) + k).astype(np.float32), "w")
    b = nh.from_array(rng.standard_normal(co).astype(np.float32), "bias")
    node = h.make_node("Conv", ["x", "w", "bias"], ["y"], kernel_shape=list(k), strides=list(st),
                       pads=list(pd), dilations=list(dl), group=g)
    check(f"conv3d_{i}", model(f"conv3d_{i}", node, [1, ci] + list(sp), [w, b]), [1, ci] + list(sp))

POOLS = [  # op, kernel, strides, pads, attributes, input
    ("MaxPool", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), {}, [1, 3, 7, 8, 9]),
    ("MaxPool", (2, 2, 2), (1, 2, 1), (0, 0, 0, 0, 0, 0), {"ceil_mode": 1}, [1, 3, 7, 8, 9]),
    ("MaxPool", (3, 2, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), {"dilations": [2, 1, 1]}, [1, 2, 7, 8, 9]),
    ("AveragePool", (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), {"count_include_pad": 1}, [1, 3, 7, 8, 9]),
    ("AveragePool", (2, 3, 2), (1, 1, 2), (1, 0, 1, 0, 1, 0), {}, [1, 3, 7, 8, 9]),
    ("AveragePool", (3, 2, 2), (2, 2, 1), (1, 1, 0, 1, 1, 0), {"dilations": [2, 2, 1], "ceil_mode": 1},
     [1, 2, 9, 8, 7]),
    ("AveragePool", (3, 3, 2), (1, 2, 2), (2, 1, 1, 1, 0, 1),
     {"dilations": [2, 1, 3], "count_include_pad": 1}, [1, 2, 9, 8, 10]),
    ("AveragePool", (3, 3), (2, 1), (2, 1, 1, 2), {"dilations": [2, 3]}, [1, 3, 11, 13]),
    ("AveragePool", (2, 3), (1, 2), (0, 2, 1, 0), {"dilations": [3, 2], "ceil_mode": 1}, [1, 3, 10, 9]),
]
for i, (op, k, st, pd, attrs, shape) in enumerate(POOLS):
    node = h.make_node(op, ["x"], ["y"], kernel_shape=list(k), strides=list(st), pads=list(pd), **attrs)
    check(f"pool_{i}", model(f"pool_{i}", node, shape, []), shape)

# Refused with the reason, not guessed.
node = h.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                   dilations=[2, 2], count_include_pad=1, ceil_mode=1)
path = os.path.join(tmp, "refused.onnx")
onnx.save(model("refused", node, [1, 2, 9, 9], []), path)
r = subprocess.run([aotc, "compile", path, "-o", path[:-5] + ".so"], capture_output=True, text=True)
if r.returncode == 0 or "count_include_pad and ceil_mode together is not supported" not in r.stderr:
    failed += 1
    print(f"FAIL refused: exit {r.returncode}, {r.stderr.strip()}")

if failed:
    print(f"{failed} failed, {runs} runs")
    sys.exit(1)
print(f"windows 3d ok ({runs} runs)")
