#!/usr/bin/env python3
"""OneHot and EyeLike against a NumPy model of ONNX's definitions and, where
it has a kernel for the types, ONNX Runtime, on the tiled, naive and
GPU-profile kernels.

OneHot: indices of rank 0 to 3 (dims 0, 1 and odd sizes, a symbolic batch run
at 0, 1 and 5), every axis (negative ones too), int64 / int32 / int8 / uint8
/ float32 / float64 indices (floats with fractions, truncated toward zero as
ONNX casts them; NaN names no class), indices outside [-depth, depth) (the
whole row off, as ONNX says and ONNX Runtime does), depth a constant (int64,
int32, a float with a fraction) or a graph input (int64 scalar or [1],
float32), values of float32, float16, int64, int32 and bool. A depth below 1
is refused at compile time when constant and by the run, naming the node,
when given; values that are not two, an axis out of range and a depth
computed from data are refused at compile time.
EyeLike: shapes with 0 and 1 rows or columns and a symbolic row count, k
from -7 to 7 (off the matrix too), every dtype attribute aotc has, and none
(the input's).
Usage: check_one_hot.py AOTC
"""
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from compiled_model import compile_model
from op_checks import VARIANTS, Tally, ort_session

tally = Tally(sys.argv[1], "one hot")
rng = np.random.default_rng(83)
NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT32: np.int32,
      T.INT64: np.int64, T.INT8: np.int8, T.UINT8: np.uint8, T.BOOL: np.bool_,
      T.INT16: np.int16, T.UINT16: np.uint16, T.UINT32: np.uint32}


def one_hot_ref(idx, depth, axis, off, on, dtype):
    """ONNX's OneHot: the index cast to int64 (NaN: no class), negative ones
    plus depth, and a row of off where it names no class in [0, depth)."""
    x = np.asarray(idx)
    valid = ~np.isnan(x) if x.dtype.kind == "f" else np.ones(x.shape, bool)
    with np.errstate(invalid="ignore"):
        w = np.where(valid, np.trunc(np.nan_to_num(x.astype(np.float64))) if x.dtype.kind == "f"
                     else x, -(1 << 62)).astype(np.int64)
    w = np.where(w < 0, w + depth, w)
    r = x.ndim + 1
    axis %= r
    classes = np.arange(depth).reshape([1] * axis + [depth] + [1] * (r - 1 - axis))
    hit = np.expand_dims(w, axis) == classes
    return np.where(hit, np.asarray(on, dtype), np.asarray(off, dtype)).astype(dtype)


def index_values(t, shape, depth):
    if t in (T.FLOAT, T.DOUBLE):
        v = rng.uniform(-depth - 3, depth + 3, shape)
        whole = rng.random(shape) < 0.5
        v = np.where(whole, np.round(v), v).astype(NP[t])
        if v.size and rng.random() < 0.3:
            v.flat[rng.integers(v.size)] = np.nan
        return v
    lo, hi = (0, 255) if t == T.UINT8 else (-depth - 3, depth + 4)
    lo, hi = max(lo, np.iinfo(NP[t]).min), min(hi, np.iinfo(NP[t]).max)
    return rng.integers(lo, hi, shape).astype(NP[t])


def one_hot_model(name, itype, ishape, depth_kind, vtype, axis, depth):
    """depth_kind: ('const', onnx type) or ('input', onnx type, shape)."""
    inputs = [h.make_tensor_value_info("indices", itype, ishape)]
    inits = []
    if depth_kind[0] == "const":
        inits.append(nh.from_array(np.array([depth], NP[depth_kind[1]]), "depth"))
    else:
        inputs.append(h.make_tensor_value_info("depth", depth_kind[1], depth_kind[2]))
    inputs.append(h.make_tensor_value_info("values", vtype, [2]))
    r = len(ishape) + 1
    a = axis % r
    oshape = list(ishape)
    oshape.insert(a, depth if depth_kind[0] == "const" else "classes")
    return h.make_model(h.make_graph(
        [h.make_node("OneHot", ["indices", "depth", "values"], ["y"], name="one_hot", axis=axis)],
        name, inputs, [h.make_tensor_value_info("y", vtype, oshape)], initializer=inits),
        opset_imports=[h.make_opsetid("", 11)])


