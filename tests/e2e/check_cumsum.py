#!/usr/bin/env python3
"""CumSum against NumPy and ONNX Runtime: every dtype it takes (float32/64, float16,
int32/64, uint32), axes first/middle/last/negative, exclusive and reverse
in all four combinations, odd sizes, a symbolic batch run at 0, 1 and 5, and
the position-ids pattern of exported transformers (cumsum of an attention
mask, minus one, masked). Integers must match exactly; floats within
float rounding of a different summation order. An axis given at run time
sums along the dim each run names. Usage: check_cumsum.py AOTC
"""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from compiled_model import compile_model

aotc = sys.argv[1]
rng = np.random.default_rng(3)
tmp = tempfile.mkdtemp()
failed = 0
runs = 0
NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT32: np.int32,
      T.INT64: np.int64, T.UINT32: np.uint32}


def values(t, shape):
    if t in (T.FLOAT, T.DOUBLE, T.FLOAT16):
        return rng.standard_normal(shape).astype(NP[t])
    if t == T.UINT32:
        return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)  # wraps
    info = np.iinfo(NP[t])
    return rng.integers(info.min, info.max, shape, dtype=NP[t], endpoint=True)  # wraps


def numpy_cumsum(x, axis, exclusive, reverse):
    """The reference: floats summed in float64, integers wrapping."""
    a = np.flip(x, axis) if reverse else x
    flt = np.issubdtype(x.dtype, np.floating)
    acc = np.cumsum(a, axis=axis, dtype=np.float64 if flt else x.dtype)
    if exclusive:
        acc = np.roll(acc, 1, axis=axis)
        idx = [slice(None)] * x.ndim
        idx[axis] = 0
        acc[tuple(idx)] = 0
    if reverse:
        acc = np.flip(acc, axis)
    return acc.astype(x.dtype)


def check(name, proto, feeds_list, reference=None):
    global failed, runs
    try:
        m, path = compile_model(aotc, tmp, name, proto)
    except RuntimeError as e:
        print(f"FAIL {name}: {str(e)[:300]}")
        failed += 1
        return
    sess = None if reference else ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for feeds in feeds_list:
        runs += 1
        want = [reference(*feeds.values())] if reference else sess.run(None, feeds)
        got = m.run(list(feeds.values()))
        ok = len(want) == len(got)
        for g, w in zip(got, want):
            ok &= g.dtype == w.dtype and g.shape == w.shape
            if not ok:
                break
            if np.issubdtype(w.dtype, np.floating):
                tol = 2e-3 if w.dtype == np.float16 else 1e-5
                scale = max(float(np.max(np.abs(w.astype(np.float64)))), 1.0) if w.size else 1.0
                ok &= bool(np.all(np.abs(g.astype(np.float64) - w) <= tol * scale))
            else:
                ok &= bool(np.array_equal(g, w))
        shapes = [tuple(v.shape) for v in feeds.values()]
        print(f"{'ok  ' if ok else 'FAIL'} {name} {shapes}")
        failed += not ok


def cumsum_model(name, t, shape, axis, exclusive, reverse):
    return h.make_model(h.make_graph(
        [h.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)], name,
        [h.make_tensor_value_info("x", t, shape)], [h.make_tensor_value_info("y", t, shape)],
        [numpy_helper.from_array(np.array(axis, np.int64 if axis % 2 == 0 else np.int32), "axis")]),
        opset_imports=[h.make_opsetid("", 14)])


for t in (T.FLOAT, T.DOUBLE, T.FLOAT16, T.INT32, T.INT64, T.UINT32):
    for axis in (0, 1, 2, -1):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                name = f"cumsum_{onnx.TensorProto.DataType.Name(t).lower()}_a{axis}_e{exclusive}_r{reverse}"
                # NumPy: ONNX Runtime has no float16 or uint32 CumSum
                check(name, cumsum_model(name, t, [3, 5, 7], axis, exclusive, reverse),
                      [{"x": values(t, (3, 5, 7))}],
                      lambda x, a=axis, e=exclusive, r=reverse: numpy_cumsum(x, a, e, r))
# A symbolic batch along the summed axis and beside it, batch 0 included.
for axis in (0, 1):
    name = f"cumsum_symbolic_a{axis}"
    check(name, cumsum_model(name, T.FLOAT, ["batch", 9], axis, 0, 0),
          [{"x": values(T.FLOAT, (b, 9))} for b in (0, 1, 5)])
# position_ids = cumsum(attention_mask, -1) * mask - 1 (with padding), as
# transformers' exports compute them.
pos = h.make_model(h.make_graph(
    [h.make_node("CumSum", ["mask", "axis"], ["c"]), h.make_node("Mul", ["c", "mask"], ["cm"]),
     h.make_node("Sub", ["cm", "one"], ["pos"])], "position_ids",
    [h.make_tensor_value_info("mask", T.INT64, ["batch", "seq"])],
    [h.make_tensor_value_info("pos", T.INT64, ["batch", "seq"])],
    [numpy_helper.from_array(np.array(-1, np.int64), "axis"), numpy_helper.from_array(np.array(1, np.int64), "one")]),
    opset_imports=[h.make_opsetid("", 14)])
masks = []
for b, s in ((1, 1), (2, 13), (4, 130)):
    mk = np.ones((b, s), np.int64)
    for k in range(b):
        mk[k, : rng.integers(0, s)] = 0  # left padding
    masks.append({"mask": mk})
check("position_ids", pos, masks)
# The axis given at run time (a graph input, int64 or int32): one .so sums
# along whichever dim each run names; exclusive and reverse; an axis outside
# [-rank, rank) is refused by the run, naming the node.
for t, at in ((T.FLOAT, T.INT64), (T.INT32, T.INT32)):
    for exclusive, reverse in ((0, 0), (1, 1)):
        name = f"cumsum_runtime_axis_{onnx.TensorProto.DataType.Name(t).lower()}_e{exclusive}_r{reverse}"
        proto = h.make_model(h.make_graph(
            [h.make_node("CumSum", ["x", "axis"], ["y"], name="running_total", exclusive=exclusive,
                         reverse=reverse)], name,
            [h.make_tensor_value_info("x", t, ["batch", 5, 7]), h.make_tensor_value_info("axis", at, [])],
            [h.make_tensor_value_info("y", t, ["batch", 5, 7])]), opset_imports=[h.make_opsetid("", 14)])
        ai = NP[at]
        check(name, proto, [{"x": values(t, (b, 5, 7)), "axis": np.array(a, ai)}
                            for b, a in ((3, 0), (3, 1), (2, 2), (4, -1), (3, -3), (0, 1), (1, 0))],
              lambda x, a, e=exclusive, r=reverse: numpy_cumsum(x, int(a), e, r))
        m, _ = compile_model(aotc, tmp, name + "_bad", proto)
        for a in (3, -4):
            runs += 1
            try:
                m.run([values(t, (2, 5, 7)), np.array(a, ai)])
                msg, ok = "ran", False
            except RuntimeError as e:
                msg = str(e)
                ok = "node 'running_total' (CumSum)" in msg and "outside [-rank, rank)" in msg
            print(f"{'ok  ' if ok else 'FAIL'} {name} axis {a} is refused: {msg[:200]}")
            failed += not ok
print(f"cumsum: {runs} runs, {failed} failed")
sys.exit(1 if failed else 0)
