#!/usr/bin/env python3
"""Deep MatMuls split along K across work-groups (compiler/passes/split_k.h) against
ONNX Runtime.

One model, four MatMuls over K = 2048:
  - y: x[n, 70, 2048] x Transpose(W)[2048, 256] + bias + residual: deep (K = 8 N) with
    70 rows, split into 4 partial products of 512 steps on GPU profiles;
  - q: x2[m, 2048] x [2048, 128]: rows only symbolic (a GEMV at m = 1): not split;
  - s: x[n, 70, 2048][:, :7] x [2048, 128]: 7 rows: not split;
  - p: a graph output read straight from its MatMul, deep: split, and the output keeps
    its name.
For the GPU profile (split), the GPU profile with --no-split-k, the tiled CPU profile
and the naive kernels, at batch 0, 1 and 3:
  - the kernels: `aotc_split_` partial products for y alone on the GPU profile, none
    elsewhere;
  - the outputs match ONNX Runtime;
  - the transposed weight and the bias updated by name give ONNX Runtime's answer with
    the new values (the folding program recomputes the split weight), and a value of
    the wrong shape is refused.
Usage: check_split_k.py AOTC
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
rng = np.random.default_rng(29)
tmp = tempfile.mkdtemp()
failed = 0
checks = 0
K, N = 2048, 256


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def w(name, *shape):
    # Scaled by the reduction's length (K), so that every result is of order 1.
    return nh.from_array((rng.standard_normal(shape) / np.sqrt(K)).astype(np.float32), name)


def make():
    vi = h.make_tensor_value_info
    nodes = [
        # A Linear layer as exporters write it: the [N, K] weight transposed.
        h.make_node("Transpose", ["wt"], ["w"], perm=[1, 0]),
        h.make_node("MatMul", ["x", "w"], ["y0"]), h.make_node("Add", ["y0", "b"], ["y1"]),
        h.make_node("Add", ["y1", "r"], ["y"]),
        h.make_node("MatMul", ["x2", "wq"], ["q0"]), h.make_node("Relu", ["q0"], ["q"]),
        h.make_node("Slice", ["x", "s_start", "s_end", "s_axis"], ["xs"]),
        h.make_node("MatMul", ["xs", "ws"], ["s0"]), h.make_node("Tanh", ["s0"], ["s"]),
        h.make_node("MatMul", ["x", "wp"], ["p"]),
    ]
    inits = [w("wt", N, K), w("b", N), w("wq", K, 128), w("ws", K, 128), w("wp", K, 512),
             nh.from_array(np.array([0], np.int64), "s_start"),
             nh.from_array(np.array([7], np.int64), "s_end"),
             nh.from_array(np.array([1], np.int64), "s_axis")]
    g = h.make_graph(
        nodes, "split_k",
        [vi("x", T.FLOAT, ["n", 70, K]), vi("r", T.FLOAT, ["n", 70, N]), vi("x2", T.FLOAT, ["m", K])],
        [vi("y", T.FLOAT, ["n", 70, N]), vi("q", T.FLOAT, ["m", 128]),
         vi("s", T.FLOAT, ["n", 7, 128]), vi("p", T.FLOAT, ["n", 70, 512])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def compare(tag, model, proto):
    global checks
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (0, 1, 3):
        feeds = {"x": rng.standard_normal((n, 70, K)).astype(np.float32),
                 "r": rng.standard_normal((n, 70, N)).astype(np.float32),
                 "x2": rng.standard_normal((n + 1, K)).astype(np.float32)}
        ref = sess.run(None, feeds)
        out = model.run([feeds["x"], feeds["r"], feeds["x2"]])
        for name, r, o in zip(("y", "q", "s", "p"), ref, out):
            checks += 1
            err = float(np.abs(r - o).max()) / max(1.0, float(np.abs(r).max())) if r.size else 0.0
            if r.shape != o.shape or err > 1e-5:
                fail(f"{tag} batch {n} {name}: shape {o.shape} vs {r.shape}, rel err {err:.2e}")


proto = make()
path = os.path.join(tmp, "split.onnx")
onnx.save(proto, path)
gpu = ["--device-profile", "generic-gpu"]
for label, flags, want in (("gpu", gpu, 2), ("gpu no-split", gpu + ["--no-split-k"], 0),
                           ("tiled", [], 0), ("naive", ["--naive-kernels"], 0)):
    so = os.path.join(tmp, f"split_{label.replace(' ', '_')}.so")
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{label}: compile: {r.stderr.strip()}")
        continue
    inspect = subprocess.run([aotc, "inspect", so], capture_output=True, text=True).stdout
    # The partial products: [4, n, 70, 256] and [4, n, 70, 512] from the batched MatMuls.
    # (A size variant planned for batch 8, NAME_at8, is the same kernel.)
    lines = [line for line in inspect.splitlines()
             if "aotc_split_" in line and "->" in line and "folding:" not in line
             and "f32[4," in line]
    parts = sorted({re.sub(r"_at\d+$", "", line.split(":")[0].strip()) for line in lines})
    checks += 1
    if len(parts) != want or (want and not (any("70,256]" in x for x in lines) and
                                            any("70,512]" in x for x in lines))):
        fail(f"{label}: partial-product kernels {lines}, expected {want}: [4, n, 70, 256] and [4, n, 70, 512]")
    if "\noutput p: float32[n, 70, 512]" not in inspect:
        fail(f"{label}: output p lost its name or shape")
    model = Model(so, device="cpu")
    compare(label, model, proto)
    new = {"wt": (rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float32),
           "b": rng.standard_normal(N).astype(np.float32)}
    try:
        model.update_constants(new, validate_full=False)
    except RuntimeError as e:
        fail(f"{label}: update: {e}")
        continue
    compare(label + " updated", model, with_weights(proto, new))
    checks += 1
    try:
        model.update_constants({"wt": np.zeros((N, K + 1), np.float32)}, validate_full=False)
        fail(f"{label}: a weight of the wrong shape was accepted")
    except RuntimeError:
        pass
print(f"{checks} checks")
if failed:
    print(f"{failed} failed")
    sys.exit(1)
print("split k ok")
