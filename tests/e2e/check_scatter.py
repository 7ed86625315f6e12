#!/usr/bin/env python3
"""ScatterND, ScatterElements and Scatter against ONNX's own loops (the spec's
reference, in NumPy) and ONNX Runtime. ScatterND: index rows naming elements and slices (k from 1 to the rank),
rows in zero, one and two leading dims, negative indices, no rows at all,
every reduction (none, add, mul, max, min) with duplicate rows, NaN into max
and min, every dtype aotc has (bool only without a reduction), a symbolic
batch run at 0, 1 and 5 (a cache written at one position per row, as
exported decoders do), on the tiled, naive and GPU-profile kernels. An index
outside [-dim, dim) is a run-time error naming the node; bad operands are
refused at compile time. ScatterElements: every axis (negative ones too),
int32 and int64 indices smaller than the data off the axis, duplicates with
every reduction, a symbolic batch, and opset 10's Scatter.
Usage: check_scatter.py AOTC
"""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

from compiled_model import compile_model

aotc = sys.argv[1]
rng = np.random.default_rng(21)
tmp = tempfile.mkdtemp()
failed = 0
runs = 0
NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT32: np.int32,
      T.INT64: np.int64, T.UINT8: np.uint8, T.BOOL: np.bool_}


def reference(data, indices, updates, reduction):
    """ONNX's definition: a copy of data, then each row in order."""
    out = np.copy(data)
    f = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}.get(reduction)
    for idx in np.ndindex(indices.shape[:-1]):
        at = tuple(indices[idx])
        out[at] = updates[idx] if f is None else f(out[at], updates[idx])
    return out


def values(t, shape):
    if t in (T.FLOAT, T.DOUBLE, T.FLOAT16):
        return rng.standard_normal(shape).astype(NP[t])
    if t == T.BOOL:
        return rng.random(shape) < 0.5
    if t == T.UINT8:
        return rng.integers(0, 256, shape).astype(np.uint8)
    return rng.integers(-50, 50, shape).astype(NP[t])


def rows_of(shape, k, lead, unique, negative=True):
    """Index rows [*lead, k] into shape's first k dims: distinct when unique,
    some counted from the end."""
    n = int(np.prod(lead)) if lead else 1
    space = int(np.prod(shape[:k]))
    flat = rng.choice(space, n, replace=False) if unique else rng.integers(0, max(space, 1), n)
    idx = np.stack(np.unravel_index(flat, shape[:k]), axis=-1).astype(np.int64) if space else \
        np.zeros((n, k), np.int64)
    if negative:
        flip = rng.random(idx.shape) < 0.3
        idx = np.where(flip, idx - np.array(shape[:k]), idx)
    return idx.reshape(list(lead) + [k])


def model(name, t, dshape, ishape, ushape, reduction, opset):
    attrs = {} if reduction == "none" and opset < 16 else {"reduction": reduction}
    return h.make_model(h.make_graph(
        [h.make_node("ScatterND", ["data", "indices", "updates"], ["y"], name="write_rows", **attrs)],
        name, [h.make_tensor_value_info("data", t, dshape),
               h.make_tensor_value_info("indices", T.INT64, ishape),
               h.make_tensor_value_info("updates", t, ushape)],
        [h.make_tensor_value_info("y", t, dshape)]), opset_imports=[h.make_opsetid("", opset)])


def same(got, want, t, reduction):
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if t in (T.FLOAT, T.DOUBLE, T.FLOAT16) and reduction in ("add", "mul"):
        # duplicate rows summed in another order
        tol = 4e-3 if t == T.FLOAT16 else 1e-5
        w = want.astype(np.float64)
        return bool(np.all(np.abs(got.astype(np.float64) - w) <= tol * (1 + np.abs(w))))
    return bool(np.array_equal(got, want, equal_nan=t in (T.FLOAT, T.DOUBLE, T.FLOAT16)))


def compiled(name, proto, flags, ort_check):
    """(the model compiled with flags, an ONNX Runtime session or None), or
    None after reporting a compile failure."""
    global failed
    os.environ["AOTC_COMPILE_FLAGS"] = flags
    try:
        m, path = compile_model(aotc, tmp, name, proto)
    except RuntimeError as e:
        print(f"FAIL {name}: {str(e)[:300]}")
        failed += 1
        return None
    return m, (ort.InferenceSession(path, providers=["CPUExecutionProvider"]) if ort_check
               else None)