def value_pair(vtype):
    if vtype == T.BOOL:
        return np.array([False, True])
    if vtype in (T.FLOAT, T.FLOAT16):
        return rng.standard_normal(2).astype(NP[vtype])
    return rng.integers(-100, 100, 2).astype(NP[vtype])


def check_one_hot(variant, flags, k):
    itype = [T.INT64, T.INT32, T.INT8, T.UINT8, T.FLOAT, T.DOUBLE][k % 6]
    vtype = [T.FLOAT, T.INT64, T.INT32, T.FLOAT16, T.BOOL][k % 5]
    rank = int(rng.integers(0, 4))
    dims = [int(rng.choice([0, 1, 2, 3, 5, 7])) for _ in range(rank)]
    symbolic = rank > 0 and rng.random() < 0.5
    ishape = (["batch"] + dims[1:]) if symbolic else dims
    axis = int(rng.integers(-rank - 1, rank + 1))
    depth = int(rng.integers(1, 12))
    kinds = [("const", T.INT64), ("const", T.INT32), ("const", T.FLOAT),
             ("input", T.INT64, []), ("input", T.INT64, [1]), ("input", T.FLOAT, [])]
    depth_kind = kinds[int(rng.integers(len(kinds)))]
    name = f"one_hot_{variant}_{k}"
    proto = one_hot_model(name, itype, ishape, depth_kind, vtype, axis, depth)
    m = tally.compile(name, proto)
    if m is None:
        return
    sess = ort_session(proto)
    for batch in ([0, 1, 5] if symbolic else [None]):
        shape = ([batch] + dims[1:]) if symbolic else dims
        idx = index_values(itype, shape, depth)
        vals = value_pair(vtype)
        feeds = [idx]
        if depth_kind[0] == "input":
            given = depth + (0.7 if depth_kind[1] == T.FLOAT else 0)
            feeds.append(np.array(given, NP[depth_kind[1]]).reshape(depth_kind[2]))
        feeds.append(vals)
        got = m.run(feeds)[0]
        tally.runs += 1
        want = one_hot_ref(idx, depth, axis, vals[0], vals[1], NP[vtype])
        ok = got.shape == want.shape and np.array_equal(got, want)
        what = f"{name} {variant} indices {idx.dtype}{list(shape)} axis {axis} depth {depth} " \
               f"({depth_kind[0]} {T.DataType.Name(depth_kind[1])}) values {NP[vtype].__name__}"
        # ONNX Runtime compares a float index with each class as a float (a
        # fraction or NaN names none), and an empty indices tensor crashed
        # its process (1.20: int32 indices, float16 values, [0, 5, 5]).
        integral = idx.dtype.kind != "f" or np.all(np.isfinite(idx) & (idx == np.trunc(idx)))
        if sess is not None and integral and idx.size > 0:
            names = [i.name for i in sess.get_inputs()]
            ref = sess.run(None, dict(zip(names, feeds)))[0]
            ok &= np.array_equal(ref, got)
            what += " (and ONNX Runtime)"
        tally.report(ok, what)


def expect_run_refusal(m, feeds, fragment, what):
    tally.runs += 1
    try:
        m.run(feeds)
        tally.report(False, f"{what}: accepted")
    except RuntimeError as e:
        tally.report(fragment in str(e), f"{what} refused: {str(e)[:200]}")


