#!/usr/bin/env python3
"""Outputs sized by counts the model computes while it runs (NonZero,
Compress, Unique) against NumPy (np.nonzero, np.compress, np.unique) and, where it runs them,
ONNX Runtime: random data with zeros, -0.0 and NaN; all zero, all nonzero,
empty inputs, a scalar (refused), symbolic dims over several 256-position blocks;
consumers of the count (Transpose + GatherND, Shape, a ReduceSum over the
gathered values); Compress along each axis and flattened, a condition
shorter than the axis, all false, and one true past the axis (an error the
run reports, as NumPy raises); Unique flattened and along axes, sorted
and in order of appearance, NaN, empty, all four outputs; the same .so over many counts; a too-small
output buffer (BUFFER_TOO_SMALL with the shape filled); output shapes
before the run (-1 for a counted dim); `aotc run` (the C++ runner's
retry with the size the first run reported).
Usage: check_data_dependent.py AOTC    (prints "data-dependent ok")
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper
from onnx import TensorProto as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model, Tensor, _fill  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:  # NumPy stays the oracle
    ort = None

aotc = sys.argv[1]
rng = np.random.default_rng(5)
failed = runs = 0


def build(tmp, name, nodes, inputs, outputs, opset=13):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, [None] * r) for n, t, r in outputs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    so = path[:-5] + ".so"
    r = subprocess.run([aotc, "compile", path, "-o", so], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: {r.stderr}")
    return path, so, Model(so, device="cpu")


def check(label, got, want, onnx_path=None, feeds=None):
    global failed, runs
    runs += 1
    ok = len(got) == len(want)
    for g, w in zip(got, want):
        ok = ok and g.shape == w.shape and g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
    if ok and ort is not None and onnx_path is not None:
        try:
            sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        except Exception as e:  # ONNX Runtime lacks some types (NonZero f64)
            if "NOT_IMPLEMENTED" not in str(e):
                raise
            sess = None
        for g, o in zip(got, sess.run(None, feeds) if sess else []):
            ok = ok and g.shape == o.shape and np.array_equal(g, o, equal_nan=True)
    if not ok:
        failed += 1
        print(f"FAIL {label}: got {[(g.shape, g.ravel()[:8]) for g in got]} "
              f"want {[(w.shape, w.ravel()[:8]) for w in want]}")


def sparse(shape, dtype, density=0.5):
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) > density] = 0
    if np.issubdtype(dtype, np.floating):
        x = x.astype(dtype)
        flat = x.reshape(-1)
        if flat.size >= 3:
            flat[:3] = [-0.0, np.nan, 0.0]  # -0.0 is zero, NaN is not
        return x
    if dtype == np.bool_:
        return x != 0
    return (x * 50).astype(dtype)


def nonzero(x):
    return np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)


with tempfile.TemporaryDirectory() as tmp:
    # NonZero of static shapes and dtypes.
    for dt, onnx_t, shape in [(np.float32, T.FLOAT, [3, 5]), (np.int32, T.INT32, [7]),
                              (np.bool_, T.BOOL, [2, 3, 4]), (np.float64, T.DOUBLE, [1, 1, 513]),
                              (np.uint8, T.UINT8, [1])]:
        name = f"nz_{np.dtype(dt).name}_{len(shape)}d"
        path, so, m = build(tmp, name, [h.make_node("NonZero", ["x"], ["y"])],
                            [("x", onnx_t, shape)], [("y", T.INT64, 2)])
        cases = [sparse(shape, dt), np.zeros(shape, dt), np.ones(shape, dt)]
        for k, x in enumerate(cases):
            x = np.asarray(x, dtype=dt)
            check(f"{name} case {k}", m.run([x]), [nonzero(x)], path, {"x": x})

    # A scalar is refused naming the node (ONNX's shape inference and ONNX
    # Runtime disagree on its shape).
    runs += 1
    try:
        build(tmp, "nz_scalar", [h.make_node("NonZero", ["x"], ["y"])],
              [("x", T.FLOAT, [])], [("y", T.INT64, 2)])
        failed += 1
        print("FAIL nz_scalar compiled")
    except RuntimeError as e:
        if "node 'y' (NonZero): NonZero of a scalar" not in str(e):
            failed += 1
            print(f"FAIL nz_scalar: {e}")

    # Symbolic dims, several blocks, the same .so over many counts; the
    # count used further on (indices transposed into GatherND, Shape).
    nodes = [h.make_node("NonZero", ["x"], ["i"]),
             h.make_node("Transpose", ["i"], ["t"]),
             h.make_node("GatherND", ["x", "t"], ["g"]),
             h.make_node("ReduceSum", ["g"], ["s"], keepdims=0),
             h.make_node("Shape", ["i"], ["shape"])]
    path, so, m = build(tmp, "nz_sym", nodes, [("x", T.FLOAT, ["n", 7])],
                        [("i", T.INT64, 2), ("g", T.FLOAT, 1), ("s", T.FLOAT, 0),
                         ("shape", T.INT64, 1)])
    for n in [0, 1, 36, 37, 300, 1000, 10000]:  # 10000: 70000 positions, 2 super-blocks
        for density in [0.0, 0.3, 1.0]:
            x = sparse([n, 7], np.float32, density)
            x[np.isnan(x)] = 5.0  # a NaN would make the sum NaN
            i = nonzero(x)
            g = x[tuple(i)]
            got = m.run([x])
            check(f"nz_sym n={n} density={density}", got[:2] + [got[3]],
                  [i, g, np.array(i.shape, np.int64)])
            if ort is not None:
                o = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
                check(f"nz_sym n={n} density={density} vs ONNX Runtime",
                      got[:2] + [got[3]], [o[0], o[1], o[3]])
            runs += 1
            # (Summation order differs: the bound is relative to sum |g|.)
            if abs(got[2] - g.sum(dtype=np.float64)) > 1e-5 * (np.abs(g).sum() + 1):
                failed += 1
                print(f"FAIL nz_sym sum n={n}: {got[2]} vs {g.sum()}")

    # Compress along each axis, flattened, short conditions, all false.
    x = rng.standard_normal([4, 5, 6]).astype(np.float32)
    for axis in [0, 1, 2, -1, None]:
        attrs = {} if axis is None else {"axis": axis}
        path, so, m = build(tmp, f"compress_{axis}",
                            [h.make_node("Compress", ["x", "c"], ["y"], **attrs)],
                            [("x", T.FLOAT, [4, 5, 6]), ("c", T.BOOL, ["k"])],
                            [("y", T.FLOAT, 1 if axis is None else 3)])
        length = x.size if axis is None else x.shape[axis]
        for k in sorted({1, length // 2, length}):
            for cond in [rng.random(k) > 0.5, np.zeros(k, bool), np.ones(k, bool)]:
                check(f"compress axis={axis} len={k}", m.run([x, cond]),
                      [np.compress(cond, x, axis=axis)], path, {"x": x, "c": cond})
        # A true element past the axis is an error naming the node.
        cond = np.zeros(length + 2, bool)
        cond[length + 1] = True
        runs += 1
        try:
            m.run([x, cond])
            failed += 1
            print(f"FAIL compress axis={axis}: a true past the axis ran")
        except RuntimeError as e:
            if "Compress" not in str(e) or "past the" not in str(e):
                failed += 1
                print(f"FAIL compress axis={axis}: {e}")

    # Compress of int64 and bool data with a symbolic axis.
    for dt, onnx_t in [(np.int64, T.INT64), (np.bool_, T.BOOL)]:
        path, so, m = build(tmp, f"compress_{np.dtype(dt).name}",
                            [h.make_node("Compress", ["x", "c"], ["y"], axis=1)],
                            [("x", onnx_t, [2, "m"]), ("c", T.BOOL, ["k"])], [("y", onnx_t, 2)])
        for mm in [0, 3, 600]:
            xv = sparse([2, mm], dt)
            cond = rng.random(mm) > 0.3
            check(f"compress {np.dtype(dt).name} m={mm}", m.run([xv, cond]),
                  [np.compress(cond, xv, axis=1)], path, {"x": xv, "c": cond})

    # Unique: flattened and along axes, sorted and in order of appearance,
    # all four outputs.
    def unique_ref(x, axis, sorted_):
        y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True,
                                     return_counts=True, axis=axis)
        inv = inv.reshape(-1)
        if not sorted_:
            perm = np.argsort(idx, kind="stable")
            y = np.take(y, perm, axis=0 if axis is None else axis)
            idx, cnt = idx[perm], cnt[perm]
            inv = np.argsort(perm)[inv]
        return [y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)]

    outs4 = lambda t, r: [("y", t, r), ("indices", T.INT64, 1), ("inverse", T.INT64, 1),
                          ("counts", T.INT64, 1)]
    for sorted_ in [1, 0]:
        for dt, onnx_t in [(np.float32, T.FLOAT), (np.int64, T.INT64)]:
            name = f"unique_{np.dtype(dt).name}_{sorted_}"
            path, so, m = build(tmp, name, [h.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"],
                                                        sorted=sorted_)],
                                [("x", onnx_t, ["n"])], outs4(onnx_t, 1), opset=11)
            for size in [0, 1, 9, 300]:
                x = rng.integers(-4, 5, size).astype(dt)
                check(f"{name} n={size}", m.run([x]), unique_ref(x, None, sorted_), path, {"x": x})
            if dt == np.float32:  # NaN: one, after every number (np.unique's equal_nan)
                x = np.array([2, np.nan, -1, 2, np.nan, 0, -0.0], np.float32)
                check(f"{name} NaN", m.run([x]), unique_ref(x, None, sorted_))
    for axis, shape in [(0, [6, 3]), (1, [3, 7]), (-1, [2, 3, 5]), (1, [2, 0, 3])]:
        for sorted_ in [1, 0]:
            name = f"unique_axis{axis}_{len(shape)}d_{sorted_}"
            path, so, m = build(tmp, name, [h.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"],
                                                        axis=axis, sorted=sorted_)],
                                [("x", T.INT64, shape)], outs4(T.INT64, len(shape)), opset=11)
            x = rng.integers(0, 2, shape).astype(np.int64)
            check(name, m.run([x]), unique_ref(x, axis, sorted_), path if 0 not in shape else None, {"x": x})
    # Symbolic dims along and across the axis (a = 0: no item at all).
    path, so, m = build(tmp, "unique_axis_sym", [h.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"],
                                                            axis=0)],
                        [("x", T.INT64, ["a", "b"])], outs4(T.INT64, 2), opset=11)
    for a, b in [(0, 3), (1, 2), (7, 3), (40, 2)]:
        x = rng.integers(0, 2, [a, b]).astype(np.int64)
        check(f"unique_axis_sym {a}x{b}", m.run([x]), unique_ref(x, 0, 1),
              path if a else None, {"x": x})

    # Only Y (the other outputs left out).
    path, so, m = build(tmp, "unique_y", [h.make_node("Unique", ["x"], ["y"])],
                        [("x", T.FLOAT, [3, 4])], [("y", T.FLOAT, 1)], opset=11)
    x = rng.integers(0, 3, [3, 4]).astype(np.float32)
    check("unique_y", m.run([x]), unique_ref(x, None, 1)[:1], path, {"x": x})

    # Output shapes before the run: -1 for the counted dim; a too-small
    # buffer is BUFFER_TOO_SMALL (5) with the shape the run counted.
    path, so, m = build(tmp, "nz_api", [h.make_node("NonZero", ["x"], ["y"])],
                        [("x", T.FLOAT, [4, 4])], [("y", T.INT64, 2)])
    x = np.eye(4, dtype=np.float32)
    ins = (Tensor * 1)()
    _fill(ins[0], x)
    outs = (Tensor * 1)()
    status = m.lib.aotc_container_output_shapes(m.c, ins, 1, outs, 1)
    runs += 1
    if status != 0 or outs[0].rank != 2 or list(outs[0].shape[:2]) != [2, -1]:
        failed += 1
        print(f"FAIL output_shapes: status {status}, shape {list(outs[0].shape[:2])}")
    small = np.empty(8, np.uint8)
    outs[0].data, outs[0].nbytes = small.ctypes.data, small.nbytes
    status = m.lib.aotc_container_run(m.c, ins, 1, outs, 1)
    runs += 1
    if status != 5 or list(outs[0].shape[:2]) != [2, 4] or "output 'y'" not in m.lib.aotc_last_error().decode():
        failed += 1
        print(f"FAIL too small: status {status}, shape {list(outs[0].shape[:2])}: "
              f"{m.lib.aotc_last_error().decode()}")
    check("nz_api after a too-small run", m.run([x]), [nonzero(x)])

    # The C++ runner (aotc run): the first run has no room, the second the
    # size it reported.
    xpb = os.path.join(tmp, "x.pb")
    with open(xpb, "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    r = subprocess.run([aotc, "run", so, "--inputs", xpb], capture_output=True, text=True)
    runs += 1
    if r.returncode != 0 or "output y: int64[2,4] 0 1 2 3 0 1 2 3" not in r.stdout:
        failed += 1
        print(f"FAIL aotc run: {r.returncode} {r.stdout} {r.stderr}")

print(f"{runs} runs, {failed} failed")
if failed:
    sys.exit(1)
print("data-dependent ok")