def batched(shape, batches):
    """shape with dim 0 named "batch" when runs give it values."""
    return ["batch"] + list(shape[1:]) if batches else list(shape)


def compare(m, sess, label, t, reduction, data, idx, upd, ref):
    """Runs m (and sess, when given) on data, idx and upd against
    ref(data, idx, upd); max and min get a NaN in data and in upd."""
    global failed, runs
    if reduction in ("max", "min") and t in (T.FLOAT, T.DOUBLE) and data.size and upd.size:
        data.flat[0] = np.nan
        upd.flat[-1] = np.nan
    runs += 1
    got = m.run([data, idx, upd])[0]
    ok = same(got, ref(data, idx, upd), t, reduction)
    if sess is not None:
        ok &= same(sess.run(None, {"data": data, "indices": idx, "updates": upd})[0], got, t,
                   reduction)
    print(f"{'ok  ' if ok else 'FAIL'} {label}")
    failed += not ok


def refused_at_run(m, inputs, node, what):
    """A run of m on inputs fails with an out-of-range error naming node."""
    global failed, runs
    runs += 1
    try:
        m.run(inputs)
        msg, ok = "ran", False
    except RuntimeError as e:
        msg = str(e)
        ok = node in msg and "out of range" in msg
    print(f"{'ok  ' if ok else 'FAIL'} {what} refused: {msg[:160]}")
    failed += not ok


def refused_at_compile(name, proto, node, why):
    """Compiling proto fails with a message naming node and saying why."""
    global failed, runs
    runs += 1
    try:
        compile_model(aotc, tmp, name, proto)
        msg, ok = "compiled", False
    except RuntimeError as e:
        msg = str(e)
        ok = node in msg and why in msg
    print(f"{'ok  ' if ok else 'FAIL'} {name} refused: {msg[:200]}")
    failed += not ok


def check(name, t, dshape, k, lead, reduction, flags="", ort_check=False, batches=None,
          unique=True):
    """Compiles ScatterND over data of dshape and rows [*lead, k]; runs it on
    random data against the reference (batches: the values of dim 0 of the
    data, the rows and the updates, then named "batch")."""
    global failed, runs
    opset = 18 if reduction in ("max", "min") else 16
    ushape = list(lead) + list(dshape[k:])
    built = compiled(name, model(name, t, batched(dshape, batches),
                                 batched(list(lead) + [k], batches), batched(ushape, batches),
                                 reduction, opset), flags, ort_check)
    if not built:
        return
    m, sess = built
    for b in batches or [None]:
        ds = list(dshape) if b is None else [b] + list(dshape[1:])
        ld = list(lead) if b is None or not lead else [b] + list(lead[1:])
        data = values(t, ds)
        idx = rows_of(ds, k, ld, unique and reduction == "none")
        if b is not None:  # a row per batch entry names its own batch
            idx[..., 0] = np.arange(b).reshape([b] + [1] * (idx.ndim - 2)) if idx.size else 0
        compare(m, sess, f"{name} data {ds} rows {ld + [k]}", t, reduction, data, idx,
                values(t, ld + ds[k:]), lambda d, i, u: reference(d, i, u, reduction))


