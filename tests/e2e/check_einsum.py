#!/usr/bin/env python3
"""Einsum against NumPy's einsum (ONNX's reference implementation), summed in
float64 (or exactly, for integers): matrix, batched and attention-shaped
products, transposes, diagonals and traces (a label twice in one operand),
sums, outer and inner products, three operands, the ellipsis broadcasting
between operands, implicit outputs (letters named once, in ASCII order),
upper-case letters and spaces, a constant weight operand, and symbolic dims
run at 0, 1 and 5. Every dtype Einsum takes that aotc has (float32/64,
float16, int32, int64 with products beyond 32 bits), on the tiled kernels of
two CPU profiles, the naive ones and the GPU profile's. Bad equations and
operands are refused at compile time, naming the node.
Usage: check_einsum.py AOTC
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
rng = np.random.default_rng(12)
tmp = tempfile.mkdtemp()
failed = 0
runs = 0
NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT32: np.int32,
      T.INT64: np.int64}

# (equation, operand shapes): "b" is a symbolic dim, the run's batch.
CASES = [
    ("ij,jk->ik", [[7, 13], [13, 9]]),
    ("bij,bjk->bik", [["b", 5, 17], ["b", 17, 33]]),
    ("bhid,bhjd->bhij", [["b", 2, 9, 16], ["b", 2, 11, 16]]),
    ("bhij,bhjd->bhid", [["b", 2, 9, 11], ["b", 2, 11, 16]]),
    ("ij->ji", [[5, 3]]),
    ("abc->cab", [[2, 3, 4]]),
    ("ii->i", [[6, 6]]),
    ("ii->", [[6, 6]]),
    ("ii", [[5, 5]]),
    ("bii->bi", [["b", 4, 4]]),
    ("...ii->...i", [[3, 2, 4, 4]]),
    ("i,j->ij", [[5], [7]]),
    ("i,i", [[37], [37]]),
    ("i,i->", [[1], [1]]),
    ("ij->i", [[4, 19]]),
    ("ij->", [["b", 19]]),
    ("bn,anm,bm->ba", [[3, 5], [4, 5, 6], [3, 6]]),
    ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 6]]),
    ("...j,j...->...", [[3, 4], [4, 3]]),
    ("ba", [[3, 4]]),
    ("Ab,bC", [[3, 4], [4, 5]]),
    ("bA,Ca", [[2, 3], [4, 5]]),
    (" bsd , df -> bsf ", [["b", 7, 24], [24, 40]]),
    ("ijk,ikl->ijl", [[3, 1, 50], [3, 50, 1]]),
    ("bij,bjk->bik", [["b", 0, 5], ["b", 5, 3]]),
    ("bsd,fd->bsf", [["b", 7, 24], [40, 24]]),
    ("bhdi,bhjd->bhji", [["b", 2, 16, 9], ["b", 2, 11, 16]]),
    ("ij,j->i", [[9, 33], [33]]),
]
# Weights of the model as initializers: as laid out, and one read through a
# transposing view (its N first, as Gemm's transB has it).
CONSTANTS = [("bsd,hdk->bhsk", [["b", 9, 32], [2, 32, 16]]),
             ("bsd,fd->bsf", [["b", 9, 32], [48, 32]])]


def dims(shape, batch):
    return [batch if d == "b" else d for d in shape]


def values(t, shape):
    if t in (T.FLOAT, T.DOUBLE, T.FLOAT16):
        return rng.standard_normal(shape).astype(NP[t])
    if t == T.INT64:  # products beyond 32 bits, sums of three-way products inside 64
        return rng.integers(-(2**17), 2**17, shape, dtype=np.int64)
    return rng.integers(-100, 100, shape, dtype=np.int32)


def reference(eq, ops):
    if np.issubdtype(ops[0].dtype, np.integer):
        return np.einsum(eq, *ops)
    want = np.einsum(eq, *[o.astype(np.float64) for o in ops])
    scale = np.einsum(eq, *[np.abs(o.astype(np.float64)) for o in ops])
    return want, scale


def close(got, want, t):
    if t in (T.INT32, T.INT64):
        return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    want, scale = want
    tol = {T.FLOAT: 1e-5, T.DOUBLE: 1e-12, T.FLOAT16: 4e-3}[t]
    if got.shape != want.shape or got.dtype != NP[t]:
        return False
    # float16 results are rounded to float16 once more
    bound = tol * (scale + np.abs(want)) + (1e-6 if t == T.FLOAT else 0)
    if t == T.FLOAT16:
        bound = bound + 1e-3 * np.abs(want) + 6e-8
    return bool(np.all(np.abs(got.astype(np.float64) - want) <= bound))


def out_shape(eq, shapes):
    """The output's shape, the symbolic dim (97 here) named "b" again."""
    y = np.einsum(eq, *[np.zeros(dims(sh, 97)) for sh in shapes])
    return ["b" if d == 97 else d for d in y.shape]


