#!/usr/bin/env python3
"""Bitwise ops against NumPy: BitwiseAnd/Or/Xor/Not on every integer type
aotc has (int8 .. int64, uint8 .. uint32) with values at the type's limits
and broadcasting, and BitShift on uint8/16/32 in both directions, shift
amounts at and past the width included (the result is 0 there, as NumPy
computes; C leaves it undefined, and ONNX Runtime's result varies).
Usage: check_bitwise.py AOTC    (prints "bitwise ok")
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper as h
from onnx import TensorProto as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(11)
TYPES = {np.int8: T.INT8, np.int16: T.INT16, np.int32: T.INT32, np.int64: T.INT64,
         np.uint8: T.UINT8, np.uint16: T.UINT16, np.uint32: T.UINT32}


def values(dt, shape):
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    flat = x.reshape(-1)
    flat[:4] = [info.min, info.max, 0, info.max // 2 + 1][:flat.size]
    return x


def build(name, nodes, inputs, out_t, out_rank, tmp):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info("y", out_t, [None] * out_rank)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    so = path[:-5] + ".so"
    r = subprocess.run([aotc, "compile", path, "-o", so], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return Model(so, device="cpu")


def shl(a, b):
    bits = a.dtype.itemsize * 8
    return np.where(b >= bits, 0, np.left_shift(a, np.minimum(b, bits - 1))).astype(a.dtype)


def shr(a, b):
    bits = a.dtype.itemsize * 8
    return np.where(b >= bits, 0, np.right_shift(a, np.minimum(b, bits - 1))).astype(a.dtype)


failed = runs = 0
with tempfile.TemporaryDirectory() as tmp:
    for dt, ot in TYPES.items():
        name = np.dtype(dt).name
        for op, ref in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                        ("BitwiseXor", np.bitwise_xor)):
            m = build(f"{op}_{name}", [h.make_node(op, ["a", "b"], ["y"])],
                      [("a", ot, ["n", 3, 5]), ("b", ot, [5])], ot, 3, tmp)
            for n in (0, 1, 4):
                a, b = values(dt, (n, 3, 5)), values(dt, (5,))
                got = m.run([a, b])[0]
                ok = got.dtype == dt and np.array_equal(got, ref(a, b))
                runs += 1
                failed += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {op} {name} n={n}")
        m = build(f"not_{name}", [h.make_node("BitwiseNot", ["a"], ["y"])], [("a", ot, [7, 9])], ot, 2, tmp)
        a = values(dt, (7, 9))
        got = m.run([a])[0]
        ok = np.array_equal(got, np.invert(a))
        runs += 1
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} BitwiseNot {name}")
    for dt in (np.uint8, np.uint16, np.uint32):
        name = np.dtype(dt).name
        bits = np.dtype(dt).itemsize * 8
        for direction, ref in (("LEFT", shl), ("RIGHT", shr)):
            m = build(f"shift_{direction}_{name}",
                      [h.make_node("BitShift", ["a", "b"], ["y"], direction=direction)],
                      [("a", TYPES[dt], [6, 11]), ("b", TYPES[dt], [11])], TYPES[dt], 2, tmp)
            a = values(dt, (6, 11))
            b = np.array([0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, 5, 7, bits // 2, 255], dt)
            got = m.run([a, b])[0]
            ok = np.array_equal(got, ref(a, np.broadcast_to(b, a.shape)))
            runs += 1
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} BitShift {direction} {name}")
    # A signed BitShift is refused at compile time, naming the node.
    g = h.make_graph([h.make_node("BitShift", ["a", "b"], ["y"], direction="LEFT")], "bad",
                     [h.make_tensor_value_info("a", T.INT32, [3]), h.make_tensor_value_info("b", T.INT32, [3])],
                     [h.make_tensor_value_info("y", T.INT32, [3])])
    path = os.path.join(tmp, "bad.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), path)
    r = subprocess.run([aotc, "compile", path, "-o", path + ".so"], capture_output=True, text=True)
    ok = r.returncode != 0 and "(BitShift)" in r.stderr and "uint8, uint16 or uint32" in r.stderr
    runs += 1
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} signed BitShift refused: {r.stderr.strip()[:160]}")
print(f"{runs} runs, {failed} failed")
if failed:
    sys.exit(1)
print("bitwise ok")