VARIANTS = [("tiled", ""), ("naive", "--naive-kernels"), ("gpu", "--device-profile generic-gpu")]
# ONNX's two examples, element rows and slice rows.
for vname, flags in VARIANTS:
    check(f"snd_elem_{vname}", T.FLOAT, [8], 1, [4], "none", flags, ort_check=True)
    check(f"snd_slices_{vname}", T.FLOAT, [4, 4, 4], 1, [2], "none", flags, ort_check=True)
    check(f"snd_k2_{vname}", T.FLOAT, [5, 6, 7], 2, [3, 2], "none", flags, ort_check=True)
    check(f"snd_k3_{vname}", T.FLOAT, [5, 6, 7], 3, [9], "none", flags, ort_check=True)
    check(f"snd_one_row_{vname}", T.FLOAT, [5, 6, 7], 2, [], "none", flags, ort_check=True)
    check(f"snd_no_rows_{vname}", T.FLOAT, [5, 6], 1, [0], "none", flags)
    # Duplicate rows without a reduction: the last one wins, as in ONNX's
    # loop (which ONNX leaves open).
    check(f"snd_duplicates_{vname}", T.FLOAT, [5, 3], 1, [4, 3], "none", flags, unique=False)
    for red in ("add", "mul", "max", "min"):
        check(f"snd_{red}_{vname}", T.FLOAT, [6, 5, 3], 1, [4, 3], red, flags,
              ort_check=red in ("add", "mul"))
    # A cache [batch, heads, positions, width] written at one position per
    # (batch, head): indices [batch, heads, 1, 3], the batch symbolic.
    check(f"snd_cache_{vname}", T.FLOAT, [3, 2, 16, 8], 3, [3, 2, 1], "none", flags,
          batches=[0, 1, 5])
for t in (T.DOUBLE, T.FLOAT16, T.INT32, T.INT64, T.UINT8, T.BOOL):
    tn = onnx.TensorProto.DataType.Name(t).lower()
    check(f"snd_{tn}", t, [4, 5, 3], 2, [2, 3], "none")
    if t != T.BOOL:
        for red in ("add", "mul", "max", "min"):
            check(f"snd_{tn}_{red}", t, [4, 5, 3], 1, [3, 2], red)

# A row outside [-dim, dim) is a run-time error naming the node; the
# container runs again afterwards.
os.environ["AOTC_COMPILE_FLAGS"] = ""
m, _ = compile_model(aotc, tmp, "snd_bad", model("snd_bad", T.FLOAT, [4, 5], [2, 1], [2, 5],
                                                 "none", 16))
for bad in (4, -5, 1 << 40):
    refused_at_run(m, [values(T.FLOAT, [4, 5]), np.array([[1], [bad]], np.int64),
                       values(T.FLOAT, [2, 5])], "node 'write_rows' (ScatterND)", f"index {bad}")
runs += 1
data, upd = values(T.FLOAT, [4, 5]), values(T.FLOAT, [2, 5])
idx = np.array([[3], [-4]], np.int64)
ok = same(m.run([data, idx, upd])[0], reference(data, idx, upd, "none"), T.FLOAT, "none")
print(f"{'ok  ' if ok else 'FAIL'} runs again after the refusals")
failed += not ok
# Refused at compile time, naming the node.
BAD = [([4, 5], [2, 3], [2], "index rows of 3 do not fit"),
       ([4, 5], [2, 1], [2, 4], "dim 1 of updates"),
       ([4, 5], [2, 1], [2], "must have rank 2")]
for k, (ds, ish, ush, why) in enumerate(BAD):
    refused_at_compile(f"snd_refused{k}", model(f"snd_refused{k}", T.FLOAT, ds, ish, ush, "none",
                                                16), "write_rows", why)


def reference_elements(data, indices, updates, axis, reduction):
    """ONNX's ScatterElements: each position of indices in order."""
    out = np.copy(data)
    f = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}.get(reduction)
    for p in np.ndindex(indices.shape):
        at = list(p)
        at[axis] = indices[p]
        at = tuple(at)
        out[at] = updates[p] if f is None else f(out[at], updates[p])
    return out


def elements_model(name, t, it, dshape, ishape, axis, reduction, opset):
    attrs = {"axis": axis}
    if reduction != "none" or opset >= 16:
        attrs["reduction"] = reduction
    op = "Scatter" if opset < 11 else "ScatterElements"
    return h.make_model(h.make_graph(
        [h.make_node(op, ["data", "indices", "updates"], ["y"], name="write_elements", **attrs)],
        name, [h.make_tensor_value_info("data", t, dshape),
               h.make_tensor_value_info("indices", it, ishape),
               h.make_tensor_value_info("updates", t, ishape)],
        [h.make_tensor_value_info("y", t, dshape)]), opset_imports=[h.make_opsetid("", opset)])


