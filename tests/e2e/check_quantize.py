#!/usr/bin/env python3
"""QuantizeLinear and DequantizeLinear against a NumPy model of ONNX's
definitions and, where it has a kernel for the types, ONNX Runtime, on the
tiled, naive and GPU-profile kernels.

QuantizeLinear: x of float32, float16, bfloat16 and int32; per tensor (a
scalar or a one-element scale), per axis (every axis, negative ones too) and
blocked (block sizes that divide the dim and ones that leave a partial last
block); uint8, int8, uint16 and int16 from the zero point, from output_dtype,
or uint8 with neither; opsets 10, 13, 19, 21 and 25 (a float16 scale for a
float32 x and the precision attribute at 25); values that tie (x / scale an
odd multiple of 0.5, rounded to even), saturate on both sides, infinities and
NaN (the lowest value, as ONNX's reference and ONNX Runtime give); a
symbolic batch run at 0, 1 and 5. DequantizeLinear: every integer type with
values and zero points at its limits, scales of float32, float16 and
bfloat16, output_dtype at opset 23. A QDQ model (int8 weights per output
channel into a MatMul, its activations quantized and dequantized) against
ONNX Runtime. Shapes that do not match, dtypes aotc lacks and per-axis
scales before opset 13 are refused at compile time naming the node.
MatMulInteger (exact int32, zero points none, scalar, per row and per
column, batched) and QLinearMatMul (per-column scales, uint8 and int8 out)
against NumPy and ONNX Runtime, and by constant int8 and uint8 weights (read
narrow, in panels; updated while loaded); the int8 QLinearMatMul node tests whose
stored outputs wrap where ONNX saturates, against ONNX Runtime.
Usage: check_quantize.py AOTC [ONNX_NODE_TEST_DIR]
"""
import glob
import itertools
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from compiled_model import compile_model
from aotc_ctypes import BF16  # noqa: E402  bfloat16 as its bits (compiled_model put bench/gpu on the path)
from op_checks import VARIANTS, Tally, ort_session

tally = Tally(sys.argv[1], "quantize")
aotc, tmp = tally.aotc, tally.tmp
rng = np.random.default_rng(84)
NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.INT32: np.int32, T.INT8: np.int8,
      T.UINT8: np.uint8, T.INT16: np.int16, T.UINT16: np.uint16}
ONNX_TYPE = {np.dtype(v): k for k, v in list(NP.items()) + [(T.INT64, np.int64), (T.UINT32, np.uint32)]}
QTYPES = [T.UINT8, T.INT8, T.UINT16, T.INT16]