def model(name, t, cases, constants=()):
    """All the cases' Einsums in one model, operand j of case i as input
    x{i}_{j}, its output as y{i}; constants: cases whose last operand is an
    initializer w{i} (input xc{i}, output yc{i})."""
    nodes, inputs, outputs, inits = [], [], [], []
    for i, (eq, shapes) in enumerate(cases):
        names = [f"x{i}_{j}" for j in range(len(shapes))]
        nodes.append(h.make_node("Einsum", names, [f"y{i}"], equation=eq, name=f"einsum{i}"))
        inputs += [h.make_tensor_value_info(n, t, s) for n, s in zip(names, shapes)]
        outputs.append(h.make_tensor_value_info(f"y{i}", t, out_shape(eq, shapes)))
    for i, (eq, shapes) in enumerate(constants):
        nodes.append(h.make_node("Einsum", [f"xc{i}", f"w{i}"], [f"yc{i}"], equation=eq,
                                 name=f"einsum_w{i}"))
        inputs.append(h.make_tensor_value_info(f"xc{i}", t, shapes[0]))
        inits.append(numpy_helper.from_array(values(t, shapes[1]), f"w{i}"))
        outputs.append(h.make_tensor_value_info(f"yc{i}", t, out_shape(eq, shapes)))
    return h.make_model(h.make_graph(nodes, name, inputs, outputs, inits),
                        opset_imports=[h.make_opsetid("", 12)])


def check(name, t, flags, cases, constants=(), batches=(0, 1, 5)):
    global failed, runs
    proto = model(name, t, cases, constants)
    os.environ["AOTC_COMPILE_FLAGS"] = flags
    try:
        m, path = compile_model(aotc, tmp, name, proto)
    except RuntimeError as e:
        print(f"FAIL {name}: {str(e)[:400]}")
        failed += 1
        return None
    weights = [numpy_helper.to_array(w) for w in proto.graph.initializer]
    for b in batches:
        before = failed
        feeds = [[values(t, dims(s, b)) for s in shapes] for _, shapes in cases]
        cfeeds = [values(t, dims(shapes[0], b)) for _, shapes in constants]
        got = m.run([x for ops in feeds for x in ops] + cfeeds)
        checks = [(eq, ops) for (eq, _), ops in zip(cases, feeds)]
        checks += [(eq, [x, w]) for (eq, _), x, w in zip(constants, cfeeds, weights)]
        for (eq, ops), g in zip(checks, got):
            runs += 1
            ok = close(np.asarray(g), reference(eq, ops), t)
            if not ok:
                print(f"FAIL {name} '{eq}' batch {b}")
            failed += not ok
        print(f"{'ok  ' if failed == before else 'FAIL'} {name} batch {b}")
    return path


VARIANTS = [("tiled", ""), ("naive", "--naive-kernels"), ("avx512", "--vector-lanes 16"),
            ("gpu", "--device-profile generic-gpu")]