def check_elements(name, t, dshape, ishape, axis, reduction, it=T.INT64, flags="", opset=None,
                   batches=None, ort_check=False, unique=True):
    """ScatterElements of indices [ishape] into data [dshape] (a "batch" dim
    0 in both when batches are given: its values)."""
    global failed, runs
    opset = opset or (18 if reduction in ("max", "min") else 16)
    built = compiled(name, elements_model(name, t, it, batched(dshape, batches),
                                          batched(ishape, batches), axis, reduction, opset),
                     flags, ort_check)
    if not built:
        return
    m, sess = built
    for b in batches or [None]:
        ds = list(dshape) if b is None else [b] + list(dshape[1:])
        ish = list(ishape) if b is None else [b] + list(ishape[1:])
        ax = axis % len(ds)
        data, upd = values(t, ds), values(t, ish)
        if reduction == "none" and unique:  # distinct targets along each line of the axis
            idx = np.zeros(ish, np.int64)
            for p in np.ndindex(*[d for i, d in enumerate(ish) if i != ax]):
                line = rng.choice(ds[ax], ish[ax], replace=False)
                sl = list(p)
                sl.insert(ax, slice(None))
                idx[tuple(sl)] = line
        else:
            idx = rng.integers(0, ds[ax], ish) if ds[ax] else np.zeros(ish, np.int64)
        idx = np.where(rng.random(ish) < 0.3, idx - ds[ax], idx).astype(NP[it])
        compare(m, sess, f"{name} data {ds} indices {ish} axis {axis}", t, reduction, data,
                idx, upd, lambda d, i, u: reference_elements(d, i, u, ax, reduction))


for vname, flags in VARIANTS:
    check_elements(f"se_axis0_{vname}", T.FLOAT, [6, 5], [3, 5], 0, "none", flags=flags,
                   ort_check=True)
    check_elements(f"se_axis1_{vname}", T.FLOAT, [4, 7, 3], [2, 5, 3], 1, "none", flags=flags,
                   ort_check=True)
    check_elements(f"se_last_{vname}", T.FLOAT, [4, 7, 9], [3, 2, 4], -1, "none", T.INT32,
                   flags=flags, ort_check=True)
    for red in ("add", "mul", "max", "min"):
        check_elements(f"se_{red}_{vname}", T.FLOAT, [5, 6], [5, 8], 1, red, flags=flags,
                       ort_check=red in ("add", "mul"))
    check_elements(f"se_batch_{vname}", T.FLOAT, [3, 8, 4], [3, 2, 4], 1, "none", flags=flags,
                   batches=[0, 1, 5])
    check_elements(f"se_duplicates_{vname}", T.FLOAT, [3, 4], [3, 9], 1, "none", flags=flags,
                   unique=False)
for t in (T.DOUBLE, T.FLOAT16, T.INT32, T.INT64, T.UINT8, T.BOOL):
    tn = onnx.TensorProto.DataType.Name(t).lower()
    check_elements(f"se_{tn}", t, [4, 5, 3], [4, 2, 3], 1, "none")
    if t != T.BOOL:
        for red in ("add", "mul", "max", "min"):
            check_elements(f"se_{tn}_{red}", t, [4, 5, 3], [2, 5, 3], 0, red)
check_elements("scatter_opset10", T.FLOAT, [5, 4], [5, 2], 1, "none", opset=10, ort_check=True)
os.environ["AOTC_COMPILE_FLAGS"] = ""
m, _ = compile_model(aotc, tmp, "se_bad", elements_model("se_bad", T.FLOAT, T.INT64, [4, 5],
                                                         [2, 5], 1, "none", 16))
for bad in (5, -6):
    idx = np.zeros((2, 5), np.int64)
    idx[1, 3] = bad
    refused_at_run(m, [values(T.FLOAT, [4, 5]), idx, values(T.FLOAT, [2, 5])],
                   "node 'write_elements' (ScatterElements)", f"index {bad}")
refused_at_compile("se_refused", elements_model("se_refused", T.FLOAT, T.INT64, [4, 5], [2, 6],
                                                0, "none", 16),
                   "write_elements", "must not exceed the data's")
print(f"scatter: {runs} runs, {failed} failed")
sys.exit(1 if failed else 0)
