#!/usr/bin/env python3
"""Convolution channels padded to whole channel blocks (pad_channels.h)
against ONNX Runtime, and against the same model compiled without padding.

Each model holds convolutions whose channel counts the block does not divide
(24 and 144 as in MobileNetV2, 31, 48, 12), in the region the padding grows
through (activations, depthwise convolutions, residual sums, a Sub) and at its
edges (a graph output inside the region, a GlobalAveragePool, a Concat and a
grouped convolution reading it, a 3 x 3 convolution as the padded one). Under
zen5-avx512 (blocks of 32) and generic-avx2 (blocks of 16):
  - the padding happened where it should, to the counts it should
    (aotc_padc_ nodes in --emit graph, EXPECTED below), the 1 x 1
    convolutions reading one padded block reduce over its valid channels
    alone (--emit lowered, EXPECTED), and not under
    --no-pad-channels; the counts it leaves alone are blocked by one
    vector (--emit lowered): whole blocks where they add at most 1/8
    (144 -> 160 in blocks of 32), else one vector's multiple (24 -> 32 in
    blocks of 32; 24 in blocks of 8 and 144 in blocks of 16 under
    generic-avx2; 48 in blocks of 16 under zen5-avx512);
  - random inputs at batch 1, 3 and 0 match ONNX Runtime;
  - inputs holding +-inf and NaN give, element by element, the same NaNs,
    the same infinities and the same finite values (to rounding) as the model
    compiled with --no-pad-channels: the added channels never leak into a
    result (a Relu after a convolution over an infinity makes the valid
    channels finite while 0 x inf in an added one would be NaN);
  - after the weights are updated (aotc_container_update_constants), the
    outputs match ONNX Runtime on the new weights: the padded weights are
    computed at load by the folding program and follow updates.
Usage: check_pad_channels.py AOTC
"""
import os
import re
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from compiled_model import with_weights  # noqa: E402
from e2e_graphs import Checks, Net, net_feeds  # noqa: E402
from e2e_graphs import compare_ort as compare_with_ort  # noqa: E402
from e2e_graphs import run_aotc as compile_aotc  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(41)
tmp = tempfile.mkdtemp()
checks = Checks("pad channels")
fail = checks.fail
PROFILES = {"zen5": ["--device-profile", "zen5-avx512"], "avx2": ["--device-profile", "generic-avx2"]}


def run_aotc(args):
    return compile_aotc(aotc, args)


def mobilenet_block():
    """96 -> 24 projection, two inverted residual blocks of 144, a stride-2
    block; the 24-channel sum is a graph output (inside the region), the
    depthwise result's GlobalAveragePool and a Concat read the region."""
    n = Net("mbv2", 96, (13, 11), rng)
    p = n.conv("x", 96, 24)
    for _ in range(2):
        e = n.clip(n.conv(p, 24, 144))
        d = n.clip(n.conv(e, 144, 144, k=3, group=144))
        p = n.op("Add", [n.conv(d, 144, 24), p])
    n.output(p)
    n.output(n.op("GlobalAveragePool", [d]))
    e = n.clip(n.conv(p, 24, 144))
    d = n.clip(n.conv(e, 144, 144, k=3, group=144, stride=2))
    q = n.conv(d, 144, 32)
    n.output(n.op("Concat", [q, n.conv(p, 24, 32, stride=2)], axis=1))
    return n.model()


def odd_channels():
    """A 3 x 3 convolution to 31 channels, activations that are not zero at
    zero (Sigmoid, HardSigmoid), a Sub of two padded values, 48 channels, a
    grouped (not depthwise) convolution reading the region, 12 channels."""
    n = Net("odd", 5, (9, 7), rng)
    a = n.op("Sigmoid", [n.conv("x", 5, 31, k=3)])
    b = n.op("LeakyRelu", [n.conv("x", 5, 31)], alpha=0.2)
    s = n.op("Sub", [a, b])
    c = n.op("HardSigmoid", [n.conv(s, 31, 48)])
    d = n.op("Tanh", [n.conv(c, 48, 48, k=3, group=48, bias=False)])
    n.output(n.conv(d, 48, 12, bias=False))
    n.output(n.conv(s, 31, 31, k=1, group=31))
    g = n.conv(c, 48, 12, k=1, group=4)
    n.output(n.op("HardSwish", [g]))
    return n.model()


def feeds(proto, batches=(1, 3, 0)):
    return net_feeds(proto, rng, batches)


def compare_ort(tag, m, proto, feeds_list, rtol=2e-4):
    compare_with_ort(checks, tag, m, proto, feeds_list, rtol)