# bfloat16 as float32 values whose low 16 bits are zero, and as its bits.
def bf16_round(x):
    """x (float32) rounded to bfloat16 (nearest even), as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7fff + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, r).astype(np.float32)


def as_bf16(x):
    return (bf16_round(x).view(np.uint32) >> 16).astype(np.uint16).view(BF16)


def from_bf16(b):
    return (np.asarray(b).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def rounded_to(t, x):
    """float32 x rounded to dtype t (an ONNX code) and read back as float32."""
    x = np.asarray(x, np.float32)
    if t == T.FLOAT16:
        with np.errstate(over="ignore"):
            return x.astype(np.float16).astype(np.float32)
    if t == T.BFLOAT16:
        return bf16_round(x)
    return x


def values_of(t, a):
    """A float32 array as the feed for an input of dtype t."""
    if t == T.BFLOAT16:
        return as_bf16(a)
    with np.errstate(over="ignore"):  # 1e30 as float16 is inf
        return np.asarray(a).astype(NP[t])


def as_f32(t, a):
    return from_bf16(a) if t == T.BFLOAT16 else np.asarray(a).astype(np.float32)


def expand(v, shape, mode, axis, block):
    """The scale (or zero point) element of every x element."""
    if mode == "tensor":
        return np.full(shape, np.asarray(v).reshape(-1)[0], np.asarray(v).dtype)
    if mode == "axis":
        return np.asarray(v).reshape([1] * axis + [-1] + [1] * (len(shape) - axis - 1)) \
            * np.ones(shape, np.asarray(v).dtype)
    rep = np.repeat(v, block, axis=axis)
    return np.take(rep, range(shape[axis]), axis=axis)


def quantize_ref(x, xt, s, st, z, qt, mode, axis, block, precision):
    """ONNX's QuantizeLinear: x / scale in the precision (rounded to it),
    rounded half to even, plus the zero point, saturated; NaN gives the
    lowest value."""
    p = precision or st
    xs = rounded_to(p, as_f32(xt, x))
    ss = rounded_to(p, expand(as_f32(st, s), xs.shape, mode, axis, block))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.rint(rounded_to(p, xs / ss)).astype(np.float64)
    if z is not None:
        q = q + expand(z, xs.shape, mode, axis, block).astype(np.float64)
    info = np.iinfo(NP[qt])
    q = np.where(np.isnan(q), info.min, np.clip(q, info.min, info.max))
    return q.astype(NP[qt])


def dequantize_ref(x, s, st, z, outt, mode, axis, block):
    d = x.astype(np.int64)
    if z is not None:
        d = d - expand(z, x.shape, mode, axis, block).astype(np.int64)
    y = d.astype(np.float32) * expand(as_f32(st, s), x.shape, mode, axis, block)
    return rounded_to(outt, y)


def layout(rank):
    """A random granularity for an x of this rank, its scale shape."""
    mode = rng.choice(["tensor", "axis", "blocked"] if rank > 0 else ["tensor"])
    dims = [int(rng.choice([0, 1, 2, 3, 5, 7])) for _ in range(rank)]
    axis = int(rng.integers(-rank, rank)) if rank else 0
    a = axis % rank if rank else 0
    if mode == "tensor":
        return "tensor", dims, axis, 0, ([] if rng.random() < 0.5 else [1])
    if dims[a] == 0:
        dims[a] = 4
    if mode == "axis":
        return "axis", dims, axis, 0, [dims[a]]
    block = int(rng.choice([1, 2, 3, 4]))
    sdims = list(dims)
    sdims[a] = -(-dims[a] // block)
    return "blocked", dims, axis, block, sdims


def x_values(xt, shape, scale_f32, mode, axis, block):
    """Values that tie, saturate and overflow, with infinities and NaN."""
    if xt == T.INT32:
        v = rng.integers(-70000, 70000, shape)
        if v.size:
            v.flat[0] = np.iinfo(np.int32).max
        return v.astype(np.int32)
    s = expand(scale_f32, shape, mode, axis, block).astype(np.float64)
    k = rng.integers(-300, 300, shape)
    tie = rng.random(shape) < 0.4
    v = np.where(tie, (k + 0.5) * s, rng.uniform(-300, 300, shape) * s)
    if v.size:
        special = [np.nan, np.inf, -np.inf, 1e30, -1e30]
        for i in rng.choice(v.size, size=min(v.size, 3), replace=False):
            v.flat[i] = special[int(rng.integers(len(special)))]
    return v.astype(np.float32)


def scale_values(st, sshape):
    # Powers of two (ties stay exact) and others.
    v = np.where(rng.random(sshape) < 0.5, 2.0 ** rng.integers(-3, 3, sshape),
                 rng.uniform(0.05, 3.0, sshape))
    return rounded_to(st, np.asarray(v, np.float32).reshape(sshape))


def q_model(name, opset, xt, st, qt, xshape, sshape, axis, block, zp, attrs):
    inputs = [h.make_tensor_value_info("x", xt, xshape)]
    inits = []
    ins = ["x", "scale"]
    inputs.append(h.make_tensor_value_info("scale", st, sshape))
    if zp:
        inputs.append(h.make_tensor_value_info("zero_point", qt, sshape))
        ins.append("zero_point")
    a = dict(attrs)
    if opset >= 13:
        a["axis"] = axis
    if block:
        a["block_size"] = block
    node = h.make_node("QuantizeLinear", ins, ["y"], name="quantize", **a)
    return h.make_model(h.make_graph([node], name, inputs,
                                     [h.make_tensor_value_info("y", qt, xshape)],
                                     initializer=inits),
                        opset_imports=[h.make_opsetid("", opset)])


def ort_check(proto, feeds, got):
    """(equal, what to add to the report) of ONNX Runtime's result beside
    aotc's where ONNX Runtime runs the model; (True, "") where it lacks the
    combination of types or zero points."""
    sess = ort_session(proto)
    if sess is None:
        return True, ""
    try:
        ref = sess.run(None, feeds)[0]
    except Exception:  # noqa: BLE001 - ONNX Runtime lacks the combination
        return True, ""
    return np.array_equal(ref, got), " (and ONNX Runtime)"


def check_quantize(variant, k):
    opset = [10, 13, 19, 21, 25][k % 5]
    xt = [T.FLOAT, T.FLOAT16, T.BFLOAT16, T.INT32][(k // 5) % 4]
    if xt == T.INT32 and opset not in (10, 13, 25):
        xt = T.FLOAT  # x and scale share a type at opsets 19-24
    if xt in (T.FLOAT16, T.BFLOAT16) and opset < 19:
        xt = T.FLOAT
    st = xt if opset >= 19 and xt != T.INT32 else T.FLOAT
    precision = 0
    if opset == 25 and xt == T.FLOAT and k % 2:
        st = T.FLOAT16  # x and scale of different types, divided in float16
    if opset == 25 and k % 3 == 0:
        precision = [T.FLOAT, T.FLOAT16, T.BFLOAT16][k % 9 // 3]
    rank = int(rng.integers(0 if opset >= 13 else 1, 5))
    mode, dims, axis, block, sshape = layout(rank)
    if opset < 13:
        mode, sshape, block = "tensor", [], 0
    if opset < 21 and mode == "blocked":
        mode, block, sshape = "axis", 0, [dims[axis % rank]]
    qt = QTYPES[k % 4] if opset >= 21 or k % 4 < 2 else T.UINT8
    zp_kind = ["zero_point", "none", "output_dtype"][k % 3] if opset >= 21 else \
        ["zero_point", "none"][k % 2]
    if zp_kind == "none":
        qt = T.UINT8
    attrs = {}
    if zp_kind == "output_dtype":
        attrs["output_dtype"] = qt
    if precision:
        attrs["precision"] = precision
    symbolic = rank > 0 and rng.random() < 0.5 and (mode == "tensor" or axis % rank != 0)
    xshape = (["batch"] + dims[1:]) if symbolic else dims
    # A blocked scale has x's dims but the axis's: the batch too.
    blocked_batch = symbolic and mode == "blocked"
    name = f"quantize_{variant}_{k}"
    proto = q_model(name, opset, xt, st, qt, xshape,
                    (["batch"] + sshape[1:]) if blocked_batch else sshape, axis, block,
                    zp_kind == "zero_point", attrs)
    m = tally.compile(name, proto)
    if m is None:
        return
    sess = ort_session(proto) if xt == T.FLOAT and st == T.FLOAT else None
    for batch in ([0, 1, 5] if symbolic else [None]):
        shape = ([batch] + dims[1:]) if symbolic else dims
        srun = ([batch] + sshape[1:]) if blocked_batch else sshape
        s32 = scale_values(st, srun)
        x32 = x_values(xt, shape, s32, mode, axis % max(rank, 1), block)
        info = np.iinfo(NP[qt])
        z = rng.integers(info.min, int(info.max) + 1, srun).astype(NP[qt]) \
            if zp_kind == "zero_point" else None
        if z is not None and z.size:
            z.flat[0] = [info.min, info.max, 0][k % 3]
        feeds = [values_of(xt, x32), values_of(st, s32)] + ([z] if z is not None else [])
        got = m.run(feeds)[0]
        tally.runs += 1
        want = quantize_ref(feeds[0], xt, feeds[1], st, z, qt, mode, axis % max(rank, 1),
                            block, precision)
        ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
        what = (f"{name} opset {opset} x {T.DataType.Name(xt)}{list(shape)} scale "
                f"{T.DataType.Name(st)}{sshape} {mode} axis {axis} block {block} -> "
                f"{T.DataType.Name(qt)} ({zp_kind}) precision {precision}")
        # ONNX Runtime 1.20 takes a blocked scale of one element or none
        # for a per-tensor one and refuses its block_size.
        if sess is not None and (s32.size > 1 or mode != "blocked"):
            names = [i.name for i in sess.get_inputs()]
            ref = sess.run(None, dict(zip(names, feeds)))[0]
            # ONNX Runtime 1.20 wraps a 16-bit quantization of a quotient
            # beyond int32 (1e30, inf: 0 for u16) where ONNX saturates.
            if qt in (T.UINT16, T.INT16):
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    big = ~(np.abs(feeds[0] / expand(s32, shape, mode, axis % max(rank, 1), block))
                            < 2.0 ** 31) & ~np.isnan(feeds[0])
                ref = np.where(big, got, ref)
            if not np.array_equal(ref, got):
                ok = False
                bad = np.argwhere(ref != got)[:3]
                what += (f"; ONNX Runtime gives {ref[tuple(bad.T)]} for {got[tuple(bad.T)]} at "
                         f"{bad.tolist()}, x {np.asarray(feeds[0])[tuple(bad.T)]}")
            what += " (and ONNX Runtime)"
        if not ok and got.shape == want.shape:
            bad = np.argwhere(got != want)[:3]
            what += f"; first differences at {bad.tolist()}: got {got[tuple(bad.T)]}, " \
                    f"want {want[tuple(bad.T)]}"
        tally.report(ok, what)


def dq_model(name, opset, xt, st, xshape, sshape, axis, block, zp, outt):
    inputs = [h.make_tensor_value_info("x", xt, xshape),
              h.make_tensor_value_info("scale", st, sshape)]
    ins = ["x", "scale"]
    if zp:
        inputs.append(h.make_tensor_value_info("zero_point", xt, sshape))
        ins.append("zero_point")
    a = {}
    if opset >= 13:
        a["axis"] = axis
    if block:
        a["block_size"] = block
    if outt != st:
        a["output_dtype"] = outt
    node = h.make_node("DequantizeLinear", ins, ["y"], name="dequantize", **a)
    return h.make_model(h.make_graph([node], name, inputs,
                                     [h.make_tensor_value_info("y", outt, xshape)]),
                        opset_imports=[h.make_opsetid("", opset)])


def check_dequantize(variant, k):
    opset = [10, 13, 19, 21, 23][k % 5]
    xt = [T.UINT8, T.INT8, T.INT32, T.UINT16, T.INT16][(k // 5) % 5]
    if opset < 21 and xt in (T.UINT16, T.INT16):
        xt = T.INT8
    st = [T.FLOAT, T.FLOAT16, T.BFLOAT16][k % 3] if opset >= 19 else T.FLOAT
    outt = st
    if opset >= 23 and k % 2:
        outt = [T.FLOAT, T.FLOAT16, T.BFLOAT16][(k // 2) % 3]
    rank = int(rng.integers(0 if opset >= 13 else 1, 5))
    mode, dims, axis, block, sshape = layout(rank)
    if opset < 13:
        mode, sshape, block = "tensor", [], 0
    if opset < 21 and mode == "blocked":
        mode, block, sshape = "axis", 0, [dims[axis % rank]]
    zp = xt != T.INT32 or k % 2 == 0
    symbolic = rank > 0 and rng.random() < 0.5 and (mode == "tensor" or axis % rank != 0)
    xshape = (["batch"] + dims[1:]) if symbolic else dims
    blocked_batch = symbolic and mode == "blocked"
    name = f"dequantize_{variant}_{k}"
    proto = dq_model(name, opset, xt, st, xshape,
                     (["batch"] + sshape[1:]) if blocked_batch else sshape, axis, block, zp, outt)
    m = tally.compile(name, proto)
    if m is None:
        return
    sess = ort_session(proto) if st != T.BFLOAT16 else None
    info = np.iinfo(NP[xt])
    for batch in ([0, 1, 5] if symbolic else [None]):
        shape = ([batch] + dims[1:]) if symbolic else dims
        x = rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(NP[xt])
        if x.size:
            x.flat[0], x.flat[-1] = info.min, info.max
        srun = ([batch] + sshape[1:]) if blocked_batch else sshape
        s32 = scale_values(st, srun)
        z = None
        if zp:
            z = rng.integers(info.min, int(info.max) + 1, srun, dtype=np.int64).astype(NP[xt]) \
                if xt != T.INT32 else np.zeros(srun, np.int32)
            if z.size and xt != T.INT32:
                z.flat[0] = [info.min, info.max][k % 2]
        feeds = [x, values_of(st, s32)] + ([z] if z is not None else [])
        got = m.run(feeds)[0]
        tally.runs += 1
        want = dequantize_ref(x, feeds[1], st, z, outt, mode, axis % max(rank, 1), block)
        got32 = as_f32(outt, got)
        ok = got32.shape == want.shape and np.array_equal(got32, want, equal_nan=True)
        what = (f"{name} opset {opset} x {T.DataType.Name(xt)}{list(shape)} scale "
                f"{T.DataType.Name(st)}{sshape} {mode} axis {axis} block {block} zero point "
                f"{zp} -> {T.DataType.Name(outt)}")
        if sess is not None:
            names = [i.name for i in sess.get_inputs()]
            try:
                ref = sess.run(None, dict(zip(names, feeds)))[0]
                ok &= np.array_equal(np.asarray(ref).astype(np.float32), got32)
                what += " (and ONNX Runtime)"
            except Exception as e:  # noqa: BLE001
                # ONNX Runtime 1.20 refuses a blocked scale whose blocked
                # dim is 1 at run time as "per-tensor" (block_size must be
                # 0): NumPy's reference alone.
                what += "; ONNX Runtime: " + str(e).split("was false.")[-1].strip()[:80]
        if not ok and got32.shape == want.shape:
            bad = np.argwhere(got32 != want)[:3]
            what += f"; first differences at {bad.tolist()}: got {got32[tuple(bad.T)]}, " \
                    f"want {want[tuple(bad.T)]}"
        tally.report(ok, what)


def check_qdq_matmul():
    """int8 weights per output channel, activations through uint8 and back,
    into a MatMul with a bias and Relu: ONNX Runtime runs the same model."""
    w = rng.integers(-127, 128, (37, 19)).astype(np.int8)
    ws = rng.uniform(0.001, 0.02, 19).astype(np.float32)
    inits = [nh.from_array(w, "w_q"), nh.from_array(ws, "w_scale"),
             nh.from_array(np.zeros(19, np.int8), "w_zp"),
             nh.from_array(np.array(0.05, np.float32), "a_scale"),
             nh.from_array(np.array(128, np.uint8), "a_zp"),
             nh.from_array(rng.standard_normal(19).astype(np.float32), "bias")]
    nodes = [h.make_node("QuantizeLinear", ["x", "a_scale", "a_zp"], ["xq"], name="q_act"),
             h.make_node("DequantizeLinear", ["xq", "a_scale", "a_zp"], ["xd"], name="dq_act"),
             h.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["wd"], axis=1,
                         name="dq_weight"),
             h.make_node("MatMul", ["xd", "wd"], ["mm"], name="matmul"),
             h.make_node("Add", ["mm", "bias"], ["pre"], name="bias"),
             h.make_node("Relu", ["pre"], ["y"], name="relu")]
    proto = h.make_model(h.make_graph(nodes, "qdq_matmul",
                                      [h.make_tensor_value_info("x", T.FLOAT, ["batch", 37])],
                                      [h.make_tensor_value_info("y", T.FLOAT, ["batch", 19])],
                                      initializer=inits),
                         opset_imports=[h.make_opsetid("", 13)])
    for variant, flags in VARIANTS:
        tally.set_variant(flags)
        name = f"qdq_matmul_{variant}"
        m, _ = compile_model(aotc, tmp, name, proto)
        tally.models += 1
        sess = ort_session(proto)
        for batch in (0, 1, 6):
            x = (rng.standard_normal((batch, 37)) * 4).astype(np.float32)
            got = m.run([x])[0]
            tally.runs += 1
            ref = sess.run(None, {"x": x})[0]
            xd = (np.clip(np.rint(x / np.float32(0.05)) + 128, 0, 255) - 128) * np.float32(0.05)
            want = np.maximum(xd.astype(np.float32) @ (w.astype(np.float32) * ws) +
                              nh.to_array(inits[5]), 0)
            ok = got.shape == ref.shape and np.allclose(got, ref, rtol=1e-5, atol=1e-5) and \
                np.allclose(got, want, rtol=1e-5, atol=1e-5)
            tally.report(ok, f"{name} batch {batch} against ONNX Runtime and NumPy "
                       f"(max diff {np.abs(got - ref).max() if got.size else 0:.2e})")
    tally.set_variant("")


def integer_matmul_inputs(k):
    """Random operands of an integer matrix product: A [batch..., M, K] of
    uint8 or int8 (its zero point none, a scalar or one per row), B [K, N]
    or batched (none, a scalar or one per column), values at the limits."""
    at, bt = [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8),
              (np.int8, np.uint8)][k % 4]
    m, kk, n = [(1, 1, 1), (3, 5, 7), (17, 33, 9), (8, 64, 16), (5, 300, 3)][k % 5]
    batch = [[], [2], [2, 3]][k % 3]
    a = rng.integers(np.iinfo(at).min, int(np.iinfo(at).max) + 1, batch + [m, kk]).astype(at)
    b_batch = batch if k % 2 else []
    b = rng.integers(np.iinfo(bt).min, int(np.iinfo(bt).max) + 1, b_batch + [kk, n]).astype(bt)
    a.flat[0], b.flat[0] = np.iinfo(at).min, np.iinfo(bt).min
    azp = [None, np.array(np.iinfo(at).max, at),
           rng.integers(np.iinfo(at).min, int(np.iinfo(at).max) + 1, [m]).astype(at)][k % 3]
    if azp is not None and azp.ndim == 1 and batch:
        azp = None  # per row of a 2-D A only
    bzp = [rng.integers(np.iinfo(bt).min, int(np.iinfo(bt).max) + 1, [n]).astype(bt), None,
           np.array(np.iinfo(bt).min, bt)][k % 3]
    return a, b, azp, bzp


def centred(x, zp, rows):
    x = x.astype(np.int64)
    if zp is None:
        return x
    return x - (zp.astype(np.int64).reshape(-1, 1) if rows and zp.ndim == 1 else zp.astype(np.int64))


def int_onnx(name, nodes, inputs, outputs, inits, opset):
    return h.make_model(h.make_graph(nodes, name, inputs, outputs, initializer=inits),
                        opset_imports=[h.make_opsetid("", opset)])


def computed(nodes, inputs, inits, name, dtype):
    """Input `name` of \p inputs made a value a node computes: the graph
    takes `name_in` and the model computes `name` = Max(name_in, the
    dtype's lowest), the same values. A computed 8-bit activation less its
    zero point is stored in int16 and its products taken in pairs
    (expand_quantized_matmul.cpp, register_tile.cpp's pairProduct); a
    graph input is widened where it is read."""
    for i, vi in enumerate(inputs):
        if vi.name == name:
            inputs[i] = h.make_tensor_value_info(name + "_in", vi.type.tensor_type.elem_type,
                                                 [d.dim_param or d.dim_value
                                                  for d in vi.type.tensor_type.shape.dim])
    inits.append(nh.from_array(np.array(np.iinfo(dtype).min, dtype), name + "_lowest"))
    return [h.make_node("Max", [name + "_in", name + "_lowest"], [name], name=name + "_max")] + nodes


def check_matmul_integer(variant, k, computed_a=False):
    """MatMulInteger: exact int32 against NumPy in int64, and ONNX Runtime;
    with \p computed_a, A computed by a node (computed)."""
    a, b, azp, bzp = integer_matmul_inputs(k)
    name = f"matmul_integer_{variant}_{k}{'_computed' if computed_a else ''}"
    ins = ["a", "b", "a_zero_point" if azp is not None else "",
           "b_zero_point" if bzp is not None else ""]
    while ins[-1] == "":
        ins.pop()
    inits = [nh.from_array(z, nm) for z, nm in ((azp, "a_zero_point"), (bzp, "b_zero_point"))
             if z is not None]
    ashape = ["batch"] + list(a.shape[1:]) if a.ndim > 2 else list(a.shape)
    out_shape = list(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])) + [a.shape[-2], b.shape[-1]]
    oshape = ["batch"] + out_shape[1:] if a.ndim > 2 else out_shape
    nodes = [h.make_node("MatMulInteger", ins, ["y"], name="mmi")]
    inputs = [h.make_tensor_value_info("a", ONNX_TYPE[a.dtype], ashape),
              h.make_tensor_value_info("b", ONNX_TYPE[b.dtype], list(b.shape))]
    if computed_a:
        nodes = computed(nodes, inputs, inits, "a", a.dtype)
    proto = int_onnx(name, nodes, inputs, [h.make_tensor_value_info("y", T.INT32, oshape)],
                     inits, 13 if computed_a else 10)
    m, _ = compile_model(aotc, tmp, name, proto)
    tally.models += 1
    got = m.run([a, b])[0]
    tally.runs += 1
    want = (centred(a, azp, True) @ centred(b, bzp, False)).astype(np.int32)
    ok = got.shape == want.shape and got.dtype == np.int32 and np.array_equal(got, want)
    what = f"{name} A {a.dtype}{list(a.shape)} zp {None if azp is None else list(azp.shape)} " \
           f"B {b.dtype}{list(b.shape)} zp {None if bzp is None else list(bzp.shape)}"
    same, note = ort_check(proto, {"a_in" if computed_a else "a": a, "b": b}, got)
    tally.report(ok and same, what + note)


def qlinear_ref(a, a_scale, azp, b, b_scale, bzp, y_scale, yzp):
    """ONNX's QLinearMatMul with QuantizeLinear's saturation: the multiplier
    a_scale * b_scale / y_scale in float32, the product in float32."""
    c = (centred(a, azp, True) @ centred(b, bzp, False)).astype(np.float32)
    asc = a_scale.reshape(-1, 1) if a_scale.ndim == 1 and a_scale.size > 1 else a_scale
    mult = (asc.astype(np.float32) * b_scale.astype(np.float32)) / y_scale.astype(np.float32)
    d = np.rint((c * mult).astype(np.float32)).astype(np.float64) + yzp.astype(np.float64)
    info = np.iinfo(yzp.dtype)
    return np.clip(d, info.min, info.max).astype(yzp.dtype)


def check_qlinear_matmul(variant, k):
    a, b, azp, bzp = integer_matmul_inputs(k)
    azp = azp if azp is not None else np.array(0, a.dtype)
    bzp = bzp if bzp is not None else np.array(0, b.dtype)
    if a.ndim > 2 or b.ndim > 2:
        azp = azp.reshape([]) if azp.size == 1 else np.array(azp.flat[0], a.dtype)
    a_scale = np.array(rng.uniform(0.001, 0.05), np.float32)
    b_scale = (rng.uniform(0.001, 0.05, [b.shape[-1]]) if k % 2 else
               np.array(rng.uniform(0.001, 0.05))).astype(np.float32)
    if bzp.ndim == 1 and b_scale.ndim == 0:
        b_scale = np.full(bzp.shape, b_scale, np.float32)
    if b_scale.ndim == 1 and bzp.ndim == 0:
        bzp = np.full(b_scale.shape, bzp, b.dtype)
    yt = [np.uint8, np.int8][k % 2]
    yzp = np.array(rng.integers(np.iinfo(yt).min // 2, np.iinfo(yt).max // 2), yt)
    y_scale = np.array(rng.uniform(0.01, 0.5), np.float32)
    name = f"qlinear_matmul_{variant}_{k}"
    inits = [nh.from_array(v, nm) for v, nm in
             ((a_scale, "a_scale"), (azp, "a_zero_point"), (b_scale, "b_scale"),
              (bzp, "b_zero_point"), (y_scale, "y_scale"), (yzp, "y_zero_point"))]
    out_shape = list(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])) + [a.shape[-2], b.shape[-1]]
    proto = int_onnx(name, [h.make_node("QLinearMatMul",
                                        ["a", "a_scale", "a_zero_point", "b", "b_scale",
                                         "b_zero_point", "y_scale", "y_zero_point"], ["y"],
                                        name="qmm")],
                     [h.make_tensor_value_info("a", ONNX_TYPE[a.dtype], list(a.shape)),
                      h.make_tensor_value_info("b", ONNX_TYPE[b.dtype], list(b.shape))],
                     [h.make_tensor_value_info("y", ONNX_TYPE[np.dtype(yt)], out_shape)], inits, 21)
    m, _ = compile_model(aotc, tmp, name, proto)
    tally.models += 1
    got = m.run([a, b])[0]
    tally.runs += 1
    want = qlinear_ref(a, a_scale, azp, b, b_scale, bzp, y_scale, yzp)
    ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    what = f"{name} A {a.dtype}{list(a.shape)} B {b.dtype}{list(b.shape)} b_scale " \
           f"{list(b_scale.shape)} -> {np.dtype(yt)}"
    same, note = ort_check(proto, {"a": a, "b": b}, got)
    tally.report(ok and same, what + note)


def conv_ref(x, w, pads, strides, dilations, group):
    """ONNX's Conv of int64 x [N, C, *sp] and w [M, C / group, *k] (x
    padded with zeros), in int64."""
    sp = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + sp]) for i in range(sp)])
    ks = w.shape[2:]
    out_sp = [(xp.shape[2 + i] - dilations[i] * (ks[i] - 1) - 1) // strides[i] + 1
              for i in range(sp)]
    n, m = x.shape[0], w.shape[0]
    cg, mg = x.shape[1] // group, m // group
    y = np.zeros([n, m] + out_sp, np.int64)
    for off in itertools.product(*[range(k) for k in ks]):
        sl = tuple(slice(off[i] * dilations[i],
                         off[i] * dilations[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(sp))
        win = xp[(slice(None), slice(None)) + sl]  # [N, C, *out]
        for g in range(group):
            wg = w[g * mg:(g + 1) * mg, :, *off]  # [mg, cg]
            y[:, g * mg:(g + 1) * mg] += np.einsum(
                "nc...,mc->nm...", win[:, g * cg:(g + 1) * cg], wg)
    return y


def conv_inputs(k):
    """Random operands of an integer convolution: x [batch, C, *sp] of
    uint8 or int8 and a constant (or input) w of uint8 or int8, values at
    the limits; 1-D and 2-D, pads, strides, dilations, groups (a
    depthwise one), w's zero point none, one or one per output channel."""
    xt, wt = [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8),
              (np.int8, np.uint8)][k % 4]
    c, m, group, sp, ks, pads, strides, dil = [
        (3, 4, 1, [7, 9], [3, 3], [1, 1, 1, 1], [1, 1], [1, 1]),
        (4, 6, 2, [8], [3], [2, 0], [2], [1]),
        (8, 8, 8, [6, 5], [3, 3], [1, 1, 1, 1], [1, 1], [1, 1]),
        (5, 17, 1, [6, 6], [1, 1], [0, 0, 0, 0], [1, 1], [1, 1]),
        (2, 3, 1, [9, 7], [2, 3], [0, 1, 2, 0], [2, 1], [2, 1]),
        (16, 24, 1, [5, 5], [3, 3], [1, 1, 1, 1], [1, 1], [1, 1]),
    ][k % 6]
    w = rng.integers(np.iinfo(wt).min, int(np.iinfo(wt).max) + 1,
                     [m, c // group] + ks).astype(wt)
    w.flat[0], w.flat[-1] = np.iinfo(wt).min, np.iinfo(wt).max
    xzp = [None, np.array(np.iinfo(xt).max, xt),
           np.array(rng.integers(np.iinfo(xt).min, int(np.iinfo(xt).max) + 1), xt)][k % 3]
    wzp = [rng.integers(np.iinfo(wt).min, int(np.iinfo(wt).max) + 1, [m]).astype(wt), None,
           np.array(np.iinfo(wt).min // 2 + 1, wt)][(k // 3) % 3]
    attrs = dict(pads=pads, strides=strides, dilations=dil, group=group, kernel_shape=ks)
    return xt, c, list(sp), w, xzp, wzp, attrs


def check_conv_integer(variant, k, computed_x=False):
    """ConvInteger and QLinearConv: exact against a NumPy convolution in
    int64 (and the requantization's float32 model), and ONNX Runtime where
    it has the types; a symbolic batch run at 0, 1 and 3; the weights a
    constant (read narrow where their zero point is one value) or an input."""
    xt, c, spatial, w, xzp, wzp, attrs = conv_inputs(k)
    sp = len(spatial)
    const_w = k % 5 != 4
    qlinear = k % 2 == 1
    name = f"{'qlinear_conv' if qlinear else 'conv_integer'}_{variant}_{k}" + \
        ("_computed" if computed_x else "")
    x_zp = xzp if xzp is not None else np.array(0, xt)
    w_zp = wzp if wzp is not None else np.array(0, w.dtype)
    inits, feeds_w = [], []
    if qlinear:
        m = w.shape[0]
        x_scale = np.array(rng.uniform(0.01, 0.05), np.float32)
        w_scale = (rng.uniform(0.001, 0.05, [m]) if wzp is not None and wzp.ndim == 1 else
                   np.array(rng.uniform(0.001, 0.05))).astype(np.float32)
        yt = [np.uint8, np.int8][(k // 2) % 2]
        yzp = np.array(rng.integers(np.iinfo(yt).min // 2, np.iinfo(yt).max // 2), yt)
        y_scale = np.array(rng.uniform(0.5, 4.0), np.float32)
        bias = rng.integers(-5000, 5000, [m]).astype(np.int32)
        inits += [nh.from_array(v, nm) for v, nm in
                  ((x_scale, "x_scale"), (x_zp, "x_zero_point"), (w_scale, "w_scale"),
                   (w_zp, "w_zero_point"), (y_scale, "y_scale"), (yzp, "y_zero_point"),
                   (bias, "bias"))]
        ins = ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
               "y_zero_point", "bias"]
        out_t = ONNX_TYPE[np.dtype(yt)]
    else:
        ins = ["x", "w", "x_zero_point" if xzp is not None else "",
               "w_zero_point" if wzp is not None else ""]
        while ins[-1] == "":
            ins.pop()
        inits += [nh.from_array(z, nm) for z, nm in ((xzp, "x_zero_point"), (wzp, "w_zero_point"))
                  if z is not None]
        out_t = T.INT32
    inputs = [h.make_tensor_value_info("x", ONNX_TYPE[np.dtype(xt)],
                                       ["batch", c] + spatial)]
    if const_w:
        inits.append(nh.from_array(w, "w"))
    else:
        inputs.append(h.make_tensor_value_info("w", ONNX_TYPE[w.dtype], list(w.shape)))
        feeds_w = [w]
    op = "QLinearConv" if qlinear else "ConvInteger"
    sp_in = spatial
    out_sp = [(sp_in[i] + attrs["pads"][i] + attrs["pads"][i + sp] -
               attrs["dilations"][i] * (attrs["kernel_shape"][i] - 1) - 1) // attrs["strides"][i] + 1
              for i in range(sp)]
    nodes = [h.make_node(op, ins, ["y"], name="qconv", **attrs)]
    if computed_x:
        nodes = computed(nodes, inputs, inits, "x", xt)
    proto = int_onnx(name, nodes, inputs,
                     [h.make_tensor_value_info("y", out_t, ["batch", w.shape[0]] + out_sp)],
                     inits, 13 if computed_x else 10)
    mdl = tally.compile(name, proto)
    if mdl is None:
        return
    # ONNX Runtime 1.20's ConvInteger crashed the process (SIGSEGV) given a
    # w_zero_point without an x_zero_point: it gets both, zeros where the
    # model has none.
    ort_proto = proto
    if not qlinear and xzp is None and not computed_x:
        ort_proto = int_onnx(name, [h.make_node(op, ["x", "w", "x_zp0", "w_zp0"], ["y"], name="qconv",
                                                **attrs)],
                             inputs, proto.graph.output,
                             [i for i in inits if i.name not in ("x_zero_point", "w_zero_point")] +
                             [nh.from_array(x_zp, "x_zp0"), nh.from_array(w_zp, "w_zp0")], 10)
    if variant == "tiled" and const_w:
        # A weight whose zero point is one value is read narrow (in panels
        # of its own dtype where the convolution packs it); one per
        # channel is folded into an int32 copy at load.
        shown = subprocess.run([aotc, "inspect", os.path.join(tmp, name + ".so")],
                               capture_output=True, text=True).stdout
        wide = any("int32[" in line and "folding program" in line for line in shown.splitlines())
        per_channel = wzp is not None and wzp.ndim == 1
        tally.report(wide == per_channel,
                     f"{name}: {'an int32 copy of the weights' if wide else 'the weights read narrow'} "
                     f"(zero point {None if wzp is None else list(wzp.shape)})")
    if not qlinear and xzp is None and computed_x:
        ort_proto = None  # (the crash above; NumPy's reference alone)
    sess = ort_session(ort_proto) if ort_proto is not None else None
    for batch in (0, 1, 3):
        x = rng.integers(np.iinfo(xt).min, int(np.iinfo(xt).max) + 1,
                         [batch, c] + spatial).astype(xt)
        if batch:
            x.flat[0] = np.iinfo(xt).min
        got = mdl.run([x] + feeds_w)[0]
        tally.runs += 1
        wc = w.astype(np.int64) - (w_zp.astype(np.int64).reshape([-1] + [1] * (w.ndim - 1))
                                   if w_zp.ndim == 1 else w_zp.astype(np.int64))
        acc = conv_ref(x.astype(np.int64) - x_zp.astype(np.int64), wc, attrs["pads"],
                       attrs["strides"], attrs["dilations"], attrs["group"])
        if qlinear:
            shape = [1, -1] + [1] * sp
            ws = w_scale.reshape(shape) if w_scale.ndim == 1 else w_scale
            mult = (x_scale.astype(np.float32) * ws.astype(np.float32)) / y_scale
            c32 = (acc + bias.reshape([1, -1] + [1] * sp)).astype(np.float32)
            d = np.rint((c32 * mult).astype(np.float32)).astype(np.float64) + float(yzp)
            want = np.clip(d, np.iinfo(yt).min, np.iinfo(yt).max).astype(yt)
        else:
            want = acc.astype(np.int32)
        ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
        note = ""
        if sess is not None and batch:
            feed = {"x_in" if computed_x else "x": x}
            if not const_w:
                feed["w"] = w
            try:
                ref = sess.run(None, feed)[0]
                same = np.array_equal(ref, got)
                note = "; ONNX Runtime " + ("equal" if same else
                                            f"differs by up to {np.abs(ref.astype(np.int64) - got.astype(np.int64)).max()}")
                # ONNX Runtime's requantization may round its float
                # multiplier its own way (QLinearConv): one unit at most.
                ok = ok and (same or (qlinear and np.abs(ref.astype(np.int64) -
                                                         got.astype(np.int64)).max() <= 1))
            except Exception as e:  # noqa: BLE001 - no kernel for these types
                note = "; ONNX Runtime: " + str(e).splitlines()[0][:80]
        tally.report(ok, f"{name} {np.dtype(xt).name} x, {w.dtype.name} w{list(w.shape)} "
                         f"{'constant' if const_w else 'input'}, w zero point "
                         f"{None if wzp is None else list(wzp.shape)}, {attrs} batch {batch}{note}")


def check_departed_node_tests(node_dir):
    """The int8 QLinearMatMul node tests whose stored outputs wrap
    (tests/e2e/onnx_node_departures.txt): aotc gives ONNX Runtime's
    saturated results on their inputs."""
    for case in ("test_qlinearmatmul_2D_int8_float32", "test_qlinearmatmul_3D_int8_float32",
                 "test_qlinearmatmul_2D_int8_float16", "test_qlinearmatmul_3D_int8_float16"):
        d = os.path.join(node_dir, case)
        proto = onnx.load(os.path.join(d, "model.onnx"))
        m, _ = compile_model(aotc, tmp, "departed_" + case, proto)
        tally.models += 1
        feeds = [nh.to_array(onnx.load_tensor(f))
                 for f in sorted(glob.glob(os.path.join(d, "test_data_set_0", "input_*.pb")))]
        stored = nh.to_array(onnx.load_tensor(os.path.join(d, "test_data_set_0", "output_0.pb")))
        got = m.run(feeds)[0]
        tally.runs += 1
        sess = ort_session(proto)
        ref = sess.run(None, {i.name: v for i, v in zip(sess.get_inputs(), feeds)})[0]
        tally.report(np.array_equal(got, ref) and not np.array_equal(got, stored),
               f"{case}: ONNX Runtime's saturated result, not the stored wrapped one "
               f"({int(np.sum(got != stored))} elements differ from it)")


def check_dynamic_quantization():
    """ONNX Runtime's dynamic quantization of a MatMul: DynamicQuantizeLinear
    of the activations (its zero point a computed scalar), MatMulInteger by
    int8 weights, the product scaled back; and a per-row zero point that a
    node computes (its rank from ONNX's inference)."""
    w = rng.integers(-127, 128, (48, 10)).astype(np.int8)
    inits = [nh.from_array(w, "w_q"), nh.from_array(np.array(0, np.int8), "w_zp"),
             nh.from_array(np.array(0.02, np.float32), "w_scale")]
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "x_scale", "x_zp"], name="dql"),
             h.make_node("MatMulInteger", ["xq", "w_q", "x_zp", "w_zp"], ["acc"], name="mmi"),
             h.make_node("Cast", ["acc"], ["acc_f"], to=T.FLOAT, name="cast"),
             h.make_node("Mul", ["x_scale", "w_scale"], ["scale"], name="scale"),
             h.make_node("Mul", ["acc_f", "scale"], ["y"], name="rescale")]
    proto = h.make_model(h.make_graph(nodes, "dynamic_quantized_matmul",
                                      [h.make_tensor_value_info("x", T.FLOAT, ["batch", 48])],
                                      [h.make_tensor_value_info("y", T.FLOAT, ["batch", 10])],
                                      initializer=inits),
                         opset_imports=[h.make_opsetid("", 13)])
    m, _ = compile_model(aotc, tmp, "dynamic_quantized_matmul", proto)
    tally.models += 1
    # The int8 weights are read by the kernel in panels of the vector
    # lanes (10 columns padded to 16), widened as they are loaded: no int32
    # copy computed at load or in a run.
    shown = subprocess.run([aotc, "inspect", os.path.join(tmp, "dynamic_quantized_matmul.so")],
                           capture_output=True, text=True).stdout
    tally.report("packed from initializer 'w_q'" in shown and
                 re.search(r"int8\[\d+,48,\d+\]", shown) is not None and
                 "i32[48,10]" not in shown,
                 "the int8 weights are packed in int8 panels, not widened to an int32 copy")
    sess = ort_session(proto)
    for batch in (1, 5):
        x = (rng.standard_normal((batch, 48)) * 3).astype(np.float32)
        got = m.run([x])[0]
        tally.runs += 1
        ref = sess.run(None, {"x": x})[0]
        tally.report(got.shape == ref.shape and np.allclose(got, ref, rtol=1e-6, atol=1e-6),
               f"dynamic_quantized_matmul batch {batch} against ONNX Runtime "
               f"(max diff {np.abs(got - ref).max():.2e})")
    # New int8 weights while the model is loaded: the folding program
    # recomputes the centred copy from them.
    w2 = rng.integers(-127, 128, w.shape).astype(np.int8)
    m.update_constants({"w_q": w2}, validate_full=False)
    inits2 = [nh.from_array(w2, "w_q")] + inits[1:]
    proto2 = h.make_model(h.make_graph(nodes, "dynamic_quantized_matmul_2", proto.graph.input,
                                       proto.graph.output, initializer=inits2),
                          opset_imports=[h.make_opsetid("", 13)])
    x = (rng.standard_normal((3, 48)) * 3).astype(np.float32)
    got = m.run([x])[0]
    tally.runs += 1
    ref = ort_session(proto2).run(None, {"x": x})[0]
    old = sess.run(None, {"x": x})[0]
    tally.report(np.allclose(got, ref, rtol=1e-6, atol=1e-6) and not np.allclose(got, old),
           "dynamic_quantized_matmul after its int8 weights are updated, against ONNX Runtime "
           "with the new weights")
    computed_zp = h.make_model(h.make_graph(
        [h.make_node("Identity", ["zp_in"], ["zp"], name="copy"),
         h.make_node("MatMulInteger", ["a", "b", "zp"], ["y"], name="mmi")], "mmi_computed_zp",
        [h.make_tensor_value_info("a", T.UINT8, [3, 4]),
         h.make_tensor_value_info("b", T.UINT8, [4, 2]),
         h.make_tensor_value_info("zp_in", T.UINT8, [3])],
        [h.make_tensor_value_info("y", T.INT32, [3, 2])]),
        opset_imports=[h.make_opsetid("", 13)])
    m, _ = compile_model(aotc, tmp, "mmi_computed_zp", computed_zp)
    tally.models += 1
    a = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    b = rng.integers(0, 256, (4, 2)).astype(np.uint8)
    zp = np.array([0, 255, 17], np.uint8)
    got = m.run([a, b, zp])[0]
    tally.runs += 1
    want = (centred(a, zp, True) @ b.astype(np.int64)).astype(np.int32)
    tally.report(np.array_equal(got, want), "MatMulInteger by a per-row zero point a node computes")


def check_constant_integer_weights(variant):
    """MatMulInteger by constant weights, which the kernels read in their
    narrow type (int8 or uint8 panels, widened as they are loaded; not a
    folded int32 copy): N below, at and above the vector lanes, one that
    leaves a partial panel, K odd; weight zero points none, a scalar (also
    nonzero), per column (applied as the rows' sums times it) and per
    column all 0 (dropped); a symbolic batch
    run at 0, 1 and 5; the weights updated while loaded (their panels
    repacked). Exact against NumPy in int64."""
    cases = [(np.int8, None, 3, 7), (np.int8, 0, 33, 10), (np.uint8, 131, 17, 33),
             (np.int8, -128, 64, 64), (np.uint8, "column", 9, 24), (np.int8, 5, 1, 8),
             (np.uint8, None, 300, 40), (np.int8, "zeros", 20, 48)]
    for at, (bt, zp, k, n) in zip([np.uint8, np.int8] * 4, cases):
        name = f"mmi_const_{variant}_{np.dtype(bt).name}_{k}x{n}"
        b = rng.integers(np.iinfo(bt).min, int(np.iinfo(bt).max) + 1, (k, n)).astype(bt)
        b.flat[0], b.flat[-1] = np.iinfo(bt).min, np.iinfo(bt).max
        bzp = None if zp is None else (
            rng.integers(np.iinfo(bt).min, int(np.iinfo(bt).max) + 1, [n]).astype(bt)
            if zp == "column" else np.zeros([n], bt) if zp == "zeros" else np.array(zp, bt))
        azp = np.array(np.iinfo(at).max // 2 + 3, at)
        inits = [nh.from_array(b, "w"), nh.from_array(azp, "a_zp")]
        ins = ["a", "w", "a_zp"]
        if bzp is not None:
            inits.append(nh.from_array(bzp, "w_zp"))
            ins.append("w_zp")
        proto = int_onnx(name, [h.make_node("MatMulInteger", ins, ["y"], name="mmi")],
                         [h.make_tensor_value_info("a", ONNX_TYPE[np.dtype(at)], ["batch", k])],
                         [h.make_tensor_value_info("y", T.INT32, ["batch", n])], inits, 10)
        m = tally.compile(name, proto)
        if m is None:
            continue
        if variant == "tiled":
            # The kernel reads the narrow weight: no int32 copy of it in the
            # model (a per-column zero point neither: a @ w less the rows'
            # sums times it).
            shown = subprocess.run([aotc, "inspect", os.path.join(tmp, name + ".so")],
                                   capture_output=True, text=True).stdout
            wide = f"i32[{k},{n}]" in shown or f"int32[{k},{n}]" in shown
            tally.report(not wide,
                         f"{name}: an int32 copy of the weights {'is' if wide else 'is not'} "
                         f"made (zero point {zp})")
        for batch in (0, 1, 5):
            a = rng.integers(np.iinfo(at).min, int(np.iinfo(at).max) + 1, (batch, k)).astype(at)
            if batch:
                a.flat[0] = np.iinfo(at).min
            got = m.run([a])[0]
            tally.runs += 1
            want = (centred(a, azp, True) @ centred(b, bzp, False)).astype(np.int32)
            tally.report(got.shape == want.shape and np.array_equal(got, want),
                         f"{name} batch {batch} zero point {zp}")
        if zp == "zeros":
            # A zero point of zeros per column (symmetric per-channel
            # quantization) is dropped at compile time: an update of it is
            # refused by name, never ignored.
            try:
                m.update_constants({"w_zp": np.ones([n], bt)}, validate_full=False)
                tally.report(False, f"{name}: an update of its all-zero zero point was accepted")
            except Exception as e:  # noqa: BLE001 (the binding's error)
                tally.report("cannot be updated" in str(e),
                             f"{name}: the update of its all-zero zero point refused: {e}")
        b2 = rng.integers(np.iinfo(bt).min, int(np.iinfo(bt).max) + 1, (k, n)).astype(bt)
        m.update_constants({"w": b2}, validate_full=False)
        a = rng.integers(np.iinfo(at).min, int(np.iinfo(at).max) + 1, (3, k)).astype(at)
        got = m.run([a])[0]
        tally.runs += 1
        want = (centred(a, azp, True) @ centred(b2, bzp, False)).astype(np.int32)
        tally.report(np.array_equal(got, want), f"{name} after its weights are updated")


def check_dynamic_quantized_models():
    """Whole models as ONNX Runtime's quantize_dynamic writes them (Conv as
    ConvInteger, Gemm/MatMul as MatMulInteger, each activation through
    DynamicQuantizeLinear) against ONNX Runtime on random inputs: every
    quantized activation on the same grid, so the outputs agree to float
    rounding. A scale (max - min) / 255 computed through the reciprocal of
    255 was an ulp off now and then, which moved 0.1% of the next layer's
    uint8 values a step and ResNet-18's logits by 0.6%."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    # DynamicQuantizeLinear alone, on 60 ranges: its scale, zero point and
    # values equal to ONNX Runtime's, bit for bit.
    dql = h.make_model(h.make_graph(
        [h.make_node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zp"], name="dql")],
        "dql_alone", [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", T.UINT8, ["n"]),
         h.make_tensor_value_info("scale", T.FLOAT, []),
         h.make_tensor_value_info("zp", T.UINT8, [])]), opset_imports=[h.make_opsetid("", 13)])
    m = tally.compile("dql_alone", dql)
    sess = ort_session(dql)
    mismatched = 0
    for trial in range(60):
        x = (rng.standard_normal(1000) * rng.uniform(0.01, 100) +
             rng.uniform(-5, 5)).astype(np.float32)
        got = m.run([x])
        tally.runs += 1
        ref = sess.run(None, {"x": x})
        mismatched += not all(np.array_equal(g, r) for g, r in zip(got, ref))
    tally.report(mismatched == 0, f"DynamicQuantizeLinear on 60 ranges: scale, zero point and "
                                  f"values equal to ONNX Runtime's in {60 - mismatched}")
    here = os.path.dirname(os.path.abspath(__file__))
    # (ONNX Runtime 1.20 has no ConvInteger for int8 weights.)
    # per_channel: one scale and zero point per column or output channel
    # (int8 weights: symmetric, their zero points all 0, which the kernels
    # drop and read the weights narrow; uint8: asymmetric).
    for model, wtype, per_channel in (("cnn_small", QuantType.QUInt8, False),
                                      ("mlp_gelu", QuantType.QInt8, False),
                                      ("mlp_gelu", QuantType.QUInt8, False),
                                      ("mlp_gelu", QuantType.QInt8, True),
                                      ("mlp_gelu", QuantType.QUInt8, True),
                                      ("cnn_small", QuantType.QUInt8, True)):
        src = os.path.join(here, "..", "models", model, "model.onnx")
        pc = "_per_channel" if per_channel else ""
        dst = os.path.join(tmp, f"{model}_dyn_{wtype.name}{pc}.onnx")
        quantize_dynamic(src, dst, weight_type=wtype, per_channel=per_channel)
        proto = onnx.load(dst)
        name = f"{model}_dynamic_{wtype.name}{pc}"
        for variant, flags in VARIANTS:
            tally.set_variant(flags)
            m = tally.compile(f"{name}_{variant}", proto)
            if m is None:
                continue
            sess = ort_session(proto)
            shape = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
            for batch in (1, 3):
                for trial in range(3):
                    x = (rng.standard_normal([batch] + shape[1:]) * (1 + trial)).astype(np.float32)
                    got = m.run([x])[0]
                    tally.runs += 1
                    ref = sess.run(None, {proto.graph.input[0].name: x})[0]
                    err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-6)
                    tally.report(got.shape == ref.shape and err < 1e-5,
                                 f"{name} {variant} batch {batch} trial {trial}: max rel err "
                                 f"{err:.1e} against ONNX Runtime")
    tally.set_variant("")


def check_wrapping_integer_matmul(variant):
    """MatMul of int64, int32 and uint32 by constant weights, values over
    the whole range: the register tile sums integers in vectors
    (aotc_add_l16, ...), whose products and sums must wrap as the scalar
    ones do (NumPy in uint64, cast back)."""
    for dt in (np.int64, np.int32, np.uint32):
        info = np.iinfo(dt)
        for k, n in ((37, 45), (64, 16), (5, 3)):
            name = f"wrapping_matmul_{variant}_{np.dtype(dt).name}_{k}x{n}"
            w = rng.integers(info.min, info.max, (k, n), dtype=dt, endpoint=True)
            proto = h.make_model(h.make_graph(
                [h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], name,
                [h.make_tensor_value_info("x", ONNX_TYPE[np.dtype(dt)], ["b", k])],
                [h.make_tensor_value_info("y", ONNX_TYPE[np.dtype(dt)], ["b", n])],
                initializer=[nh.from_array(w, "w")]), opset_imports=[h.make_opsetid("", 13)])
            m = tally.compile(name, proto)
            if m is None:
                continue
            for b in (0, 1, 7):
                x = rng.integers(info.min, info.max, (b, k), dtype=dt, endpoint=True)
                got = m.run([x])[0]
                tally.runs += 1
                want = (x.astype(np.uint64) @ w.astype(np.uint64)).astype(dt)
                tally.report(got.shape == want.shape and np.array_equal(got, want),
                             f"{name} batch {b}")


def check_refusals():
    node = "node 'quantize' (QuantizeLinear)"
    tally.expect_compile_refusal("q_scale_length", q_model(
        "q_scale_length", 13, T.FLOAT, T.FLOAT, T.UINT8, [2, 3], [4], 1, 0, True, {}),
        f"{node}: the scale's length and dim 1 of the input differ: 4 vs 3")
    tally.expect_compile_refusal("q_axis_opset10", q_model(
        "q_axis_opset10", 10, T.FLOAT, T.FLOAT, T.UINT8, [2, 3], [3], 1, 0, True, {}),
        f"{node}: input 1 ('scale') (scale) must have one element before opset 13")
    tally.expect_compile_refusal("q_axis_range", q_model(
        "q_axis_range", 13, T.FLOAT, T.FLOAT, T.UINT8, [2, 3], [3], 2, 0, True, {}),
        f"{node}: axis 2 is out of range for an input of rank 2")
    tally.expect_compile_refusal("q_blocked_scale", q_model(
        "q_blocked_scale", 21, T.FLOAT, T.FLOAT, T.INT8, [4, 5], [4, 2], 1, 2, True, {}),
        f"{node}: dim 1 of the scale and ceil(dim / block_size) of the input differ: 2 vs 3")
    tally.expect_compile_refusal("q_blocked_rank", q_model(
        "q_blocked_rank", 21, T.FLOAT, T.FLOAT, T.INT8, [4, 5], [3], 1, 2, True, {}),
        f"{node}: input 1 ('scale') (scale) of blocked quantization must have the input's rank")
    tally.expect_compile_refusal("q_dtype_mismatch", q_model(
        "q_dtype_mismatch", 21, T.FLOAT, T.FLOAT, T.INT8, [4], [], 0, 0, True,
        {"output_dtype": T.UINT8}),
        f"{node}: output_dtype u8 differs from the zero point's dtype i8")
    tally.expect_compile_refusal("q_to_float", q_model(
        "q_to_float", 21, T.FLOAT, T.FLOAT, T.FLOAT, [4], [], 0, 0, False,
        {"output_dtype": T.FLOAT}),
        f"{node}: quantization to f32 is not supported")
    tally.expect_compile_refusal("q_double", q_model(
        "q_double", 25, T.DOUBLE, T.FLOAT, T.UINT8, [4], [], 0, 0, True, {}),
        f"{node}: input 0 ('x') must be f32, f16, bf16 or i32, got f64")
    tally.expect_compile_refusal("q_int32_scale", q_model(
        "q_int32_scale", 25, T.INT32, T.INT32, T.UINT8, [4], [], 0, 0, True, {}),
        f"{node}: input 1 ('scale') (scale) must be f32, f16 or bf16, got i32")
    tally.expect_compile_refusal("q_precision", q_model(
        "q_precision", 25, T.FLOAT, T.FLOAT, T.UINT8, [4], [], 0, 0, True,
        {"precision": T.DOUBLE}),
        f"{node}: attribute 'precision': f64 is not supported")
    bad_zp = h.make_model(h.make_graph(
        [h.make_node("QuantizeLinear", ["x", "scale", "zero_point"], ["y"], name="quantize",
                     axis=0)], "q_zp_shape",
        [h.make_tensor_value_info("x", T.FLOAT, [3, 2]),
         h.make_tensor_value_info("scale", T.FLOAT, [3]),
         h.make_tensor_value_info("zero_point", T.UINT8, [2])],
        [h.make_tensor_value_info("y", T.UINT8, [3, 2])]),
        opset_imports=[h.make_opsetid("", 13)])
    tally.expect_compile_refusal("q_zp_shape", bad_zp,
                           f"{node}: dim 0 of the zero point and of the scale differ: 2 vs 3")
    inits = [nh.from_array(np.array(v, dt), nm) for v, dt, nm in
             ((0.1, np.float32, "sa"), (3, np.uint8, "za"), (0.2, np.float32, "sb"),
              (4, np.uint8, "zb"), (0.5, np.float32, "sy"))]
    inits.append(nh.from_array(np.array([1, 2], np.uint8), "zy"))
    two_y_zp = h.make_model(h.make_graph(
        [h.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"],
                     name="qmm")], "qmm_two_y_zp",
        [h.make_tensor_value_info("a", T.UINT8, [3, 4]),
         h.make_tensor_value_info("b", T.UINT8, [4, 2])],
        [h.make_tensor_value_info("y", T.UINT8, [3, 2])], initializer=inits),
        opset_imports=[h.make_opsetid("", 13)])
    tally.expect_compile_refusal("qmm_two_y_zp", two_y_zp,
                           "node 'qmm' (QLinearMatMul): y_zero_point must be a constant or graph "
                           "input of one element")
    dq = "node 'dequantize' (DequantizeLinear)"
    tally.expect_compile_refusal("dq_float_x", dq_model(
        "dq_float_x", 21, T.FLOAT, T.FLOAT, [4], [], 0, 0, False, T.FLOAT),
        f"{dq}: input 0 ('x') must be u8, i8, u16, i16 or i32, got f32")


for variant, flags in VARIANTS:
    tally.set_variant(flags)
    for k in range(40):
        check_quantize(variant, k)
    for k in range(30):
        check_dequantize(variant, k)
    for k in range(15):
        check_matmul_integer(variant, k)
        check_qlinear_matmul(variant, k)
    for k in (2, 3, 4, 8, 9):
        check_matmul_integer(variant, k, computed_a=True)
    check_constant_integer_weights(variant)
    for k in range(12):
        check_conv_integer(variant, k)
    for k in (0, 1, 2, 3, 6):
        check_conv_integer(variant, k, computed_x=True)
    check_wrapping_integer_matmul(variant)
tally.set_variant("")
if len(sys.argv) > 2:
    check_departed_node_tests(sys.argv[2])
check_qdq_matmul()
check_dynamic_quantization()
check_dynamic_quantized_models()
check_refusals()
tally.finish()
