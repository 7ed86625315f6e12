#!/usr/bin/env python3
"""Padded stores (padded_stores.h): a reduction that computes the value a
convolution's padded copy pads stores its elements into the copy, shifted,
with the border, and the copy kernel disappears.

Models, each at odd spatial sizes (a 9 x 13 map, 7 x 5 after a stride):
  - resnet: ResNet basic blocks (3 x 3 convolutions, residual sums read again
    by the next block and by a strided 1 x 1 downsampling convolution, which
    then read the padded copy's interior), a bottleneck's 1 x 1 reduction
    into a 3 x 3 (collapse_dims merges its rows, the finish divides), and a
    MaxPool in front;
  - pads: asymmetric padding (0, 1, 2, 1), a 5 x 5 window (padding 2: 24
    border stores, the limit) and a 7 x 7 (padding 3: kept as a copy), a
    value padded by two convolutions (not redirected), and a padded value
    that is also a graph output (kept, read by its copy).
Under zen5-avx512 (channel blocks of 32) and generic-avx2 (16), each model:
  - has fewer kernels than with --no-padded-stores (the copies are gone);
  - matches ONNX Runtime at batch 1, 3 and 0, and again at 3 after a run
    at 1 on the same instance (the arena's layout moves with the batch:
    every border element is written on every run);
  - gives the same bits as the --no-padded-stores build, on inputs holding
    +-inf and NaN too (the stores move, the arithmetic does not).
Usage: check_padded_stores.py AOTC
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
rng = np.random.default_rng(42)
tmp = tempfile.mkdtemp()
checks = Checks("padded stores")
fail = checks.fail
PROFILES = {"zen5": ["--device-profile", "zen5-avx512"], "avx2": ["--device-profile", "generic-avx2"]}


def resnet():
    n = Net("resnet", 64, (9, 13), rng)
    x = n.op("MaxPool", ["x"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    for _ in range(2):  # basic blocks: the sum is read by the next block's pad and its sum
        a = n.op("Relu", [n.conv(x, 64, 64, k=3)])
        x = n.op("Relu", [n.op("Add", [n.conv(a, 64, 64, k=3), x])])
    # A strided block: the downsampling 1 x 1 reads the padded copy's interior.
    a = n.op("Relu", [n.conv(x, 64, 128, k=3, stride=2)])
    x = n.op("Relu", [n.op("Add", [n.conv(a, 128, 128, k=3), n.conv(x, 64, 128, stride=2)])])
    # A bottleneck: the 1 x 1 reduction stores into the 3 x 3's padded input.
    r = n.op("Relu", [n.conv(x, 128, 64)])
    r = n.op("Relu", [n.conv(r, 64, 64, k=3)])
    n.output(n.op("Relu", [n.op("Add", [n.conv(r, 64, 128), x])]))
    return n.model()


def pads():
    n = Net("pads", 48, (9, 13), rng)
    a = n.op("Relu", [n.conv("x", 48, 64)])
    b = n.conv(a, 64, 64, k=3, pads=[0, 1, 2, 1])  # asymmetric
    c = n.op("Sigmoid", [n.conv(b, 64, 32, k=5)])  # padding 2: 24 border stores
    d = n.conv(c, 32, 32, k=7)  # padding 3: 48, kept as a copy
    # e is padded by two convolutions: read by both copies, not redirected.
    e = n.op("Relu", [n.conv(d, 32, 32)])
    f = n.op("Add", [n.conv(e, 32, 32, k=3), n.conv(e, 32, 32, k=5)])
    # g is a graph output and padded: kept, its copy reads it.
    g = n.op("Relu", [n.conv(f, 32, 64)])
    n.output(g)
    n.output(n.conv(g, 64, 16, k=3))
    return n.model()


def compile_so(path, name, flags):
    so = os.path.join(tmp, name + ".so")
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    kernels = int(re.search(r"\((\d+) kernels", r.stderr + r.stdout).group(1))
    return Model(so, device="cpu"), kernels


def inputs(proto, batch, nonfinite=False):
    return net_input(proto, batch, rng, nonfinite)


for mname, proto in {"resnet": resnet(), "pads": pads()}.items():
    path = os.path.join(tmp, mname + ".onnx")
    onnx.save(proto, path)
    sess = ort.InferenceSession(proto.SerializeToString())
    for pname, pflags in PROFILES.items():
        tag = f"{mname}/{pname}"
        try:
            stored, k_stored = compile_so(path, f"{mname}_{pname}", pflags)
            copied, k_copied = compile_so(path, f"{mname}_{pname}_copies", pflags + ["--no-padded-stores"])
        except RuntimeError as e:
            fail(f"{tag}: compile: {e}")
            continue
        checks.check()
        if k_stored >= k_copied:
            fail(f"{tag}: {k_stored} kernels with padded stores, {k_copied} without: nothing was fused")
        for batch in (1, 3, 0, 1, 3):
            x = inputs(proto, batch)
            expect_close(checks, tag, sess.run(None, {"x": x}), stored.run([x]), 2e-4, batch)
        for nonfinite in (False, True):
            x = inputs(proto, 2, nonfinite)
            expect_same_bits(checks, tag, stored.run([x]), copied.run([x]), "the copies' build", nonfinite)
        print(f"{tag}: {k_copied} -> {k_stored} kernels")

checks.done()
