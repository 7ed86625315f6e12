#!/usr/bin/env python3
"""Size variants (compiler/schedule/size_variants.cpp) against ONNX Runtime, on
the CPU device with the GPU profile's kernels, and with the CPU profiles' for a
GEMM whose rows are the batch.

A kernel whose best configuration differs with its batch planned at 8 instead
of 1 is built twice, and each run launches the one its condition picks. For
each model (an MLP whose batch-1 layers run a GEMV tile and batch-8 layers a
register tile; a 3 x 3 convolution's GEMM view whose split K halves at 8; a
batched MatMul with a bias and Relu epilogue; a 1x1 convolution over 2 x 2 maps,
whose variant's stores the bounds prover proves only by dividing a common factor
out of the tile's check), at batch 0, 1, 2, 3, 5 and 8 (and 9, 13):
  - the outputs match ONNX Runtime;
  - the kernels that ran (the profile's records) are exactly those whose
    launch condition (`aotc compile --emit=loop`, `[when ...]`) holds at that
    batch, with at least one of each variant pair run over the batches;
  - each launched kernel's record carries its work estimate (kernel_costs:
    bytes, and flops for the variants' contractions);
  - the model compiled with --no-size-variants has no variant and gives the
    same outputs within the tolerance.
Then an MLP (96 -> 200 -> 37, odd widths) under the AVX-512 and AVX2 CPU
profiles, whose tiles plan their rows (the batch) at a batch of 8: one kernel
per layer, no variant, checked at batch 0 to 13 (partial tiles of rows).
Usage: check_size_variants.py AOTC
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
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(5)
tmp = tempfile.mkdtemp()
GPU = ["--device-profile", "generic-gpu"]
BATCHES = [0, 1, 2, 3, 5, 8]
failed = 0
checks = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def weight(name, shape, fan_in):
    return nh.from_array((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name)


def model(name, nodes, inputs, output, inits):
    g = h.make_graph(nodes, name, inputs, [output], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def reduce_sum():
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 9000, 70])
    y = h.make_tensor_value_info("y", T.FLOAT, ["n", 9000])
    return model("sv_reduce", [
        h.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
        h.make_node("Tanh", ["s"], ["y"]),
    ], [x], y, [nh.from_array(np.array([2], dtype=np.int64), "axes")])


def conv():
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 64, 28, 28])
    y = h.make_tensor_value_info("y", T.FLOAT, ["n", 64, 28, 28])
    return model("sv_conv", [
        h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        h.make_node("Relu", ["c"], ["y"]),
    ], [x], y, [weight("w", (64, 64, 3, 3), 576), weight("b", (64,), 1)])


def conv_small_maps():
    # A 1x1 convolution over 2 x 2 maps: its GEMM view's tile of 4 pixel
    # columns stores batch row 8 * gn + lx under 32 * gn + 4 * lx < 4 * n,
    # which the bounds prover proves by dividing out the 4 (it refused to
    # compile the _at8 variant before; cnn_small's conv4 under generic-gpu).
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 16, 2, 2])
    y = h.make_tensor_value_info("y", T.FLOAT, ["n", 16, 2, 2])
    return model("sv_conv_small", [
        h.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[1, 1]),
    ], [x], y, [weight("w", (16, 16, 1, 1), 16), weight("b", (16,), 1)])


def matmul():
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 128, 256])
    y = h.make_tensor_value_info("y", T.FLOAT, ["n", 128, 512])
    return model("sv_matmul", [
        h.make_node("MatMul", ["x", "w"], ["m"]),
        h.make_node("Add", ["m", "b"], ["a"]),
        h.make_node("Relu", ["a"], ["y"]),
    ], [x], y, [weight("w", (256, 512), 256), weight("b", (512,), 1)])


def mlp():
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 96])
    y = h.make_tensor_value_info("y", T.FLOAT, ["n", 37])
    return model("sv_mlp", [
        h.make_node("Gemm", ["x", "w1", "b1"], ["g"], transB=1),
        h.make_node("Relu", ["g"], ["a"]),
        h.make_node("Gemm", ["a", "w2", "b2"], ["y"], transB=1),
    ], [x], y, [weight("w1", (200, 96), 96), weight("b1", (200,), 1),
                weight("w2", (37, 200), 200), weight("b2", (37,), 1)])


# Each kernel launched on its own, so that the profile says which ran
# (persistent kernels run them inside: check_persistent_kernels.py).
ALONE = ["--no-persistent-kernels"]


def compile_so(path, so, flags):
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags + ALONE, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)


def launch_conditions(path, flags):
    """Per kernel in launch order: (name, condition text or None)."""
    out = subprocess.run([aotc, "compile", path, "--emit=loop"] + flags + ALONE, capture_output=True,
                         text=True, check=True).stdout
    kernels = []
    for line in out.splitlines():
        m = re.match(r"kernel (\w+)\(.*?\)(?: \[[^\]]*\])*? \[when (.*)\] \{$", line)
        if m:
            kernels.append((m.group(1), m.group(2)))
        elif line.startswith("kernel "):
            kernels.append((line.split()[1].split("(")[0], None))
    return kernels


def holds(cond, n):
    # The conditions compare a product of the batch with a constant:
    # "((1024 * n) < 2897)".
    return bool(eval(cond, {"__builtins__": {}}, {"n": n}))


def check(make, profile=GPU, batches=BATCHES, variants_expected=True):
    global checks
    proto = make()
    name = proto.graph.name + ("" if profile == GPU else "_" + profile[-1])
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(proto, path)
    so, plain_so = os.path.join(tmp, name + ".so"), os.path.join(tmp, name + "_plain.so")
    compile_so(path, so, profile)
    compile_so(path, plain_so, profile + ["--no-size-variants"])
    kernels = launch_conditions(path, profile)
    plain = launch_conditions(path, profile + ["--no-size-variants"])
    variants = [k for k, c in kernels if c is not None]
    if variants_expected and (not variants or not any(k.endswith("_at8") for k in variants)):
        fail(f"{name}: no size variant among {kernels}")
    if not variants_expected and variants:
        fail(f"{name}: size variants {variants}, expected none")
    if any(c is not None or k.endswith("_at8") for k, c in plain):
        fail(f"{name}: --no-size-variants built a variant: {plain}")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    m = Model(so, device="cpu", profile=True)
    p = Model(plain_so, device="cpu")
    seen = set()
    for n in batches:
        shape = [n if isinstance(d, str) else d for d in inp.shape]
        x = rng.standard_normal(shape).astype(np.float32)
        ref = sess.run(None, {inp.name: x})[0]
        for label, mod in (("variants", m), ("--no-size-variants", p)):
            out = mod.run([x])[0]
            scale = max(float(np.max(np.abs(ref))), 1e-30) if ref.size else 1.0
            err = float(np.max(np.abs(out - ref))) / scale if ref.size else 0.0
            checks += 1
            if out.shape != ref.shape or err > 1e-5:
                fail(f"{name} {label} batch {n}: shape {out.shape} vs {ref.shape}, rel err {err:.2e}")
        ran = {}
        for r in m.last_profile():
            if r["kind"] == "kernel":
                ran[r["index"]] = r
        expected = {i for i, (k, c) in enumerate(kernels) if c is None or holds(c, n)}
        if n == 0:
            expected = set()  # an empty run launches nothing
        checks += 1
        if set(ran) != expected:
            fail(f"{name} batch {n}: ran {sorted(kernels[i][0] for i in ran)}, expected "
                 f"{sorted(kernels[i][0] for i in expected)}")
        for i, r in ran.items():
            checks += 1
            if not r["bytes"] > 0 or (kernels[i][1] is not None and not r["flops"] > 0):
                fail(f"{name} batch {n}: kernel {kernels[i][0]} ran with no work estimate")
            seen.add(kernels[i][0])
    for k in variants:
        checks += 1
        if k not in seen:
            fail(f"{name}: variant {k} never ran over batches {batches}")
    print(f"{name}: {len(kernels)} kernels, variants {variants}")


CPU_BATCHES = [0, 1, 2, 3, 4, 5, 8, 9, 13]
for make, profile, batches, expected in ((reduce_sum, GPU, BATCHES, True),
                                         (conv, GPU, BATCHES, True),
                                         (matmul, GPU, BATCHES, True),
                                         (conv_small_maps, GPU, BATCHES + [9, 13], True),
                                         (mlp, ["--vector-lanes", "16"], CPU_BATCHES, False),
                                         (mlp, ["--vector-lanes", "8"], CPU_BATCHES, False)):
    try:
        check(make, profile, batches, expected)
    except Exception as e:  # a compile or run error fails the test
        fail(f"{make.__name__} {profile}: {e}")
if failed:
    print(f"{failed} of {checks} checks failed")
    sys.exit(1)
print(f"size variants ok ({checks} checks)")
