#!/usr/bin/env python3
"""3 x 3 convolutions as Winograd F(2x2, 3x3) (the default on CPU profiles,
`aotc compile --no-winograd` turns it off; compiler/passes/winograd.h)
against ONNX Runtime's direct convolution.

Models: a ResNet basic block at 128 channels over 14 x 14 (two Winograd
convolutions, Relu and a residual sum fused into the output transform, a
GlobalAveragePool after); a Fire module (Winograd outputs read by
Concats on either side of a 1 x 1 branch and by a ceil_mode MaxPool); odd maps (17 x 15 in, asymmetric pads [2, 1, 0, 2],
160 output channels, no bias, a Winograd result that is a graph output, then
one with pads 0), so the last tile row or column is half outside; small maps
(ResNet's layer4 block over 7 x 7, 16 tiles an image; 8 x 7 in to 7 x 7
with the last tile row and column half outside; 8 x 5 out, 12 tiles); and
convolutions the pass must leave direct (stride 2, dilation 2, two groups,
32 channels, a 5 x 5 kernel). Under zen5-avx512 (channel blocks of 32, 32
vector registers: maps of 49 or more tiles; 128 or more channels, its
winograd_min_channels, so layer1's and fire's 64-channel convolutions stay
direct), zen5-64 (the same with 64 channels, a JSON profile: those run as
Winograd in its 32-register kernels) and generic-avx2 (16, 16 registers: 16
or more tiles, 64 or more channels; winograd.cpp, minTiles, minChannels):
  - the rewrite happened exactly where eligible (aotc.WinogradConv nodes in
    --emit graph) under --winograd, which every compile below uses, and not
    with --no-winograd; by default not where the result leaves the
    channel blocks at once (a graph output, or read only through
    element-wise ops that end in graph outputs: odd_maps' and small_odd's
    two, layer1's and small_maps' second; winograd.h, stop 80);
  - random inputs at batch 1, 3 and 0 match ONNX Runtime;
  - inputs with an infinity, a NaN and a huge value (1e30) in one channel
    of one pixel each (at a corner, an edge and inside) give the direct
    build's (--no-winograd) infinities, NaNs and finite values in the same
    places, and ONNX Runtime's where no MaxPool meets a NaN: where the
    transforms' value is not finite the kernel computes the direct sum
    (FiniteOrSum, expand_fallbacks.cpp); without that, an infinity became
    NaN across its tiles;
  - eight random graphs (random_graph: epilogues, consumers, pads, channel
    counts) the same way;
  - after the weights are updated (aotc_container_update_constants), the
    outputs match ONNX Runtime on the new weights: U = G g G^T is computed
    by the folding program and follows updates.
Usage: check_winograd.py AOTC
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from compiled_model import with_weights  # noqa: E402
from e2e_graphs import Checks, Net, net_feeds, profile_variant  # noqa: E402
from e2e_graphs import compare_ort as compare_with_ort  # noqa: E402
from e2e_graphs import run_aotc as compile_aotc  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(56)
tmp = tempfile.mkdtemp()
checks = Checks("winograd")
fail = checks.fail
# Each profile's flags, the fewest 2 x 2 tiles of an output map it rewrites
# (winograd.cpp, minTiles) and the fewest input and output channels
# (DeviceProfile::winogradMinChannels: 128 on zen5-avx512, 64 by default).
# "zen5-64" is zen5-avx512 with the default 64 (a JSON profile), so that its
# 32-register kernels still run the 64-channel convolutions.
ZEN5_64 = os.path.join(tmp, "zen5-64.json")
_zen5 = profile_variant(aotc, "zen5-avx512", ZEN5_64, name="zen5-64", winograd_min_channels=64)
if _zen5.get("winograd_min_channels") != 128:
    checks.fail(f"zen5-avx512's winograd_min_channels: {_zen5.get('winograd_min_channels')}, expected 128")
PROFILES = {"zen5": (["--device-profile", "zen5-avx512"], 49, 128),
            "zen5-64": (["--device-profile", ZEN5_64], 49, 64),
            "avx2": (["--device-profile", "generic-avx2"], 16, 64)}


def tiles(oh, ow):
    return ((oh + 1) // 2) * ((ow + 1) // 2)


def run_aotc(args):
    return compile_aotc(aotc, args)


def basic_block():
    """1 x 1 stem, then conv3x3 -> Relu -> conv3x3 -> + -> Relu (2 rewritten)."""
    n = Net("block", 96, (14, 14), rng)
    s = n.op("Relu", [n.conv("x", 96, 128)])
    a = n.op("Relu", [n.conv(s, 128, 128, k=3)])
    b = n.conv(a, 128, 128, k=3)
    y = n.op("Relu", [n.op("Add", [b, s])])
    n.output(y)
    n.output(n.op("GlobalAveragePool", [y]))
    return n.model(), [(tiles(14, 14), 128)] * 2


def odd_maps():
    """17 x 15, pads [2, 1, 0, 2] -> 17 x 16 (tiles 9 x 8, the last row half
    outside), 160 channels, no bias, a graph output; then pads 0 -> 15 x 14
    (8 x 7 tiles) (2 rewritten)."""
    n = Net("odd", 128, (17, 15), rng)
    a = n.conv("x", 128, 160, k=3, bias=False, pads=[2, 1, 0, 2])
    n.output(a)
    r = n.op("Sigmoid", [a])
    n.output(n.conv(r, 160, 128, k=3, pads=[0, 0, 0, 0]))
    return n.model(), [(tiles(17, 16), 128), (tiles(15, 14), 128)]


def layer1():
    """ResNet's layer1 block: 64 channels over 16 x 16, conv3x3 -> Relu ->
    conv3x3 -> + x -> Relu (2 rewritten)."""
    n = Net("layer1", 64, (16, 16), rng)
    a = n.op("Relu", [n.conv("x", 64, 64, k=3)])
    n.output(n.op("Relu", [n.op("Add", [n.conv(a, 64, 64, k=3), "x"])]))
    return n.model(), [(tiles(16, 16), 64)] * 2


def fire():
    """SqueezeNet's and GoogLeNet's pattern: Winograd convolutions read by
    a Concat (after a 1 x 1 branch of 48 channels, so the boundary falls
    inside a channel block of 32, and before one) and by a ceil_mode
    MaxPool (2 rewritten). The Concat's arm that reads the transforms'
    output is the only place their channel index (the concatenated one
    minus an offset) is valid: bound before the select, they were read at
    every channel, and the run failed its index check (squeezenet1_1,
    googlenet and inception_v3 as torch.onnx exports them, stop 65)."""
    n = Net("fire", 96, (16, 16), rng)
    s = n.op("Relu", [n.conv("x", 96, 64)])
    e1 = n.op("Relu", [n.conv(s, 64, 48)])
    e3 = n.op("Relu", [n.conv(s, 64, 96, k=3)])
    n.output(n.op("Concat", [e1, e3], axis=1))
    f3 = n.conv(s, 64, 64, k=3)
    n.output(n.op("Relu", [n.op("Concat", [f3, e1], axis=1)]))
    n.output(n.op("MaxPool", [f3], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
    return n.model(), [(tiles(16, 16), 64)] * 2


def small_maps():
    """ResNet's layer4 block over 7 x 7: conv3x3 -> Relu -> conv3x3 -> + x
    -> Relu, 16 tiles an image (2 eligible)."""
    n = Net("small", 128, (7, 7), rng)
    a = n.op("Relu", [n.conv("x", 128, 128, k=3)])
    n.output(n.op("Relu", [n.op("Add", [n.conv(a, 128, 128, k=3), "x"])]))
    return n.model(), [(tiles(7, 7), 128)] * 2


def small_odd():
    """8 x 7 in: pads [0, 1, 1, 1] -> 7 x 7 (the last tile row and column
    half outside) read by a GlobalAveragePool and an output; pads [1, 0, 1,
    0] -> 8 x 5, 12 tiles, direct on both profiles (2 eligible)."""
    n = Net("smallodd", 96, (8, 7), rng)
    b = n.conv("x", 96, 128, k=3, pads=[0, 1, 1, 1])
    n.output(b)
    n.output(n.op("GlobalAveragePool", [b]))
    n.output(n.conv("x", 96, 128, k=3, bias=False, pads=[1, 0, 1, 0]))
    return n.model(), [(tiles(7, 7), 96), (tiles(8, 5), 96)]


def left_direct():
    """Convolutions the pass leaves alone (none eligible); the 7 x 7 map
    after the MaxPool is small_maps'."""
    n = Net("direct", 128, (14, 14), rng)
    n.output(n.conv("x", 128, 128, k=3, stride=2))
    d = n.fresh("c")
    w = n.fresh("w")
    n.inits.append(nh.from_array((rng.standard_normal((128, 128, 3, 3)) / 34).astype(np.float32), w))
    n.nodes.append(onnx.helper.make_node("Conv", ["x", w], [d], dilations=[2, 2], pads=[2, 2, 2, 2]))
    n.output(d)
    n.output(n.conv("x", 128, 128, k=3, group=2))
    small = n.conv("x", 128, 32)
    n.output(n.conv(small, 32, 32, k=3))
    n.output(n.conv("x", 128, 128, k=5))
    return n.model(), []