def compare_nonfinite(tag, padded, unpadded, proto):
    """Inputs with +-inf and NaN: the padded build gives what the unpadded
    one gives, element by element."""
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim[1:]]
    x = rng.standard_normal([2] + dims).astype(np.float32)
    flat = x[0].reshape(-1)  # batch element 1 stays finite
    spots = rng.choice(flat.size, size=6, replace=False)
    flat[spots[:2]] = np.inf
    flat[spots[2:4]] = -np.inf
    flat[spots[4:]] = np.nan
    for k, (a, b) in enumerate(zip(padded.run([x]), unpadded.run([x]))):
        checks.check()
        same = (np.array_equal(np.isnan(a), np.isnan(b)) and
                np.array_equal(np.isposinf(a), np.isposinf(b)) and
                np.array_equal(np.isneginf(a), np.isneginf(b)))
        fin = np.isfinite(b)
        if not fin.any():
            fail(f"{tag}: output {k} has no finite element: the case tests nothing")
        close = np.allclose(a[fin], b[fin], rtol=1e-4, atol=1e-4)
        if not (same and close):
            fail(f"{tag}: output {k}: NaN/inf pattern same: {same}, finite values close: {close}")


# Per model and profile: the padded counts, lowered shapes that show the
# blocks of what is not padded, and how many times each convolution
# reduction appears in --emit lowered. A 1 x 1 convolution reading a padded
# value of one block reduces over its valid channels alone (24 of 32 under
# zen5: [24,1,1]; 31 of 32: [31,1,1]); over two blocks or more, over whole
# blocks with zero weights for the added channels (31 of 32 in blocks of 16
# under generic-avx2: [2,1,1,16]; 144 of 160: [5,1,1,32]).
EXPECTED = {
    ("mbv2", "zen5"): ({32, 160}, ["f32[n,1,13,11,32]", "f32[n,5,13,11,32]"],
                       {"[24,1,1]": 4, "[5,1,1,32]": 3, "[1,1,1,32]": 0}),
    ("mbv2", "avx2"): (set(), ["f32[n,3,13,11,8]", "f32[n,9,13,11,16]"],
                       {"[9,1,1,16]": 3}),
    ("odd", "zen5"): ({32}, ["f32[n,1,9,7,32]", "f32[n,3,9,7,16]"],
                      {"[31,1,1]": 1, "[1,1,1,32]": 0}),
    ("odd", "avx2"): ({32}, ["f32[n,2,9,7,16]", "f32[n,3,9,7,16]"],
                      {"[2,1,1,16]": 1, "[31,1,1]": 0}),
}

for mname, proto in {"mbv2": mobilenet_block(), "odd": odd_channels()}.items():
    path = os.path.join(tmp, mname + ".onnx")
    onnx.save(proto, path)
    for pname, pflags in PROFILES.items():
        tag = f"{mname}/{pname}"
        try:
            graph = run_aotc([path, "--emit", "graph"] + pflags)
            lowered = run_aotc([path, "--emit", "lowered"] + pflags)
            plain = run_aotc([path, "--emit", "graph", "--no-pad-channels"] + pflags)
            so = os.path.join(tmp, f"{mname}_{pname}.so")
            so_plain = os.path.join(tmp, f"{mname}_{pname}_plain.so")
            run_aotc([path, "-o", so] + pflags)
            run_aotc([path, "-o", so_plain, "--no-pad-channels"] + pflags)
        except RuntimeError as e:
            fail(f"{tag}: compile: {e}")
            continue
        checks.check()
        want, shapes, sums = EXPECTED[(mname, pname)]
        got = {int(c) for c in re.findall(r"%aotc_padc_\S+_unmasked: f32\[\w+,(\d+),", graph)}
        if got != want:
            fail(f"{tag}: channels padded to {sorted(got)}, expected {sorted(want)}")
        if want and ("Where(" not in graph or graph.count("= Pad(") == 0):
            fail(f"{tag}: padded without its mask or padded weights")
        for shape in shapes:
            if shape not in lowered:
                fail(f"{tag}: no def of shape {shape} in --emit lowered")
        for extents, count in sums.items():
            got_sums = lowered.count("= sum(r in " + extents + ")")
            if got_sums != count:
                fail(f"{tag}: {got_sums} reductions over {extents} in --emit lowered, expected {count}")
        if "aotc_padc_" in plain:
            fail(f"{tag}: --no-pad-channels padded")
        m, m_plain = Model(so, device="cpu"), Model(so_plain, device="cpu")
        compare_ort(tag, m, proto, feeds(proto))
        compare_ort(tag + " unpadded", m_plain, proto, feeds(proto, (2,)))
        compare_nonfinite(tag, m, m_plain, proto)
        # New weights for every initializer but the Clip bounds.
        new = {}
        for init in proto.graph.initializer:
            a = nh.to_array(init)
            if a.ndim > 0:
                new[init.name] = rng.standard_normal(a.shape).astype(np.float32) * np.float32(0.3)
        m.update_constants(new, validate_full=False)
        compare_ort(tag + " updated", m, with_weights(proto, new), feeds(proto, (1, 2)))

checks.done()
