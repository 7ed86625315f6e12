#!/usr/bin/env python3
"""Chained kernels (compiler/schedule/chain_kernels.h): two consecutive
contractions run as one kernel where each work-item of the second reads only
what the same work-item of the first wrote.

Models:
  - mbconv: MobileNetV2's inverted residual blocks (1 x 1 expansion, 3 x 3
    depthwise, 1 x 1 projection with and without the residual sum, the
    projection 1 or 2 tiles of 32 channels wide), where each projection
    chains with the next 1 x 1 convolution; at 28 x 28 (whole
    tiles of 8 pixels), 14 x 14 and 11 x 13 (a partial last tile: the proof
    follows the tiles' row conditions), and 7 x 7 (7 tiles: too few
    work-items, kept apart);
  - bottleneck: a ResNet block's downsampling 1 x 1 convolution, whose tile
    the block's last 1 x 1 convolution adds to its own (the work-items match
    one to one, channel tiles too; the block's input is an activation in
    channel blocks, as in ResNet);
  - stencil: a 1 x 1 convolution read by a 3 x 3 one, which reads its
    neighbours' pixels: never chained.
Under zen5-avx512 and generic-avx2, each model:
  - has chained kernels where chaining applies, none where it must not, and
    none under --no-chain-kernels;
  - keeps each chain as a size variant beside its pair (the chain runs at a
    batch of 1 or 2, the pair from 3 on: size_variants.cpp);
  - matches ONNX Runtime at batch 1, 3 and 0, and again at 1 and 3 on the
    same instance;
  - gives the same bits as the --no-chain-kernels build at batch 2 (the
    chains run), on inputs holding +-inf and NaN too;
  - lists every kernel of the unchained build by name in --emit=kernel-configs
    (a chained kernel's parts keep their names and configurations).
Usage: check_chain_kernels.py AOTC
"""
import json
import os
import re
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from e2e_graphs import Checks, Net, expect_close, expect_same_bits, net_input, run_aotc  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(7)
tmp = tempfile.mkdtemp()
checks = Checks("chain kernels")
fail = checks.fail
# Each kernel launched on its own, so that the profile names the chains
# (persistent kernels run them inside: check_persistent_kernels.py).
PROFILES = {"zen5": ["--device-profile", "zen5-avx512", "--no-persistent-kernels"],
            "avx2": ["--device-profile", "generic-avx2", "--no-persistent-kernels"]}


def mbconv(hw):
    n = Net(f"mbconv{hw[0]}x{hw[1]}", 16, hw, rng)

    block = n.inverted_block
    x = n.clip(n.conv("x", 16, 32))
    x = block(x, 32, 32, 6, True)   # projection + sum, then the next expansion
    x = block(x, 32, 64, 6, False)  # the projection's 2 channel tiles in each work-item
    x = block(x, 64, 64, 4, True)
    n.output(n.conv(x, 64, 40))     # a last 1 x 1 reading the sum
    return n.model()


def bottleneck():
    # The block's input s is an activation in channel blocks, as in ResNet:
    # then its downsampling and its last 1 x 1 convolution (64 steps each)
    # get the same tile under every profile (4 x 32 under zen5-avx512's
    # short convolution budget; one over the NCHW graph input would not
    # take it, and the pair would not chain).
    n = Net("bottleneck", 64, (14, 14), rng)
    s = n.op("Relu", [n.conv("x", 64, 64)])
    a = n.op("Relu", [n.conv(s, 64, 64)])
    a = n.op("Relu", [n.conv(a, 64, 64, k=3)])
    y = n.op("Relu", [n.op("Add", [n.conv(a, 64, 256), n.conv(s, 64, 256)])])
    n.output(n.conv(y, 256, 64))  # the next block's 1 x 1 reduction keeps the sum in channel blocks
    return n.model()


