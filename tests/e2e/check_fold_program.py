#!/usr/bin/env python3
"""The folding program against ONNX Runtime: BatchNormalization folded into
the convolution before it, and weights computed from weights (a Cast of a
float16 weight, a scaled weight) packed on the device at load.

Each model is run on random inputs (odd sizes, batch 0, 1 and 3) and must
match ONNX Runtime on the same .onnx. Then its weights are changed: updated
in the active set, or in the inactive set then folded and swapped, or given
all at once to a weightless .so; every time the outputs must match ONNX
Runtime on an .onnx file holding the new weights, and the weights read back
must be the ones given. A computed constant cannot be given by name; a
model whose BatchNormalization cannot be folded (its parameters are per-run
inputs, its Conv's result is read twice) still runs correctly unfolded. One
transposed weight read by three or four GEMMs (ALBERT's shared layers) is
packed once and follows updates, as does a packed weight that the folding
program computes another GEMM's weight from.
Every case runs with the register-tiled kernels (packed weights), the naive
ones (--naive-kernels) and the GPU profile's (on the CPU device).
Usage: check_fold_program.py AOTC
"""
import ctypes
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
from aotc_ctypes import DTYPES, ConstantEntry, Model, _fill  # noqa: E402
from compiled_model import with_weights  # noqa: E402
from e2e_graphs import Checks, expect_close  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(11)
tmp = tempfile.mkdtemp()
checks = Checks("fold program")
fail = checks.fail
FLAGS = {"tiled": [], "naive": ["--naive-kernels"], "gpu": ["--device-profile", "generic-gpu"]}


def compile_so(name, proto, flags, extra=()):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(proto, path)
    so = os.path.join(tmp, name + ".so")
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags + list(extra),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return path, so


