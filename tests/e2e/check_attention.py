#!/usr/bin/env python3
"""Fused attention (compiler/lowering/lower_attention.cpp, compiler/schedule/attention.cpp)
against ONNX Runtime and against aotc's unfused kernels.

Generated attention graphs, each compiled fused (--fuse-attention) with the CPU profile's
tiled kernels and the GPU profile's, with every key-block width a configuration can give
(--kernel-configs lanes 0, 4, 8, 16), the GPU profile's work-group kernel (its default) with
groups of 1 to 32 query rows, 1 to 4 per work-item (group_reduce 8 to 256, tm 1 to 4),
unfused (the CPU profile's default, the GPU profile's with --no-fuse-attention) and naive
(--naive-kernels, which never fuses), run on the OpenCL device at several batch and
sequence sizes (0, 1, odd, partial key blocks):
  - BERT's block: projections, Reshape/Transpose to heads, K^T, Div by sqrt(d), Add of
    a [n, 1, 1, s] mask made from an input, Softmax, MatMul by V, back to [n, s, h*d];
  - GPT-2's causal mask (Where by a Bool [s, s] mask with -1e4 elsewhere) and a Where
    whose chain is its third input (-inf where the mask holds);
  - masks of -inf: the first keys of every row masked (whole first blocks of -inf, the
    case where an online softmax gives NaN unless it guards its maximum), a causal mask
    subtracted (Sub, [s, s]), a scale multiplied from the left (Mul(c, S));
  - no scale or mask at all, Softmax with a positive axis, odd depths (7) and value
    widths (13, 20: vector chunks plus a scalar rest), values broadcast over a batch
    dimension (P [2, 3, m, n] by V [3, n, e]), one key;
  - NaN and +inf in a query (the row is NaN, as Softmax makes it);
  - a bias Add after the attention, computed in its kernel's stores;
  - the query a MatMul whose result a Relu output reads too (the planner must count the
    attention among the MatMul's readers);
  - a Softmax whose result is also a graph output, a Softmax over another axis, and
    opset 11's Softmax with its default axis: not fused, still right.
The fused builds compute in one kernel that names Softmax and both MatMuls (aotc
inspect), the others in several.
Usage: check_attention.py AOTC
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(7)
tmp = tempfile.mkdtemp()
failed = 0
checks = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def const(name, a):
    return nh.from_array(np.asarray(a), name)


def weight(name, *shape):
    return const(name, (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32))


def model(nodes, inputs, outputs, inits, opset=17):
    g = h.make_graph(nodes, "attention", inputs, outputs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def vi(name, shape, t=T.FLOAT):
    return h.make_tensor_value_info(name, t, shape)


def bert(heads=4, d=16):
    """BERT's self-attention: x [n, s, heads*d], mask [n, s] of 0/1."""
    e = heads * d
    nodes = []
    for p in "qkv":
        nodes += [h.make_node("MatMul", ["x", "w" + p], [p + "0"]),
                  h.make_node("Add", [p + "0", "b" + p], [p + "1"]),
                  h.make_node("Reshape", [p + "1", "heads"], [p + "2"])]
    nodes += [
        h.make_node("Transpose", ["q2"], ["q"], perm=[0, 2, 1, 3]),
        h.make_node("Transpose", ["k2"], ["kt"], perm=[0, 2, 3, 1]),
        h.make_node("Transpose", ["v2"], ["v"], perm=[0, 2, 1, 3]),
        h.make_node("MatMul", ["q", "kt"], ["s0"]),
        h.make_node("Div", ["s0", "scale"], ["s1"]),
        h.make_node("Unsqueeze", ["mask", "axes12"], ["m0"]),
        h.make_node("Sub", ["one", "m0"], ["m1"]),
        h.make_node("Mul", ["m1", "big"], ["m2"]),
        h.make_node("Add", ["s1", "m2"], ["s2"]),
        h.make_node("Softmax", ["s2"], ["p"], axis=-1),
        h.make_node("MatMul", ["p", "v"], ["o0"]),
        h.make_node("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
        h.make_node("Reshape", ["o1", "flat"], ["y"]),
    ]
    inits = [weight("w" + p, e, e) for p in "qkv"] + [weight("b" + p, e) for p in "qkv"]
    inits += [const("heads", np.array([0, 0, heads, d], np.int64)),
              const("flat", np.array([0, 0, e], np.int64)),
              const("scale", np.array(np.sqrt(d), np.float32)),
              const("axes12", np.array([1, 2], np.int64)),
              const("one", np.array(1.0, np.float32)),
              const("big", np.array(-10000.0, np.float32))]
    m = model(nodes, [vi("x", ["n", "s", e]), vi("mask", ["n", "s"])], [vi("y", ["n", "s", e])], inits)

    def feeds(n, s):
        mask = (rng.random((n, s)) < 0.8).astype(np.float32)
        if s:
            mask[:, 0] = 1.0
        return [rng.standard_normal((n, s, e)).astype(np.float32), mask]
    return m, feeds, True


def qkv_graph(chain, mask_shape=None, mask_fn=None, qshape=("n", 2, "s", 7), vdepth=13,
              vshape=None, axis=-1, extra_out=False, opset=17, nan=False, after=None):
    """Q [.., s, d], K^T [.., d, s], V [.., s, e] given as inputs, with \\p chain the ops
    between the scores and the Softmax (each (op, operand name, scores first))."""
    *batch, sq, d = qshape
    kt = (*batch, d, sq)
    vs = vshape or (*batch, sq, vdepth)
    nodes = [h.make_node("MatMul", ["q", "kt"], ["c0"])]
    cur = "c0"
    inits = []
    inputs = [vi("q", list(qshape)), vi("kt", list(kt)), vi("v", list(vs))]
    for i, step in enumerate(chain):
        out = f"c{i + 1}"
        if step[0] == "Where":  # ("Where", cond, other, chain where cond holds)
            _, cond, other, first = step
            nodes.append(h.make_node("Where", [cond, cur, other] if first else [cond, other, cur], [out]))
        else:
            op, operand, first = step
            nodes.append(h.make_node(op, [cur, operand] if first else [operand, cur], [out]))
        cur = out
    if mask_shape is not None:
        bool_mask = any(step[0] == "Where" for step in chain)
        inputs.append(vi("mask", list(mask_shape), T.BOOL if bool_mask else T.FLOAT))
    nodes.append(h.make_node("Softmax", [cur], ["p"], **({} if axis is None else {"axis": axis})))
    if after:  # a pointwise op on the attention's result, fused into its stores
        nodes += [h.make_node("MatMul", ["p", "v"], ["o"]), h.make_node(after, ["o", "bias"], ["y"])]
    else:
        nodes.append(h.make_node("MatMul", ["p", "v"], ["y"]))
    outputs = [h.make_tensor_value_info("y", T.FLOAT, None)]
    if extra_out:
        outputs.append(h.make_tensor_value_info("p", T.FLOAT, None))
    inits += [const("scale", np.array(0.37, np.float32)), const("two", np.array([2.0], np.float32)),
              const("minus", np.array(-1e4, np.float32)), const("ninf", np.array([-np.inf], np.float32)),
              const("bias", rng.standard_normal(vs[-1]).astype(np.float32))]
    m = model(nodes, inputs, outputs, inits, opset)
    # The outputs' shapes as ONNX infers them.
    inferred = onnx.shape_inference.infer_shapes(m)
    inferred = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for o in m.graph.output:
        o.CopyFrom(inferred[o.name])
        assert o.type.tensor_type.HasField("shape"), o

    def dims(shape, n, s):
        return tuple(n if x == "n" else s if x == "s" else x for x in shape)

    def feeds(n, s):
        q = rng.standard_normal(dims(qshape, n, s)).astype(np.float32)
        if nan and q.size:
            q.reshape(-1, q.shape[-1])[0, 1] = np.nan
            q.reshape(-1, q.shape[-1])[-1, 0] = np.inf
        f = [q, rng.standard_normal(dims(kt, n, s)).astype(np.float32),
             rng.standard_normal(dims(vs, n, s)).astype(np.float32)]
        if mask_shape is not None:
            f.append(mask_fn(dims(mask_shape, n, s)))
        return f
    return m, feeds, not extra_out and (axis in (-1, 3, None) and (opset >= 13 or axis is not None))


def shared_query():
    """The query a MatMul's result that a Relu graph output reads too: the fusion planner must
    count the attention's score among its readers, or the MatMul is computed inside the Relu's
    kernel and the attention reads a buffer that does not exist."""
    nodes = [h.make_node("MatMul", ["x", "wq"], ["q"]), h.make_node("Relu", ["q"], ["y2"]),
             h.make_node("MatMul", ["q", "kt"], ["s0"]), h.make_node("Softmax", ["s0"], ["p"], axis=-1),
             h.make_node("MatMul", ["p", "v"], ["y"])]
    m = model(nodes, [vi("x", ["n", "s", 8]), vi("kt", ["n", 8, "s"]), vi("v", ["n", "s", 4])],
              [vi("y", ["n", "s", 4]), vi("y2", ["n", "s", 8])], [weight("wq", 8, 8)])

    def feeds(n, s):
        return [rng.standard_normal(shape).astype(np.float32) for shape in ((n, s, 8), (n, 8, s), (n, s, 4))]
    return m, feeds, True


def first_keys_masked(shape):
    """-inf on each row's first keys: whole first blocks (two of 16 keys on the CPU, one of
    32 in the GPU profile's work-group kernel) where s > 32."""
    m = rng.standard_normal(shape).astype(np.float32)
    s = shape[-1]
    m[..., : min(s - 1, 32)] = -np.inf
    return m


def causal(shape):
    s = shape[-1]
    return np.where(np.triu(np.ones((s, s), bool), 1), np.inf, 0).astype(np.float32)


def causal_bool(shape):
    s = shape[-1]
    return np.tril(np.ones((s, s), bool))


CASES = {
    # GPT-2's causal mask: Where(tril, S / c, -1e4); and Where(not tril, -inf, S).
    "where_causal": qkv_graph([("Div", "two", True), ("Where", "mask", "minus", True)], ("s", "s"),
                              causal_bool, qshape=("n", 3, "s", 8), vdepth=16),
    "where_ninf_second": qkv_graph([("Where", "mask", "ninf", False)], ("s", "s"),
                                   lambda shape: ~causal_bool(shape), qshape=("n", 2, "s", 4), vdepth=8),
    "bert": bert(),
    "shared_query": shared_query(),
    "scale_mask_inf": qkv_graph([("Mul", "scale", True), ("Add", "mask", True)], ("n", 1, 1, "s"),
                                first_keys_masked),
    "causal_sub": qkv_graph([("Mul", "scale", False), ("Sub", "mask", True)], ("s", "s"), causal,
                            qshape=("n", 3, "s", 8), vdepth=20),
    "plain_axis3": qkv_graph([], axis=3, qshape=(2, "n", "s", 7), vdepth=20),
    "broadcast_v": qkv_graph([("Div", "two", True)], qshape=(2, 3, "s", 5), vshape=(3, "s", 16)),
    # A bias added to the result: computed in the attention kernel's stores.
    "epilogue_add": qkv_graph([("Mul", "scale", True)], qshape=("n", 2, "s", 8), vdepth=20, after="Add"),
    "nan_inf": qkv_graph([("Mul", "scale", True)], nan=True, qshape=("n", "s", 9), vdepth=4),
    "softmax_output": qkv_graph([("Mul", "scale", True)], extra_out=True),
    "softmax_axis2": qkv_graph([], axis=2, qshape=("n", 2, "s", 6)),
    "opset11_default_axis": qkv_graph([], axis=None, opset=11, qshape=("n", 2, "s", 6)),
}
SIZES = [(0, 5), (1, 1), (1, 17), (3, 40), (2, 33)]


def compile_so(path, label, flags):
    so = os.path.join(tmp, f"{os.path.basename(path)}_{label}.so")
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{label}: compile {path}: {r.stderr.strip()}")
        return None
    return so


def attention_kernels(so):
    text = subprocess.run([aotc, "inspect", so], capture_output=True, text=True).stdout
    return [line for line in text.splitlines() if "Softmax" in line and "->" in line]


def kernel_names(path, flags):
    r = subprocess.run([aotc, "compile", path, "--emit=kernel-configs"] + flags,
                       capture_output=True, text=True)
    configs = json.loads(r.stdout)["kernels"]
    return [k for k, c in configs.items() if c.get("template") == "attention"]


for name, (proto, feeds, fuses) in CASES.items():
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(proto, path)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    on = ["--fuse-attention"]
    variants = [("cpu", on), ("gpu", ["--device-profile", "generic-gpu"] + on),
                ("cpu_default", []), ("gpu_default", ["--device-profile", "generic-gpu"]),
                ("gpu_unfused", ["--device-profile", "generic-gpu", "--no-fuse-attention"]),
                ("naive", ["--naive-kernels"] + on)]
    if fuses:
        names = kernel_names(path, on)
        checks += 1
        if len(names) != 1:
            fail(f"{name}: attention kernels {names}, expected one")
        for lanes in (0, 4, 8, 16):
            cfg = os.path.join(tmp, f"{name}_lanes{lanes}.json")
            with open(cfg, "w") as f:
                json.dump({"kernels": {k: {"template": "attention", "lanes": lanes} for k in names}}, f)
            variants.append((f"lanes{lanes}", on + ["--kernel-configs", cfg]))
        # The work-group kernel (group_attention.cpp), the GPU profile's
        # default: 1, 8, 16 and 32 query rows per group of 8 work-items each.
        gpu_configs = json.loads(subprocess.run(
            [aotc, "compile", path, "--emit=kernel-configs", "--device-profile", "generic-gpu"] + on,
            capture_output=True, text=True).stdout)["kernels"]
        checks += 1
        if [gpu_configs[k].get("group_reduce") for k in names] != [128]:
            fail(f"{name}: GPU attention configs {[gpu_configs[k] for k in names]}, expected group_reduce 128")
        for group, tm in ((8, 1), (64, 1), (128, 1), (256, 1), (64, 2), (128, 2), (32, 4), (8, 3)):
            cfg = os.path.join(tmp, f"{name}_group{group}x{tm}.json")
            with open(cfg, "w") as f:
                json.dump({"kernels": {k: {"template": "attention", "group_reduce": group, "tm": tm}
                                       for k in names}}, f)
            variants.append((f"group{group}x{tm}", ["--device-profile", "generic-gpu"] + on + ["--kernel-configs", cfg]))
    for label, flags in variants:
        so = compile_so(path, label, flags)
        if so is None:
            continue
        fused = [line for line in attention_kernels(so) if "Softmax+MatMul" in line]
        checks += 1
        want = fuses and label not in ("cpu_default", "gpu_unfused", "naive")
        if bool(fused) != want:
            fail(f"{name} {label}: fused attention kernels {fused}, expected {'one' if want else 'none'}")
        m = Model(so, device="cpu")
        for n, s in SIZES:
            f = feeds(n, s)
            ref = sess.run(None, {i.name: x for i, x in zip(proto.graph.input, f)})
            out = m.run(f)
            for r, o in zip(ref, out):
                checks += 1
                if r.shape != o.shape:
                    fail(f"{name} {label} n={n} s={s}: shape {o.shape} vs {r.shape}")
                    continue
                if not np.array_equal(np.isnan(r), np.isnan(o)):
                    fail(f"{name} {label} n={n} s={s}: NaN at {np.argwhere(np.isnan(r) != np.isnan(o))[:3]}")
                    continue
                ok = ~np.isnan(r)
                err = float(np.abs(r[ok] - o[ok]).max()) / max(1.0, float(np.abs(r[ok]).max())) if ok.any() else 0.0
                if err > 2e-5:
                    fail(f"{name} {label} n={n} s={s}: rel err {err:.2e}")
print(f"{checks} checks")
if failed:
    print(f"{failed} failed")
    sys.exit(1)
print("attention ok")