def stencil():
    n = Net("stencil", 24, (28, 28), rng)
    a = n.clip(n.conv("x", 24, 32))
    n.output(n.conv(a, 32, 32, k=3))
    return n.model()


# name -> (model, whether chaining must apply)
MODELS = {
    "mbconv28": (mbconv((28, 28)), True),
    "mbconv14": (mbconv((14, 14)), True),
    "mbconv11x13": (mbconv((11, 13)), True),
    "mbconv7": (mbconv((7, 7)), False),
    "bottleneck": (bottleneck(), True),
    "stencil": (stencil(), False),
}


def compile_so(path, name, flags):
    so = os.path.join(tmp, name + ".so")
    # --verify-each: the Loop IR verifier after every pass (a pass that verified a module whose
    # Winograd finite-or-sums were not expanded yet failed the bottleneck's compile).
    run_aotc(aotc, [path, "-o", so, "--verify-each"] + flags)
    return Model(so, device="cpu")


def chains(path, flags):
    """The chained kernels of the compile (named kA_kB...), and how many kernels it has."""
    names = re.findall(r"^kernel (k\w+)\(", run_aotc(aotc, [path, "--emit=loop"] + flags), re.M)
    return [n for n in names if re.match(r"k\d+_k\d+_", n)], len(names)


def config_names(path, flags):
    return set(json.loads(run_aotc(aotc, [path, "--emit=kernel-configs"] + flags))["kernels"])


for mname, (proto, applies) in MODELS.items():
    path = os.path.join(tmp, mname + ".onnx")
    onnx.save(proto, path)
    sess = ort.InferenceSession(proto.SerializeToString())
    for pname, pflags in PROFILES.items():
        tag = f"{mname}/{pname}"
        try:
            chained = compile_so(path, f"{mname}_{pname}", pflags)
            apart = compile_so(path, f"{mname}_{pname}_apart", pflags + ["--no-chain-kernels"])
        except RuntimeError as e:
            fail(f"{tag}: compile: {e}")
            continue
        found, k_chained = chains(path, pflags)
        none, k_apart = chains(path, pflags + ["--no-chain-kernels"])
        checks.check()
        if applies and not found:
            fail(f"{tag}: nothing was chained")
        if not applies and found:
            fail(f"{tag}: chained {found}: a pair that must stay apart")
        if none:
            fail(f"{tag}: chained under --no-chain-kernels: {none}")
        # Each chain is a size variant (a batch of 1 or 2) beside its pair.
        checks.check()
        if k_chained != k_apart + len(found):
            fail(f"{tag}: {k_chained} kernels with {len(found)} chains, {k_apart} apart")
        checks.check()
        if config_names(path, pflags) != config_names(path, pflags + ["--no-chain-kernels"]):
            fail(f"{tag}: --emit=kernel-configs does not list the chained kernels' parts by name")
        for batch in (1, 3, 0, 1, 3):
            x = net_input(proto, batch, rng)
            expect_close(checks, tag, sess.run(None, {"x": x}), chained.run([x]), 2e-4, batch)
        # Which kernels run: the chains at a batch of 1, the pairs at 3.
        names = [n for n, _ in chained.kernel_summaries()]
        chained.set_profiling(True)
        for batch, want in ((1, True), (3, False)):
            chained.run([net_input(proto, batch, rng)])
            ran = [names[r["index"]] for r in chained.last_profile() if r["kind"] == "kernel"]
            got = sum(1 for n in ran if n in found)
            checks.check()
            if got != (len(found) if want else 0):
                fail(f"{tag}: batch {batch}: {got} of the {len(found)} chains ran")
        chained.set_profiling(False)
        for nonfinite in (False, True):
            x = net_input(proto, 2, rng, nonfinite)
            expect_same_bits(checks, tag, chained.run([x]), apart.run([x]), "the unchained build", nonfinite)
        print(f"{tag}: {len(found)} chains ({k_apart} kernels apart)")

checks.done()
