#!/usr/bin/env python3
"""float16 and bfloat16 tensors: inputs, outputs, weights and every kernel.

aotc stores float16 as IEEE binary16 and bfloat16 as a float's top 16 bits
and computes in float (OpenCL's vload_half / vstore_half_rte for float16, no
cl_khr_fp16), rounding to nearest even where a value is stored or cast to
the 16-bit type. Two oracles:

  - Casts are exact: Cast<float16> of every float16 value, every midpoint
    between two of them (ties go to even) and the floats just beside each
    midpoint, the overflow threshold, subnormals, NaN and infinities, from
    float32 and from float64 (where rounding through float32 first would be
    wrong), inside a fused kernel and into a buffer: bit for bit against
    NumPy's astype(float16).
  - Every other model is built twice, in float16 and in float32; aotc runs
    the float16 one, ONNX Runtime the float32 one on the same (float16)
    values, and each output element must lie within a few float16 ulps of
    the float32 result (aotc rounds once per kernel, not per op).

bfloat16 casts are checked against a rounding written independently of the
kernels' (significand scaled and rounded with rint in float64), every model
again with bfloat16 elements, and the test models (a CNN with BatchNorm and
pooling, two MLPs with Gemm, Erf, Softmax, reductions, Gather, Pow) with all
their float32 tensors converted to each type, against ONNX Runtime running
the same rounded weights and inputs in float32. Contractions of 16-bit
values are register tiled with float vector accumulators like float32 ones;
vector_kernels() checks in the emitted OpenCL that two of them are. Usage: check_half_floats.py AOTC
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
from onnx import numpy_helper
from onnx import version_converter

import compiled_model
from aotc_ctypes import BF16  # noqa: E402  bfloat16 as its bits (compiled_model put bench/gpu on the path)

aotc = sys.argv[1]
rng = np.random.default_rng(11)
F16, F32 = np.float16, np.float32


def bf16_of(x):
    """x (float32 or float64) rounded to bfloat16, as bits: the significand
    to 8 bits with rint (ties to even) in float64, subnormals at 2^-133."""
    with np.errstate(invalid="ignore", over="ignore"):  # signaling NaNs, overflow
        x = np.asarray(x, np.float64)
        _, e = np.frexp(np.where(np.isfinite(x), x, 1.0))
        ulp = np.ldexp(1.0, np.maximum(e - 8, -133))
        r = np.rint(x / ulp) * ulp
        r = np.where(np.abs(r) > 3.3895313892515355e38, np.copysign(np.inf, x), r)
        r = np.where(np.isfinite(x), r, x)
    r = np.asarray(r, np.float64).reshape(x.shape)
    bits = (r.astype(F32).view(np.uint32) >> 16).astype(np.uint16)
    assert np.array_equal(r.astype(F32).view(np.uint32) & 0xffff, np.zeros(r.shape, np.uint32)) or \
        np.isnan(r).any()
    return bits


def bf16_to_f32(bits):
    b = np.asarray(bits).view(np.uint16)
    return np.asarray(b.astype(np.uint32) << 16).view(F32).reshape(b.shape)
failed = 0
tmp = tempfile.mkdtemp()


def compile_model(name, proto, exact=False):
    return compiled_model.compile_model(aotc, tmp, name, proto, exact)


def report(ok, name, detail):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    failed += not ok


# ---- exact casts ---------------------------------------------------------
def cast_inputs():
    """Every float16 value and every midpoint, as float32 and float64."""
    allbits = np.arange(0, 1 << 16, dtype=np.uint16).view(F16)
    finite = np.sort(allbits[np.isfinite(allbits)].astype(np.float64))
    finite = np.unique(finite)
    mids = (finite[:-1] + finite[1:]) / 2  # exact ties in float32 and float64
    f32mids = mids.astype(F32)
    up, down = np.nextafter(f32mids, F32(np.inf)), np.nextafter(f32mids, F32(-np.inf))
    special = np.array([65504, 65519, 65519.996, 65520, 65536, 1e5, 3.4e38, 2**-24, 2**-25, 1.5 * 2**-25,
                        2**-26, 2**-14, 2**-14 - 2**-25, 1e-30, 0.0, np.inf, np.nan], np.float64)
    special = np.concatenate([special, -special])
    x32 = np.concatenate([allbits.astype(F32), f32mids, up, down, special.astype(F32),
                          rng.standard_normal(5000).astype(F32) * 1000])
    # float64 values whose float32 rounding is itself a float16 tie: rounding
    # through float32 would go to even, the true result goes up (or down).
    eps = 2.0 ** -40
    x64 = np.concatenate([mids + eps * np.abs(mids), mids - eps * np.abs(mids), mids, special])
    return x32, x64


def check_casts():
    x32, x64 = cast_inputs()
    n32, n64 = len(x32), len(x64)
    proto = h.make_model(h.make_graph(
        [h.make_node("Cast", ["x"], ["y16"], to=T.FLOAT16),          # into a float16 buffer
         h.make_node("Cast", ["x"], ["t"], to=T.FLOAT16),            # fused: round, read back
         h.make_node("Cast", ["t"], ["y32"], to=T.FLOAT),
         h.make_node("Cast", ["d"], ["z16"], to=T.FLOAT16),          # float64 directly
         h.make_node("Cast", ["y16"], ["w64"], to=T.DOUBLE)],        # widening is exact
        "casts",
        [h.make_tensor_value_info("x", T.FLOAT, [n32]), h.make_tensor_value_info("d", T.DOUBLE, [n64])],
        [h.make_tensor_value_info("y16", T.FLOAT16, [n32]), h.make_tensor_value_info("y32", T.FLOAT, [n32]),
         h.make_tensor_value_info("z16", T.FLOAT16, [n64]), h.make_tensor_value_info("w64", T.DOUBLE, [n32])]),
        opset_imports=[h.make_opsetid("", 19)])
    m, _ = compile_model("casts", proto, exact=True)
    y16, y32, z16, w64 = m.run([x32, x64])
    with np.errstate(over="ignore"):  # overflow to infinity is what is checked
        want16 = x32.astype(F16)
        want64 = x64.astype(F16)

    def same_bits(a, b):
        a, b = a.view(np.uint16), b.view(np.uint16)
        nan_a, nan_b = np.isnan(a.view(F16)), np.isnan(b.view(F16))
        return np.flatnonzero(~((a == b) | (nan_a & nan_b)))

    for label, got, want in (("float32 -> float16 buffer", y16, want16),
                             ("float32 -> float16 -> float32 in one kernel", y32.astype(F16), want16),
                             ("float64 -> float16", z16, want64)):
        bad = same_bits(got, want)
        src = x64 if label.startswith("float64") else x32
        detail = f"{len(got)} values" if len(bad) == 0 else \
            f"{len(bad)} differ, first x={src[bad[0]]!r}: got {got[bad[0]]!r}, want {want[bad[0]]!r}"
        report(len(bad) == 0, "cast " + label, detail)
    same = np.array_equal(w64, want16.astype(np.float64), equal_nan=True)
    report(same, "cast float16 -> float64", f"{n32} values")
    # the fused kernel must not have kept float32 precision
    report(y32.dtype == F32 and np.array_equal(y32, want16.astype(F32), equal_nan=True),
           "cast fused read-back is float16-exact", "y32 == float16(x)")


def check_bf16_casts():
    allbits = np.arange(0, 1 << 16, dtype=np.uint32)
    vals = (allbits << 16).view(F32)
    fin = np.unique(vals[np.isfinite(vals)].astype(np.float64))
    mids = ((fin[:-1] + fin[1:]) / 2).astype(F32)  # exact ties
    x = np.concatenate([vals, mids, np.nextafter(mids, F32(np.inf)), np.nextafter(mids, F32(-np.inf)),
                        np.array([3.4e38, 3.3895e38, 3.39e38, 1e-40, 1e-45, -0.0, np.inf, -np.inf, np.nan], F32),
                        rng.standard_normal(5000).astype(F32) * 1000])
    n = len(x)
    proto = h.make_model(h.make_graph(
        [h.make_node("Cast", ["x"], ["b"], to=T.BFLOAT16),
         h.make_node("Cast", ["x"], ["t"], to=T.BFLOAT16),
         h.make_node("Cast", ["t"], ["y"], to=T.FLOAT),
         h.make_node("Cast", ["b"], ["h"], to=T.FLOAT16)],
        "bcasts", [h.make_tensor_value_info("x", T.FLOAT, [n])],
        [h.make_tensor_value_info("b", T.BFLOAT16, [n]), h.make_tensor_value_info("y", T.FLOAT, [n]),
         h.make_tensor_value_info("h", T.FLOAT16, [n])]),
        opset_imports=[h.make_opsetid("", 19)])
    m, _ = compile_model("bcasts", proto, exact=True)
    b, y, hf = m.run([x])
    want = bf16_of(x)
    got = b.view(np.uint16)
    ok = (got == want) | (np.isnan(bf16_to_f32(got)) & np.isnan(x))
    bad = np.flatnonzero(~ok)
    report(b.dtype == BF16 and len(bad) == 0, "cast float32 -> bfloat16 buffer",
           f"{n} values" if len(bad) == 0 else
           f"{len(bad)} differ, first x={x[bad[0]]!r}: got {got[bad[0]]:#06x}, want {want[bad[0]]:#06x}")
    report(np.array_equal(y, bf16_to_f32(want), equal_nan=True), "cast float32 -> bfloat16 -> float32 in one kernel",
           f"{n} values")
    with np.errstate(over="ignore"):
        want_h = bf16_to_f32(want).astype(F16)
    report(np.array_equal(hf, want_h, equal_nan=True), "cast bfloat16 -> float16", f"{n} values")


# ---- models against float32 ONNX Runtime -----------------------------------
CASES = []


def case(name, build, feeds, rtol=4e-3, atol=1e-3):
    CASES.append((name, build, feeds, rtol, atol))


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


ROUND_TO_BF16 = [False]  # while the bfloat16 models run: float32 references use their values


def init(name, arr, t, raw=True):
    if t == T.FLOAT and ROUND_TO_BF16[0]:
        arr = bf16_to_f32(bf16_of(arr.astype(F32)))
    if t == T.BFLOAT16:
        a = arr.astype(F32)
        if raw:
            tensor = h.make_tensor(name, T.BFLOAT16, a.shape, bf16_of(a).tobytes(), raw=True)
            return tensor
        tensor = h.make_tensor(name, T.BFLOAT16, a.shape, a.flatten().tolist())
        assert len(tensor.int32_data) == a.size and not tensor.raw_data
        assert np.array_equal(np.array(tensor.int32_data, np.uint16), bf16_of(a).flatten())
        return tensor
    a = arr.astype(F16 if t == T.FLOAT16 else F32)
    if raw:
        return numpy_helper.from_array(a, name)
    # float16: ONNX's helper stores the bits in int32_data
    tensor = h.make_tensor(name, t, a.shape, a.astype(F32).flatten().tolist())
    assert t != T.FLOAT16 or (len(tensor.int32_data) == a.size and not tensor.raw_data)
    return tensor


def graph(name, nodes, inputs, outputs, inits=(), opset=18):
    def build(t):
        return h.make_model(h.make_graph(
            nodes(t), name, [vi(n, t if e is None else e, s) for n, e, s in inputs],
            [vi(n, t if e is None else e, s) for n, e, s in outputs], inits(t)),
            # bfloat16 Conv and MaxPool need opset 22
            opset_imports=[h.make_opsetid("", max(opset, 22) if t == T.BFLOAT16 else opset)])
    return build


def f16(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(F16)


W1 = f16(4, 3, 3, 3, scale=0.3)
B1 = f16(4)
WM = f16(33, 17, scale=0.2)
BM = f16(17)
G, BLN = f16(24), f16(24)
EMB = f16(50, 16)
C1, C2 = f16(37), f16(37)
WV = f16(70, 40, scale=0.15)
WC, BC = f16(16, 8, 3, 3, scale=0.15), f16(16)
case("pointwise chain with weights in raw_data and int32_data",
     graph("pw", lambda t: [h.make_node("Add", ["x", "y"], ["s"]), h.make_node("Mul", ["s", "c"], ["m"]),
                            h.make_node("Add", ["m", "c2"], ["m2"]), h.make_node("Relu", ["m2"], ["r"]),
                            h.make_node("Sigmoid", ["r"], ["z"]), h.make_node("Tanh", ["m2"], ["z2"])],
           [("x", None, [3, 37]), ("y", None, [3, 37])], [("z", None, [3, 37]), ("z2", None, [3, 37])],
           lambda t: [init("c", C1, t), init("c2", C2, t, raw=False)]),
     [[f16(3, 37), f16(3, 37)]])
case("MatMul + bias (odd sizes)",
     graph("mm", lambda t: [h.make_node("MatMul", ["a", "w"], ["p"]), h.make_node("Add", ["p", "b"], ["y"])],
           [("a", None, [5, 33])], [("y", None, [5, 17])],
           lambda t: [init("w", WM, t), init("b", BM, t)]),
     [[f16(5, 33)]])
# Register tiles whose sums accumulate in float vectors (vector_kernels()
# checks that they do): a symbolic batch (1 and 13 rows, partial tiles),
# N = 40 (panels of 8 lanes, the last padded), a Conv whose 16 output
# channels are two panels.
case("vector_MatMul + Relu, symbolic batch, vector-tiled",
     graph("mmv", lambda t: [h.make_node("MatMul", ["a", "w"], ["p"]), h.make_node("Relu", ["p"], ["y"])],
           [("a", None, ["n", 70])], [("y", None, ["n", 40])], lambda t: [init("w", WV, t)]),
     [[f16(1, 70)], [f16(13, 70)]])
case("vector_Conv + bias + Relu, vector-tiled",
     graph("convv", lambda t: [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                               h.make_node("Relu", ["c"], ["y"])],
           [("x", None, [2, 8, 10, 11])], [("y", None, [2, 16, 10, 11])],
           lambda t: [init("w", WC, t), init("b", BC, t)]),
     [[f16(2, 8, 10, 11)]])
case("Conv + Relu + MaxPool",
     graph("conv", lambda t: [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                              h.make_node("Relu", ["c"], ["r"]),
                              h.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
           [("x", None, [2, 3, 9, 9])], [("y", None, [2, 4, 4, 4])],
           lambda t: [init("w", W1, t), init("b", B1, t)]),
     [[f16(2, 3, 9, 9)]])
case("Softmax and LayerNormalization",
     graph("norm", lambda t: [h.make_node("Softmax", ["x"], ["s"], axis=-1),
                              h.make_node("LayerNormalization", ["x", "g", "bb"], ["l"], axis=-1)],
           [("x", None, [2, 5, 24])], [("s", None, [2, 5, 24]), ("l", None, [2, 5, 24])],
           lambda t: [init("g", G, t), init("bb", BLN, t)]),
     [[f16(2, 5, 24, scale=3.0)]])
case("ReduceMean / ReduceSum / ReduceMax",
     graph("red", lambda t: [h.make_node("ReduceMean", ["x", "ax"], ["m"], keepdims=1),
                             h.make_node("ReduceSum", ["x", "ax"], ["s"], keepdims=0),
                             h.make_node("ReduceMax", ["x", "ax"], ["mx"], keepdims=0)],
           [("x", None, [3, 7, 129])], [("m", None, [3, 7, 1]), ("s", None, [3, 7]), ("mx", None, [3, 7])],
           lambda t: [numpy_helper.from_array(np.array([-1], np.int64), "ax")]),
     [[f16(3, 7, 129)]], atol=2e-2)
case("Gather embedding, Where, Transpose, Concat",
     graph("gather", lambda t: [h.make_node("Gather", ["emb", "ids"], ["e"]),
                                h.make_node("Greater", ["e", "zero"], ["pos"]),
                                h.make_node("Where", ["pos", "e", "half"], ["w"]),
                                h.make_node("Transpose", ["w"], ["tw"], perm=[1, 0, 2]),
                                h.make_node("Concat", ["tw", "tw"], ["y"], axis=2)],
           [("ids", T.INT64, [2, 6])], [("y", None, [6, 2, 32])],
           lambda t: [init("emb", EMB, t), init("zero", np.zeros((), F16), t),
                      init("half", np.full((), 0.5, F16), t)]),
     [[rng.integers(0, 50, (2, 6)).astype(np.int64)]], rtol=0, atol=0)
case("mixed: float32 input cast to the 16-bit type, math in it, float32 output",
     graph("mixed", lambda t: [h.make_node("Cast", ["x"], ["xh"], to=t), h.make_node("Exp", ["xh"], ["e"]),
                               h.make_node("Mul", ["e", "xh"], ["p"]), h.make_node("Cast", ["p"], ["y"], to=T.FLOAT)],
           [("x", T.FLOAT, [4, 10])], [("y", T.FLOAT, [4, 10])], lambda t: []),
     [[rng.standard_normal((4, 10)).astype(F16).astype(F32) * 2]])
case("batch 0 and a scalar",
     graph("empty", lambda t: [h.make_node("Add", ["x", "s"], ["y"])],
           [("x", None, [0, 5]), ("s", None, [])], [("y", None, [0, 5])], lambda t: []),
     [[np.zeros((0, 5), F16), np.array(1.5, F16)]])


def run_cases(t):
    """Each case with elements of type t (FLOAT16 or BFLOAT16) against float32."""
    bf = t == T.BFLOAT16
    ROUND_TO_BF16[0] = bf
    tag = "bfloat16" if bf else "float16"
    for name, build, feeds, rtol, atol in CASES:
        if bf:  # 8 significant bits instead of 11
            rtol, atol = rtol * 8, atol * 8
        try:
            m, _ = compile_model(name.split()[0] + "_" + tag, build(t))
        except RuntimeError as e:
            report(False, f"{tag} {name}", str(e)[:300])
            continue
        _, path32 = compile_model(name.split()[0] + "_" + tag + "_f32", build(T.FLOAT))
        sess = ort.InferenceSession(path32, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        out_types = [o.type.tensor_type.elem_type for o in build(t).graph.output]
        for f in feeds:
            if bf:  # the same values in bfloat16 (float32 inputs: rounded alike)
                f = [bf16_of(v.astype(F32)).view(BF16) if v.dtype == F16 else
                     bf16_to_f32(bf16_of(v)) if v.dtype == F32 else v for v in f]
            f32 = {n: (v.astype(F32) if v.dtype == F16 else bf16_to_f32(v) if v.dtype == BF16 else v)
                   for n, v in zip(names, f)}
            want = sess.run(None, f32)
            got = m.run(f)
            msgs, ok = [], len(got) == len(want)
            for k, (g, w) in enumerate(zip(got, want)):
                exp_dtype = F16 if out_types[k] == T.FLOAT16 else BF16 if out_types[k] == T.BFLOAT16 \
                    else w.dtype
                if g.dtype != exp_dtype or g.shape != w.shape:
                    ok = False
                    msgs.append(f"output {k}: {g.dtype}{g.shape}, want {exp_dtype}{w.shape}")
                    continue
                gw = (bf16_to_f32(g) if g.dtype == BF16 else g).astype(np.float64)
                ww = w.astype(np.float64)
                scale = np.max(np.abs(ww)) if ww.size else 0.0
                err = np.abs(gw - ww)
                bad = err > atol * max(scale, 1.0) + rtol * np.abs(ww)
                if ww.size and (bad.any() or not np.isfinite(gw).all()):
                    ok = False
                    i = int(np.flatnonzero(bad | ~np.isfinite(gw))[0])
                    msgs.append(f"output {k}: element {i} got {gw.flat[i]!r}, want {ww.flat[i]!r}")
                else:
                    msgs.append(f"output {k} {g.dtype}{list(g.shape)} max err {err.max() if err.size else 0:.2e}")
            report(ok, f"{tag} {name}", "; ".join(msgs))


def vector_kernels(t):
    """The vector-tiled cases' contractions accumulate in float vectors fed
    by vector loads of the 16-bit weights: a regression to scalar
    accumulators (or to the naive kernel) would pass the value checks."""
    tag = "bfloat16" if t == T.BFLOAT16 else "float16"
    # float16: 8 or 16 lanes read four halves at a time (ir/expr.cpp: PoCL's
    # vload_half8/16 assume their vector's alignment).
    load = r"\(float(8|16)\)\(vload_half4\(" if t == T.FLOAT16 else r"as_float(8|16)\(convert_uint(8|16)\(vload(8|16)\("
    for name, build, _, _, _ in CASES:
        if not name.startswith("vector_"):
            continue
        path = os.path.join(tmp, f"emit_{tag}_{name.split()[0]}.onnx")
        onnx.save(build(t), path)
        r = subprocess.run([aotc, "compile", path, "--emit=cl"], capture_output=True, text=True)
        fma = re.search(r"acc\w* = fma\(.*" + load, r.stdout)
        report(r.returncode == 0 and fma is not None and re.search(r"float(8|16) acc", r.stdout) is not None,
               f"{tag} {name}: float vector accumulators",
               "vector fma on 16-bit loads" if fma else "no vector fma on 16-bit loads:\n" + r.stdout[-1500:] + r.stderr)


# ---- whole models: the test models converted to the 16-bit type ------------
def to_elem_type(model, t):
    """A copy of model with every float32 tensor (inputs, outputs, weights,
    Constant values, Cast targets) of element type t (FLOAT16, BFLOAT16 or
    FLOAT: back to float32, keeping the rounded values)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    src = (T.FLOAT16, T.BFLOAT16) if t == T.FLOAT else (T.FLOAT,)

    def conv(tensor):
        if tensor.data_type not in src:
            return tensor
        a = numpy_helper.to_array(tensor).astype(F32) if tensor.data_type != T.BFLOAT16 else \
            bf16_to_f32(np.frombuffer(tensor.raw_data, np.uint16).reshape(tensor.dims))
        if t == T.BFLOAT16:
            out = h.make_tensor(tensor.name, T.BFLOAT16, a.shape, bf16_of(a).tobytes(), raw=True)
        else:
            out = numpy_helper.from_array(a.astype(F16 if t == T.FLOAT16 else F32), tensor.name)
        return out

    for vi_ in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        if vi_.type.tensor_type.elem_type in src:
            vi_.type.tensor_type.elem_type = t
    inits = [conv(i) for i in m.graph.initializer]
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    for node in m.graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(conv(a.t))
            if node.op_type == "Cast" and a.name == "to" and a.i in src:
                a.i = t
    return m


