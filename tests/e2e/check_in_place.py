#!/usr/bin/env python3
"""Outputs stored over inputs (ir/in_place.h, compiler/schedule/
memory_plan.cpp): on CPU profiles a kernel whose every work-item reads an
element of an input it reads for the last time only before it stores the
same element of its output writes the output in the input's arena slot.

Models, each at odd spatial sizes (9 x 13, 7 x 5 after a stride: partial
tiles, whose two arms store the same elements):
  - bottleneck: ResNet-50 bottlenecks, each 1 x 1 expansion adding the
    block's input (its last reader) and Relu, a strided block whose sum
    reads the downsampling convolution's output, a residual read once more
    after its sum (by a graph output: not stored over), and a 3 x 3 over a
    value it reads last (a stencil: never in place);
  - inverted: MobileNetV2 blocks (expansion, Clip, depthwise, projection
    plus the block's input), and an elementwise chain whose inputs die.
Under zen5-avx512, generic-avx512 and generic-avx2, each model:
  - has kernels whose input and output share an arena offset (read from
    the wrapper, --emit=cpp), and none under generic-gpu or --no-in-place;
  - never shares one between an output and an input the kernel reads at
    another element (the stencil), nor with a value read again later;
  - matches ONNX Runtime at batch 1, 3 and 0, and again at 3 after a run
    at 1 on the same instance (the arena's layout moves with the batch);
  - gives the same bits as the --no-in-place build, on inputs holding
    +-inf and NaN too (the stores move, the arithmetic does not).
Usage: check_in_place.py AOTC
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, Net, expect_close, expect_same_bits, net_input  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(7)
tmp = tempfile.mkdtemp()
checks = Checks("in place")
fail = checks.fail
# Kernels apart (--no-chain-kernels): a projection chained with the next
# expansion (compiler/schedule/chain_kernels.h) stores in a serial loop over
# its channel tiles where it has two, which in_place.h leaves in its own slot.
# Each kernel launched on its own (--no-persistent-kernels): the wrapper's
# launch of each then names the buffers it stores over (a persistent kernel
# passes all of its parts' at once).
PROFILES = {"zen5": ["--device-profile", "zen5-avx512", "--no-chain-kernels", "--no-persistent-kernels"],
            "avx512": ["--device-profile", "generic-avx512", "--no-chain-kernels",
                       "--no-persistent-kernels"],
            "avx2": ["--device-profile", "generic-avx2", "--no-chain-kernels", "--no-persistent-kernels"]}


def bottleneck():
    n = Net("bottleneck", 64, (9, 13), rng)
    x = n.op("Relu", [n.conv("x", 64, 128)])
    for _ in range(2):
        a = n.op("Relu", [n.conv(x, 128, 32)])
        a = n.op("Relu", [n.conv(a, 32, 32, k=3)])
        x = n.op("Relu", [n.op("Add", [n.conv(a, 32, 128), x])])
    # Strided: the sum adds the downsampling convolution's output.
    a = n.op("Relu", [n.conv(x, 128, 64)])
    a = n.op("Relu", [n.conv(a, 64, 64, k=3, stride=2)])
    x = n.op("Relu", [n.op("Add", [n.conv(a, 64, 256), n.conv(x, 128, 256, stride=2)])])
    # A residual read after its sum: a graph output too.
    a = n.op("Relu", [n.conv(x, 256, 64)])
    y = n.op("Relu", [n.op("Add", [n.conv(a, 64, 256), x])])
    n.output(x)
    # A 3 x 3 over y, y's last reader: a stencil, never in place.
    s = n.op("Relu", [n.conv(y, 256, 256, k=3)])
    n.output(n.conv(s, 256, 32))
    return n.model()


def inverted():
    n = Net("inverted", 32, (9, 13), rng)
    x = n.conv("x", 32, 32)
    for _ in range(2):
        a = n.clip(n.conv(x, 32, 96))
        a = n.clip(n.conv(a, 96, 96, k=3, group=96))
        x = n.op("Add", [n.conv(a, 96, 32), x])
    # An elementwise chain whose inputs die at each step.
    e = n.op("Sigmoid", [x])
    e = n.op("Mul", [e, n.conv(x, 32, 32)])
    n.output(n.op("Add", [e, n.conv(e, 32, 32)]))
    return n.model()


def compile_so(path, name, flags):
    so = os.path.join(tmp, name + ".so")
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return Model(so, device="cpu")


def in_place_kernels(path, flags):
    """The kernels of the wrapper that pass two arena buffers at one offset:
    [(kernel, read, written)] (the written one is listed after)."""
    r = subprocess.run([aotc, "compile", path, "--emit=cpp"] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    out = []
    for block in re.split(r"// Kernel \d+: ", r.stdout)[1:]:
        name = block.split("\n")[0]
        seen = {}
        for offset, buf in re.findall(r"\{AOTC_ARG_ARENA, 0, ([^}]*)\},\s*// (\S+)",
                                      block.split("aotc_rt_launch")[0]):
            if offset in seen:
                out.append((name, seen[offset], buf))
            seen[offset] = buf
    return out


def inputs(proto, batch, nonfinite=False):
    return net_input(proto, batch, rng, nonfinite)


for mname, proto in {"bottleneck": bottleneck(), "inverted": inverted()}.items():
    path = os.path.join(tmp, mname + ".onnx")
    onnx.save(proto, path)
    sess = ort.InferenceSession(proto.SerializeToString())
    for flags in (["--device-profile", "generic-gpu"], PROFILES["avx512"] + ["--no-in-place"]):
        checks.check()
        if in_place_kernels(path, flags):
            fail(f"{mname}: in place under {' '.join(flags)}: {in_place_kernels(path, flags)}")
    for pname, pflags in PROFILES.items():
        tag = f"{mname}/{pname}"
        try:
            pairs = in_place_kernels(path, pflags)
            placed = compile_so(path, f"{mname}_{pname}", pflags)
            apart = compile_so(path, f"{mname}_{pname}_apart", pflags + ["--no-in-place"])
        except RuntimeError as e:
            fail(f"{tag}: compile: {e}")
            continue
        checks.check()
        if not pairs:
            fail(f"{tag}: no kernel stores in place")
        # Only the sums store in place: the stencil (a 3 x 3 without a
        # sum) reads its input at other elements than it stores.
        summaries = dict(re.findall(r"^  (k\w+): (.* -> .*)$", subprocess.run(
            [aotc, "inspect", os.path.join(tmp, f"{mname}_{pname}.so")],
            capture_output=True, text=True).stdout, re.M))
        for kernel, read, written in pairs:
            checks.check()
            if "Add" not in summaries.get(kernel, ""):
                fail(f"{tag}: {kernel} ({summaries.get(kernel)}) stores {written} over {read}")
        for batch in (1, 3, 0, 1, 3):
            x = inputs(proto, batch)
            expect_close(checks, tag, sess.run(None, {"x": x}), placed.run([x]), 2e-4, batch)
        for nonfinite in (False, True):
            x = inputs(proto, 2, nonfinite)
            expect_same_bits(checks, tag, placed.run([x]), apart.run([x]), "the --no-in-place build",
                             nonfinite)
        print(f"{tag}: {len(pairs)} kernels in place: " + ", ".join(k for k, _, _ in pairs))

checks.done()
