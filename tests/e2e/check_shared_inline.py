#!/usr/bin/env python3
"""A small value read by more than two consumers that all end in one kernel is computed
in that kernel (compiler/schedule/fusion.cpp), against ONNX Runtime.

GELU in its tanh form, as GPT-2's exporter writes it, reads x = MatMul + bias three times
(Pow(x, 3), x + 0.044715 x^3, 0.5 x); the GEMM and its GELU are one kernel. Where the
consumers end in two kernels (two graph outputs), x keeps its own kernel. For the tiled
kernels (CPU profile), the GPU profile's and the naive ones, at batch 0, 1 and 3:
  - kernel counts and what each kernel computes (aotc inspect);
  - the outputs match ONNX Runtime within 1e-5 of their largest value.
Usage: check_shared_inline.py AOTC
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
rng = np.random.default_rng(31)
tmp = tempfile.mkdtemp()
failed = 0
checks = 0
K, N = 40, 48


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def const(name, value):
    return nh.from_array(np.array(value, np.float32), name)


def gelu_tanh():
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 7, K])
    g = h.make_tensor_value_info("g", T.FLOAT, ["n", 7, N])
    nodes = [
        h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "b"], ["y"]),
        h.make_node("Pow", ["y", "three"], ["y3"]), h.make_node("Mul", ["y3", "c1"], ["a"]),
        h.make_node("Add", ["y", "a"], ["s"]), h.make_node("Mul", ["s", "c2"], ["u"]),
        h.make_node("Tanh", ["u"], ["t"]), h.make_node("Add", ["t", "one"], ["t1"]),
        h.make_node("Mul", ["y", "half"], ["yh"]), h.make_node("Mul", ["yh", "t1"], ["g"]),
    ]
    inits = [nh.from_array((rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32), "w"),
             nh.from_array(rng.standard_normal(N).astype(np.float32), "b"),
             const("three", 3.0), const("c1", 0.044715), const("c2", 0.7978845608),
             const("one", 1.0), const("half", 0.5)]
    return h.make_model(h.make_graph(nodes, "gelu_tanh", [x], [g], inits),
                        opset_imports=[h.make_opsetid("", 17)])


def two_kernels():
    """y = MatMul + bias read three times, by two graph outputs: y stays a kernel."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 7, K])
    o1 = h.make_tensor_value_info("o1", T.FLOAT, ["n", 7, N])
    o2 = h.make_tensor_value_info("o2", T.FLOAT, ["n", 7, N])
    nodes = [
        h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "b"], ["y"]),
        h.make_node("Tanh", ["y"], ["o1"]),
        h.make_node("Mul", ["y", "y"], ["yy"]), h.make_node("Add", ["yy", "y"], ["o2"]),
    ]
    inits = [nh.from_array((rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32), "w"),
             nh.from_array(rng.standard_normal(N).astype(np.float32), "b")]
    return h.make_model(h.make_graph(nodes, "two_kernels", [x], [o1, o2], inits),
                        opset_imports=[h.make_opsetid("", 17)])


def kernels(so):
    out = subprocess.run([aotc, "inspect", so], capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines()
            if line.startswith("  k") and "->" in line and "{" not in line]


def compare(tag, model, proto, names):
    global checks
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (0, 1, 3):
        x = rng.standard_normal((n, 7, K)).astype(np.float32) * 2
        ref = sess.run(None, {"x": x})
        out = model.run([x])
        for name, r, o in zip(names, ref, out):
            checks += 1
            err = float(np.abs(r - o).max()) / max(1.0, float(np.abs(r).max())) if r.size else 0.0
            if r.shape != o.shape or err > 1e-5:
                fail(f"{tag} batch {n} {name}: shape {o.shape} vs {r.shape}, rel err {err:.2e}")


for graph, names in ((gelu_tanh(), ("g",)), (two_kernels(), ("o1", "o2"))):
    path = os.path.join(tmp, graph.graph.name + ".onnx")
    onnx.save(graph, path)
    # Each kernel launched on its own (not a persistent kernel's part), so
    # that `aotc inspect` counts them.
    for label, flags in (("tiled", ["--no-persistent-kernels"]),
                         ("gpu", ["--device-profile", "generic-gpu"]),
                         ("naive", ["--naive-kernels"])):
        tag = f"{graph.graph.name} {label}"
        so = os.path.join(tmp, f"{graph.graph.name}_{label}.so")
        r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{tag}: compile: {r.stderr.strip()}")
            continue
        ks = kernels(so)
        # A GPU size variant (`_at8`) is the same kernel planned for a larger batch.
        ks = [k for k in ks if "_at8:" not in k]
        checks += 1
        if graph.graph.name == "gelu_tanh":
            if len(ks) != 1 or "MatMul" not in ks[0] or "Tanh" not in ks[0]:
                fail(f"{tag}: expected one kernel computing MatMul ... Tanh, got {ks}")
        else:
            if len(ks) != 3 or any("MatMul" in k and "Tanh" in k for k in ks):
                fail(f"{tag}: expected y, o1 and o2 as three kernels, got {ks}")
        compare(tag, Model(so, device="cpu"), graph, names)
print(f"{checks} checks")
if failed:
    print(f"{failed} failed")
    sys.exit(1)
print("shared inline ok")
