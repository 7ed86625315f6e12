#!/usr/bin/env python3
"""Shapes given at run time: integer graph inputs read as sizes (value symbols),
and float ones (a Resize's scales, a float Range's bounds: float value
symbols, the sizes computed from them in double by the wrapper).

Each model takes its Reshape shape, Slice starts/ends, Tile repeats, Expand
shape, ConstantOfShape shape, Split sizes (directly, or through shape
arithmetic: Mul, Add, Concat, Gather) as graph inputs; one .so per model runs
every value below. Each run is compared with ONNX Runtime: the same outputs
(shape and every element), or, where ONNX Runtime refuses the values (a -2 in
a shape, two -1s, sizes that do not add up), an aotc error that names the
node, never a crash or a result. Usage: check_value_shapes.py AOTC
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gpu"))
from aotc_ctypes import Model  # noqa: E402

aotc = sys.argv[1]
I64 = np.int64
rng = np.random.default_rng(7)


def model(name, nodes, inputs, outputs, inits=(), opset=18):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, [None] * r) for n, t, r in outputs], list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


CASES = []


def case(name, proto, feeds):
    CASES.append((name, proto, feeds))


x234 = rng.standard_normal((2, 3, 4)).astype(np.float32)
case("reshape", model("reshape", [h.make_node("Reshape", ["x", "shape"], ["y"])],
                      [("x", T.FLOAT, [2, 3, 4]), ("shape", T.INT64, [3])], [("y", T.FLOAT, 3)]),
     [{"x": x234, "shape": np.array(s, I64)} for s in
      ([4, 3, 2], [-1, 2, 2], [0, 0, -1], [2, -1, 1], [24, 1, 1], [1, 1, 24], [0, 12, 1], [-1, -1, 1],
       [5, 5, 1], [-2, -12, 1], [0, 3, 0], [4, 0, 2], [3, 8, 0])])
case("reshape_allowzero", model("reshape_allowzero",
                                [h.make_node("Reshape", ["x", "shape"], ["y"], allowzero=1)],
                                [("x", T.FLOAT, [2, 0, 4]), ("shape", T.INT64, [2])], [("y", T.FLOAT, 2)]),
     [{"x": np.zeros((2, 0, 4), np.float32), "shape": np.array(s, I64)} for s in
      ([0, 8], [8, 0], [0, -1], [0, 0], [-1, 0], [3, 5])])
# The shape through arithmetic: [n * 2, -1] from a scalar input n.
case("reshape_arith", model("reshape_arith", [
    h.make_node("Mul", ["n", "two"], ["n2"]),
    h.make_node("Unsqueeze", ["n2", "ax0"], ["n2v"]),
    h.make_node("Concat", ["n2v", "minus1"], ["shape"], axis=0),
    h.make_node("Reshape", ["x", "shape"], ["y"]),
    h.make_node("Relu", ["y"], ["z"])],
    [("x", T.FLOAT, [6, 4]), ("n", T.INT64, [])], [("z", T.FLOAT, 2)],
    [h.make_tensor("two", T.INT64, [], [2]), h.make_tensor("ax0", T.INT64, [1], [0]),
     h.make_tensor("minus1", T.INT64, [1], [-1])]),
    [{"x": rng.standard_normal((6, 4)).astype(np.float32), "n": np.array(v, I64)} for v in (1, 2, 3, 6, 12, 0, 5, -1)])
x57 = rng.standard_normal((5, 7)).astype(np.float32)
case("slice", model("slice", [h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                    [("x", T.FLOAT, [5, 7]), ("starts", T.INT64, [2]), ("ends", T.INT64, [2])],
                    [("y", T.FLOAT, 2)],
                    [h.make_tensor("axes", T.INT64, [2], [0, 1]), h.make_tensor("steps", T.INT64, [2], [1, 2])]),
     [{"x": x57, "starts": np.array(s, I64), "ends": np.array(e, I64)} for s, e in
      (([0, 0], [5, 7]), ([1, 2], [3, 6]), ([-2, -3], [100, -1]), ([4, 6], [1, 2]),
       ([-100, 3], [2, 1000]), ([3, 3], [3, 3]), ([-1, -7], [5, 7]), ([9, 9], [10, 10]))])
case("slice_reverse", model("slice_reverse", [h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                            [("x", T.FLOAT, [5, 7]), ("starts", T.INT64, [1]), ("ends", T.INT64, [1])],
                            [("y", T.FLOAT, 2)],
                            [h.make_tensor("axes", T.INT64, [1], [1]), h.make_tensor("steps", T.INT64, [1], [-2])]),
     [{"x": x57, "starts": np.array([s], I64), "ends": np.array([e], I64)} for s, e in
      ((6, -8), (-1, 0), (100, -100), (3, 3), (0, 6), (-3, -6))])
x31 = rng.standard_normal((3, 1)).astype(np.float32)
case("tile_expand_constantofshape", model("tec", [
    h.make_node("Tile", ["x", "reps"], ["y"]),
    h.make_node("Expand", ["x", "eshape"], ["z"]),
    h.make_node("ConstantOfShape", ["cshape"], ["c"], value=h.make_tensor("v", T.FLOAT, [1], [2.5]))],
    [("x", T.FLOAT, [3, 1]), ("reps", T.INT64, [2]), ("eshape", T.INT64, [3]), ("cshape", T.INT64, [2])],
    [("y", T.FLOAT, 2), ("z", T.FLOAT, 3), ("c", T.FLOAT, 2)]),
    [{"x": x31, "reps": np.array(r, I64), "eshape": np.array(e, I64), "cshape": np.array(c, I64)} for r, e, c in
     (([1, 1], [1, 3, 1], [2, 3]), ([2, 3], [2, 1, 5], [0, 4]), ([0, 2], [1, 3, 1], [1, 1]),
      ([-1, 2], [1, 1, 1], [1, 1]), ([1, 1], [2, 2, 3], [1, 1]), ([1, 1], [1, 1, 1], [-1, 2]),
      ([1, 1], [4, 3, 0], [1, 1]), ([1, 1], [1, -1, 1], [1, 1]), ([3, 1], [1, 3, 4], [7, 1]))])
x9 = rng.standard_normal((2, 9)).astype(np.float32)
case("split", model("split", [h.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1)],
                    [("x", T.FLOAT, [2, 9]), ("sizes", T.INT64, [3])],
                    [("a", T.FLOAT, 2), ("b", T.FLOAT, 2), ("c", T.FLOAT, 2)]),
     [{"x": x9, "sizes": np.array(s, I64)} for s in
      ([3, 3, 3], [0, 9, 0], [1, 2, 6], [9, 0, 0], [4, 4, 4], [5, 5, -1], [2, 3, 3])])
# int32 values, and a value input that is also read as data.
case("int32_and_data", model("int32_and_data", [
    h.make_node("Cast", ["s32"], ["s64"], to=T.INT64),
    h.make_node("Reshape", ["x", "s64"], ["y"]),
    h.make_node("ReduceSum", ["s32"], ["total"], keepdims=0)],
    [("x", T.FLOAT, [2, 6]), ("s32", T.INT32, [2])], [("y", T.FLOAT, 2), ("total", T.INT32, 0)]),
    [{"x": rng.standard_normal((2, 6)).astype(np.float32), "s32": np.array(s, np.int32)} for s in
     ([3, 4], [-1, 2], [12, 1], [0, -1], [5, 2])])

# Pad's pads given at run time (negative pads crop), in every mode (wrap
# from opset 19, pads larger than the dim included); and pads
# computed from a symbolic dim (TF's "same" padding exported with dynamic
# sizes): pad the seq axis up to the next multiple of 4.
x46 = rng.standard_normal((4, 6)).astype(np.float32)
for mode in ("constant", "reflect", "edge", "wrap"):
    case("pad_" + mode, model("pad_" + mode, [h.make_node("Pad", ["x", "pads", "cv"], ["y"], mode=mode)],
                              [("x", T.FLOAT, [4, 6]), ("pads", T.INT64, [4])], [("y", T.FLOAT, 2)],
                              [h.make_tensor("cv", T.FLOAT, [], [1.5])], opset=19),
         [{"x": x46, "pads": np.array(p, I64)} for p in
          ([0, 0, 0, 0], [1, 2, 3, 0], [0, 5, 0, 5], [3, 0, 3, 1], [-1, 1, 2, -2], [-3, 0, -1, 0], [-5, 0, 0, 0],
           [2, 2, -1, -3])
          # Pads as large as what they pad from (after cropping): ONNX
          # Runtime answers unlike ONNX's reference (numpy.pad) for reflect
          # and wrap; aotc refuses reflect's and repeats wrap's as numpy
          # does (e2e.ValueShapes.PadsGivenAtRunTime checks both).
          + (() if mode == "reflect" else ([2, 6, 0, 0], [4, 0, 0, 0], [-2, -1, 2, 3]))
          + (([1, 4, 0, -3],) if mode in ("constant", "edge") else ())])
case("pad_same", model("pad_same", [
    h.make_node("Shape", ["x"], ["sh"], start=1, end=2),
    h.make_node("Neg", ["sh"], ["neg"]),
    h.make_node("Mod", ["neg", "four"], ["extra"]),
    h.make_node("Concat", ["zero", "zero", "zero", "extra"], ["pads"], axis=0),
    h.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")],
    [("x", T.FLOAT, [2, "seq"])], [("y", T.FLOAT, 2)],
    [h.make_tensor("four", T.INT64, [1], [4]), h.make_tensor("zero", T.INT64, [1], [0])]),
    [{"x": rng.standard_normal((2, s)).astype(np.float32)} for s in (4, 5, 6, 7, 9, 3)])

# GQA's repeated key heads over symbolic batch and seq: views whose reshapes
# keep leading and trailing dims (lit.reshape_groups checks their index math).
case("gqa_views", model("gqa_views", [
    h.make_node("Unsqueeze", ["k", "ax"], ["u"]),
    h.make_node("Expand", ["u", "ones"], ["e"]),
    h.make_node("Reshape", ["e", "s4"], ["r"]),
    h.make_node("Shape", ["k"], ["sh"]),
    h.make_node("Gather", ["sh", "two"], ["sq"]),
    h.make_node("Concat", ["m1", "sq", "c64"], ["s3"], axis=0),
    h.make_node("Reshape", ["r", "s3"], ["f"]),
    h.make_node("Transpose", ["f"], ["y"], perm=[0, 2, 1])],
    [("k", T.FLOAT, ["batch", 2, "seq", 64])], [("y", T.FLOAT, 3)],
    [h.make_tensor("ax", T.INT64, [1], [2]), h.make_tensor("ones", T.INT64, [5], [1, 1, 2, 1, 1]),
     h.make_tensor("s4", T.INT64, [4], [0, 4, -1, 64]), h.make_tensor("two", T.INT64, [1], [2]),
     h.make_tensor("m1", T.INT64, [1], [-1]), h.make_tensor("c64", T.INT64, [1], [64])]),
    [{"k": rng.standard_normal((b, 2, s, 64)).astype(np.float32)} for b, s in ((1, 3), (2, 5), (3, 1))])

# Reduce* axes given at run time: which dims are kept or reduced is decided
# per run (the sizes are derived per run); every op, keepdims 0 and 1, one
# and two axes, negative axes, a symbolic batch of 0 and more, and axes the
# run must refuse (outside [-rank, rank), one axis named twice).
REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
              "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]
for op in REDUCE_OPS:
    for keep in (0, 1):
        for count, axes_list in ((1, ([0], [1], [2], [-1], [-3], [3], [-4])),
                                 (2, ([0, 1], [1, 2], [-1, 0], [2, -3], [0, 2], [1, -2], [0, 5]))):
            out_rank = 3 if keep else 3 - count
            feeds = []
            for i, ax in enumerate(axes_list):
                # The refused axes come last, with a batch that is not 0
                # (ONNX Runtime checks no axis of an empty input).
                batch = (2, 0, 1, 3, 2, 2, 3)[i]
                x = rng.uniform(0.5, 2.0, (batch, 3, 4)).astype(np.float32)
                feeds.append({"x": x, "axes": np.array(ax, I64)})
            case(f"{op}_k{keep}_n{count}",
                 model(f"{op}_k{keep}_n{count}", [h.make_node(op, ["x", "axes"], ["y"], keepdims=keep)],
                       [("x", T.FLOAT, ["batch", 3, 4]), ("axes", T.INT64, [count])],
                       [("y", T.FLOAT, out_rank)]),
                 feeds)
# Integers (exact) and axes through arithmetic (a scalar input minus one).
xi = rng.integers(-50, 50, (3, 5, 2)).astype(np.int32)
case("reduce_int32_arith", model("reduce_int32_arith", [
    h.make_node("Sub", ["a", "one"], ["a1"]),
    h.make_node("Unsqueeze", ["a1", "ax0"], ["axes"]),
    h.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
    h.make_node("ReduceMax", ["x", "axes"], ["m"], keepdims=1)],
    [("x", T.INT32, [3, 5, 2]), ("a", T.INT64, [])], [("s", T.INT32, 2), ("m", T.INT32, 3)],
    [h.make_tensor("one", T.INT64, [], [1]), h.make_tensor("ax0", T.INT64, [1], [0])]),
    [{"x": xi, "a": np.array(v, I64)} for v in (1, 2, 3, 0, -1, -2, 4)])

# Squeeze / Unsqueeze axes given at run time (reshape views over per-run
# sizes), read through a Relu so the view is inlined into a kernel.
x1312 = rng.standard_normal((1, 3, 1, 2)).astype(np.float32)
case("squeeze", model("squeeze", [h.make_node("Squeeze", ["x", "axes"], ["s"]),
                                  h.make_node("Relu", ["s"], ["y"])],
                      [("x", T.FLOAT, [1, 3, 1, 2]), ("axes", T.INT64, [1])], [("y", T.FLOAT, 3)]),
     [{"x": x1312, "axes": np.array([a], I64)} for a in (0, 2, -2, -4, 1, 4, -5)])
case("squeeze2", model("squeeze2", [h.make_node("Squeeze", ["x", "axes"], ["y"])],
                       [("x", T.FLOAT, [1, 3, 1, 2]), ("axes", T.INT64, [2])], [("y", T.FLOAT, 2)]),
     [{"x": x1312, "axes": np.array(a, I64)} for a in ([0, 2], [2, 0], [-4, -2], [0, 3])])
x32 = rng.standard_normal((3, 2)).astype(np.float32)
case("unsqueeze", model("unsqueeze", [h.make_node("Unsqueeze", ["x", "axes"], ["u"]),
                                      h.make_node("Neg", ["u"], ["y"])],
                        [("x", T.FLOAT, [3, 2]), ("axes", T.INT64, [2])], [("y", T.FLOAT, 4)]),
     [{"x": x32, "axes": np.array(a, I64)} for a in
      ([0, 1], [0, 3], [-1, 0], [1, 2], [3, 1], [2, -4], [1, -3], [4, 0], [-5, 0])])

# Slice with every operand given at run time (axes and steps too): each
# dim's start and step are derived per run; negative steps and axes, bounds
# past either end, a step of 0 and repeated or out-of-range axes (refused).
x57b = rng.standard_normal((5, 7)).astype(np.float32)
case("slice_all_inputs", model("slice_all_inputs",
                               [h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                               [("x", T.FLOAT, [5, 7]), ("starts", T.INT64, [2]), ("ends", T.INT64, [2]),
                                ("axes", T.INT64, [2]), ("steps", T.INT64, [2])], [("y", T.FLOAT, 2)]),
     [{"x": x57b, "starts": np.array(s, I64), "ends": np.array(e, I64), "axes": np.array(a, I64),
       "steps": np.array(st, I64)} for s, e, a, st in (
        ([0, 0], [5, 7], [0, 1], [1, 1]), ([1, 2], [4, 6], [1, 0], [2, 1]), ([6, 4], [-8, -100], [1, 0], [-2, -1]),
        ([-1, 0], [0, 7], [-2, -1], [-1, 3]), ([0, 3], [100, 3], [0, 1], [1, 1]), ([2, 2], [1000, -1000], [0, 1], [3, -3]),
        ([0, 0], [5, 7], [0, 1], [0, 1]), ([0, 0], [5, 7], [1, -1], [1, 1]), ([0, 0], [5, 7], [0, 2], [1, 1]))])
case("slice_steps_only", model("slice_steps_only",
                               [h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"]),
                                h.make_node("Relu", ["y"], ["z"])],
                               [("x", T.FLOAT, ["n", 7]), ("steps", T.INT64, [1])], [("z", T.FLOAT, 2)],
                               [h.make_tensor("starts", T.INT64, [1], [-1]), h.make_tensor("ends", T.INT64, [1], [-9]),
                                h.make_tensor("axes", T.INT64, [1], [1])]),
     [{"x": rng.standard_normal((b, 7)).astype(np.float32), "steps": np.array([st], I64)}
      for b, st in ((3, -1), (2, -2), (1, -7), (0, -3), (4, 1), (2, 0))])

# Resize with its scales (float value symbols: each size is floor(in *
# scale), computed in double by the wrapper) or sizes given at run time; a
# scale that is not positive or not finite is refused by the run.
F32 = np.float32
x1257 = rng.standard_normal((1, 2, 5, 7)).astype(F32)
case("resize_scales_linear", model("resize_scales_linear",
                                   [h.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
                                   [("x", T.FLOAT, [1, 2, 5, 7]), ("scales", T.FLOAT, [4])], [("y", T.FLOAT, 4)]),
     [{"x": x1257, "scales": np.array(sc, F32)} for sc in
      ([1, 1, 2, 2], [1, 1, 0.5, 0.7], [1, 1, 1.5, 0.8], [1, 1, 3, 1], [1, 1, 1, 1], [1, 1, 0.3, 2.9],
       [1, 1, 0, 1], [1, 1, -1, 2], [1, 1, np.nan, 1])])
case("resize_scales_nearest_axes", model("resize_scales_nearest_axes",
                                         [h.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest",
                                                      axes=[3, 1], nearest_mode="floor",
                                                      coordinate_transformation_mode="asymmetric")],
                                         [("x", T.FLOAT, ["n", 3, 4, 6]), ("scales", T.FLOAT, [2])],
                                         [("y", T.FLOAT, 4)]),
     [{"x": rng.standard_normal((b, 3, 4, 6)).astype(F32), "scales": np.array(sc, F32)} for b, sc in
      ((2, [2, 1]), (1, [0.5, 2]), (0, [1.5, 1]), (3, [0.34, 0.67]), (1, [np.inf, 1]))])
case("resize_sizes_linear", model("resize_sizes_linear",
                                  [h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear",
                                               coordinate_transformation_mode="align_corners")],
                                  [("x", T.FLOAT, [1, 2, 5, 7]), ("sizes", T.INT64, [4])], [("y", T.FLOAT, 4)]),
     [{"x": x1257, "sizes": np.array(sz, I64)} for sz in
      ([1, 2, 10, 14], [1, 2, 3, 3], [1, 2, 1, 1], [1, 2, 5, 7], [1, 2, 9, 2], [1, 2, -1, 3])])
case("resize_sizes_not_larger", model("resize_sizes_not_larger",
                                      [h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest",
                                                   axes=[2, 3], keep_aspect_ratio_policy="not_larger")],
                                      [("x", T.FLOAT, [1, 2, 5, 7]), ("sizes", T.INT64, [2])],
                                      [("y", T.FLOAT, 4)]),
     [{"x": x1257, "sizes": np.array(sz, I64)} for sz in ([8, 20], [3, 3], [10, 10], [5, 100], [1, 7])])
# A constant fractional scale of symbolic dims: floor(h * 1.5) per run.
case("resize_fractional_symbolic", model("resize_fractional_symbolic",
                                         [h.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
                                         [("x", T.FLOAT, ["n", 2, "h", "w"])], [("y", T.FLOAT, 4)],
                                         [h.make_tensor("scales", T.FLOAT, [4], [1, 1, 1.5, 0.5])]),
     [{"x": rng.standard_normal((b, 2, hh, ww)).astype(F32)} for b, hh, ww in
      ((1, 5, 7), (2, 4, 4), (1, 1, 3), (3, 9, 2))])

# Resize at older opsets: every attribute a later opset added reads as its
# default (a Resize at opset 13 read opset 18's `antialias` and aborted the
# compiler); opset 10's nearest is Upsample's (floor of x / scale).
case("resize_opset10_nearest", model("resize_opset10_nearest", [h.make_node("Resize", ["x", "scales"], ["y"])],
                                     [("x", T.FLOAT, [1, 2, 3, 4])], [("y", T.FLOAT, 4)],
                                     [h.make_tensor("scales", T.FLOAT, [4], [1, 1, 2, 3])], opset=10),
     [{"x": rng.standard_normal((1, 2, 3, 4)).astype(F32)}])
for op_v in (11, 13):
    case(f"resize_opset{op_v}_linear", model(f"resize_opset{op_v}_linear",
                                             [h.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear")],
                                             [("x", T.FLOAT, [1, 2, 5, 7]), ("scales", T.FLOAT, [4])],
                                             [("y", T.FLOAT, 4)], [h.make_tensor("roi", T.FLOAT, [0], [])],
                                             opset=op_v),
         [{"x": x1257, "scales": np.array(sc, F32)} for sc in ([1, 1, 2, 0.5], [1, 1, 1.3, 1.7])])

# Cubic over four axes whose scales come at run time: two stages of two
# axes (the second reads the first, materialized); exclude_outside
# renormalizes the taps inside. tf_crop_and_resize reads its region at run
# time; a coordinate outside the input gives extrapolation_value.
x1367 = rng.standard_normal((1, 3, 6, 7)).astype(F32)
case("resize_cubic_scales", model("resize_cubic_scales",
                                  [h.make_node("Resize", ["x", "", "scales"], ["y"], mode="cubic",
                                               exclude_outside=1, cubic_coeff_a=-0.5)],
                                  [("x", T.FLOAT, [1, 3, 6, 7]), ("scales", T.FLOAT, [4])], [("y", T.FLOAT, 4)]),
     [{"x": x1367, "scales": np.array(sc, F32)} for sc in
      ([1, 1, 1.7, 0.6], [1, 1, 0.5, 2.3], [1, 1, 1, 1], [1, 1, 3, 3])])
case("resize_cubic_align_corners", model("resize_cubic_align_corners",
                                         [h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="cubic",
                                                      axes=[2, 3], coordinate_transformation_mode="align_corners")],
                                         [("x", T.FLOAT, ["n", 3, 6, 7]), ("sizes", T.INT64, [2])],
                                         [("y", T.FLOAT, 4)]),
     [{"x": rng.standard_normal((b, 3, 6, 7)).astype(F32), "sizes": np.array(sz, I64)} for b, sz in
      ((1, [12, 5]), (2, [3, 14]), (0, [6, 7]), (1, [1, 1]))])
case("resize_crop", model("resize_crop",
                          [h.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode="linear", axes=[2, 3],
                                       coordinate_transformation_mode="tf_crop_and_resize",
                                       extrapolation_value=-1.0)],
                          [("x", T.FLOAT, [1, 2, 5, 7]), ("roi", T.FLOAT, [4])], [("y", T.FLOAT, 4)],
                          [h.make_tensor("sizes", T.INT64, [2], [4, 6])]),
     [{"x": x1257, "roi": np.array(r, F32)} for r in
      ([0.1, 0.2, 0.9, 0.7], [-0.3, 0, 1.2, 1], [0, 0, 1, 1], [0.5, 0.5, 0.5, 0.5])])

# TopK with k given at run time (the output dim is k; k larger than the
# axis is refused by the run), ties (equal values: the lower index first),
# smallest along axis 0 of int32, opset 1's attribute k over float64.
ties = lambda shape, dt: rng.integers(0, 4, size=shape).astype(dt)
case("topk_runtime_k", model("topk_runtime_k", [h.make_node("TopK", ["x", "k"], ["v", "i"])],
                             [("x", T.FLOAT, [3, "n"]), ("k", T.INT64, [1])],
                             [("v", T.FLOAT, 2), ("i", T.INT64, 2)], opset=11),
     [{"x": ties((3, nn), F32) if t else rng.standard_normal((3, nn)).astype(F32), "k": np.array([kk], I64)}
      for nn, kk, t in ((10, 3, 0), (10, 10, 1), (10, 0, 0), (5, 6, 0), (1, 1, 0), (33, 7, 1), (0, 0, 0))])
case("topk_smallest_int32", model("topk_smallest_int32",
                                  [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0)],
                                  [("x", T.INT32, [7, 4]), ("k", T.INT64, [1])],
                                  [("v", T.INT32, 2), ("i", T.INT64, 2)], opset=11),
     [{"x": ties((7, 4), np.int32), "k": np.array([kk], I64)} for kk in (1, 4, 7)])
case("topk_opset1", model("topk_opset1", [h.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1)],
                          [("x", T.DOUBLE, [2, 5, 3])], [("v", T.DOUBLE, 3), ("i", T.INT64, 3)], opset=1),
     [{"x": rng.standard_normal((2, 5, 3))}])

# Range with every bound given at run time: an integer delta's sign picks
# the count's formula (0 refused); float bounds are float value symbols,
# the count ceil((limit - start) / delta) computed in double per run.
def scalar_range(dtype, onnx_t):
    return model("range_" + np.dtype(dtype).name, [h.make_node("Range", ["s", "l", "d"], ["y"])],
                 [("s", onnx_t, []), ("l", onnx_t, []), ("d", onnx_t, [])], [("y", onnx_t, 1)], opset=11)


case("range_int64", scalar_range(I64, T.INT64),
     [{"s": np.array(a, I64), "l": np.array(b, I64), "d": np.array(c, I64)} for a, b, c in
      ((0, 10, 3), (10, 0, -3), (5, 5, 1), (-7, 8, 4), (3, -100, -7), (0, 10, -1), (2, 9, 7), (0, 10, 0))])
case("range_float", scalar_range(F32, T.FLOAT),
     [{"s": np.array(a, F32), "l": np.array(b, F32), "d": np.array(c, F32)} for a, b, c in
      ((0, 1, 0.25), (5, -2.5, -0.7), (1, 1, 1), (0, 3, 0.5), (2, 1, 0.5), (-3.5, 4.25, 1.5), (0, 1, 0))])
# A window's length from an integer input cast to float (HannWindow's body
# is a float Range up to it); CenterCropPad's crop offsets divide a size
# difference by 2 (truncating, either sign).
case("hann_window", model("hann_window", [h.make_node("HannWindow", ["n"], ["y"])],
                          [("n", T.INT64, [])], [("y", T.FLOAT, 1)], opset=17),
     [{"n": np.array(v, I64)} for v in (1, 7, 16, 2)])
case("center_crop_pad", model("center_crop_pad", [h.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[1, 2])],
                              [("x", T.FLOAT, [2, 6, 5]), ("shape", T.INT64, [2])], [("y", T.FLOAT, 3)]),
     [{"x": rng.standard_normal((2, 6, 5)).astype(F32), "shape": np.array(v, I64)} for v in
      ([3, 3], [6, 5], [9, 8], [1, 10], [4, 2])])

failed = 0
runs = 0
with tempfile.TemporaryDirectory() as tmp:
    for name, proto, feeds in CASES:
        path = os.path.join(tmp, name + ".onnx")
        onnx.save(proto, path)
        so = os.path.join(tmp, name + ".so")
        r = subprocess.run([aotc, "compile", path, "-o", so], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: compile: {r.stderr.strip()}")
            failed += 1
            continue
        m = Model(so, device="cpu")
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for f in feeds:
            runs += 1
            values = {k: v.tolist() for k, v in f.items() if v.size <= 8}
            try:
                want = sess.run(None, f)
            except Exception as e:  # ONNX Runtime refuses the values
                want = e
            try:
                got = m.run(list(f.values()))
            except RuntimeError as e:
                got = e
            if isinstance(want, Exception) and isinstance(got, Exception):
                msg = str(got)
                ok = "node '" in msg or "input '" in msg
                print(f"{'ok  ' if ok else 'FAIL'} {name} {values}: both refuse; aotc: {msg.splitlines()[0][:160]}")
                failed += not ok
                continue
            if (isinstance(got, Exception) and not isinstance(want, Exception)
                    and "name the same axis" in str(got)):
                # An axis named twice: ONNX Runtime merges it (and, without
                # keepdims, returns a rank the model does not declare); ONNX's
                # reference refuses, as aotc does for constant axes.
                print(f"ok   {name} {values}: refused: {str(got).splitlines()[0][:160]}")
                continue
            if isinstance(want, Exception) or isinstance(got, Exception):
                print(f"FAIL {name} {values}: ONNX Runtime {'refuses' if isinstance(want, Exception) else 'runs'}"
                      f", aotc {'refuses: ' + str(got)[:200] if isinstance(got, Exception) else 'runs'}")
                failed += 1
                continue
            # Floats from reductions: summation order differs (within 1e-5).
            same = len(want) == len(got) and all(
                w.shape == g.shape and w.dtype == g.dtype and
                (np.allclose(w, g, rtol=1e-5, atol=1e-6, equal_nan=True) if w.dtype == np.float32
                 else np.array_equal(w, g)) for w, g in zip(want, got))
            print(f"{'ok  ' if same else 'FAIL'} {name} {values}: {[g.shape for g in got]}")
            failed += not same
        if name == "reshape":
            # Sizes are read on the host: a device-resident shape is refused
            # with a message saying so, and the container stays usable.
            cl = m.opencl()
            f = feeds[0]
            bufs = [(cl.buffer(v.nbytes, v), v) for v in f.values()]
            out = cl.buffer(4096)
            runs += 1
            try:
                m.run_device(bufs, [(out, 4096)])
                print("FAIL reshape: a device-resident shape was accepted")
                failed += 1
            except RuntimeError as e:
                ok = "not as a device buffer" in str(e)
                print(f"{'ok  ' if ok else 'FAIL'} reshape on device buffers: {e}")
                failed += not ok
            failed += m.run(list(f.values()))[0].shape != (4, 3, 2)
    # TopK's order with NaN (ONNX leaves it open; ONNX Runtime's differs
    # between calls): NaN is larger than every number, as PyTorch orders
    # it; ties keep the lower index first.
    for largest in (1, 0):
        proto = model(f"topk_nan_{largest}", [h.make_node("TopK", ["x", "k"], ["v", "i"], largest=largest)],
                      [("x", T.FLOAT, [2, 9]), ("k", T.INT64, [1])], [("v", T.FLOAT, 2), ("i", T.INT64, 2)],
                      opset=11)
        path = os.path.join(tmp, f"topk_nan_{largest}.onnx")
        onnx.save(proto, path)
        so = path[:-5] + ".so"
        subprocess.run([aotc, "compile", path, "-o", so], check=True)
        m = Model(so, device="cpu")
        x = np.array([[1, np.nan, 3, np.nan, -1, 2, 3, -np.inf, np.inf],
                      [0, 0, np.nan, 5, 5, -2, np.nan, 0, 1]], F32)
        for kk in (9, 4):
            runs += 1
            v, i = m.run([x, np.array([kk], I64)])
            want = [sorted(range(9), key=lambda j: (0 if np.isnan(r[j]) else 1,
                                                     -r[j] if not np.isnan(r[j]) else 0, j) if largest else
                           (1 if np.isnan(r[j]) else 0, r[j] if not np.isnan(r[j]) else 0, j))[:kk] for r in x]
            ok = i.tolist() == want and np.array_equal(v, np.take_along_axis(x, np.array(want), 1), equal_nan=True)
            print(f"{'ok  ' if ok else 'FAIL'} topk_nan largest={largest} k={kk}: {i.tolist()}")
            failed += not ok
print(f"value shapes: {runs} runs of {len(CASES)} models, {failed} failed")
sys.exit(1 if failed else 0)
