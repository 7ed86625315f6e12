#!/usr/bin/env python3
"""Max and min reductions accumulated in float vectors (register_tile.cpp's
isFloatVectorCombine: `acc = ((v > acc) | isnan(v)) ? v : acc` on floatN)
against ONNX Runtime and NumPy, with NaN, +inf and -inf in the inputs.

Cases: MaxPool over NCHW (odd widths, stride 2, ceil_mode, dilation, pads),
a channel-blocked MaxPool after a convolution (ResNet's stem: the pool reads
[N, C/32, H, W, 32] through its padded copy's select; with a convolution
after it, blocked on both sides, 4 pixels of a row per work-item), ReduceMax and
ReduceMin over a non-innermost axis (the innermost kept: the vector lanes),
float16 MaxPool, ReduceProd; batch 0, 1 and 3, under generic-avx2 and generic-avx512.
Each case checks that the kernel accumulates in vectors (`floatN acc` in the
OpenCL) where it should, so that a change of tile or of the combine cannot
silently fall back to scalars and leave these checks testing that path.

NaN propagates as NumPy's max does (a window holding a NaN gives NaN):
expected = NaN where the window holds one, else ONNX Runtime's answer on the
input with its NaNs replaced by -inf (max) or +inf (min); ONNX Runtime
computes which windows hold one too (a MaxPool of isnan(x)).

Usage: check_vector_max.py AOTC    (prints "vector max ok")
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compiled_model import compile_model  # noqa: E402

PROFILES = ("generic-avx2", "generic-avx512")
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}

failures = []
checks = 0


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def model(nodes, x_shape, y_shape, dtype=np.float32, inits=()):
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info("x", ONNX_TYPE[dtype], x_shape)],
                          [helper.make_tensor_value_info("y", ONNX_TYPE[dtype], y_shape)],
                          list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def special(rng, shape, dtype):
    """Random normal values with NaN, +inf and -inf at a few places each."""
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    for v, frac in ((np.nan, 0.02), (np.inf, 0.01), (-np.inf, 0.02)):
        k = int(flat.size * frac)
        if k:
            flat[rng.choice(flat.size, k, replace=False)] = v
    return x.astype(dtype)


def ort_run(proto, x):
    s = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


def expected_pool(proto, x, is_max=True):
    """NaN where the window holds one, else ONNX Runtime's answer with the
    NaNs replaced by the combine's identity."""
    fill = -np.inf if is_max else np.inf
    clean = np.where(np.isnan(x), np.array(fill, x.dtype), x)
    y = ort_run(proto, clean)
    if proto.graph.node[-1].op_type == "MaxPool":
        # Which windows hold a NaN: the pool of the indicator. (Only for a
        # model that is the MaxPool alone: the indicator must reach it.)
        ind = ort_run(proto, np.isnan(x).astype(x.dtype))
        return np.where(ind > 0, np.array(np.nan, x.dtype), y)
    return y


def vectorized(aotc, onnx_path, profile):
    cl = subprocess.run([aotc, "compile", onnx_path, "--device-profile", profile, "--emit", "cl"],
                        capture_output=True, text=True, check=True).stdout
    return re.search(r"\bfloat(4|8|16) acc\w* = ", cl) is not None


def check(aotc, tmp, name, proto, inputs, expect_fn, want_vector, rtol=0.0, atol=0.0):
    global checks
    for profile in PROFILES:
        os.environ["AOTC_COMPILE_FLAGS"] = f"--device-profile {profile}"
        tag = f"{name}/{profile}"
        m, path = compile_model(aotc, tmp, f"{name}_{profile.replace('-', '_')}", proto)
        v = vectorized(aotc, path, profile)
        if v != want_vector:
            fail(f"{tag}: vector accumulators {v}, expected {want_vector}")
        for x in inputs:
            got = m.run([x])[0]
            want = expect_fn(x)
            checks += 1
            if got.shape != want.shape:
                fail(f"{tag} x{list(x.shape)}: shape {got.shape} vs {want.shape}")
                continue
            if not np.array_equal(np.isnan(got), np.isnan(want)):
                fail(f"{tag} x{list(x.shape)}: NaN at {int(np.sum(np.isnan(got)))} places, "
                     f"expected {int(np.sum(np.isnan(want)))}")
                continue
            ok = np.isnan(want) | (got == want) | np.isclose(got.astype(np.float64), want.astype(np.float64),
                                                              rtol=rtol, atol=atol)
            if not ok.all():
                i = np.argwhere(~ok)[0]
                fail(f"{tag} x{list(x.shape)}: at {tuple(i)} got {got[tuple(i)]} want {want[tuple(i)]}")


