#!/usr/bin/env python3
"""Cases for aotc's documented results where ONNX leaves room
(docs/CORRECTNESS.md), with expected outputs computed here in NumPy from
those rules: integer wrap-around in each width (fused or not), division by
zero and MIN / -1, Abs and Neg of MIN, float-to-integer and float-to-bool
casts of NaN, infinities and out-of-range values, LayerNormalization's
statistics in its stash_type.

ONNX Runtime cannot be the oracle here (its results are undefined or
platform-dependent), so these cases check that every device gives the one
documented answer: `aotc test DIR/*` on PoCL, and the same cases through
NVIDIA's OpenCL (scripts/gpu_fuzz_slice.sh packs them with --cases).

  .venv/bin/python tests/fuzz/semantics_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fuzz  # noqa: E402

ONNX_TYPE = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
             np.int32: TensorProto.INT32, np.int64: TensorProto.INT64,
             np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.bool_: TensorProto.BOOL}


def limits(t):
    i = np.iinfo(t)
    vals = [i.min, i.min + 1, -1, 0, 1, 2, i.max - 1, i.max, i.max // 2 + 1, 100]
    return np.array([v for v in vals if i.min <= v <= i.max], dtype=t)


def pairs(t):
    v = limits(t)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def model(name, inputs, nodes, outputs):
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, ONNX_TYPE[v.dtype.type], list(v.shape))
         for n, v in inputs],
        [helper.make_tensor_value_info(n, ONNX_TYPE[v.dtype.type], list(v.shape))
         for n, v in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def wrap(values, t):
    """Python ints wrapped to the width of t."""
    bits = np.iinfo(t).bits
    out = []
    for v in values:
        v &= (1 << bits) - 1
        if np.iinfo(t).min < 0 and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return np.array(out, dtype=t)


def f2i(x, t):
    """NaN -> 0; truncate toward zero; saturate to int64; wrap to t."""
    out = []
    for v in x.tolist():
        if np.isnan(v):
            q = 0
        elif v >= 2.0 ** 63:
            q = 2 ** 63 - 1
        elif v < -2.0 ** 63:
            q = -2 ** 63
        else:
            q = int(np.trunc(v))
        out.append(q)
    return wrap(out, t)


def cases():
    for t in (np.int8, np.uint8, np.int32, np.int64):
        a, b = pairs(t)
        ia, ib = [int(v) for v in a], [int(v) for v in b]
        # Add, Sub, Mul, each alone and fused with a following op.
        yield "wrap_%s" % t.__name__, model(
            "wrap", [("a", a), ("b", b)],
            [helper.make_node("Add", ["a", "b"], ["s"]),
             helper.make_node("Sub", ["a", "b"], ["d"]),
             helper.make_node("Mul", ["a", "b"], ["p"]),
             helper.make_node("Less", ["s", "a"], ["lt"]),
             helper.make_node("Cast", ["p"], ["pf"], to=TensorProto.DOUBLE)],
            [("s", a), ("d", a), ("p", a), ("lt", np.zeros(a.shape, np.bool_)),
             ("pf", np.zeros(a.shape, np.float64))]), [a, b], [
            wrap([x + y for x, y in zip(ia, ib)], t),
            wrap([x - y for x, y in zip(ia, ib)], t),
            wrap([x * y for x, y in zip(ia, ib)], t),
            wrap([x + y for x, y in zip(ia, ib)], t) < a,
            wrap([x * y for x, y in zip(ia, ib)], t).astype(np.float64)]
        if t in (np.int32, np.int64):
            q = []
            mn = int(np.iinfo(t).min)
            for x, y in zip(ia, ib):
                if y == 0:
                    q.append(0)
                elif x == mn and y == -1:
                    q.append(mn)
                else:
                    q.append(abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1))
            yield "div_%s" % t.__name__, model(
                "div", [("a", a), ("b", b)],
                [helper.make_node("Div", ["a", "b"], ["q"]),
                 helper.make_node("Abs", ["a"], ["m"]),
                 helper.make_node("Neg", ["a"], ["n"])],
                [("q", a), ("m", a), ("n", a)]), [a, b], [
                np.array(q, dtype=t), wrap([abs(x) for x in ia], t),
                wrap([-x for x in ia], t)]
    x = np.array([-2.7, 2.7, 300.5, -300.5, 255.9, -0.5, 0.5, 1e10, -1e10, 3e9,
                  np.nan, np.inf, -np.inf, 128.0, -129.0, 2.0 ** 63, -2.0 ** 64],
                 dtype=np.float32)
    for src in (np.float32, np.float64):
        xs = x.astype(src)
        outs, nodes = [], []
        for t in (np.int8, np.uint8, np.int32, np.int64):
            nodes.append(helper.make_node("Cast", ["x"], ["c_" + t.__name__],
                                          to=ONNX_TYPE[t]))
            outs.append(("c_" + t.__name__, f2i(xs, t)))
        nodes.append(helper.make_node("Cast", ["x"], ["c_bool"], to=TensorProto.BOOL))
        outs.append(("c_bool", xs != 0))  # NaN is true
        yield "cast_%s" % src.__name__, model(
            "cast", [("x", xs)], nodes, outs), [xs], [v for _, v in outs]
    yield from layernorm_cases()


def layernorm_cases():
    # LayerNormalization's statistics in stash_type (ONNX's function casts X
    # to it first): float32 by default, float64 inputs included (ONNX
    # Runtime 1.20 and onnx.reference compute those in float64: fuzz seed
    # 20265778). 2^64's square overflows float32, so the variance is
    # infinite and the output exactly the bias; in float64 (stash_type 11)
    # it is exactly sign(x) * scale + bias.
    x = np.array([[2.0 ** 64, -2.0 ** 64, 2.0 ** 64, -2.0 ** 64]])
    scale = np.array([1.5, 2.0, -1.0, 0.25])
    bias = np.array([0.5, -1.25, 2.0, 3.0])
    yield "layernorm_stash_f64", model(
        "layernorm", [("x", x), ("scale", scale), ("bias", bias)],
        [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y1"]),
         helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y11"],
                          stash_type=TensorProto.DOUBLE)],
        [("y1", x), ("y11", x)]), [x, scale, bias], [
        bias.reshape(1, 4), (np.sign(x) * scale + bias)]


def main():
    import argparse
    import subprocess
    import tempfile
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", help="write the cases here")
    ap.add_argument("--aotc", help="run them with `aotc test` (exact match)")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="aotc-semantics-")
    dirs = []
    for name, m, ins, outs in cases():
        dirs.append(os.path.join(out, "seed_" + name))
        run_fuzz.write_case(dirs[-1], m, ins, outs)
    print("%d cases in %s" % (len(dirs), out))
    if args.aotc:
        return subprocess.run([args.aotc, "test", "--rtol", "0", "--atol", "0", "-v"]
                              + dirs).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