def random_graph(k):
    """Random graph k: a 1 x 1 stem (or none), one or two eligible 3 x 3
    convolutions (64-160 channels, maps 13-23 wide, random pads, bias or
    not), each followed by a random epilogue (Relu, Clip, a residual sum,
    Sigmoid, nothing) and read by a random consumer (an output, MaxPool,
    GlobalAveragePool, a Concat with the input, another convolution)."""
    r = np.random.default_rng(1000 + k)
    cin = int(r.choice([64, 96, 128]))
    hw = (int(r.integers(13, 24)), int(r.integers(13, 24)))
    n = Net(f"random{k}", cin, hw, rng)
    x, c = "x", cin
    if r.random() < 0.5:
        x = n.op("Relu", [n.conv(x, c, c)])
    rewritten = []
    for _ in range(int(r.integers(1, 3))):
        co = int(r.choice([64, 96, 128, 160]))
        pads = [int(p) for p in r.integers(0, 3, size=4)] if r.random() < 0.4 else [1, 1, 1, 1]
        y = n.conv(x, c, co, k=3, bias=bool(r.random() < 0.7), pads=pads)
        oh, ow = hw[0] + pads[0] + pads[2] - 2, hw[1] + pads[1] + pads[3] - 2
        rewritten.append((tiles(oh, ow), min(c, co)))
        epi = r.choice(["relu", "clip", "residual", "sigmoid", "none"])
        if epi == "relu":
            y = n.op("Relu", [y])
        elif epi == "clip":
            y = n.clip(y)
        elif epi == "sigmoid":
            y = n.op("Sigmoid", [y])
        elif epi == "residual" and co == c and (oh, ow) == hw:
            y = n.op("Relu", [n.op("Add", [y, x])])
        use = r.choice(["output", "maxpool", "gap", "concat", "next"])
        if use == "maxpool":
            n.output(n.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
        elif use == "gap":
            n.output(n.op("GlobalAveragePool", [y]))
        elif use == "concat" and (oh, ow) == hw:
            n.output(n.op("Concat", [y, x], axis=1))
        else:
            n.output(y)
        if (oh, ow) != hw:
            break
        x, c = y, co
    return n.model(), rewritten


def feeds(proto, batches=(1, 3, 0)):
    return net_feeds(proto, rng, batches)


def compare_ort(tag, m, proto, feeds_list, rtol=2e-4):
    compare_with_ort(checks, tag, m, proto, feeds_list, rtol)


def nonfinite_input(proto):
    """Batch 2: image 0 holds +inf, -inf, NaN and 1e30, each in one channel
    of one pixel (a corner, an edge, inside); image 1 stays finite."""
    x = feeds(proto, (2,))[0][0]
    _, c, h, w = x.shape
    x[0, 3, 0, 0] = np.inf
    x[0, c - 1, h // 2, w - 1] = -np.inf
    x[0, c // 2, h // 2 + 3, w // 2] = np.nan
    x[0, 7, 2, w // 2 - 3] = 1e30
    return x


def compare_nonfinite(tag, m, refs, x, rtol=2e-4):
    """Every output's NaNs and infinities (with their signs) where \p refs
    (outputs for x of ONNX Runtime or of the direct build) have them; its
    finite elements within rtol of the largest."""
    for k, (ref, got) in enumerate(zip(refs, m.run([x]))):
        got = np.asarray(got)
        if got.shape != ref.shape:
            fail(f"{tag} output {k}: shape {got.shape}, expected {ref.shape}")
            continue
        checks.check()
        for name, mask in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
            a, b = mask(got), mask(ref)
            if not np.array_equal(a, b):
                fail(f"{tag} output {k}: {name} at {int(a.sum())} elements, the reference at "
                     f"{int(b.sum())}; first difference at {np.argwhere(a != b)[0].tolist()}")
        fin = np.isfinite(ref) & np.isfinite(got)
        if fin.any():
            err = np.abs(got[fin] - ref[fin]).max() / max(np.abs(ref[fin]).max(), 1e-30)
            if err > rtol:
                fail(f"{tag} output {k}: finite elements off by {err:.2e} of the largest")
        if not (~np.isfinite(ref)).any() and k == 0:
            fail(f"{tag} output {k}: no non-finite element to compare (the test's input)")


# Eight random graphs (random_graph) beside the hand-made ones: other
# epilogues, consumers, pads and channel counts around the transforms.
RANDOM = [lambda k=k: random_graph(k) for k in range(8)]

# Per hand-made model, for each eligible convolution in order, whether its
# result leaves the channel blocks at once (a graph output, or read only
# through element-wise ops that end in graph outputs: winograd.h): the
# default keeps those direct, `--winograd` (every other compile here)
# rewrites them too.
LEAVES = {"block": [False, False], "odd": [True, True], "layer1": [False, True],
          "fire": [False, False], "small": [False, True], "smallodd": [True, True]}

for make in (basic_block, odd_maps, layer1, fire, small_maps, small_odd, left_direct, *RANDOM):
    proto, eligible = make()
    mname = proto.graph.name
    path = os.path.join(tmp, mname + ".onnx")
    onnx.save(proto, path)
    for pname, (pflags, min_tiles, min_channels) in PROFILES.items():
        tag = f"{mname}/{pname}"
        expected = sum(t >= min_tiles and ch >= min_channels for t, ch in eligible)
        if mname in LEAVES:
            # The default: not where the result leaves the blocks at once.
            want = sum(t >= min_tiles and ch >= min_channels and not leaves
                       for (t, ch), leaves in zip(eligible, LEAVES[mname]))
            default = run_aotc([path, "--emit", "graph"] + pflags).count("= aotc.WinogradConv(")
            checks.check()
            if default != want:
                fail(f"{tag}: {default} convolutions rewritten by default, expected {want}")
        direct_flags = list(pflags)
        pflags = pflags + ["--winograd"]
        try:
            graph = run_aotc([path, "--emit", "graph"] + pflags)
            plain = run_aotc([path, "--emit", "graph", "--no-winograd"] + direct_flags)
            so = os.path.join(tmp, f"{mname}_{pname}.so")
            run_aotc([path, "-o", so] + pflags)
        except RuntimeError as e:
            fail(f"{tag}: compile: {e}")
            continue
        checks.check()
        got = graph.count("= aotc.WinogradConv(")
        if got != expected:
            fail(f"{tag}: {got} convolutions rewritten, expected {expected}")
        if "WinogradConv" in plain:
            fail(f"{tag}: rewritten with --no-winograd")
        m = Model(so, device="cpu")
        compare_ort(tag, m, proto, feeds(proto))
        # Non-finite inputs: the outputs' NaNs and infinities those of the
        # direct build (--no-winograd), and of ONNX Runtime where no MaxPool
        # meets a NaN (ONNX Runtime's skips it, aotc's propagates it,
        # docs/CORRECTNESS.md: an infinity turned NaN by a convolution over
        # mixed-sign weights reaches one in several random graphs).
        pools = any(nd.op_type == "MaxPool" for nd in proto.graph.node)
        x = nonfinite_input(proto)
        so_direct = os.path.join(tmp, f"{mname}_{pname}_direct.so")
        run_aotc([path, "-o", so_direct, "--no-winograd"] + direct_flags)
        compare_nonfinite(tag + " non-finite against --no-winograd", m,
                          Model(so_direct, device="cpu").run([x]), x)
        if not pools:
            import onnxruntime as ort
            compare_nonfinite(tag + " non-finite", m,
                              ort.InferenceSession(proto.SerializeToString()).run(None, {"x": x}), x)
        new = {}
        for init in proto.graph.initializer:
            a = nh.to_array(init)
            if a.ndim == 0:  # Clip's bounds stay
                continue
            new[init.name] = (rng.standard_normal(a.shape) / np.sqrt(max(a[0].size, 1))).astype(np.float32)
        m.update_constants(new, validate_full=False)
        compare_ort(tag + " updated", m, with_weights(proto, new), feeds(proto, (1, 2)))

checks.done()