def main():
    aotc = sys.argv[1]
    rng = np.random.default_rng(7)
    tmp = tempfile.mkdtemp(prefix="aotc_vmax_")

    # MaxPool over NCHW: the innermost output columns are the lanes.
    pools = [  # name, c, h, w, kernel, stride, pads, ceil, dilation, vectorized
        ("pool3_s1_p1_w37", 3, 9, 37, 3, 1, 1, 0, 1, True),
        ("pool2_s2_w40", 2, 8, 40, 2, 2, 0, 0, 1, True),
        ("pool3_s2_p1_ceil_w33", 4, 11, 33, 3, 2, 1, 1, 1, True),
        ("pool3_dil2_w29", 2, 12, 29, 3, 1, 2, 0, 2, True),
        ("pool5_s1_w3", 2, 7, 7, 5, 1, 0, 0, 1, False),  # 3 columns: scalar
    ]
    for name, c, h, w, k, s, p, ceil, dil, vec in pools:
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[s, s],
                                pads=[p] * 4, ceil_mode=ceil, dilations=[dil, dil])
        proto = model([node], ["n", c, h, w], ["n", c, None, None])
        xs = [special(rng, (n, c, h, w), np.float32) for n in (0, 1, 3)]
        check(aotc, tmp, name, proto, xs, lambda x, p=proto: expected_pool(p, x), vec)

    # float16: computed in float, loads widened, stores rounded.
    # (A stride-2 window over halves stays scalar: no strided half vector
    # load.)
    for stride, vec in ((1, True), (2, False)):
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[stride] * 2,
                                pads=[1] * 4)
        proto = model([node], ["n", 4, 10, 34], ["n", 4, None, None], np.float16)
        xs = [special(rng, (n, 4, 10, 34), np.float16) for n in (1, 3)]
        check(aotc, tmp, f"pool_f16_s{stride}", proto, xs, lambda x, p=proto: expected_pool(p, x), vec)

    # ResNet's stem: a 32-channel convolution + Relu, then a 3x3 stride-2
    # MaxPool over a padding of 1: blocked channels, the pool reading through
    # its padded copy's select. A NaN in the convolution's input reaches every
    # channel of its pixel's outputs: compared with ONNX Runtime on the same
    # input (its conv and max propagate NaN as aotc's do where the window is
    # NaN: checked equal as NaN positions).
    wconv = (rng.standard_normal((32, 3, 3, 3)) * 0.3).astype(np.float32)
    bconv = rng.standard_normal(32).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1] * 4, kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)]
    proto = model(nodes, ["n", 3, 21, 21], ["n", 32, 11, 11],
                  inits=[numpy_helper.from_array(wconv, "w"), numpy_helper.from_array(bconv, "b")])

    def stem_input(n):
        x = rng.standard_normal((n, 3, 21, 21)).astype(np.float32)
        flat = x.reshape(-1)
        if flat.size:
            flat[rng.choice(flat.size, 3, replace=False)] = np.nan
            flat[rng.choice(flat.size, 3, replace=False)] = np.inf
        return x

    # ONNX Runtime's MaxPool skips NaN (a window of NaN and 2 gives 2): the
    # expected pool is expected_pool's over ONNX Runtime's convolution and
    # NumPy's Relu (NaN stays NaN, as in PyTorch).
    conv_only = model(nodes[:1], ["n", 3, 21, 21], ["n", 32, 21, 21],
                      inits=[numpy_helper.from_array(wconv, "w"), numpy_helper.from_array(bconv, "b")])
    conv_only.graph.node[0].output[0] = "y"
    pool_only = model(nodes[2:], ["n", 32, 21, 21], ["n", 32, 11, 11])
    pool_only.graph.node[0].input[0] = "x"

    def stem_expected(x):
        c = ort_run(conv_only, x)
        return expected_pool(pool_only, np.where(c < 0, np.float32(0), c))

    check(aotc, tmp, "stem_blocked", proto, [stem_input(n) for n in (0, 1, 3)],
          stem_expected, True, rtol=1e-5, atol=1e-5)
    # The same stem with a 1 x 1 convolution reading the pool, which keeps
    # the pool's output blocked too ([N, 1, 11, 11, 32]): the pool takes 4
    # pixels of a row per work-item (register_tile.cpp, kPoolRowPixels),
    # 11 columns as 2 whole tiles and a partial one of 3. (Without NaN:
    # ONNX Runtime's MaxPool skips it, and the convolution after it would
    # spread the difference.)
    w1 = (rng.standard_normal((32, 32, 1, 1)) * 0.2).astype(np.float32)
    rows = model(nodes + [helper.make_node("Conv", ["y"], ["z"], kernel_shape=[1, 1])],
                 ["n", 3, 21, 21], ["n", 32, 11, 11],
                 inits=[numpy_helper.from_array(wconv, "w"), numpy_helper.from_array(bconv, "b")])
    rows.graph.node[-1].input.append("w1")
    rows.graph.node[-1].output[0] = "y"
    rows.graph.node[-2].output[0] = "p"
    rows.graph.node[-1].input[0] = "p"
    rows.graph.initializer.append(numpy_helper.from_array(w1, "w1"))
    check(aotc, tmp, "stem_blocked_rows", rows,
          [rng.standard_normal((n, 3, 21, 21)).astype(np.float32) for n in (0, 1, 3)],
          lambda x: ort_run(rows, x), True, rtol=1e-5, atol=1e-5)
    path = os.path.join(tmp, "stem_rows.onnx")
    with open(path, "wb") as f:
        f.write(rows.SerializeToString())
    for profile in PROFILES:
        cfg = subprocess.run([aotc, "compile", path, "--device-profile", profile,
                              "--emit", "kernel-configs"], capture_output=True, text=True,
                             check=True).stdout
        pools = [c for c in json.loads(cfg)["kernels"].values() if c["template"] == "reduction"]
        if not any(c["m"] >= 0 and c["tm"] == 4 for c in pools):
            fail(f"stem_blocked_rows/{profile}: the pool is not tiled 4 pixels a row: {pools}")

    # ReduceMax / ReduceMin over a non-innermost axis: the innermost kept.
    for op, is_max, shape, axes in (("ReduceMax", True, ["n", 13, 45], [1]),
                                    ("ReduceMin", False, ["n", 7, 5, 33], [1, 2]),
                                    ("ReduceMax", True, [6, "n", 40], [0])):
        node = helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=0)
        out = [d for i, d in enumerate(shape) if i not in axes]
        proto = model([node], shape, out)
        xs = []
        for n in (0, 1, 3):
            conc = [n if d == "n" else d for d in shape]
            xs.append(special(rng, tuple(conc), np.float32))
        ref = (lambda x, a=tuple(axes), mx=is_max: (np.max if mx else np.min)(x, axis=a)
               if x.size else np.zeros([d for i, d in enumerate(x.shape) if i not in a], np.float32))
        check(aotc, tmp, f"{op}_{'_'.join(map(str, axes))}", proto, xs, ref, True)

    # ReduceProd (its combine is lane-wise too): values near 1, NaN and inf
    # among them.
    node = helper.make_node("ReduceProd", ["x"], ["y"], axes=[1], keepdims=0)
    proto = model([node], ["n", 11, 37], ["n", 37])
    xs = []
    for n in (0, 1, 3):
        x = (1.0 + 0.1 * rng.standard_normal((n, 11, 37))).astype(np.float32)
        if x.size:
            x.reshape(-1)[rng.choice(x.size, 2, replace=False)] = [np.nan, np.inf]
        xs.append(x)
    check(aotc, tmp, "ReduceProd_1", proto, xs, lambda x: np.prod(x, axis=1), True,
          rtol=1e-5)

    if failures:
        print(f"vector max: {len(failures)} failures in {checks} checks")
        sys.exit(1)
    print(f"vector max ok ({checks} checks)")


if __name__ == "__main__":
    main()