def check_one_hot_refusals():
    idx = np.array([0, 2, -1], np.int64)
    vals = np.array([0.0, 1.0], np.float32)
    m, _ = compile_model(tally.aotc, tally.tmp, "one_hot_given_depth", one_hot_model(
        "one_hot_given_depth", T.INT64, [3], ("input", T.INT64, []), T.FLOAT, -1, 0))
    for bad in (0, -3):
        expect_run_refusal(m, [idx, np.array(bad, np.int64), vals],
                           "node 'one_hot' (OneHot): depth must be positive",
                           f"depth {bad} given at run time")
    got = m.run([idx, np.array(4, np.int64), vals])[0]
    tally.report(np.array_equal(got, one_hot_ref(idx, 4, -1, 0.0, 1.0, np.float32)),
           "the same model runs again after the refusals")
    tally.expect_compile_refusal("one_hot_depth_0", one_hot_model(
        "one_hot_depth_0", T.INT64, [3], ("const", T.INT64), T.FLOAT, -1, 0),
        "node 'one_hot' (OneHot): depth must be positive, got 0")
    tally.expect_compile_refusal("one_hot_axis", one_hot_model(
        "one_hot_axis", T.INT64, [3], ("const", T.INT64), T.FLOAT, 2, 4),
        "node 'one_hot' (OneHot): axis 2 is out of range")
    three = h.make_model(h.make_graph(
        [h.make_node("OneHot", ["indices", "depth", "values"], ["y"], name="one_hot")], "three",
        [h.make_tensor_value_info("indices", T.INT64, [3]),
         h.make_tensor_value_info("values", T.FLOAT, [3])],
        [h.make_tensor_value_info("y", T.FLOAT, [3, 4])],
        initializer=[nh.from_array(np.array([4], np.int64), "depth")]),
        opset_imports=[h.make_opsetid("", 11)])
    tally.expect_compile_refusal("one_hot_three_values", three, "must have two elements")
    from_data = h.make_model(h.make_graph(
        [h.make_node("ReduceMax", ["indices"], ["depth"], keepdims=0, name="most"),
         h.make_node("OneHot", ["indices", "depth", "values"], ["y"], name="one_hot")], "from_data",
        [h.make_tensor_value_info("indices", T.INT64, [3]),
         h.make_tensor_value_info("values", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [3, "d"])]),
        opset_imports=[h.make_opsetid("", 13)])
    tally.expect_compile_refusal("one_hot_depth_from_data", from_data,
                           "(depth) must be known at compile time or given by a graph input")


def check_eye_like(variant, k):
    dtypes = [None, T.FLOAT, T.DOUBLE, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT8,
              T.UINT16, T.UINT32, T.BOOL]
    dt = dtypes[k % len(dtypes)]
    xtype = [T.FLOAT, T.INT64, T.INT32][k % 3]
    cols = int(rng.choice([0, 1, 4, 7]))
    diag = int(rng.integers(-7, 8))
    symbolic = k % 2 == 0
    rows = int(rng.choice([0, 1, 3, 6]))
    name = f"eye_like_{variant}_{k}"
    attrs = {"k": diag}
    if dt is not None:
        attrs["dtype"] = dt
    out_type = dt if dt is not None else xtype
    proto = h.make_model(h.make_graph(
        [h.make_node("EyeLike", ["x"], ["y"], name="eye", **attrs)], name,
        [h.make_tensor_value_info("x", xtype, ["rows" if symbolic else rows, cols])],
        [h.make_tensor_value_info("y", out_type, ["rows" if symbolic else rows, cols])]),
        opset_imports=[h.make_opsetid("", 13)])
    m = tally.compile(name, proto)
    if m is None:
        return
    sess = ort_session(proto)
    for r in ([0, 1, 5] if symbolic else [rows]):
        x = (rng.standard_normal((r, cols)) * 10).astype(NP[xtype])
        got = m.run([x])[0]
        tally.runs += 1
        want = np.eye(r, cols, diag, dtype=NP[out_type])
        ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
        what = f"{name} {variant} [{r}, {cols}] k {diag} dtype {NP[out_type].__name__}"
        if sess is not None:
            ok &= np.array_equal(sess.run(None, {"x": x})[0], got)
            what += " (and ONNX Runtime)"
        tally.report(ok, what)


for variant, flags in VARIANTS:
    tally.set_variant(flags)
    for k in range(24):
        check_one_hot(variant, flags, k)
    for k in range(12):
        check_eye_like(variant, k)
tally.set_variant("")
check_one_hot_refusals()
tally.finish()