for vname, flags in VARIANTS:
    path = check(f"einsum_f32_{vname}", T.FLOAT, flags, CASES, CONSTANTS)
    if vname == "tiled" and path:
        # ONNX Runtime (1.23) as a second oracle, on the cases it takes: not
        # ellipses of different ranks (NumPy broadcasts them; its shape
        # inference refuses), upper-case letters (refused at run time) or a
        # dim of size 0 (it crashes).
        ort_cases = [c for c in CASES if c[0] not in ("...ij,...jk->...ik", "Ab,bC", "bA,Ca")
                     and 0 not in [d for s in c[1] for d in s]]
        proto = model("einsum_f32_ort", T.FLOAT, ort_cases, CONSTANTS)
        m, opath = compile_model(aotc, tmp, "einsum_f32_ort", proto)
        sess = ort.InferenceSession(opath, providers=["CPUExecutionProvider"])
        feeds = {i.name: values(T.FLOAT, [3 if d == "b" else d for d in i.shape])
                 for i in sess.get_inputs()}
        want = sess.run(None, feeds)
        got = m.run([feeds[i.name] for i in sess.get_inputs()])
        before = failed
        for k, (g, w) in enumerate(zip(got, want)):
            runs += 1
            ok = g.shape == w.shape and np.allclose(g, w, rtol=1e-4, atol=1e-4)
            if not ok:
                print(f"FAIL einsum_f32 output {k} against ONNX Runtime")
            failed += not ok
        print(f"{'ok  ' if failed == before else 'FAIL'} einsum_f32 against ONNX Runtime (batch 3)")
for t in (T.DOUBLE, T.FLOAT16, T.INT32, T.INT64):
    for vname, flags in VARIANTS[:2]:
        tn = onnx.TensorProto.DataType.Name(t).lower()
        check(f"einsum_{tn}_{vname}", t, flags, CASES, CONSTANTS)

# Refused at compile time, naming the node.
os.environ["AOTC_COMPILE_FLAGS"] = ""
BAD = [
    ("ij,jk->ik", [[2, 3], [4, 5]], "the dims of label 'j'"),
    ("ij,jk->ik", [[2, 3, 1], [3, 5]], "operand 0 has rank 3"),
    ("ij,jk->iz", [[2, 3], [3, 5]], "output label 'z' is in no operand"),
    ("ij->ii", [[2, 3]], "named twice"),
    ("i.j->ij", [[2, 3]], "is not a letter"),
    ("...ij->ij", [[4, 2, 3]], "the output does not"),
    ("ij->i->j", [[2, 3]], "two arrows"),
    ("ij,jk->ik", [[2, 3]], "names 2 operands, the node has 1"),
    ("i...j...->ij", [[2, 3]], "two ellipses"),
    ("ij->i...", [[2, 3]], "no operand has"),
]
for k, (eq, shapes, why) in enumerate(BAD):
    runs += 1
    n_ops = eq.split("->")[0].count(",") + 1
    proto = h.make_model(h.make_graph(
        [h.make_node("Einsum", [f"x{j}" for j in range(len(shapes))], ["y"], equation=eq,
                     name="bad_einsum")], f"bad{k}",
        [h.make_tensor_value_info(f"x{j}", T.FLOAT, s) for j, s in enumerate(shapes)],
        [h.make_tensor_value_info("y", T.FLOAT, ["p"])]), opset_imports=[h.make_opsetid("", 12)])
    try:
        compile_model(aotc, tmp, f"bad_einsum{k}", proto)
        msg, ok = "compiled", False
    except RuntimeError as e:
        msg = str(e)
        ok = "bad_einsum" in msg and "Einsum" in msg and why in msg
    print(f"{'ok  ' if ok else 'FAIL'} '{eq}' {shapes} refused: {msg[:240]}")
    failed += not ok
print(f"einsum: {runs} checks, {failed} failed")
sys.exit(1 if failed else 0)
