#!/usr/bin/env python3
"""Channel-blocked activations around convolutions (compiler/schedule/channel_blocks.h)
against ONNX Runtime.

One CNN over x[n, 32, 15, 13] (odd map sizes, so every tile has a partial last one):
  - c1: 3x3 Conv 32 -> 64 with a BatchNormalization folded into it (its weight is
    computed at load, and packed for the blocks by the folding program), Relu;
  - c2: 1x1 Conv 64 -> 64, Relu, plus c1 (a residual sum), which the graph also returns
    as `res` (an output inside the region keeps NCHW);
  - a 3x3/2 MaxPool, a 3x3 depthwise Conv (group 64) with Clip, a 3x3/2 Conv 64 -> 96
    with Relu (c3), then from c3: a 1x1 Conv 96 -> 48 returned as `side` (48 channels:
    not a block multiple with 16 lanes, so it reads c3 from outside the region), a 2x2
    AveragePool returned as `pool`, and a GlobalAveragePool, Flatten and Gemm returned
    as `logits`.
Under 16 lanes (blocks of 32), 8 lanes (blocks of 16), 16 lanes with
--no-channel-blocks and the naive kernels, at batch 0, 1 and 3:
  - which defs are blocked (`--emit lowered`): the convolutions, the depthwise one, the
    pools inside the region; none without blocks;
  - which padded copies remain: with blocks the MaxPool and the depthwise convolution
    read through the padding's selects (compiler/schedule/inline_padding.h), the
    dense c3 keeps its copy; without blocks every copy stays;
  - the outputs match ONNX Runtime;
  - the convolution weights updated by name (the dense 1x1, the depthwise one, and the
    one the BatchNormalization folds into) give ONNX Runtime's answer with the new
    values, and a weight of the wrong shape is refused.
Then a model with symbolic map sizes, a grouped convolution, a channel Concat, a Resize
and a MaxPool, at several map sizes (1 x 1 included); a model whose narrow values have
channels of one vector (blocked by half a block); a model of global pools (a
GlobalAveragePool, and a ReduceMean over an explicit Pad's copy) whose one-pixel results
are blocked and reduced two vectors of channels a work-item; tests/lit/window_epilogue's
model (a Relu before a 3 x 3 MaxPool of stride 2 computed by the convolution); then 24
random CNNs (fixed seeds;
stride-1 and -2 depthwise convolutions, 2x2/2 pools and 3x3 pools over a padding of 1,
ceil_mode, count_include_pad) for 8 and 16 lanes at batch 1 and 2, at least 8 of whose
blocked windows read through the padding's selects.
Usage: check_channel_blocks.py AOTC
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402
from compiled_model import with_weights  # noqa: E402

aotc = sys.argv[1]
rng = np.random.default_rng(31)
tmp = tempfile.mkdtemp()
failed = 0
checks = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def conv_w(name, co, ci, k):
    # Scaled by the reduction's length, so that every result is of order 1.
    return (rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32)


def make(weights):
    vi = h.make_tensor_value_info
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["c1n"]),
        h.make_node("Relu", ["c1n"], ["a1"]),
        h.make_node("Conv", ["a1", "w2", "b2"], ["c2"], kernel_shape=[1, 1]),
        h.make_node("Relu", ["c2"], ["a2"]),
        h.make_node("Add", ["a2", "a1"], ["res"]),
        h.make_node("MaxPool", ["res"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        h.make_node("Conv", ["mp", "wd", "bd"], ["dw"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=64),
        h.make_node("Clip", ["dw", "lo", "hi"], ["dwc"]),
        h.make_node("Conv", ["dwc", "w3", "b3"], ["c3"], kernel_shape=[3, 3], strides=[2, 2],
                    pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c3"], ["a3"]),
        h.make_node("Conv", ["a3", "w4", "b4"], ["side"], kernel_shape=[1, 1]),
        h.make_node("AveragePool", ["a3"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["a3"], ["gap"]),
        h.make_node("Flatten", ["gap"], ["flat"]),
        h.make_node("Gemm", ["flat", "wf", "bf"], ["logits"], transB=1),
    ]
    inits = [nh.from_array(v, k) for k, v in weights.items()]
    g = h.make_graph(
        nodes, "channel_blocks", [vi("x", T.FLOAT, ["n", 32, 15, 13])],
        [vi("res", T.FLOAT, ["n", 64, 15, 13]), vi("side", T.FLOAT, ["n", 48, 4, 4]),
         vi("pool", T.FLOAT, ["n", 96, 2, 2]), vi("logits", T.FLOAT, ["n", 10])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


weights = {
    "w1": conv_w("w1", 64, 32, 3), "b1": rng.standard_normal(64).astype(np.float32),
    "bn_s": rng.uniform(0.5, 1.5, 64).astype(np.float32),
    "bn_b": rng.standard_normal(64).astype(np.float32),
    "bn_m": rng.standard_normal(64).astype(np.float32),
    "bn_v": rng.uniform(0.5, 2.0, 64).astype(np.float32),
    "w2": conv_w("w2", 64, 64, 1), "b2": rng.standard_normal(64).astype(np.float32),
    "wd": conv_w("wd", 64, 1, 3), "bd": rng.standard_normal(64).astype(np.float32),
    "lo": np.array(0.0, np.float32), "hi": np.array(6.0, np.float32),
    "w3": conv_w("w3", 96, 64, 3), "b3": rng.standard_normal(96).astype(np.float32),
    "w4": conv_w("w4", 48, 96, 1), "b4": rng.standard_normal(48).astype(np.float32),
    "wf": (rng.standard_normal((10, 96)) / np.sqrt(96)).astype(np.float32),
    "bf": rng.standard_normal(10).astype(np.float32),
}
OUTPUTS = ("res", "side", "pool", "logits")


def check_outputs(tag, ref, out, names):
    """One check per output: out's shape is ref's and max|out - ref| / max(1, max|ref|)
    is at most 1e-5."""
    global checks
    for name, r, o in zip(names, ref, out):
        checks += 1
        o = np.asarray(o)
        err = float(np.abs(r - o).max()) / max(1.0, float(np.abs(r).max())) if r.size else 0.0
        if r.shape != o.shape or err > 1e-5:
            fail(f"{tag} {name}: shape {o.shape} vs {r.shape}, rel err {err:.2e}")


def compare(tag, model, proto):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (0, 1, 3):
        x = rng.standard_normal((n, 32, 15, 13)).astype(np.float32)
        check_outputs(f"{tag} batch {n}", sess.run(None, {"x": x}), model.run([x]), OUTPUTS)


def lowered_defs(path, flags):
    """The lowered defs: {name: its channel block (0: none), whether it reads through
    a padding's select (a window reduction without a padded copy)}."""
    r = subprocess.run([aotc, "compile", path, "--emit", "lowered"] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{flags}: --emit lowered: {r.stderr.strip()}")
        return {}
    out = {}
    for line in r.stdout.split("// ----- folding program")[0].splitlines():
        m = re.match(r"%t\d+ (\S+): \w+\[([^\]]*)\] = (\w+)", line)
        if not m:
            continue
        dims = m.group(2).split(",")
        block = int(dims[4]) if len(dims) == 5 and re.match(r"n,\d+$", ",".join(dims[:2])) else 0
        out[m.group(1)] = (block, m.group(3) in ("sum", "max") and "select(" in line)
    return out


def compiled(path, so, flags, tag):
    """The model at path compiled with flags into so and loaded on PoCL, or None (a
    failed check) when it does not compile."""
    r = subprocess.run([aotc, "compile", path, "-o", so] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{tag}: compile: {r.stderr.strip()}")
        return None
    return Model(so, device="cpu")


def blocked_defs(path, flags):
    """The lowered defs whose shape ends in a channel block: {name: block}."""
    return {k: b for k, (b, _) in lowered_defs(path, flags).items() if b}


proto = make(weights)
path = os.path.join(tmp, "blocks.onnx")
onnx.save(proto, path)
# The region, by def name: the convolutions (c1 with its folded normalization, c2's
# Relu inside the residual sum, the depthwise one, c3 with its Relu), the MaxPool and
# AveragePool, the padded copies before them. `res` is an output (NCHW) and `side`
# reads a3 from outside (48 channels), so a3 keeps NCHW with 16 lanes; with 8 lanes
# (blocks of 16) `side` is a block multiple but an output.
MUST = ("c1", "mp", "dw", "c3")
for label, flags, block in (("lanes16", ["--vector-lanes", "16"], 32),
                            ("lanes8", ["--vector-lanes", "8"], 16),
                            ("no-blocks", ["--vector-lanes", "16", "--no-channel-blocks"], 0),
                            ("naive", ["--naive-kernels"], 0)):
    got = blocked_defs(path, flags)
    checks += 1
    if block == 0 and got:
        fail(f"{label}: blocked defs {sorted(got)}, expected none")
    if block:
        missing = [d for d in MUST if got.get(d) != block and got.get(d + "_padded") != block
                   and not any(k.startswith(d) and v == block for k, v in got.items())]
        if missing or any(v != block for v in got.values()):
            fail(f"{label}: blocked defs {got}, expected {MUST} in blocks of {block}")
        for d in ("res", "side", "logits"):
            if d in got:
                fail(f"{label}: output {d} blocked")
    # The MaxPool and the depthwise convolution read their blocked input through the
    # padding's selects (compiler/schedule/inline_padding.h): their copies are gone;
    # the dense c3 keeps its copy (of dwc). Without blocks every copy stays.
    defs = lowered_defs(path, flags)
    checks += 1
    copies = {d for d in ("res_padded", "mp_padded", "dwc_padded") if d in defs}
    through = {d for d in ("mp", "dw") if defs.get(d, (0, False))[1]}
    want = ({"dwc_padded"}, {"mp", "dw"}) if block else (
        {"res_padded", "mp_padded", "dwc_padded"}, set())
    if (copies, through) != want:
        fail(f"{label}: padded copies {sorted(copies)}, read through selects {sorted(through)}; "
             f"expected {sorted(want[0])}, {sorted(want[1])}")
    so = os.path.join(tmp, f"blocks_{label}.so")
    model = compiled(path, so, flags, label)
    if model is None:
        continue
    compare(label, model, proto)
    new = {"w2": conv_w("w2", 64, 64, 1), "wd": conv_w("wd", 64, 1, 3),
           "w1": conv_w("w1", 64, 32, 3), "w3": conv_w("w3", 96, 64, 3)}
    try:
        model.update_constants(new, validate_full=False)
    except RuntimeError as e:
        fail(f"{label}: update: {e}")
        continue
    compare(label + " updated", model, with_weights(proto, new))
    checks += 1
    try:
        model.update_constants({"w3": np.zeros((96, 64, 3, 2), np.float32)}, validate_full=False)
        fail(f"{label}: a weight of the wrong shape was accepted")
    except RuntimeError:
        pass

# A second model with symbolic map sizes, a grouped convolution (group 2, 32 channels
# a group), a channel Concat (its second and third inputs read at i1 - 64 and
# i1 - 128), a Resize (nearest, x2) and a MaxPool, and a global pool at the end.
def make_shapes():
    vi = h.make_tensor_value_info
    ws = {"s1": conv_w("s1", 64, 32, 3), "s2": conv_w("s2", 64, 32, 3),
          "s3": conv_w("s3", 64, 64, 1), "s4": conv_w("s4", 32, 192, 1),
          "scales": np.array([1, 1, 2, 2], np.float32)}
    nodes = [
        h.make_node("Conv", ["x", "s1"], ["u1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["u1"], ["v1"]),
        h.make_node("Conv", ["v1", "s2"], ["u2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),
        h.make_node("Conv", ["v1", "s3"], ["u3"], kernel_shape=[1, 1]),
        h.make_node("Resize", ["u3", "", "scales"], ["up"], mode="nearest"),
        h.make_node("MaxPool", ["up"], ["down"], kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Concat", ["u2", "down", "v1"], ["cat"], axis=1),
        h.make_node("Conv", ["cat", "s4"], ["u4"], kernel_shape=[1, 1]),
        h.make_node("GlobalAveragePool", ["u4"], ["g"]),
    ]
    g = h.make_graph(nodes, "channel_blocks_shapes", [vi("x", T.FLOAT, ["n", 32, "h", "w"])],
                     [vi("g", T.FLOAT, ["n", 32, 1, 1]), vi("up", T.FLOAT, ["n", 64, "h2", "w2"])],
                     [nh.from_array(v, k) for k, v in ws.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


proto2 = make_shapes()
path2 = os.path.join(tmp, "shapes.onnx")
onnx.save(proto2, path2)
sess2 = ort.InferenceSession(proto2.SerializeToString(), providers=["CPUExecutionProvider"])
for label, flags in (("shapes lanes16", ["--vector-lanes", "16"]), ("shapes lanes8", ["--vector-lanes", "8"])):
    got = blocked_defs(path2, flags)
    checks += 1
    # The grouped convolution (32 channels a group: one block) and the Concat (its
    # offsets whole blocks) are blocked; the Resize is a graph output, so u3 (its only
    # reader is the Resize) and the MaxPool after the Resize keep NCHW.
    if any(d not in got for d in ("u1", "v1", "u2", "cat", "u4")) or \
            any(d in got for d in ("u3", "up", "down")):
        fail(f"{label}: blocked defs {sorted(got)}: expected u1, v1, u2, cat, u4, not u3, up, down")
    so = os.path.join(tmp, f"shapes_{label.split()[1]}.so")
    model = compiled(path2, so, flags, label)
    if model is None:
        continue
    for n, hh, ww in ((1, 9, 11), (2, 16, 5), (0, 7, 7), (1, 1, 1)):
        x = rng.standard_normal((n, 32, hh, ww)).astype(np.float32)
        check_outputs(f"{label} {n}x{hh}x{ww}", sess2.run(None, {"x": x}), model.run([x]), ("g", "up"))


# Channels of one vector (half a block): MobileNetV2's features.1 projects 32 channels
# to 16 and the next block expands them to 96. Under 16 lanes the 16-channel values are
# blocked by 16 (the projection stores one vector a pixel, the expansion reads them a
# block apart), the others by 32; under 8 lanes an 8-channel value by 8. A residual sum
# and a depthwise convolution over the narrow blocks, against ONNX Runtime.
def make_vectors(narrow):
    vi = h.make_tensor_value_info
    ws = {"p1": conv_w("p1", narrow, 32, 1), "p2": conv_w("p2", narrow, narrow, 1),
          "pd": conv_w("pd", narrow, 1, 3), "p3": conv_w("p3", 96, narrow, 1)}
    nodes = [
        h.make_node("Conv", ["x", "p1"], ["q1"], kernel_shape=[1, 1]),
        h.make_node("Conv", ["q1", "p2"], ["q2"], kernel_shape=[1, 1]),
        h.make_node("Add", ["q2", "q1"], ["q3"]),
        h.make_node("Conv", ["q3", "pd"], ["q4"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=narrow),
        h.make_node("Relu", ["q4"], ["q5"]),
        h.make_node("Conv", ["q5", "p3"], ["q6"], kernel_shape=[1, 1]),
        h.make_node("Relu", ["q6"], ["y"]),
    ]
    g = h.make_graph(nodes, "channel_blocks_vectors", [vi("x", T.FLOAT, ["n", 32, 11, 9])],
                     [vi("y", T.FLOAT, ["n", 96, 11, 9])],
                     [nh.from_array(v, k) for k, v in ws.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


for lanes, narrow in (("16", 16), ("8", 8)):
    label = f"vectors lanes{lanes}"
    proto4 = make_vectors(narrow)
    path4 = os.path.join(tmp, f"vectors_{lanes}.onnx")
    onnx.save(proto4, path4)
    flags = ["--vector-lanes", lanes]
    got = blocked_defs(path4, flags)
    checks += 1
    want_narrow = [d for d in ("q1", "q3", "q4") if got.get(d) != narrow]
    if want_narrow or got.get("q6", 2 * narrow) != 2 * narrow or not got:
        fail(f"{label}: blocked defs {got}: expected q1, q3, q4 in blocks of {narrow}, "
             f"the rest of {2 * narrow}")
    model = compiled(path4, os.path.join(tmp, f"vectors_{lanes}.so"), flags, label)
    if model is None:
        continue
    sess4 = ort.InferenceSession(proto4.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (0, 1, 3):
        x = rng.standard_normal((n, 32, 11, 9)).astype(np.float32)
        check_outputs(f"{label} batch {n}", sess4.run(None, {"x": x}), model.run([x]), ("y",))


# Global pools over blocked values: a GlobalAveragePool, and a ReduceMean over H and W
# of an explicit Pad's copy (the pattern of e2e.external_data: the Pad's body, read
# through its select, is substituted into the blocked reduction, so its indices must
# stay inside its input), each into Flatten and a Gemm. Their one-pixel results are
# blocked (a vector of channels per load), and their kernels reduce two vectors of
# channels per work-item (--emit kernel-configs: tn = 2 x lanes).
def make_pools():
    vi = h.make_tensor_value_info
    ws = {"g1": conv_w("g1", 64, 32, 3), "g2": conv_w("g2", 64, 64, 1),
          "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64),
          "lo": np.array(-0.5, np.float32), "hi": np.array(1.5, np.float32),
          "fc": (rng.standard_normal((64, 10)) / 8).astype(np.float32)}
    nodes = [
        h.make_node("Conv", ["x", "g1"], ["e1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["e1"], ["e2"]),
        h.make_node("Conv", ["e2", "g2"], ["e3"], kernel_shape=[1, 1]),
        h.make_node("Clip", ["e3", "lo", "hi"], ["e4"]),
        h.make_node("GlobalAveragePool", ["e4"], ["gp"]),
        h.make_node("Flatten", ["gp"], ["gf"]),
        h.make_node("MatMul", ["gf", "fc"], ["y"]),
        h.make_node("Pad", ["e2", "pads"], ["ep"]),
        h.make_node("ReduceMean", ["ep"], ["rm"], axes=[2, 3], keepdims=1),
        h.make_node("Flatten", ["rm"], ["rf"]),
        h.make_node("MatMul", ["rf", "fc"], ["z"]),
    ]
    g = h.make_graph(nodes, "channel_blocks_pools", [vi("x", T.FLOAT, ["n", 32, 9, 7])],
                     [vi("y", T.FLOAT, ["n", 10]), vi("z", T.FLOAT, ["n", 10])],
                     [nh.from_array(v, k) for k, v in ws.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def kernel_configs(path, flags):
    """--emit kernel-configs: {kernel name: its configuration}."""
    r = subprocess.run([aotc, "compile", path, "--emit", "kernel-configs"] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{flags}: --emit kernel-configs: {r.stderr.strip()}")
        return {}
    return json.loads(r.stdout)["kernels"]


proto5 = make_pools()
path5 = os.path.join(tmp, "pools.onnx")
onnx.save(proto5, path5)
sess5 = ort.InferenceSession(proto5.SerializeToString(), providers=["CPUExecutionProvider"])
for lanes in (16, 8):
    label = f"pools lanes{lanes}"
    flags = ["--vector-lanes", str(lanes)]
    got = blocked_defs(path5, flags)
    checks += 1
    if any(got.get(d) != 2 * lanes for d in ("e2", "e4", "gp", "rm")):
        fail(f"{label}: blocked defs {got}: expected e2, e4, gp, rm in blocks of {2 * lanes}")
    pools = {k: c for k, c in kernel_configs(path5, flags).items()
             if k.endswith(("_gp", "_rm"))}
    checks += 1
    if len(pools) != 2 or any(c.get("tn") != 2 * lanes for c in pools.values()):
        fail(f"{label}: pool kernels {pools}: expected two of {2 * lanes} columns")
    model = compiled(path5, os.path.join(tmp, f"pools_{lanes}.so"), flags, label)
    if model is None:
        continue
    for n in (0, 1, 3):
        x = rng.standard_normal((n, 32, 9, 7)).astype(np.float32)
        check_outputs(f"{label} batch {n}", sess5.run(None, {"x": x}), model.run([x]), ("y", "z"))


# tests/lit/window_epilogue.onnxtxt: a Relu the convolution before a 3 x 3 MaxPool of
# stride 2 computes as its epilogue, and one a 2 x 2 MaxPool computes at its reads
# (fusion.cpp), against ONNX Runtime.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lit",
                       "window_epilogue.onnxtxt")) as f:
    proto6 = onnx.parser.parse_model(f.read())
path6 = os.path.join(tmp, "window_epilogue.onnx")
onnx.save(proto6, path6)
sess6 = ort.InferenceSession(proto6.SerializeToString(), providers=["CPUExecutionProvider"])
for lanes in (16, 8):
    label = f"window epilogue lanes{lanes}"
    model = compiled(path6, os.path.join(tmp, f"window_{lanes}.so"), ["--vector-lanes", str(lanes)], label)
    if model is None:
        continue
    for n in (0, 1, 3):
        x = rng.standard_normal((n, 32, 12, 12)).astype(np.float32)
        check_outputs(f"{label} batch {n}", sess6.run(None, {"x": x}), model.run([x]), ("y1", "y2"))


# Random CNNs: chains of convolutions (1x1, 3x3, strided, grouped, depthwise) with
# 16 to 96 channels, Relu/Clip, residual sums, pools, channel Concats, a global pool
# or a raw map at the end, odd map sizes; compiled for 8 and 16 lanes (blocks of 16
# and 32) and compared with ONNX Runtime at batch 1 and 2. Each region boundary the
# rules draw (a Concat at any offset, a convolution to an odd channel count, an output
# inside the region) meets random neighbours.
def random_cnn(seed):
    r = np.random.default_rng(seed)
    vi = h.make_tensor_value_info
    nodes, inits, vals = [], [], []
    c0 = int(r.choice([16, 32, 48]))
    hw = [int(r.integers(3, 12)), int(r.integers(3, 12))]
    vals.append(("x", c0, list(hw)))
    k = 0

    def fresh(prefix):
        nonlocal k
        k += 1
        return f"{prefix}{k}"

    def conv(x, c, cm, ks, stride, group):
        w = fresh("w")
        inits.append(nh.from_array(conv_w(w, cm, c // group, ks), w))
        y = fresh("c")
        pad = ks // 2
        nodes.append(h.make_node("Conv", [x, w], [y], kernel_shape=[ks, ks], strides=[stride, stride],
                                 pads=[pad] * 4, group=group))
        return y

    for _ in range(int(r.integers(3, 8))):
        name, c, (hh, ww) = vals[int(r.integers(0, len(vals)))] if r.random() < 0.3 else vals[-1]
        op = r.choice(["conv", "conv", "conv", "dw", "add", "pool", "concat", "act"])
        if op == "conv":
            ks = int(r.choice([1, 3]))
            stride = int(r.choice([1, 1, 2])) if min(hh, ww) > 2 else 1
            group = 2 if c % 64 == 0 and r.random() < 0.3 else 1
            cm = int(r.choice([16, 32, 64, 96, 40]))
            cm -= cm % group
            y = conv(name, c, cm, ks, stride, group)
            out_hw = [(hh + 2 * (ks // 2) - ks) // stride + 1, (ww + 2 * (ks // 2) - ks) // stride + 1]
            a = fresh("a")
            nodes.append(h.make_node("Relu", [y], [a]))
            vals.append((a, cm, out_hw))
        elif op == "dw":
            stride = int(r.choice([1, 1, 2])) if min(hh, ww) > 2 else 1
            y = conv(name, c, c, 3, stride, c)
            a = fresh("a")
            nodes.append(h.make_node("Clip", [y, "lo", "hi"], [a]))
            vals.append((a, c, [(hh - 1) // stride + 1, (ww - 1) // stride + 1]))
        elif op == "add":
            same = [v for v in vals if v[1] == c and v[2] == [hh, ww] and v[0] != name]
            if not same:
                continue
            a = fresh("s")
            nodes.append(h.make_node("Add", [name, same[int(r.integers(0, len(same)))][0]], [a]))
            vals.append((a, c, [hh, ww]))
        elif op == "pool":
            if min(hh, ww) < 2:
                continue
            a = fresh("p")
            kind = r.choice(["MaxPool", "AveragePool"])
            # 2x2/2, or 3x3 windows over a padding of 1 (read through the padding's
            # selects over blocked channels), with ceil_mode and count_include_pad.
            ks, st, pad = [(2, 2, 0), (3, 1, 1), (3, 2, 1)][int(r.integers(0, 3))]
            ceil = int(r.random() < 0.3)
            attrs = dict(kernel_shape=[ks, ks], strides=[st, st], pads=[pad] * 4, ceil_mode=ceil)
            if kind == "AveragePool" and pad:
                attrs["count_include_pad"] = int(r.random() < 0.5)
            nodes.append(h.make_node(kind, [name], [a], **attrs))

            def out(n):
                o = -(-(n + 2 * pad - ks) // st) + 1 if ceil else (n + 2 * pad - ks) // st + 1
                return o - 1 if ceil and (o - 1) * st >= n + pad else o
            vals.append((a, c, [out(hh), out(ww)]))
        elif op == "concat":
            same = [v for v in vals if v[2] == [hh, ww]]
            other = same[int(r.integers(0, len(same)))]
            a = fresh("cat")
            nodes.append(h.make_node("Concat", [name, other[0]], [a], axis=1))
            vals.append((a, c + other[1], [hh, ww]))
        else:
            a = fresh("e")
            nodes.append(h.make_node("Sigmoid", [name], [a]))
            vals.append((a, c, [hh, ww]))
    last, c, (hh, ww) = vals[-1]
    outs = []
    if r.random() < 0.5:
        nodes.append(h.make_node("GlobalAveragePool", [last], ["y"]))
        outs.append(vi("y", T.FLOAT, ["n", c, 1, 1]))
    else:
        nodes.append(h.make_node("Identity", [last], ["y"]))
        outs.append(vi("y", T.FLOAT, ["n", c, hh, ww]))
    mid = vals[len(vals) // 2]
    if mid[0] != "x" and mid[0] != last and r.random() < 0.5:
        nodes.append(h.make_node("Identity", [mid[0]], ["m"]))  # an output inside the region
        outs.append(vi("m", T.FLOAT, ["n", mid[1]] + mid[2]))
    if any(nd.op_type == "Clip" for nd in nodes):
        inits += [nh.from_array(np.array(0.0, np.float32), "lo"),
                  nh.from_array(np.array(6.0, np.float32), "hi")]
    g = h.make_graph(nodes, f"random_cnn_{seed}", [vi("x", T.FLOAT, ["n", c0] + hw)], outs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), c0, hw


# Strided 1 x 1 convolutions (ResNet's downsamplings), by default at stride 1 over a
# copy of the pixels they read (lower_contraction.cpp, subsampledCopy: its kernel is
# named *_subsampled), and read in place (--no-subsample-strided) with their output
# channel blocks inside the pixel tiles (register_tile.cpp, skipsRowPixels): more
# outputs per pixel than inputs, odd maps (partial pixel tiles, a copy whose last
# pixel is the input's last but one), batches 0, 1 and 3, 8 and 16 lanes; with and
# without a residual sum in the strided convolution's epilogue (which keeps the
# dimension order in place). The emitted OpenCL must show the copy, and in place the
# blocks innermost where no residual is read, or the check does not reach that order.
def strided_downsampling(c1, c2, hw, residual):
    out = [(s_ + 1) // 2 for s_ in hw]
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[1, 1]),
             h.make_node("Relu", ["c1"], ["a1"]),
             h.make_node("Conv", ["a1", "wd", "bd"], ["d"], kernel_shape=[1, 1], strides=[2, 2])]
    inits = [nh.from_array(conv_w("w1", c1, 16, 1), "w1"),
             nh.from_array(conv_w("wd", c2, c1, 1), "wd"),
             nh.from_array(rng.standard_normal(c2).astype(np.float32), "bd"),
             nh.from_array(conv_w("wy", 16, c2, 1), "wy")]
    vi = h.make_tensor_value_info
    inputs = [vi("x", T.FLOAT, ["n", 16] + hw)]
    if residual:
        # A residual the downsampling's epilogue adds, read along the pixels.
        nodes.append(h.make_node("Add", ["d", "z"], ["s"]))
        inputs.append(vi("z", T.FLOAT, ["n", c2] + out))
    nodes += [h.make_node("Relu", ["s" if residual else "d"], ["t"]),
              h.make_node("Conv", ["t", "wy"], ["y"], kernel_shape=[1, 1])]
    g = h.make_graph(nodes, "strided_downsampling", inputs,
                     [vi("y", T.FLOAT, ["n", 16] + out)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), out


inside_seen = 0
for i, (c1, c2, hw, residual) in enumerate([(16, 64, [9, 13], False), (32, 96, [28, 28], False),
                                            (32, 64, [5, 11], False), (16, 64, [9, 13], True),
                                            (16, 96, [28, 28], True)]):
    proto4, out4 = strided_downsampling(c1, c2, hw, residual)
    path4 = os.path.join(tmp, f"strided_{i}.onnx")
    onnx.save(proto4, path4)
    sess4 = ort.InferenceSession(proto4.SerializeToString(), providers=["CPUExecutionProvider"])
    for lanes, in_place in [(l, p) for l in ("8", "16") for p in (True, False)]:
        flags = ["--vector-lanes", lanes, "--no-persistent-kernels", "--no-chain-kernels"]
        flags += ["--no-subsample-strided"] if in_place else []
        tag = (f"strided downsampling {c1}->{c2} {hw} residual {residual} lanes {lanes}"
               f"{' in place' if in_place else ''}")
        cl = subprocess.run([aotc, "compile", path4, "--emit", "cl"] + flags,
                            capture_output=True, text=True).stdout
        checks += 1
        copies = len(re.findall(r"\n__kernel void k\d+_\w*_subsampled\(", cl))
        if copies != (0 if in_place else 1):
            fail(f"{tag}: {copies} subsampled copies")
        if in_place:
            # The downsampling's kernel, k1_t (its Relu t), and its first work-item
            # index: the channel block i1 innermost, or the pixel tiles (t3).
            kernels = [k for k in re.split(r"\n__kernel void ", cl)[1:] if k.startswith("k1_t(")]
            first = re.search(r"const long (\w+) = gid0 % \d+;", kernels[0]) if kernels else None
            inside = bool(first) and first.group(1) == "i1"
            checks += 1
            if inside == residual:
                fail(f"{tag}: channel blocks inside the pixel tiles: {inside}")
            inside_seen += inside
        model = compiled(path4, os.path.join(tmp, f"strided_{i}_{lanes}_{in_place}.so"), flags, tag)
        if model is None:
            continue
        for n in (0, 1, 3):
            feed = {"x": rng.standard_normal((n, 16) + tuple(hw)).astype(np.float32)}
            if residual:
                feed["z"] = rng.standard_normal((n, c2) + tuple(out4)).astype(np.float32)
            check_outputs(f"{tag} batch {n}", sess4.run(None, feed), model.run(list(feed.values())),
                          ("y",))
print(f"strided downsamplings: {inside_seen} of 10 compiles with the blocks inside (6 expected)")

blocked_seen = through_seen = 0
for seed in range(24):
    proto3, c0, hw = random_cnn(1000 + seed)
    path3 = os.path.join(tmp, f"random_{seed}.onnx")
    onnx.save(proto3, path3)
    sess3 = ort.InferenceSession(proto3.SerializeToString(), providers=["CPUExecutionProvider"])
    for lanes in ("8", "16"):
        flags = ["--vector-lanes", lanes]
        defs3 = lowered_defs(path3, flags)
        blocked_seen += any(b for b, _ in defs3.values())
        through_seen += sum(b > 0 and sel for b, sel in defs3.values())
        so = os.path.join(tmp, f"random_{seed}_{lanes}.so")
        model = compiled(path3, so, flags, f"random cnn {seed} lanes {lanes}")
        if model is None:
            continue
        for n in (1, 2):
            x = rng.standard_normal((n, c0) + tuple(hw)).astype(np.float32)
            check_outputs(f"random cnn {seed} lanes {lanes} batch {n}", sess3.run(None, {"x": x}),
                          model.run([x]), ("y", "m"))
checks += 1
if blocked_seen < 12:  # of 48 compiles (21 at seeds 1000-1023): the blocked path is reached
    fail(f"random cnns: only {blocked_seen} of 48 compiles blocked any def")
checks += 1
if through_seen < 8:  # blocked windows read through the padding's selects
    fail(f"random cnns: only {through_seen} blocked windows read through selects")
print(f"random cnns: {blocked_seen} of 48 compiles blocked some def, "
      f"{through_seen} blocked windows read through selects")
print(f"{checks} checks")
if failed:
    print(f"{failed} failed")
    sys.exit(1)
print("channel blocks ok")
