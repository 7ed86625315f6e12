#!/usr/bin/env python3
"""Sibling MatMuls merged into one (compiler/passes/merge_matmuls.h) against ONNX
Runtime.

An attention-style block: x feeds three MatMul + bias Add projections (one weight
written as an exporter writes a Linear layer's, Transpose(W)), read by a pointwise
combination; and a second group without biases where one member's result is also a
graph output (that member stays apart, the other two merge). For the tiled kernels
(CPU profile) and the GPU profile's, at batch 0, 1 and 3:
  - one merged kernel computes the projections (aotc inspect: `aotc_merged_` and
    2304-style widened columns), the naive kernels keep the graph's three;
  - the outputs match ONNX Runtime;
  - each projection's weight and bias updated by name (aotc_container_update_constants)
    gives ONNX Runtime's answer with the new values (the folding program recomputes the
    concatenated weight), and a value of the wrong shape is refused.
Usage: check_merge_matmuls.py AOTC
"""
import os
import re
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
from compiled_model import with_weights  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(23)
tmp = tempfile.mkdtemp()
failed = 0
checks = 0
K, N = 40, 24


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def w(name, *shape):
    return nh.from_array((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name)


def make():
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 7, K])
    y = h.make_tensor_value_info("y", T.FLOAT, ["n", 7, N])
    z = h.make_tensor_value_info("z", T.FLOAT, ["n", 7, N])
    p = h.make_tensor_value_info("p", T.FLOAT, ["n", 7, N])
    nodes = [
        h.make_node("MatMul", ["x", "wq"], ["q0"]), h.make_node("Add", ["q0", "bq"], ["q"]),
        h.make_node("MatMul", ["x", "wk"], ["k0"]), h.make_node("Add", ["k0", "bk"], ["k"]),
        # A Linear layer as exporters write it: the [N, K] weight transposed.
        h.make_node("Transpose", ["wv_t"], ["wv"], perm=[1, 0]),
        h.make_node("MatMul", ["x", "wv"], ["v0"]), h.make_node("Add", ["bv", "v0"], ["v"]),
        h.make_node("Mul", ["q", "k"], ["qk"]), h.make_node("Add", ["qk", "v"], ["y"]),
        # No biases; p is a graph output: it stays its own MatMul.
        h.make_node("Tanh", ["x"], ["t"]),
        h.make_node("MatMul", ["t", "w1"], ["a"]), h.make_node("MatMul", ["t", "w2"], ["b"]),
        h.make_node("MatMul", ["t", "w3"], ["p"]),
        h.make_node("Sub", ["a", "b"], ["ab"]), h.make_node("Mul", ["ab", "p"], ["z"]),
    ]
    inits = [w("wq", K, N), w("wk", K, N), w("wv_t", N, K), w("bq", N), w("bk", N),
             w("bv", 1, 1, N), w("w1", K, N), w("w2", K, N), w("w3", K, N)]
    g = h.make_graph(nodes, "merge", [x], [y, z, p], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def compare(tag, model, proto):
    global checks
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (0, 1, 3):
        x = rng.standard_normal((n, 7, K)).astype(np.float32)
        ref = sess.run(None, {"x": x})
        out = model.run([x])
        for name, r, o in zip(("y", "z", "p"), ref, out):
            checks += 1
            err = float(np.abs(r - o).max()) / max(1.0, float(np.abs(r).max())) if r.size else 0.0
            if r.shape != o.shape or err > 1e-5:
                fail(f"{tag} batch {n} {name}: shape {o.shape} vs {r.shape}, rel err {err:.2e}")


proto = make()
path = os.path.join(tmp, "merge.onnx")
onnx.save(proto, path)
for label, flags in (("tiled", []), ("gpu", ["--device-profile", "generic-gpu"]),
                     ("naive", ["--naive-kernels"])):
    so = os.path.join(tmp, f"merge_{label}.so")
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{label}: compile: {r.stderr.strip()}")
        continue
    inspect = subprocess.run([aotc, "inspect", so], capture_output=True, text=True).stdout
    merged = [line for line in inspect.splitlines()
              if "aotc_merged_" in line and "->" in line and "folding:" not in line]
    checks += 1
    if label == "naive":
        if merged:
            fail(f"naive: the reference merged MatMuls: {merged}")
    else:
        # Two groups: q/k/v with biases ([n,7,72]) and the two bias-free ones ([n,7,48]).
        widths = sorted({re.search(r"-> f32\[[^\]]*,(\d+)\]", line).group(1) for line in merged})
        if widths != ["48", "72"]:
            fail(f"{label}: merged kernels {merged}, expected widths 48 and 72")
    model = Model(so, device="cpu")
    compare(label, model, proto)
    # Updates by name: the concatenated weights follow.
    new = {"wk": (rng.standard_normal((K, N)) / 6).astype(np.float32),
           "wv_t": (rng.standard_normal((N, K)) / 6).astype(np.float32),
           "bv": rng.standard_normal((1, 1, N)).astype(np.float32),
           "w2": (rng.standard_normal((K, N)) / 6).astype(np.float32)}
    try:
        model.update_constants(new, validate_full=False)
    except RuntimeError as e:
        fail(f"{label}: update: {e}")
        continue
    compare(label + " updated", model, with_weights(proto, new))
    checks += 1
    try:
        model.update_constants({"wq": np.zeros((K, N + 1), np.float32)}, validate_full=False)
        fail(f"{label}: a weight of the wrong shape was accepted")
    except RuntimeError:
        pass
print(f"{checks} checks")
if failed:
    print(f"{failed} failed")
    sys.exit(1)
print("merge matmuls ok")