def emitted(proto, kind, flags=()):
    path = os.path.join(tmp, "emit.onnx")
    onnx.save(proto, path)
    r = subprocess.run([aotc, "compile", path, "--emit=" + kind] + list(flags),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return r.stdout


def compare(tag, model, proto, feeds_list, rtol=2e-4):
    sess = ort.InferenceSession(proto.SerializeToString())
    names = [i.name for i in sess.get_inputs()]
    for feeds in feeds_list:
        ref = sess.run(None, dict(zip(names, feeds)))
        try:
            out = model.run(feeds)
        except RuntimeError as e:
            fail(f"{tag}: run: {e}")
            continue
        expect_close(checks, tag, ref, out, rtol, feeds[0].shape[0])


def extract(model):
    """{onnx name: array} of the active set's updatable constants."""
    lib = model.lib
    n = ctypes.c_size_t()
    model._check(lib.aotc_container_extract_constants(model.c, 0, None, 0, ctypes.byref(n)))
    entries = (ConstantEntry * n.value)()
    model._check(lib.aotc_container_extract_constants(model.c, 0, entries, n.value, ctypes.byref(n)))
    out, keep = {}, []
    for e in entries:
        shape = tuple(e.tensor.shape[d] for d in range(e.tensor.rank))
        a = np.empty(shape, dtype=DTYPES[e.tensor.dtype])
        keep.append(a)
        out[e.name.decode()] = a
    for e, a in zip(entries, keep):
        e.tensor.data, e.tensor.nbytes = a.ctypes.data, a.nbytes
    model._check(lib.aotc_container_extract_constants(model.c, 0, entries, n.value, ctypes.byref(n)))
    return out


def give(model, name, a):
    """aotc_container_update_constants of one entry; returns its status."""
    e = ConstantEntry()
    key = name.encode()
    e.name = key
    a = np.require(a, requirements="C")
    _fill(e.tensor, a)
    return model.lib.aotc_container_update_constants(model.c, ctypes.byref(e), 1, 0, 0)


def fresh(proto, names):
    """New random values (variances positive) for initializers `names`."""
    new = {}
    for init in proto.graph.initializer:
        if init.name in names:
            a = nh.to_array(init)
            v = rng.standard_normal(a.shape)
            new[init.name] = (np.abs(v) + 0.25 if "var" in init.name else v).astype(a.dtype)
    return new


def bn_inits(p, c):
    return [nh.from_array(rng.standard_normal(c).astype(np.float32), p + "_gamma"),
            nh.from_array(rng.standard_normal(c).astype(np.float32), p + "_beta"),
            nh.from_array(rng.standard_normal(c).astype(np.float32), p + "_mean"),
            nh.from_array(rng.uniform(0.3, 2.0, c).astype(np.float32), p + "_var")]


def bn_node(x, p, y, eps=1e-5):
    return h.make_node("BatchNormalization", [x, p + "_gamma", p + "_beta", p + "_mean", p + "_var"],
                       [y], epsilon=eps)


def conv_bn_model(name, ci=3, co=32, co2=10, h_=9, w_=11, bias=True, group2=1):
    """x -> Conv 3x3 (bias or not) -> BN -> Relu -> Conv 1x1 (group2) -> BN -> y
    (the second BN's output is the graph output)."""
    inits = [nh.from_array(rng.standard_normal((co, ci, 3, 3)).astype(np.float32), "w1"),
             nh.from_array(rng.standard_normal((co2, co // group2, 1, 1)).astype(np.float32), "w2")]
    if bias:
        inits.append(nh.from_array(rng.standard_normal(co).astype(np.float32), "b1"))
    inits += bn_inits("bn1", co) + bn_inits("bn2", co2)
    nodes = [h.make_node("Conv", ["x", "w1"] + (["b1"] if bias else []), ["c1"], pads=[1, 1, 1, 1]),
             bn_node("c1", "bn1", "n1", 1e-3), h.make_node("Relu", ["n1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], group=group2), bn_node("c2", "bn2", "y")]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, ["n", ci, h_, w_])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", co2, h_, w_])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def feeds_for(proto):
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim[1:]]
    return [[rng.standard_normal([b] + dims).astype(np.float32)] for b in (1, 3, 0)]


def check_lifecycle(tag, proto, so, updated_names):
    """Load, compare, update (active), update inactive + fold + swap, extract."""
    m = Model(so, device="cpu")
    feeds = feeds_for(proto)
    compare(f"{tag} loaded", m, proto, feeds)
    new = fresh(proto, updated_names)
    m.update_constants(new, validate_full=False)
    p2 = with_weights(proto, new)
    compare(f"{tag} updated", m, p2, feeds)
    got = extract(m)
    for name, a in new.items():
        if not np.array_equal(got.get(name), a):
            fail(f"{tag}: extracted '{name}' is not the value given")
    new3 = fresh(proto, updated_names)
    m.update_constants(new3, use_inactive=True, validate_full=False)
    compare(f"{tag} inactive not swapped", m, p2, feeds[:1])
    m._check(m.lib.aotc_container_run_const_fold(m.c, 1))
    m._check(m.lib.aotc_container_swap_constant_buffer(m.c))
    compare(f"{tag} swapped", m, with_weights(p2, new3), feeds)
    m._check(m.lib.aotc_container_run_const_fold(m.c, 0))  # idempotent
    compare(f"{tag} folded again", m, with_weights(p2, new3), feeds[:1])
    return m


# 1. Conv -> BN pairs: folded into a folding program, packed weights computed at load.
for flavour, flags in FLAGS.items():
    for case, kwargs in {"bias": {}, "nobias": {"bias": False}, "odd": {"co": 12, "co2": 7, "h_": 5, "w_": 13},
                         "grouped": {"co": 16, "co2": 16, "group2": 4}}.items():
        tag = f"convbn_{case}_{flavour}"
        proto = conv_bn_model(tag, **kwargs)
        try:
            path, so = compile_so(tag, proto, flags)
        except RuntimeError as e:
            fail(f"{tag}: compile: {e}")
            continue
        m = check_lifecycle(tag, proto, so, ["w1", "bn1_gamma", "bn1_var", "bn1_mean", "bn2_beta", "w2"]
                            + (["b1"] if kwargs.get("bias", True) else []))
        status = give(m, "w1", np.zeros((1,), np.float32))
        if status == 0:
            fail(f"{tag}: a wrong shape for w1 was accepted")

# The folded graph: no BatchNormalization left, the folding program holds the
# normalization's arithmetic and writes the packed weight.
proto = conv_bn_model("emit", co=32)
graph = emitted(proto, "graph")
main, _, fold = graph.partition("// ----- folding program -----")
if "BatchNormalization" in graph or "Sqrt" not in fold or "Sqrt" in main or "_packed" not in fold:
    fail("emitted graph: the normalization is not in the folding program\n" + graph)
cl = emitted(proto, "cl")
if "__kernel void fold_" not in cl or "sqrt" not in cl.split("__kernel void fold_", 1)[1]:
    fail("emitted OpenCL has no folding kernel computing the square root")
cpp = emitted(proto, "cpp")
if "static int32_t run_fold(AotcRunCtx *ctx)" not in cpp or "AOTC_CONSTANT_COMPUTED" not in cpp:
    fail("the wrapper has no run_fold or no computed constant")

# A computed constant cannot be given, and names why.
proto = conv_bn_model("named", co=32)
path, so = compile_so("named", proto, [])
m = Model(so, device="cpu")
status = None
for line in emitted(proto, "cpp").splitlines():
    if "AOTC_CONSTANT_COMPUTED" in line and line.strip().startswith("{\""):
        computed_name = line.strip()[2:].split('"', 1)[0]
        status = give(m, computed_name, np.zeros((1,), np.float32))
        msg = m.lib.aotc_last_error().decode()
        if status == 0 or "folding program" not in msg:
            fail(f"giving computed constant '{computed_name}': status {status}, '{msg}'")
        break
if status is None:
    fail("no computed constant listed in the wrapper")

# 2. A weightless .so: the folding program runs once the weights are given.
proto = conv_bn_model("weightless", co=16)
path, so = compile_so("weightless", proto, [], ["--weightless"])
m = Model(so, device="cpu")
x = [rng.standard_normal((2, 3, 9, 11)).astype(np.float32)]
try:
    m.run(x)
    fail("weightless: a run before the weights were given succeeded")
except RuntimeError as e:
    if "has no value" not in str(e):
        fail(f"weightless: unexpected error {e}")
weights = {i.name: nh.to_array(i) for i in proto.graph.initializer}
m.update_constants(weights, validate_full=True)
compare("weightless given", m, proto, feeds_for(proto))

# 3. Weights computed from weights, then packed on the device: a float16
# weight cast to float32 (n = 50, not a multiple of the lanes: zero-padded
# panels), and a weight scaled by another.
w16 = rng.standard_normal((24, 50)).astype(np.float16)
scale = rng.standard_normal((1, 40)).astype(np.float32)
w2 = rng.standard_normal((50, 40)).astype(np.float32)
g = h.make_graph(
    [h.make_node("Cast", ["w16"], ["w32"], to=T.FLOAT), h.make_node("MatMul", ["x", "w32"], ["a"]),
     h.make_node("Mul", ["w2", "s"], ["w2s"]), h.make_node("MatMul", ["a", "w2s"], ["y"])],
    "computed", [h.make_tensor_value_info("x", T.FLOAT, ["n", 24])],
    [h.make_tensor_value_info("y", T.FLOAT, ["n", 40])],
    [nh.from_array(w16, "w16"), nh.from_array(scale, "s"), nh.from_array(w2, "w2")])
proto = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
fold = emitted(proto, "graph").partition("// ----- folding program -----")[2]
if "Cast" not in fold or "Pad" not in fold or "Mul" not in fold:
    fail("computed weights: the cast, the padding and the scaling are not folded\n" + fold)
for flavour, flags in FLAGS.items():
    tag = f"computed_{flavour}"
    path, so = compile_so(tag, proto, flags)
    check_lifecycle(tag, proto, so, ["w16", "s", "w2"])

# 4. Not folded: per-run BN parameters (initializers listed as inputs), and a
# Conv whose result is also a graph output. Still correct.
proto = conv_bn_model("perrun", co=16)
proto.graph.input.append(h.make_tensor_value_info("bn1_gamma", T.FLOAT, [16]))
graph = emitted(proto, "graph")
if graph.count("BatchNormalization") != 1:
    fail("perrun: the BatchNormalization with a per-run scale was folded\n" + graph)
path, so = compile_so("perrun", proto, [])
m = Model(so, device="cpu")
compare("perrun", m, proto, feeds_for(proto))
proto = conv_bn_model("twice", co=16)
proto.graph.output.append(h.make_tensor_value_info("c1", T.FLOAT, ["n", 16, 9, 11]))
path, so = compile_so("twice", proto, [])
m = Model(so, device="cpu")
compare("twice", m, proto, feeds_for(proto))

# 5. Unfoldable: a BatchNormalization of the input with a per-run scale,
# inlined into Relu and MaxPool (its value bound once: bind_common.cpp).
g = h.make_graph(
    [h.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["n"], epsilon=1e-3),
     h.make_node("Relu", ["n"], ["r"]),
     h.make_node("MaxPool", ["r"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
    "unfoldable", [h.make_tensor_value_info("x", T.FLOAT, ["n", 5, 9, 11]),
                   h.make_tensor_value_info("g", T.FLOAT, [5])],
    [h.make_tensor_value_info("y", T.FLOAT, ["n", 5, 5, 6])],
    [nh.from_array(rng.standard_normal(5).astype(np.float32), "b"),
     nh.from_array(rng.standard_normal(5).astype(np.float32), "m"),
     nh.from_array(rng.uniform(0.3, 2.0, 5).astype(np.float32), "v")])
proto = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
for flavour, flags in FLAGS.items():
    path, so = compile_so(f"unfoldable_{flavour}", proto, flags)
    m = Model(so, device="cpu")
    compare(f"unfoldable_{flavour}", m, proto,
            [[rng.standard_normal((b, 5, 9, 11)).astype(np.float32),
              rng.standard_normal(5).astype(np.float32)] for b in (1, 2, 0)])

# 6. A Gather of weights by constant indices (BERT's position embeddings:
# a table gathered at its registered position ids) runs in the folding
# program, whose index checks report through the model's error table: the
# verifier once refused every such model (bert_base did not compile).
# Indices updated out of range are an error naming the node, at the update
# that folds them, and the container stays usable.
table = rng.standard_normal((12, 6)).astype(np.float32)
ids = np.array([[0, 3, 11, 5]], dtype=np.int64)
g = h.make_graph(
    [h.make_node("Gather", ["table", "ids"], ["pos"], name="position_gather"),
     h.make_node("Add", ["x", "pos"], ["y"])],
    "gathered", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4, 6])],
    [h.make_tensor_value_info("y", T.FLOAT, ["n", 4, 6])],
    [nh.from_array(table, "table"), nh.from_array(ids, "ids")])
proto = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
fold = emitted(proto, "graph").partition("// ----- folding program -----")[2]
if "Gather" not in fold:
    fail("gathered: the Gather of constants is not in the folding program\n" + fold)
for flavour, flags in FLAGS.items():
    tag = f"gathered_{flavour}"
    path, so = compile_so(tag, proto, flags)
    m = Model(so, device="cpu")
    feeds = [[rng.standard_normal((b, 4, 6)).astype(np.float32)] for b in (1, 3, 0)]
    compare(tag, m, proto, feeds)
    new_ids = np.array([[11, -12, 2, 7]], dtype=np.int64)  # -12 wraps to 0
    if give(m, "ids", new_ids) != 0:
        fail(f"{tag}: updating the indices in range: {m.lib.aotc_last_error().decode()}")
    compare(tag + " updated", m, with_weights(proto, {"ids": new_ids}), feeds)
    status = give(m, "ids", np.array([[0, 12, 1, 2]], dtype=np.int64))
    msg = m.lib.aotc_last_error().decode()
    checks.check()
    if status == 0 or "position_gather" not in msg:
        fail(f"{tag}: indices out of range: status {status}, '{msg}'")

# 7. One transposed weight read by three or four GEMMs (ALBERT's layers share
# their weights: torch.onnx exports one Transpose of each, read by every
# layer). Each GEMM past the first two packs it in the folding program as a
# "<w>_packed" value of the same name; the outputs were matched to their
# constants by that name, so one packed copy was never written and the model
# returned NaN (albert as torch.onnx exports it: wrong from its third layer).
def square_weight_model(name, nodes, y, k, inits):
    """x[n, 7, k] -> nodes -> y[n, 7, k], a random weight w[k, k] and inits."""
    w = nh.from_array((rng.standard_normal((k, k)) / np.sqrt(k)).astype(np.float32), "w")
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, ["n", 7, k])],
                     [h.make_tensor_value_info(y, T.FLOAT, ["n", 7, k])], [w] + inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def shared_weight_model(name, layers, k):
    nodes = [h.make_node("Transpose", ["w"], ["wt"], perm=[1, 0])]
    x = "x"
    for i in range(layers):
        nodes += [h.make_node("MatMul", [x, "wt"], [f"m{i}"]),
                  h.make_node("Add", [f"m{i}", "b"], [f"a{i}"]),
                  h.make_node("Add", [f"a{i}", x], [f"r{i}"]),
                  h.make_node("Tanh", [f"r{i}"], [f"t{i}"])]
        x = f"t{i}"
    return square_weight_model(name, nodes, x, k,
                               [nh.from_array(rng.standard_normal(k).astype(np.float32), "b")])


# And a weight that one GEMM reads packed while the folding program computes
# another GEMM's weight from it (Mul(Transpose(w), 0.5)): the program read
# its own compile-time copy of the packed weight, which no update rewrote,
# so the second GEMM kept the old weights after aotc_container_update_constants.
def fold_reads_packed_model(name, k):
    nodes = [h.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
             h.make_node("MatMul", ["x", "wt"], ["m0"]), h.make_node("Tanh", ["m0"], ["t0"]),
             h.make_node("Mul", ["wt", "half"], ["s"]),
             h.make_node("MatMul", ["t0", "s"], ["m1"]), h.make_node("Tanh", ["m1"], ["y"])]
    return square_weight_model(name, nodes, "y", k, [nh.from_array(np.array(0.5, np.float32), "half")])


for flavour, flags in FLAGS.items():
    for layers, k in ((3, 40), (4, 96)):
        tag = f"shared_weight_{layers}x{k}_{flavour}"
        proto = shared_weight_model(tag, layers, k)
        path, so = compile_so(tag, proto, flags)
        check_lifecycle(tag, proto, so, ["w", "b"])
    tag = f"fold_reads_packed_{flavour}"
    proto = fold_reads_packed_model(tag, 40)
    path, so = compile_so(tag, proto, flags)
    check_lifecycle(tag, proto, so, ["w"])

checks.done()
