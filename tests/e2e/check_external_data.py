#!/usr/bin/env python3
"""A model as today's exporters write it, checked against ONNX Runtime.

Opset 18-19 semantics (ReduceMean's and Pad's axes as inputs, Cast's saturate
attribute) and the weights in `model.onnx.data` beside `model.onnx`: small
tensors packed back to back at unaligned offsets, the large ones
page-aligned, as exporters write them. The model is compiled and run by
`aotc test` at batch 1 and 3 against ONNX Runtime's outputs, then the data
file is moved away and truncated to check the errors. Usage:

    check_external_data.py AOTC
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

aotc = sys.argv[1]
rng = np.random.default_rng(20261125)
OPSET = 19


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


w_conv = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
b_conv = rng.standard_normal(8).astype(np.float32)
w_fc = (rng.standard_normal((8 * 10 * 10, 160)) * 0.05).astype(np.float32)  # 512 KB
w_big = (rng.standard_normal((160, 1700)) * 0.05).astype(np.float32)        # 1.09 MB
nodes = [
    helper.make_node("Conv", ["x", "w_conv", "b_conv"], ["c"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"]),
    # Opset 18: Pad's axes input (pads only the spatial axes).
    helper.make_node("Pad", ["r", "pads", "", "pad_axes"], ["p"]),
    # Opset 18: ReduceMean's axes input.
    helper.make_node("ReduceMean", ["p", "mean_axes"], ["m"], keepdims=1),
    helper.make_node("Sub", ["p", "m"], ["s"]),
    helper.make_node("Flatten", ["s"], ["f"]),
    helper.make_node("MatMul", ["f", "w_fc"], ["h"]),
    helper.make_node("Cast", ["h"], ["hc"], to=TensorProto.FLOAT, saturate=1),
    helper.make_node("MatMul", ["hc", "w_big"], ["y"]),
]
graph = helper.make_graph(
    nodes, "external_data",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1700])],
    [const("w_conv", w_conv), const("b_conv", b_conv), const("w_fc", w_fc),
     const("w_big", w_big), const("pads", np.array([1, 1, 1, 1], np.int64)),
     const("pad_axes", np.array([2, 3], np.int64)),
     const("mean_axes", np.array([2, 3], np.int64))])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
model.ir_version = 8

with tempfile.TemporaryDirectory() as tmp:
    case = os.path.join(tmp, "case")
    os.makedirs(case)
    path = os.path.join(case, "model.onnx")
    # The weights written by hand, as exporters lay them out: two small
    # tensors back to back (the second at an odd offset), the large ones
    # page-aligned, the last without a length (it runs to the end of the
    # file). Shape-like inputs (pads, axes) stay in the model.
    data = bytearray()
    layout = {}
    for name, align, with_length in [("w_conv", 1, True), ("b_conv", 1, True),
                                     ("w_fc", 4096, True), ("w_big", 4096, False)]:
        if name == "b_conv":
            data += b"\x7f" * 3
        while len(data) % align:
            data += b"\x7f"
        t = next(t for t in model.graph.initializer if t.name == name)
        raw = numpy_helper.to_array(t).tobytes()
        layout[name] = (len(data), len(raw) if with_length else None)
        data += raw
    with open(os.path.join(case, "model.onnx.data"), "wb") as f:
        f.write(data)
    for t in model.graph.initializer:
        if t.name in layout:
            offset, length = layout[t.name]
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = TensorProto.EXTERNAL
            for k, v in [("location", "model.onnx.data"), ("offset", offset),
                         ("length", length)]:
                if v is not None:
                    e = t.external_data.add()
                    e.key, e.value = k, str(v)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    assert layout["b_conv"][0] % 4 == 3, layout
    assert os.path.getsize(path) < 4096, os.path.getsize(path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for i, batch in enumerate([1, 3]):
        x = rng.standard_normal((batch, 3, 8, 8)).astype(np.float32)
        (y,) = sess.run(None, {"x": x})
        d = os.path.join(case, f"test_data_set_{i}")
        os.makedirs(d)
        for name, a in [("input_0", x), ("output_0", y)]:
            with open(os.path.join(d, name + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(a).SerializeToString())
    r = subprocess.run([aotc, "test", case, "--rtol", "1e-4", "--atol", "1e-5"],
                       capture_output=True, text=True)
    print(r.stdout + r.stderr)
    assert r.returncode == 0 and "1 passed, 0 failed" in r.stdout, "aotc test failed"

    # The data file truncated: clear errors naming the tensor, no crash.
    data = os.path.join(case, "model.onnx.data")
    size = os.path.getsize(data)
    for cut, tensor, message in [
            (size - 100, "w_big", "external data has 1087900 bytes, expected 1088000"),
            (layout["w_fc"][0] + 10, "w_fc", "lies past the end of")]:
        os.truncate(data, cut)
        r = subprocess.run([aotc, "compile", path, "-o", os.path.join(tmp, "m.so")],
                           capture_output=True, text=True)
        print(r.stderr)
        assert r.returncode != 0 and f"initializer '{tensor}'" in r.stderr and \
            message in r.stderr, r.stderr
    os.remove(data)
    r = subprocess.run([aotc, "compile", path, "-o", os.path.join(tmp, "m.so")],
                       capture_output=True, text=True)
    print(r.stderr)
    assert r.returncode != 0 and "cannot be opened" in r.stderr, r.stderr
print("external data ok")
