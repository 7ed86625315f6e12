#!/usr/bin/env python3
"""LRN (local response normalization across channels) against a NumPy model
of ONNX's definition, in float64, and ONNX Runtime, on the tiled, naive and
GPU-profile kernels: sizes 1 to 7 (even ones too: the window reaches one
channel more above than below), fewer channels than the window, ranks 2 to
5, a symbolic batch run at 0, 1 and 3, float32, float64 and float16, the
default attributes and others (bias 2, beta 0.5 and 1.3). A size below 1 and
an input of rank 1 are refused at compile time, naming the node.
Usage: check_lrn.py AOTC
"""
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

from op_checks import VARIANTS, Tally

tally = Tally(sys.argv[1], "lrn")
rng = np.random.default_rng(84)
NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16}


def lrn_ref(x, size, alpha, beta, bias):
    """ONNX's LRN: the squares of channels c - floor((size - 1) / 2) to
    c + ceil((size - 1) / 2) that exist, in float64."""
    x = x.astype(np.float64)
    c = x.shape[1]
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = np.zeros_like(x)
    for k in range(c):
        sq[:, k] = np.sum(np.square(x[:, max(0, k - lo):min(c, k + hi + 1)]), axis=1)
    return x / np.power(bias + alpha / size * sq, beta)


def model(name, t, shape, attrs):
    return h.make_model(h.make_graph(
        [h.make_node("LRN", ["x"], ["y"], name="norm", **attrs)], name,
        [h.make_tensor_value_info("x", t, shape)], [h.make_tensor_value_info("y", t, shape)]),
        opset_imports=[h.make_opsetid("", 13)])


def check(variant, k):
    t = [T.FLOAT, T.FLOAT, T.DOUBLE, T.FLOAT16][k % 4]
    size = int(rng.integers(1, 8))
    rank = int(rng.integers(2, 6))
    channels = int(rng.choice([1, 2, 3, 5, 8, 13]))
    spatial = [int(rng.integers(1, 6)) for _ in range(rank - 2)]
    symbolic = k % 3 == 0
    attrs = {"size": size}
    if k % 2:
        attrs.update(alpha=float(rng.choice([1e-4, 0.02, 0.5])), beta=float(rng.choice([0.5, 0.75, 1.3])),
                     bias=float(rng.choice([1.0, 2.0])))
    name = f"lrn_{variant}_{k}"
    shape = (["n"] if symbolic else [2]) + [channels] + spatial
    proto = model(name, t, shape, attrs)
    m = tally.compile(name, proto)
    if m is None:
        return
    # ONNX Runtime 1.20's LRN: float and float16, rank 4, odd sizes only.
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]) \
        if t != T.DOUBLE and rank == 4 and size % 2 else None
    for batch in ([0, 1, 3] if symbolic else [2]):
        x = (rng.standard_normal([batch, channels] + spatial) * rng.choice([1.0, 10.0])).astype(NP[t])
        got = m.run([x])[0]
        tally.runs += 1
        want = lrn_ref(x, size, attrs.get("alpha", 1e-4), attrs.get("beta", 0.75),
                       attrs.get("bias", 1.0))
        tol = {T.FLOAT: 1e-5, T.DOUBLE: 1e-12, T.FLOAT16: 2e-3}[t]
        ok = got.shape == want.shape and got.dtype == x.dtype and \
            np.allclose(got.astype(np.float64), want, rtol=tol, atol=tol)
        what = f"{name} {variant} {x.dtype}{list(x.shape)} {attrs}"
        if sess is not None and batch > 0:
            ref = sess.run(None, {"x": x})[0]
            ok &= np.allclose(ref.astype(np.float64), got.astype(np.float64), rtol=max(tol, 1e-4),
                              atol=max(tol, 1e-4))
            what += " (and ONNX Runtime)"
        tally.report(ok, what)


for variant, flags in VARIANTS:
    tally.set_variant(flags)
    for k in range(16):
        check(variant, k)
tally.set_variant("")
tally.expect_compile_refusal("lrn_size_0", model("lrn_size_0", T.FLOAT, [1, 3, 2], {"size": 0}),
        "node 'norm' (LRN): attribute 'size' must be positive, got 0")
tally.expect_compile_refusal("lrn_rank_1", model("lrn_rank_1", T.FLOAT, [3], {"size": 3}),
        "node 'norm' (LRN): input 0 ('x') must have rank 2 or more")
tally.finish()