def check_models(t):
    tag = "bfloat16" if t == T.BFLOAT16 else "float16"
    rtol = 0.03 if t == T.BFLOAT16 else 0.004  # of the largest output value
    models = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
    for name in sorted(os.listdir(models)):
        src = os.path.join(models, name, "model.onnx")
        if not os.path.exists(src):
            continue
        model = onnx.load(src)
        # the same weights, computed in float32 (at the model's own opset)
        ref = to_elem_type(to_elem_type(model, t), T.FLOAT)
        if t == T.BFLOAT16:  # the opset where Conv, pooling and Pow take bfloat16
            model = version_converter.convert_version(model, 22)
        low = to_elem_type(model, t)
        try:
            m, _ = compile_model(f"{name}_{tag}", low)
        except RuntimeError as e:
            report(False, f"{tag} model {name}", str(e)[:300])
            continue
        _, refpath = compile_model(f"{name}_{tag}_ref", ref)
        sess = ort.InferenceSession(refpath, providers=["CPUExecutionProvider"])
        x32 = numpy_helper.to_array(onnx.load_tensor(os.path.join(models, name, "test_data_set_0", "input_0.pb")))
        if t == T.BFLOAT16:
            bits = bf16_of(x32)
            feed, x32 = bits.view(BF16), bf16_to_f32(bits)
        else:
            feed = x32.astype(F16)
            x32 = feed.astype(F32)
        want = sess.run(None, {sess.get_inputs()[0].name: x32})[0]
        got = m.run([feed])[0]
        g = (bf16_to_f32(got) if got.dtype == BF16 else got).astype(np.float64)
        err = np.max(np.abs(g - want)) / max(np.max(np.abs(want)), 1e-30)
        ok = got.dtype == (BF16 if t == T.BFLOAT16 else F16) and got.shape == want.shape and err <= rtol
        report(ok, f"{tag} model {name}", f"{got.dtype}{list(got.shape)}, max error {err:.2e} of the largest value")


check_casts()
check_bf16_casts()
check_models(T.FLOAT16)
check_models(T.BFLOAT16)
run_cases(T.FLOAT16)
run_cases(T.BFLOAT16)
vector_kernels(T.FLOAT16)
vector_kernels(T.BFLOAT16)
print("float16 and bfloat16 ok" if failed == 0 else f"float16 and bfloat16: {failed} failed")
sys.exit(1 if failed else 0)
