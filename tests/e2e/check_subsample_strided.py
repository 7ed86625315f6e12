#!/usr/bin/env python3
"""Strided 1 x 1 convolutions at stride 1 over a copy of the pixels they
read (compiler/lowering/lower_contraction.cpp, subsampledCopy; the default
on CPU profiles, `aotc compile --no-subsample-strided` reads in place)
against ONNX Runtime, beyond the channel-blocked 2-D ResNet downsamplings
of check_channel_blocks.py: a 1-D convolution, a 3-D one with strides
(2, 3, 2), a 2-D one over symbolic height and width, stride 3, a dilation
attribute (meaningless for a 1 x 1 window), strides (2, 1) over an odd map
read by two convolutions (one copy between them) and a third at (2, 2)
(its own copy), and grouped ones (2 groups; depthwise). Each model is
compiled both ways; the default build must have one `_subsampled` kernel
per input and strides, the in-place build none, and both match ONNX
Runtime at batches 0, 1 and 3 (and the symbolic sizes at two values).
Usage: check_subsample_strided.py AOTC    (prints "subsample strided ok")
"""
import os
import re
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
from e2e_graphs import Checks, expect_close, run_aotc  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(76)
tmp = tempfile.mkdtemp()
checks = Checks("subsample strided")


def model(name, xdims, convs):
    """x [n, *xdims] (a str dim is symbolic) -> Relu -> each conv of
    \\p convs: (cout, kernel, strides, attributes), every one an output."""
    cin = xdims[0]
    inits, nodes, outs = [], [h.make_node("Relu", ["x"], ["r"])], []
    for k, (cout, kernel, strides, attrs) in enumerate(convs):
        ci = cin // attrs.get("group", 1)
        w = (rng.standard_normal([cout, ci] + kernel) / np.sqrt(ci)).astype(np.float32)
        inits += [nh.from_array(w, f"w{k}"),
                  nh.from_array(rng.standard_normal(cout).astype(np.float32), f"b{k}")]
        nodes.append(h.make_node("Conv", ["r", f"w{k}", f"b{k}"], [f"y{k}"], strides=strides, **attrs))
        outs.append(h.make_tensor_value_info(f"y{k}", T.FLOAT, None))
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, ["n"] + xdims)], outs, inits)
    m = onnx.shape_inference.infer_shapes(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    return m


CASES = [
    # name, model, the copies expected, the input shapes run (batch first)
    ("conv1d", model("conv1d", [32, 15], [(48, [1], [2], {})]), 1,
     [[0, 32, 15], [1, 32, 15], [3, 32, 15]]),
    ("conv3d", model("conv3d", [16, 5, 7, 9], [(32, [1, 1, 1], [2, 3, 2], {})]), 1,
     [[0, 16, 5, 7, 9], [1, 16, 5, 7, 9], [3, 16, 5, 7, 9]]),
    ("symbolic", model("symbolic", [32, "h", "w"], [(64, [1, 1], [2, 2], {})]), 1,
     [[0, 32, 13, 11], [1, 32, 13, 11], [3, 32, 6, 17]]),
    ("stride3_dilated", model("stride3_dilated", [32, 13, 11],
                              [(64, [1, 1], [3, 3], {}),
                               (32, [1, 1], [3, 3], {"dilations": [2, 2]})]), 1,
     [[0, 32, 13, 11], [1, 32, 13, 11], [3, 32, 13, 11]]),
    ("two_readers", model("two_readers", [32, 13, 7],
                          [(64, [1, 1], [2, 1], {}), (48, [1, 1], [2, 1], {}),
                           (16, [1, 1], [2, 2], {})]), 2,
     [[0, 32, 13, 7], [1, 32, 13, 7], [3, 32, 13, 7]]),
    ("grouped", model("grouped", [32, 12, 9], [(64, [1, 1], [2, 2], {"group": 2}),
                                             (32, [1, 1], [2, 2], {"group": 32})]), 1,
     [[0, 32, 12, 9], [1, 32, 12, 9], [3, 32, 12, 9]]),
]

for name, proto, copies, shapes in CASES:
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(proto, path)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for in_place in (False, True):
        flags = ["--no-subsample-strided"] if in_place else []
        tag = f"{name}{' in place' if in_place else ''}"
        try:
            cl = run_aotc(aotc, [path, "--emit", "cl", "--no-persistent-kernels"] + flags)
            so = os.path.join(tmp, f"{name}_{in_place}.so")
            run_aotc(aotc, [path, "-o", so] + flags)
        except RuntimeError as e:
            checks.fail(f"{tag}: compile: {e}")
            continue
        checks.check()
        got = len(re.findall(r"__kernel void k\d+_\w*_subsampled\(", cl))
        if got != (0 if in_place else copies):
            checks.fail(f"{tag}: {got} subsampled copies, expected {0 if in_place else copies}")
        m = Model(so, device="cpu")
        for shape in shapes:
            x = rng.standard_normal(shape).astype(np.float32)
            expect_close(checks, f"{tag} {shape}", sess.run(None, {"x": x}), m.run([x]), 1e-4, shape[0])

checks.done()
