#!/usr/bin/env python3
"""The run a container makes while it is created (runtime/src/warm_up.cpp), on PoCL.

aotc_container_create ends with one run per instance at the smallest sizes on zero
inputs, its result and errors discarded. What it must not do, checked here:
  - change a result: a small CNN + MLP (symbolic batch, a Gather with an index input)
    loaded with and without AOTC_WARM_UP=0 gives the same outputs, bit for bit, equal
    to ONNX Runtime's within 1e-5, at batch 1, 3 and 8, in either order of runs;
  - leak its errors: a model whose warm-up fails (a Reshape whose shape is an input:
    its smallest sizes do not keep the element count) still loads, the calling
    thread's last error is the one it had before the load, and its runs give ONNX
    Runtime's answer for good shapes and an error naming the node for a bad one;
  - make a weightless model runnable before its weights: its first run without them
    still fails with the message that asks for them.
Its effect (the first run after a load at 1.2x the steady one on MobileNetV2 rather
than 2-3x) is a benchmark figure: docs/PERFORMANCE.md's first-run column.
Usage: check_warm_up.py AOTC
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
failed = 0
checks = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        fail(msg)


def compile_so(proto, name, flags=()):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(proto, path)
    so = os.path.join(tmp, name + ".so")
    subprocess.run([aotc, "compile", path, "-o", so] + list(flags), check=True,
                   capture_output=True, text=True)
    return path, so


def load(so, warm):
    """The container, created with the warm-up on or off (the variable is read at load)."""
    if warm:
        os.environ.pop("AOTC_WARM_UP", None)
    else:
        os.environ["AOTC_WARM_UP"] = "0"
    try:
        return Model(so, device="cpu")
    finally:
        os.environ.pop("AOTC_WARM_UP", None)


def w(shape, fan_in):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


# 1. Same results with and without the warm-up.
net = h.make_model(h.make_graph([
    h.make_node("Conv", ["x", "wc", "bc"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["c"], ["r"]),
    h.make_node("GlobalAveragePool", ["r"], ["g"]),
    h.make_node("Flatten", ["g"], ["f"]),
    h.make_node("Gemm", ["f", "wf", "bf"], ["logits"], transB=1),
    h.make_node("Gather", ["table", "idx"], ["emb"], axis=0),
], "warm_net", [h.make_tensor_value_info("x", T.FLOAT, ["n", 32, 9, 7]),
                h.make_tensor_value_info("idx", T.INT64, ["n"])],
    [h.make_tensor_value_info("logits", T.FLOAT, ["n", 10]),
     h.make_tensor_value_info("emb", T.FLOAT, ["n", 5])],
    [nh.from_array(w((32, 32, 3, 3), 288), "wc"), nh.from_array(w((32,), 1), "bc"),
     nh.from_array(w((10, 32), 32), "wf"), nh.from_array(w((10,), 1), "bf"),
     nh.from_array(w((7, 5), 1), "table")]), opset_imports=[h.make_opsetid("", 17)])
path, so = compile_so(net, "warm_net", ["--vector-lanes", "16"])
sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
feeds = [(rng.standard_normal((n, 32, 9, 7)).astype(np.float32),
          rng.integers(-7, 7, size=n).astype(np.int64)) for n in (1, 3, 8)]
results = {}
for warm in (True, False):
    m = load(so, warm)
    for order in (feeds, feeds[::-1]):
        for x, idx in order:
            out = m.run([x, idx])
            ref = sess.run(None, {"x": x, "idx": idx})
            n = x.shape[0]
            for name, o, r in zip(("logits", "emb"), out, ref):
                err = float(np.abs(o - r).max()) / max(1.0, float(np.abs(r).max()))
                check(o.shape == r.shape and err <= 1e-5,
                      f"warm-up {warm} batch {n} {name}: shape {o.shape} vs {r.shape}, rel err {err:.2e}")
                key = (n, name)
                if key in results:
                    check(np.array_equal(results[key], o),
                          f"batch {n} {name}: the runs with and without the warm-up differ")
                else:
                    results[key] = o.copy()
    del m

# 2. A model whose warm-up fails: the load succeeds, the last error stays the caller's.
reshape = h.make_model(h.make_graph([
    h.make_node("Reshape", ["x", "shape"], ["r"]),
    h.make_node("Relu", ["r"], ["y"]),
], "warm_reshape", [h.make_tensor_value_info("x", T.FLOAT, ["n", 6]),
                    h.make_tensor_value_info("shape", T.INT64, [2])],
    [h.make_tensor_value_info("y", T.FLOAT, [None, None])]),
    opset_imports=[h.make_opsetid("", 18)])
rpath, rso = compile_so(reshape, "warm_reshape")
try:
    Model(rso, device="no such device anywhere")
    fail("a device that does not exist was accepted")
except RuntimeError:
    pass
m = Model(rso, device="cpu")
before = m.lib.aotc_last_error().decode()
check("no such device anywhere" in before, f"the failed load's message: {before!r}")
m2 = Model(rso, device="cpu")
after = m2.lib.aotc_last_error().decode()
check(after == before, f"the warm-up changed the last error: {before!r} -> {after!r}")
rsess = ort.InferenceSession(rpath, providers=["CPUExecutionProvider"])
for n, shape in ((2, [3, 4]), (4, [-1, 8]), (1, [6, 1])):
    x = rng.standard_normal((n, 6)).astype(np.float32)
    s = np.array(shape, np.int64)
    out = m2.run([x, s])[0]
    ref = rsess.run(None, {"x": x, "shape": s})[0]
    check(out.shape == ref.shape and np.array_equal(out, ref),
          f"reshape {n} x 6 to {shape}: {out.shape} vs {ref.shape}")
try:
    m2.run([rng.standard_normal((2, 6)).astype(np.float32), np.array([5, 5], np.int64)])
    fail("a shape that does not keep the element count was accepted")
except RuntimeError as e:
    check("Reshape" in str(e) or "element" in str(e), f"the bad shape's message: {e}")

# 3. A weightless model still asks for its weights.
wpath, wso = compile_so(net, "warm_weightless", ["--weightless"])
m3 = Model(wso, device="cpu")
x, idx = feeds[0]
try:
    m3.run([x, idx])
    fail("a weightless model ran before its weights")
except RuntimeError as e:
    check("weightless" in str(e), f"the weightless model's message: {e}")

print(f"{checks} checks")
if failed:
    print(f"{failed} failed")
    sys.exit(1)
print("warm up ok")
