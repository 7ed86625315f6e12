#!/usr/bin/env python3
"""Register-tiled contractions (compiler/schedule/register_tile.cpp) against
ONNX Runtime, on the shapes that exercise every path of the tiling: extents
that are multiples of the tile, that are not (partial tiles run the naive
nest), smaller than the tile, symbolic (batch 0, 1 and odd), K of 1; MatMul,
batched MatMul with broadcast, Gemm with transposes, alpha/beta and a bias,
Conv (dense, grouped, depthwise, strided, dilated, padded) with a fused
epilogue (Add + Relu) and a fused consumer (stride 2 read as the even
lanes of two vectors); float32 and float64 and int32
(whose products wrap). Each case also checks that the contraction's kernel
was tiled (`--emit=loop` shows tile loops) where tiling applies, so a
heuristic change cannot silently turn the fast path off and leave these
checks testing the naive one.

Every case runs under each CPU profile: tiles chosen for 8-lane and for 16-lane vectors
(`--device-profile generic-avx2` and `generic-avx512`), and for 16 lanes with 16 accumulator
vectors (`zen5-avx512`, taller tiles), which pick different tiles for the same shapes. Float32
sums whose term reads N contiguously accumulate in explicit vectors
(`f32x16` locals, fma); each case checks that it does exactly when it
should (SCALAR_F32 lists the float32 cases whose tile cannot: strided or
too narrow along N).

Then every configuration the heuristic could pick, and ones it would not,
through `--kernel-configs` (the seam the autotuner uses): per case two
variants of its contraction kernel's configuration, drawn from four kinds
(odd tiles that leave partial tiles and scalar columns beside vector
groups, a row tile of 16 lanes, M and N exchanged so that N may be
strided, no tiling; every kind runs across the cases), each checked
to be the one compiled (`--emit=kernel-configs`) and against ONNX Runtime;
every fourth tiled kernel also unrolled (two reduction steps an iteration),
every tiled convolution also unrolled whole over 3 steps, or refused with
the reason. Under generic-avx512 the UNROLLED cases must be unrolled by the
heuristic, and no tile beyond its register budget; the WHOLE_UNROLLED cases'
depthwise convolutions unrolled whole, and no other.

The direct convolutions' tiles are what this test checks: every compile and
`aotc test` here runs with `--no-winograd` (Winograd, the default for
stride-1 3 x 3 convolutions of 64 or more channels, has check_winograd.py
and check_pointwise_tiles.py).

Usage: check_register_tile.py AOTC [--profiles-only]    (prints "register tile ok")
"""
import json
import os
import re
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
import run_fuzz  # noqa: E402
from e2e_graphs import profile_variant  # noqa: E402

ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int32: TensorProto.INT32}


def value(name, dtype, shape):
    return helper.make_tensor_value_info(name, ONNX_TYPE[dtype], shape)


def random(rng, dtype, shape):
    if dtype == np.int32:
        # Large enough that sums of products wrap around in 32 bits.
        return rng.integers(-2**20, 2**20, size=shape).astype(np.int32)
    return rng.standard_normal(shape).astype(dtype)


def cases():
    """(name, graph nodes, inputs [(name, dtype, declared shape)], output
    dtype, declared output shape, concrete shapes per test set, tiled)."""
    out = []
    f32 = np.float32
    # MatMul: N multiple of 16 / of 8 / prime / below the tile; M symbolic.
    for n, k in ((32, 64), (40, 5), (97, 33), (3, 4), (16, 1), (7, 128)):
        out.append((f"matmul_n{n}_k{k}", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                    [("a", f32, ["m", k]), ("b", f32, [k, n])], f32, ["m", n],
                    [{"a": [m, k], "b": [k, n]} for m in (0, 1, 6, 13)], True))
    # Static M not a multiple of 6 but of 4, and one prime.
    for m in (64, 29):
        out.append((f"matmul_m{m}", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                    [("a", f32, [m, 48]), ("b", f32, [48, 24])], f32, [m, 24],
                    [{"a": [m, 48], "b": [48, 24]}], True))
    # Static extents whose last tile is narrower (its rows and columns run
    # as a smaller tile): every tile height the heuristic picks (2 to 12
    # rows, 1 to 32 columns) meets a remainder somewhere in this sweep.
    for m, n, k in ((70, 58, 9), (12, 23, 17), (20, 100, 8), (64, 40, 31), (26, 7, 12),
                    (50, 33, 5), (8, 72, 3), (3, 130, 10)):
        out.append((f"matmul_{m}x{n}x{k}", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                    [("a", f32, [m, k]), ("b", f32, [k, n])], f32, [m, n],
                    [{"a": [m, k], "b": [k, n]}], True))
    # A long reduction (160 steps) over 200 columns: generic-avx512's long
    # budget gives the packed variant 6 x 64 tiles (TILE_COLUMNS_64), 3
    # whole tiles and one of 8 columns along N, 4 whole tiles and one of 2
    # rows along M.
    out.append(("matmul_wide_k160", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                [("a", f32, [26, 160]), ("b", f32, [160, 200])], f32, [26, 200],
                [{"a": [26, 160], "b": [160, 200]}], True))
    # Three vectors of a packed weight (TILE_COLUMNS_48): a symbolic M of a
    # few rows a batch (an MLP's GEMM, planned at 8 rows) and a static M of
    # 128 (a transformer's projection) in 8 x 48 tiles under
    # generic-avx512, N = 100 leaving a last tile of 4 columns, M = 13 a
    # whole tile and 5 rows computed one by one.
    out.append(("matmul_batch_k160", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                [("a", f32, ["m", 160]), ("b", f32, [160, 100])], f32, ["m", 100],
                [{"a": [m, 160], "b": [160, 100]} for m in (0, 1, 8, 13)], True))
    out.append(("matmul_128x96x160", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                [("a", f32, [128, 160]), ("b", f32, [160, 96])], f32, [128, 96],
                [{"a": [128, 160], "b": [160, 96]}], True))
    # A symbolic M of many rows a batch (a transformer's tokens merged with
    # its batch: 20 x n rows) planned at its value at a batch of 1
    # (TOKEN_TILES): rows past its last whole tile are computed one by one.
    out.append(("matmul_tokens", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                [("a", f32, ["n", 20, 48]), ("b", f32, [48, 48])], f32, ["n", 20, 48],
                [{"a": [bn, 20, 48], "b": [48, 48]} for bn in (0, 1, 3)], True))
    # Batched, B broadcast; float64; int32 (wraps).
    for dt in (np.float32, np.float64, np.int32):
        out.append((f"bmm_{dt.__name__}", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                    [("a", dt, ["n", 3, 10, 9]), ("b", dt, [1, 9, 21])], dt, ["n", 3, 10, 21],
                    [{"a": [bn, 3, 10, 9], "b": [1, 9, 21]} for bn in (1, 2)], True))
    # Gemm with transposes, alpha, beta and a row bias; then Relu fused.
    out.append(("gemm_trans_bias_relu",
                [helper.make_node("Gemm", ["a", "b", "c"], ["g"], transA=1, transB=1, alpha=0.5, beta=2.0),
                 helper.make_node("Relu", ["g"], ["y"])],
                [("a", f32, [37, "m"]), ("b", f32, [50, 37]), ("c", f32, [50])], f32, ["m", 50],
                [{"a": [37, m], "b": [50, 37], "c": [50]} for m in (1, 7, 12)], True))
    # MatMul + Add + Relu, then a consumer (Mul by itself) fused after.
    out.append(("matmul_epilogue_consumer",
                [helper.make_node("MatMul", ["a", "b"], ["t"]),
                 helper.make_node("Add", ["t", "c"], ["u"]),
                 helper.make_node("Relu", ["u"], ["v"]),
                 helper.make_node("Mul", ["v", "v"], ["y"])],
                [("a", f32, ["m", 20]), ("b", f32, [20, 35]), ("c", f32, [35])], f32, ["m", 35],
                [{"a": [m, 20], "b": [20, 35], "c": [35]} for m in (5, 11)], True))
    # Convolutions: dense (co x w tile), grouped, depthwise (a 1 x w row).
    for name, c, co, group, hw, kk, stride, pad, dil in (
            ("conv_dense", 5, 12, 1, 16, 3, 1, 1, 1),
            ("conv_w7", 8, 16, 1, 7, 3, 1, 1, 1),
            ("conv_stride2_odd", 3, 10, 1, 13, 3, 2, 0, 1),
            ("conv_dilated", 4, 8, 1, 20, 3, 1, 2, 2),
            ("conv_grouped", 6, 9, 3, 11, 3, 1, 1, 1),
            ("conv_depthwise", 8, 8, 8, 19, 3, 1, 1, 1),
            ("conv_1x1", 16, 24, 1, 9, 1, 1, 0, 1),
            # 6 output channels by 32 (16) pixels: tiles straddle the weight's
            # panels of 32 (16) channels, the last tile 4 rows.
            ("conv_1x1_co64", 32, 64, 1, 16, 1, 1, 0, 1),
            ("conv_co64_w23", 8, 64, 1, 23, 3, 1, 1, 1),
            ("conv_stride2_w30", 3, 20, 1, 30, 5, 2, 2, 1),
            ("conv_depthwise_stride2", 8, 8, 8, 23, 3, 2, 1, 1),
            ("conv_depthwise_stride2_w57", 16, 16, 16, 57, 3, 2, 1, 1)):
        ho = (hw + 2 * pad - dil * (kk - 1) - 1) // stride + 1
        out.append((name,
                    [helper.make_node("Conv", ["x", "w", "bias"], ["t"], group=group, strides=[stride, stride],
                                      pads=[pad] * 4, dilations=[dil, dil], kernel_shape=[kk, kk]),
                     helper.make_node("Relu", ["t"], ["y"])],
                    [("x", f32, ["n", c, hw, hw]), ("w", f32, [co, c // group, kk, kk]), ("bias", f32, [co])],
                    f32, ["n", co, ho, ho],
                    [{"x": [n, c, hw, hw], "w": [co, c // group, kk, kk], "bias": [co]} for n in (1, 2)], True))
    # Two 1x1 convolutions: the second reads the first's 256 channels in
    # blocks of 32 over 15 x 15 = 225 pixels (channel_blocks.h), which CPU
    # tiles prefetch a tile of pixels ahead (PREFETCHED); the last tile's
    # prefetch lies past the end of the input.
    out.append(("conv_chain_c256",
                [helper.make_node("Conv", ["x", "w1"], ["h"], kernel_shape=[1, 1]),
                 helper.make_node("Relu", ["h"], ["r"]),
                 helper.make_node("Conv", ["r", "w", "bias"], ["y"], kernel_shape=[1, 1])],
                [("x", f32, ["n", 32, 15, 15]), ("w1", f32, [256, 32, 1, 1]),
                 ("w", f32, [40, 256, 1, 1]), ("bias", f32, [40])],
                f32, ["n", 40, 15, 15],
                [{"x": [n, 32, 15, 15], "w1": [256, 32, 1, 1], "w": [40, 256, 1, 1], "bias": [40]}
                 for n in (1, 2)], True))
    def conv_pair(name, c, mid, co, hw, k1, k, stride, batches):
        """x [n, c, hw, hw] -> a k1 x k1 Conv to mid channels -> Relu -> a
        k x k Conv of \p stride with a bias to co channels -> Relu (a
        k x k Conv pads 1 where k is 3)."""
        def attrs(kk):
            return dict(kernel_shape=[kk, kk], **({"pads": [1] * 4} if kk == 3 else {}))
        second = attrs(k)
        if stride > 1:
            second["strides"] = [stride, stride]
        ho = (hw + (2 if k == 3 else 0) - k) // stride + 1
        out.append((name,
                    [helper.make_node("Conv", ["x", "w1"], ["h"], **attrs(k1)),
                     helper.make_node("Relu", ["h"], ["r"]),
                     helper.make_node("Conv", ["r", "w", "bias"], ["t"], **second),
                     helper.make_node("Relu", ["t"], ["y"])],
                    [("x", f32, ["n", c, hw, hw]), ("w1", f32, [mid, c, k1, k1]),
                     ("w", f32, [co, mid, k, k]), ("bias", f32, [co])],
                    f32, ["n", co, ho, ho],
                    [{"x": [n, c, hw, hw], "w1": [mid, c, k1, k1], "w": [co, mid, k, k], "bias": [co]}
                     for n in batches], True))

    # Two 3 x 3 convolutions of 64 channels over a 28 x 28 map: the first
    # stores blocks of channels that the second reads, over 576 steps,
    # where zen5-avx512's convolution budget (conv_accumulator_vectors)
    # gives 14 x 32 tiles (WIDE_CONV_TILE), 28 accumulators.
    # Over a 14 x 14 map the tile is a whole row of 14 (stop 47).
    for hw in (28, 14):
        conv_pair(f"conv_chain_3x3_w{hw}", 64, 64, 64, hw, 3, 3, 1, (0, 1, 3))
    # A 3 x 3 convolution of stride 2, 128 -> 128 channels, from 56 x 56 to
    # 28 x 28 (ResNet-50's layer2.0): its tile's M is a row of 28 pixels,
    # but the map it walks is 784 rows over 128 channels, so CPU tiles
    # prefetch their next tile's rows (PREFETCHED; tile_choice.cpp,
    # mapRows). conv_chain_3x3_w28's 64 channels do not.
    conv_pair("conv_chain_3x3_stride2", 32, 128, 128, 56, 1, 3, 2, (0, 1, 2))
    # A 1 x 1 convolution of 640 -> 64 channels over a 7 x 7 map (640
    # steps, the convolution budget): generic-avx512 and zen5-avx512 tile
    # its 49 pixels 14 x 32, three tiles and one of 7 (HALF_LAST_TILE;
    # tile_choice.cpp: it ties with 7 x 32 and reads less per output).
    conv_pair("conv_chain_1x1_w7", 32, 640, 64, 7, 1, 1, 1, (0, 1, 3))
    # A 1 x 1 convolution of stride 2 over blocked channels (64 steps): it
    # runs at stride 1 over a copy of the pixels it reads (subsampledCopy),
    # its 784 pixels merged, tiled as any 1 x 1 convolution of 64 steps (4 x
    # 32 under zen5-avx512, its short convolution budget; read in place,
    # --no-subsample-strided, its rows two pixels apart took the
    # convolution budget, 14 x 32).
    conv_pair("conv_chain_1x1_stride2", 32, 64, 64, 56, 1, 1, 2, (0, 1, 3))
    # A 3 x 3 convolution of 256 -> 512 channels between blocked
    # activations over 5 x 5: its weight (4.7 MB) outweighs twice the
    # input of 8 images, so its channel blocks run outside the batch
    # (WEIGHT_OUTER; register_tile.cpp, weightOuterDims).
    out.append(("conv_chain_weight_outer",
                [helper.make_node("Conv", ["x", "w1"], ["h"], kernel_shape=[1, 1]),
                 helper.make_node("Relu", ["h"], ["r"]),
                 helper.make_node("Conv", ["r", "w", "bias"], ["t"], pads=[1] * 4, kernel_shape=[3, 3]),
                 helper.make_node("Relu", ["t"], ["u"]),
                 helper.make_node("Conv", ["u", "w2"], ["y"], kernel_shape=[1, 1])],
                [("x", f32, ["n", 32, 5, 5]), ("w1", f32, [256, 32, 1, 1]),
                 ("w", f32, [512, 256, 3, 3]), ("bias", f32, [512]), ("w2", f32, [32, 512, 1, 1])],
                f32, ["n", 32, 5, 5],
                [{"x": [n, 32, 5, 5], "w1": [256, 32, 1, 1], "w": [512, 256, 3, 3], "bias": [512],
                  "w2": [32, 512, 1, 1]} for n in (0, 1, 3)], True))
    # A 3 x 3 convolution of 128 -> 256 channels over 9 x 9: its weight
    # (1.2 MB) exceeds the 1 MB beyond which CPU tiles prefetch the next
    # channel block's weight in shares (NEXT_SLICE; next_slice.h), and
    # stays below the 2 MB of a row loop.
    out.append(("conv_chain_next_slice",
                [helper.make_node("Conv", ["x", "w1"], ["h"], kernel_shape=[1, 1]),
                 helper.make_node("Relu", ["h"], ["r"]),
                 helper.make_node("Conv", ["r", "w", "bias"], ["t"], pads=[1] * 4, kernel_shape=[3, 3]),
                 helper.make_node("Relu", ["t"], ["y"])],
                [("x", f32, ["n", 32, 9, 9]), ("w1", f32, [128, 32, 1, 1]),
                 ("w", f32, [256, 128, 3, 3]), ("bias", f32, [256])],
                f32, ["n", 256, 9, 9],
                [{"x": [n, 32, 9, 9], "w1": [128, 32, 1, 1], "w": [256, 128, 3, 3], "bias": [256]}
                 for n in (0, 1, 3)], True))
    # A depthwise 3 x 3 convolution between blocked activations (between
    # two 1 x 1 convolutions, of 64 channels in blocks) over 15 x 15 (tiles
    # of 7 pixels leave one), at stride 1 and 2: the CPU tiles run its row
    # of taps unrolled whole (WHOLE_UNROLLED), MobileNetV2's.
    for stride in (1, 2):
        ho = (15 + 2 - 3) // stride + 1
        out.append((f"conv_chain_depthwise{'_stride2' if stride == 2 else ''}",
                    [helper.make_node("Conv", ["x", "w1"], ["h"], kernel_shape=[1, 1]),
                     helper.make_node("Relu", ["h"], ["r"]),
                     helper.make_node("Conv", ["r", "w", "bias"], ["t"], pads=[1] * 4, group=64,
                                      strides=[stride, stride], kernel_shape=[3, 3]),
                     helper.make_node("Relu", ["t"], ["depthwise"]),
                     helper.make_node("Conv", ["depthwise", "w2"], ["y"], kernel_shape=[1, 1])],
                    [("x", f32, ["n", 32, 15, 15]), ("w1", f32, [64, 32, 1, 1]),
                     ("w", f32, [64, 1, 3, 3]), ("bias", f32, [64]), ("w2", f32, [32, 64, 1, 1])],
                    f32, ["n", 32, ho, ho],
                    [{"x": [n, 32, 15, 15], "w1": [64, 32, 1, 1], "w": [64, 1, 3, 3], "bias": [64],
                      "w2": [32, 64, 1, 1]} for n in (0, 1, 3)], True))
    # Convolutions the GPU profile runs as work-group tiles of their GEMM
    # view (compiler/schedule/gemm_view.cpp: output channels by every pixel
    # of every image; 64 input channels, a multiple of the staged block, go
    # innermost in the staging order): 3 x 3 over a 9 x 9 map, 3 x 3 of
    # stride 2, a 1 x 1 of stride 2; batch 0, 1 and 3 (blocks across
    # images).
    for name, c, co, hw, kk, stride, pad in (("conv_view_3x3", 64, 64, 9, 3, 1, 1),
                                             ("conv_view_stride2", 64, 32, 15, 3, 2, 1),
                                             ("conv_view_1x1_stride2", 32, 64, 14, 1, 2, 0)):
        ho = (hw + 2 * pad - (kk - 1) - 1) // stride + 1
        out.append((name,
                    [helper.make_node("Conv", ["x", "w", "bias"], ["t"], strides=[stride, stride],
                                      pads=[pad] * 4, kernel_shape=[kk, kk]),
                     helper.make_node("Relu", ["t"], ["y"])],
                    [("x", f32, ["n", c, hw, hw]), ("w", f32, [co, c, kk, kk]), ("bias", f32, [co])],
                    f32, ["n", co, ho, ho],
                    [{"x": [n, c, hw, hw], "w": [co, c, kk, kk], "bias": [co]} for n in (0, 1, 3)],
                    True))
    # Output dimensions merged (compiler/schedule/collapse_dims.h): a 1x1
    # convolution of stride 1 reads and stores h and w as one dimension of
    # h*w, here with a residual Add (a second buffer viewed merged) and a
    # Relu on odd maps, and a channel bias broadcast as [c, 1, 1] (merged
    # along h, w only); with a stride of 2 along h it reads a copy of the
    # pixels it reads at stride 1 (lower_contraction.cpp, subsampledCopy),
    # merged the same way.
    for name, h, w, sh in (("conv1x1_residual_7x5", 7, 5, 1), ("conv1x1_stride2h_residual", 13, 5, 2)):
        ho = (h - 1) // sh + 1
        out.append((name,
                    [helper.make_node("Conv", ["x", "w"], ["t"], strides=[sh, 1], kernel_shape=[1, 1]),
                     helper.make_node("Add", ["t", "r"], ["u"]),
                     helper.make_node("Add", ["u", "cb"], ["v"]),
                     helper.make_node("Relu", ["v"], ["y"])],
                    [("x", f32, ["n", 12, h, w]), ("w", f32, [24, 12, 1, 1]),
                     ("r", f32, ["n", 24, ho, w]), ("cb", f32, [24, 1, 1])],
                    f32, ["n", 24, ho, w],
                    [{"x": [n, 12, h, w], "w": [24, 12, 1, 1], "r": [n, 24, ho, w], "cb": [24, 1, 1]}
                     for n in (0, 1, 3)], True))
    # Attention's QK^T: K transposed by a view that reads its source with a
    # stride along the product's N; the scheduler gives that view its own
    # buffer (fusion.cpp, layoutForContraction) so that the tile reads it
    # contiguously. Then the output projection's A, read through a
    # Transpose and a Flatten at `r floordiv 8`, `r mod 8`: its reduction
    # loop is split by 8 (compiler/schedule/split_div_loops.h).
    for s in (13, 32):
        out.append((f"attn_scores_s{s}",
                    [helper.make_node("Transpose", ["q"], ["qh"], perm=[0, 2, 1, 3]),
                     helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 3, 1]),
                     helper.make_node("MatMul", ["qh", "kt"], ["y"])],
                    [("q", f32, ["n", s, 2, 8]), ("k", f32, ["n", s, 2, 8])], f32, ["n", 2, s, s],
                    [{"q": [n, s, 2, 8], "k": [n, s, 2, 8]} for n in (1, 3)], True))
    out.append(("attn_proj_flatten",
                [helper.make_node("Transpose", ["ctx"], ["t"], perm=[0, 2, 1, 3]),
                 helper.make_node("Flatten", ["t"], ["a"], axis=2),
                 helper.make_node("MatMul", ["a", "w"], ["y"])],
                [("ctx", f32, [2, 3, 13, 8]), ("w", f32, [24, 40])], f32, [26, 40],
                [{"ctx": [2, 3, 13, 8], "w": [24, 40]}], True))
    # The same read with heads of 32 (a multiple of the GPU tile's
    # 16-step blocks): each staged block lies inside one head, so the GPU
    # work-group tile stages A along the steps (contiguous within a head,
    # local_tile.cpp contiguousInBlocks), not along its rows.
    out.append(("attn_proj_heads",
                [helper.make_node("Transpose", ["ctx"], ["t"], perm=[0, 2, 1, 3]),
                 helper.make_node("Flatten", ["t"], ["a"], axis=2),
                 helper.make_node("MatMul", ["a", "w"], ["y"])],
                [("ctx", f32, ["n", 2, 48, 32]), ("w", f32, [64, 64])], f32, ["48*n", 64],
                [{"ctx": [n, 2, 48, 32], "w": [64, 64]} for n in (1, 3)], True))
    # B = Transpose(W) (an exporter that does not fold weights: a Linear
    # layer, a tied embedding): W[n, k] packed as panels (n = 97 > lanes)
    # or, at n <= lanes and on GPUs, as one transposed copy (n = 5).
    for n, k in ((97, 33), (5, 12)):
        out.append((f"matmul_tw_n{n}",
                    [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
                     helper.make_node("MatMul", ["a", "wt"], ["y"])],
                    [("a", f32, ["m", k]), ("w", f32, [n, k])], f32, ["m", n],
                    [{"a": [m, k], "w": [n, k]} for m in (1, 6, 13)], True))
    # Constant weights, packed at compile time (compiler/passes/pack_weights.h)
    # so that the tile runs along output channels: convolutions of every
    # shape class above, Gemm with transB = 1 (n = 50) and MatMuls whose n
    # the lanes do not divide (padded panels).
    packed = []
    for name, nodes, inputs, out_dtype, out_shape, sets, tiled in out:
        # (MatMul's n of 97 and 58: panels with a zero-padded last one.)
        if name.startswith(("conv_", "matmul_tw_")) or name in (
                "gemm_trans_bias_relu", "matmul_n97_k33", "matmul_70x58x9", "matmul_wide_k160",
                "matmul_batch_k160", "matmul_128x96x160", "matmul_tokens"):
            packed.append((name + "_const", nodes, inputs, out_dtype, out_shape, sets, tiled))
    return out + packed


# Float32 cases whose tiles stay scalar: N below 4. (A convolution whose
# output columns read the input with a stride of 2 loads its lanes as the
# even elements of two contiguous vectors: conv_stride2_*,
# conv_depthwise_stride2*.) And the 3 x 3 chain with its weights given at
# run time: its activations are stored in channel blocks, but only constant
# weights are packed for a tile along output channels, which reads the
# unpacked [co, ci, kh, kw] weight with a stride (its _const variant
# vectorizes).
SCALAR_F32 = {"matmul_n3_k4", "conv_chain_3x3_w28", "conv_chain_3x3_w14"}


# Cases whose contraction the CPU heuristic gives a prefetch of the next
# tile's rows (register_tile.cpp, chooseRegisterTile): "prefetch" in the
# configuration and aotc_prefetch in the OpenCL C.
# (With its weights as inputs, conv_chain_c256 keeps NCHW: channel blocks
# need weights packed at compile time.)
PREFETCHED = {"conv_chain_c256_const", "conv_chain_next_slice", "conv_chain_3x3_stride2_const"}

# Cases whose blocked convolution zen5-avx512 and generic-avx512 tile 14 x
# 32 (their convolution budget of 28 accumulators; generic-avx2 has none).
WIDE_CONV_TILE = {"conv_chain_3x3_w28_const", "conv_chain_3x3_w14_const", "conv_chain_1x1_w7_const",
                  "conv_chain_3x3_stride2_const"}

# Of those, the cases whose 14 x 32 tile leaves a last tile of 7 pixels
# (49 merged pixels of a 7 x 7 map): checked in the OpenCL C, a tile of 14
# pixels under a test that it is whole, and 7 rows after it.
HALF_LAST_TILE = {"conv_chain_1x1_w7_const"}
HALF_LAST_TEST = re.compile(r"if \(\(\(14 \* [it][0-9]+\) \+ 14\) <= 49\)")

# Cases with a blocked convolution over 64 reduction steps or fewer (a 1 x 1
# of up to 64 input channels) that zen5-avx512 tiles 4 x 32: its short
# convolution budget of 8 accumulators (short_conv_accumulator_vectors;
# generic-avx512 has none and tiles them taller).
SHORT_CONV_TILE = {"conv_chain_1x1_stride2_const", "conv_chain_depthwise_const",
                   "conv_chain_depthwise_stride2_const"}

# Cases with a convolution whose output channel blocks run outside the
# batch (a large weight: register_tile.cpp, weightOuterDims), checked in
# the default profile's Loop IR.
WEIGHT_OUTER = {"conv_chain_weight_outer", "conv_chain_weight_outer_const"}
WEIGHT_OUTER_LOOPS = re.compile(r"parallel<0> i1 in \[[^\n]*\n\s*parallel<0> i0 in \[0, 0 \+ n\)")

# Cases whose contraction generic-avx512 tiles 64 columns wide (its
# tile_columns, 4 vectors of B a step, along an innermost N only): 6 x 64
# over a long reduction (24 accumulators), 3 x 64 over 3 rows (12).
TILE_COLUMNS_64 = {"matmul_wide_k160": 6, "matmul_wide_k160_const": 6, "matmul_3x130x10": 3}

# Cases whose contraction generic-avx512 tiles 48 columns wide, three
# vectors of a weight packed in panels along N (register_tile.cpp: 8 rows
# of them fill the long budget and cover a batch of 8 or 128 rows in whole
# tiles; 4 rows over a short reduction of 33 steps, whose common budget
# holds 12 accumulators, and over the 20 rows a batch of matmul_tokens);
# the same GEMMs with B an input (not packed) keep powers of two.
TILE_COLUMNS_48 = {"matmul_batch_k160_const": 8, "matmul_128x96x160_const": 8,
                   "matmul_n97_k33_const": 4, "matmul_tw_n97_const": 4,
                   "matmul_tokens_const": 4}


# The tiles generic-avx2 gives a symbolic M of 20 rows a batch: planned at
# 20 rows (register_tile.cpp), tiles that divide them rather than 6 x 16,
# which left 2 rows computed one by one (BERT-base's 128 tokens a batch:
# its GEMMs 4% faster in 4 x 24 tiles). The packed weight takes three
# vectors a step (4 x 24), the unpacked one two (4 x 16).
TOKEN_TILES = {"matmul_tokens": (4, 16), "matmul_tokens_const": (4, 24)}


# Cases whose contraction generic-avx512 runs two reduction steps an
# iteration (register_tile.cpp, chooseUnroll: accumulators, operand vectors
# and the broadcast element within 31 of its 32 registers; an even static
# innermost reduction): 8 x 48 and 6 x 64 tiles over 160 steps, and the
# convolutions' 14 x 32 tiles (31 registers; stop 91). No tile beyond that
# budget may.
UNROLLED = {"matmul_batch_k160_const", "matmul_128x96x160_const", "matmul_wide_k160_const"} | WIDE_CONV_TILE
UNROLLED_LOOP = re.compile(r"for \(long r[0-9]+u = 0; r[0-9]+u < [0-9]+; \+\+r[0-9]+u\)")

# Cases whose depthwise convolution generic-avx512 runs with its row of 3
# taps unrolled whole (tile_choice.cpp, chooseWholeUnroll: the input, read
# in vectors of channels, slides along the tile's pixels with the taps;
# unroll 3, no loop left over them). No other case may: a dense
# convolution's input pixels are broadcast, not shared by whole vectors,
# and the NCHW depthwise ones (conv_depthwise*) tile along the pixels,
# where the taps slide along N.
WHOLE_UNROLLED = {"conv_chain_depthwise", "conv_chain_depthwise_stride2",
                  "conv_chain_depthwise_const", "conv_chain_depthwise_stride2_const"}


def tile_registers(c, lanes=16):
    """Vector registers of a tile's accumulators, operand and broadcast element."""
    vectors = -(-c.get("tn", 1) // lanes)
    return c.get("tm", 1) * vectors + vectors + 1


# Cases with a convolution whose rows its work-items walk themselves
# (row_loop.cpp, chooseRowLoop: a weight beyond 2 MB, "row_loop" in its
# configuration, the rows' accumulators in a private array, the next
# block's weight prefetched) under generic-avx512, and a kernel planned for
# 8 images (`_at8`) without the row loop: the 256 -> 512 3 x 3 over 5 x 5
# (4.7 MB, 5 rows; ResNet's 512 -> 512 over 7 x 7 is the same code with 7,
# and its 9.4 MB weight made this test's ASan run minutes longer).
ROW_LOOP = {"conv_chain_weight_outer", "conv_chain_weight_outer_const"}

# Cases with a convolution whose work-items prefetch the next channel
# block's weight in shares (next_slice.h, RegisterTile::prefetchNext: a
# weight beyond 1 MB, "prefetch_next" in its configuration, a prefetch
# under a test of the step against the work-item's row) under
# generic-avx512: the 128 -> 256 3 x 3 over 9 x 9, its weight a constant
# (as an input, its tile runs along the output channels, the operand the
# rows share being the activations). The 256 -> 512 one's kernel planned
# for 8 images has none: its channel blocks run outside the batch, a
# symbolic count of work-items sharing a slice.
NEXT_SLICE = {"conv_chain_next_slice_const"}
NEXT_SLICE_TEST = re.compile(r"if \([^\n]*== [it][0-9]+\) \{\n\s*aotc_prefetch\(")


# Kernel buffer views that show whether output dimensions were merged
# (collapse_dims.h): (text in --emit=loop, expected).
MERGED = {
    "conv_1x1": [("in0: f32[n,16,81]", True)],
    "conv1x1_residual_7x5": [("in0: f32[n,12,35]", True), ("in2: f32[n,24,35]", True),
                             ("out0: out f32[n,24,35]", True)],
    "conv1x1_stride2h_residual": [("in0: f32[(12 * n),13,5]", True), ("f32[n,12,35]", True),
                                  ("in2: f32[n,24,35]", True), ("out0: out f32[n,24,35]", True)],
    "conv_dense": [("out0: out f32[n,12,16,16]", True), ("in0: f32[(5 * n),16,16]", True)],
}


def scaled(name, input_name, a):
    """\p a, the weights of the GEMM-view cases and of the convolution
    chains scaled by 1 / sqrt(K): their sums of up to 576 products then stay
    near 1, where the default tolerance compares two summation orders'
    float32 rounding fairly (unscaled, conv_chain_c256's sums of 256 sums
    of 32 products cancelled to 0.005 with an error of 1.2e-4 between any
    two summation orders)."""
    if name.startswith(("conv_view", "conv_chain")) and input_name in ("w", "w1", "w2"):
        return (a / np.sqrt(np.prod(a.shape[1:]))).astype(a.dtype)
    return a


def constant_inputs(name):
    """The inputs of case \p name given as initializers (weights, bias)."""
    if not name.endswith("_const"):
        return set()
    if name.startswith("conv_chain"):
        return {"w1", "w", "bias", "w2"}
    return {"w", "bias"} if name.startswith(("conv_", "matmul_tw_")) else {"b", "c"}


_kinds_drawn = set()


def variants(c, rng):
    """Two configurations for a contraction kernel whose heuristic chose
    \p c (a KernelConfig as JSON), of up to four kinds."""
    m, n = c["m"], c["n"]
    out = []
    if n >= 0:
        v = {"m": m, "n": n, "tm": int(rng.choice([3, 5])) if m >= 0 else 1,
             "tn": int(rng.choice([7, 12])), "lanes": int(rng.choice([4, 8]))}
        if m >= 0:  # rows of a tile 1 or 2 tiles ahead prefetched
            v["prefetch"] = int(rng.choice([1, 2]))
        out.append(("odd tiles", v))
        out.append(("row of 16 lanes", {"m": -1, "n": n, "tm": 1, "tn": 16, "lanes": 16}))
        if m >= 0:
            out.append(("m and n exchanged", {"m": n, "n": m, "tm": 2, "tn": 8, "lanes": 8}))
    out.append(("untiled", {"m": -1, "n": -1, "tm": 1, "tn": 1, "lanes": 0}))
    # Two of them a kernel (check_config_variants checks that every kind
    # ran): each variant is a PoCL build of its own, a second on a cold cache.
    picks = sorted(rng.choice(len(out), size=min(2, len(out)), replace=False))
    _kinds_drawn.update(out[i][0] for i in picks)
    return [out[i][1] for i in picks]


# Work-group tiles (compiler/schedule/local_tile.cpp; group_m x group_n
# work-items, tm x tn each, bk reduction steps staged in local memory):
# rows of 1, 2, 3 and 4 (scalar and float4 loads from local memory), one
# and two float4 column groups, blocks of 3 to 32 outputs that leave
# partial blocks along M and N and a partial last block of reduction steps
# on these shapes; split_k slices of 2, 3 and 4 (each takes bk of the
# split_k * bk staged steps; the slices add their sums in local memory).
GROUP_TILES = [(4, 4, 2, 4, 4, 1), (2, 8, 4, 4, 4, 1), (4, 4, 4, 8, 8, 1), (8, 4, 1, 4, 8, 1),
               (4, 4, 3, 4, 4, 1), (4, 4, 2, 4, 4, 4), (2, 4, 4, 8, 2, 3), (4, 4, 1, 4, 4, 2),
               (1, 8, 1, 4, 8, 2), (1, 4, 1, 8, 4, 8)]
# Contractions whose term is not one operand along M times one along N (a
# grouped or depthwise convolution's input depends on its output channel):
# a work-group tile is refused with the reason. (And the kernel of the
# depthwise convolution of conv_chain_depthwise*, named for its output.)
GROUP_REFUSED = ("conv_grouped", "conv_depthwise")


_group_turn = [0]


def group_variant(c, rng):
    """The next of GROUP_TILES in turn (every one runs across the cases)."""
    gm, gn, tm, tn, bk, split = GROUP_TILES[_group_turn[0] % len(GROUP_TILES)]
    _group_turn[0] += 1
    v = {"m": c["m"], "n": c["n"], "tm": tm, "tn": tn, "lanes": 4,
         "group_m": gm, "group_n": gn, "bk": bk}
    if split > 1:
        v["split_k"] = split
    return v


def emitted_configs(aotc, case, env, flags=()):
    """The kernel configurations the heuristic gives \p case (with
    \p flags), or the compiler's error."""
    res = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"),
                             "--emit=kernel-configs", *flags], env=env)
    if res.returncode != 0:
        return None, res.stderr.strip()
    return json.loads(res.stdout)["kernels"], None


def check_variant(aotc, case, kernel, v, env, tmp, flags=(), refusal=None):
    """Compiles \p case with configuration \p v for \p kernel (and
    \p flags). With \p refusal the compile must fail with that text; else
    \p v must be compiled as given and the case must pass `aotc test`.
    Returns (the failure or None, whether `aotc test` ran)."""
    model = os.path.join(case, "model.onnx")
    name = os.path.basename(case)
    path = os.path.join(tmp, "configs.json")
    with open(path, "w") as f:
        json.dump({"kernels": {kernel: v}}, f)
    if refusal:
        got = run_fuzz.run_tool([aotc, "compile", model, *flags, "--kernel-configs", path,
                                 "-o", os.path.join(tmp, "refused.so")], env=env)
        if got.returncode == 0 or refusal not in got.stderr:
            return (f"{name}: {kernel} {v} was not refused with the reason: "
                    f"{got.stderr.strip()}"), False
        return None, False
    got = run_fuzz.run_tool([aotc, "compile", model, "--emit=kernel-configs", *flags,
                             "--kernel-configs", path], env=env)
    if got.returncode != 0 or json.loads(got.stdout)["kernels"][kernel] != v:
        return (f"{name}: {kernel} {v} not compiled as given: "
                f"{got.stdout.strip() or got.stderr.strip()}"), False
    res = run_fuzz.run_tool([aotc, "test", *flags, "--kernel-configs", path, case], env=env)
    if res.returncode != 0:
        return f"{name}: {kernel} {v}: {res.stdout.strip()} {res.stderr.strip()}", True
    return None, True



_run_tool = run_fuzz.run_tool


def run_tool_direct(cmd, **kw):
    """run_fuzz.run_tool with `--no-winograd` after `compile` or `test`
    (run_fuzz.test_with_profiles calls it too)."""
    if len(cmd) > 1 and cmd[1] in ("compile", "test"):
        cmd = list(cmd[:2]) + ["--no-winograd"] + list(cmd[2:])
    return _run_tool(cmd, **kw)


run_fuzz.run_tool = run_tool_direct

GPU = ("--device-profile", "generic-gpu")

# What the compiler says of a row loop that the kernel's shape does not
# admit (register_tile.cpp, rowLoopProblem).
ROW_LOOP_SHAPE = ("is not an output dimension", "row_block is 1 to 0",
                  "other than n", "extent is not static", "walks whole tiles")


# What the compiler says of a next slice prefetch that the kernel's shape
# does not admit (register_tile.cpp, nextSliceProblem).
NEXT_SLICE_SHAPE = ("prefetch_next: no dimension the weight reads",
                    "prefetch_next: its reduction loops outside the innermost take fewer")


# What the compiler says of an unrolled reduction loop (RegisterTile::unroll)
# that the kernel does not admit (register_tile.cpp, unrollProblem).
WHOLE_UNROLL_SHAPE = ("unroll 3: the innermost reduction loop's extent must be static",
                      "unroll 3: it needs a register tile along m and n",
                      "unroll 3: a float sum of more than")
UNROLL_SHAPE = ("unroll 2: the innermost reduction loop's extent must be static",
                "unroll 2: it needs a register tile along m and n",
                "unroll 2: a float sum of more than")


def refused_for_shape(aotc, case, kernel, v, env, tmp, shape):
    """None if \p case compiles configuration \p v for \p kernel; "" if
    it refuses it for the kernel's shape (one of the messages \p shape:
    ROW_LOOP_SHAPE, NEXT_SLICE_SHAPE); else the failure."""
    path = os.path.join(tmp, "refused.json")
    with open(path, "w") as f:
        json.dump({"kernels": {kernel: v}}, f)
    got = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"),
                             "--emit=kernel-configs", "--kernel-configs", path], env=env)
    if got.returncode == 0:
        return None
    return "" if any(r in got.stderr for r in shape) else got.stderr.strip()


def check_config_variants(aotc, dirs, env, tmp, rng):
    failures = []
    runs = 0
    group_runs = 0
    row_loops = 0
    next_slices = 0
    unrolls = 0
    whole_unrolls = 0
    unroll_turn = [0]

    def check(case, kernel, v, flags=(), refusal=None):
        nonlocal runs, group_runs
        failure, ran = check_variant(aotc, case, kernel, v, env, tmp, flags, refusal)
        if failure:
            failures.append(failure)
        runs += ran
        group_runs += ran and "group_m" in v

    for case in dirs:
        name = os.path.basename(case)
        configs, error = emitted_configs(aotc, case, env)
        if configs is None:
            failures.append(f"{name}: --emit=kernel-configs failed: {error}")
            continue
        for kernel, c in configs.items():
            if c["template"] != "contraction":
                continue
            todo = variants(c, rng)

            def admitted(v, shape):
                """Adds \p v to the variants where the kernel admits it; a refusal
                for another reason than \p shape's is a failure."""
                why = refused_for_shape(aotc, case, kernel, v, env, tmp, shape)
                if why is None:
                    todo.append(v)
                    return True
                if why:
                    failures.append(f"{name}: {kernel} {v}: {why}")
                return False
            group = c["m"] >= 0 and c["n"] >= 0 and not name.startswith("bmm_float64") \
                and not name.startswith("bmm_int32")
            if group:
                todo.append(group_variant(c, rng))
            # A row loop (RegisterTile::rowLoop) over the heuristic's tile
            # of a convolution chain: one reduction loop outside the rows,
            # along the first other output dimension that the kernel has
            # (merged dimensions, collapse_dims.h, leave fewer) with two
            # reduction loops or more; the others are refused by name.
            if name.startswith("conv_chain") and c["m"] >= 0 and c["n"] >= 0:
                for d in (k for k in (2, 1, 3) if k not in (c["m"], c["n"])):
                    v = dict({k: x for k, x in c.items() if k not in ("prefetch_next", "unroll")},
                             row_loop=d, row_block=1, template="contraction")
                    why = refused_for_shape(aotc, case, kernel, v, env, tmp, ROW_LOOP_SHAPE)
                    if why is None:
                        todo.append(v)
                        row_loops += 1
                        break
                    if why:
                        failures.append(f"{name}: {kernel} {v}: {why}")
            # The next slice prefetched (RegisterTile::prefetchNext) over
            # the heuristic's tile of a convolution chain without a row
            # loop; refused by name where no work-items share a slice.
            if name.startswith("conv_chain") and c["m"] >= 0 and c["n"] >= 0 \
                    and "row_loop" not in c and not c.get("prefetch_next"):
                next_slices += admitted(dict(c, prefetch_next=1, template="contraction"),
                                        NEXT_SLICE_SHAPE)
            # Two reduction steps an iteration (RegisterTile::unroll) over
            # the heuristic's tile of every fourth tiled kernel (its unrolled
            # tiles under generic-avx512 run in the cases' main runs);
            # refused by name where the innermost extent is odd or symbolic.
            tiled = c["m"] >= 0 and c["n"] >= 0 and "row_loop" not in c and "group_m" not in c
            unroll_turn[0] += tiled
            if tiled and unroll_turn[0] % 4 == 0:
                unrolls += admitted(dict(c, unroll=2, template="contraction"), UNROLL_SHAPE)
            # A whole unroll of 3 steps (RegisterTile::unroll) over the
            # heuristic's tile of every tiled convolution that does not
            # have one: a dense convolution's row of 3 taps where it is the
            # innermost loop (NCHW), refused by name elsewhere.
            if tiled and name.startswith("conv") and c.get("unroll") != 3:
                whole_unrolls += admitted(dict(c, unroll=3, template="contraction"),
                                          WHOLE_UNROLL_SHAPE)
            for v in todo:
                v = dict(v, template="contraction")
                refused = "group_m" in v and (name.startswith(GROUP_REFUSED) or
                                              kernel.endswith("_depthwise"))
                check(case, kernel, v, refusal="not a product of one operand" if refused else None)
    # The row loop's own configurations on a case whose heuristic picks
    # it (generic-avx512): blocks of one to three of its four reduction
    # loops, and the refusals.
    avx512 = ("--device-profile", "generic-avx512")
    for case in dirs:
        name = os.path.basename(case)
        if name != "conv_chain_weight_outer_const":
            continue
        configs, _ = emitted_configs(aotc, case, env, avx512)
        for kernel, c in (configs or {}).items():
            if "row_loop" not in c:
                continue
            for rb in (1, 2):
                check(case, kernel, dict(c, row_block=rb), avx512)
            check(case, kernel, dict(c, row_block=4), avx512, refusal="row_block is 1 to 3")
            check(case, kernel, dict(c, row_loop=c["n"]), avx512, refusal="other than n")
            check(case, kernel, {k: v for k, v in c.items() if k != "row_block"}, avx512,
                  refusal="'row_loop' and 'row_block' go together")
    # GEMM views (GPU profile): every case whose convolution the GPU
    # heuristic views as a GEMM gets two more work-group tiles of that view
    # (GROUP_TILES in turn: partial blocks along both sides, split K); the
    # view cases must be among them, and a view whose n is not the last
    # other dimension is refused.
    viewed = set()
    for case in dirs:
        name = os.path.basename(case)
        configs, error = emitted_configs(aotc, case, env, GPU)
        if configs is None:
            failures.append(f"{name}: --emit=kernel-configs (GPU) failed: {error}")
            continue
        for kernel, c in configs.items():
            if not c.get("gemm_view"):
                continue
            viewed.add(name)
            for _ in range(2):
                check(case, kernel, dict(group_variant(c, rng), gemm_view=True,
                                         template="contraction"), GPU)
            check(case, kernel, dict(c, n=c["n"] - 1), GPU,
                  refusal="GEMM view takes for n the last")
    want = {n + s for n in ("conv_view_3x3", "conv_view_stride2", "conv_view_1x1_stride2")
            for s in ("", "_const")}
    if not want <= viewed:
        failures.append(f"the GPU heuristic did not view {sorted(want - viewed)} as GEMMs")
    print(f"kernel-configs variants: {runs} compiled and checked, {group_runs} of them "
          f"work-group tiles, {row_loops} row loops, {next_slices} next slice prefetches "
          f"({len(viewed)} cases with GEMM views), {unrolls} unrolled reduction loops, "
          f"{whole_unrolls} given whole unrolls")
    if row_loops < 6:
        failures.append(f"only {row_loops} row loop variants ran")
    if next_slices < 3:
        failures.append(f"only {next_slices} next slice variants ran")
    if whole_unrolls < 3:
        failures.append(f"only {whole_unrolls} whole unroll variants ran")
    if unrolls < 8:
        failures.append(f"only {unrolls} unrolled variants ran")
    if len(_kinds_drawn) < 4:
        failures.append(f"variants of only these kinds ran: {sorted(_kinds_drawn)}")
    if runs < len(dirs):
        failures.append(f"only {runs} variants ran for {len(dirs)} cases")
    if group_runs < len(dirs) // 2:
        failures.append(f"only {group_runs} work-group tile variants ran for {len(dirs)} cases")
    return failures


def main():
    aotc = os.path.abspath(sys.argv[1])
    # --profiles-only: the cases under each profile's heuristic, without
    # the Loop IR checks and configuration variants (about 1,000 more aotc
    # processes); scripts/ci_extra.sh runs it so under ASan.
    profiles_only = "--profiles-only" in sys.argv[2:]
    # zen5-avx512 without its short convolution budget (SHORT_CONV_TILE).
    zen5_plain = os.path.join(tempfile.mkdtemp(), "zen5-plain.json")
    profile_variant(aotc, "zen5-avx512", zen5_plain, name="zen5-plain", short_conv_accumulator_vectors=0)
    rng = np.random.default_rng(20261125)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AOTC_CACHE_DIR=os.path.join(tmp, "cache"))
        dirs = []
        for name, nodes, all_inputs, out_dtype, out_shape, sets, tiled in cases():
            consts = constant_inputs(name)
            inits = [numpy_helper.from_array(scaled(name, n, random(rng, d, sets[0][n])), n)
                     for n, d, _ in all_inputs if n in consts]
            inputs = [i for i in all_inputs if i[0] not in consts]
            graph = helper.make_graph(nodes, name, [value(n, d, s) for n, d, s in inputs],
                                      [value("y", out_dtype, out_shape)], inits)
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
            model.ir_version = 8
            case = os.path.join(tmp, name)
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            for i, shapes in enumerate(sets):
                arrays = [scaled(name, n, random(rng, d, shapes[n])) for n, d, _ in inputs]
                if out_dtype == np.int32:  # ORT's int32 MatMul wraps like aotc
                    ref = [sess.run(None, dict(zip([n for n, _, _ in inputs], arrays)))[0]]
                else:
                    ref = sess.run(None, dict(zip([n for n, _, _ in inputs], arrays)))
                run_fuzz.write_case(case, model, arrays, ref)
                if i:
                    os.rename(os.path.join(case, "test_data_set_0"), os.path.join(case, f"test_data_set_{i}"))
                else:
                    os.rename(os.path.join(case, "test_data_set_0"), os.path.join(case, "set_keep"))
            os.rename(os.path.join(case, "set_keep"), os.path.join(case, "test_data_set_0"))
            if profiles_only:
                dirs.append(case)
                continue
            loop = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"), "--emit=loop"],
                                  env=env)
            if loop.returncode != 0:
                failures.append(f"{name}: compile failed: {loop.stderr.strip()}")
                continue
            has_tiles = " t" in "".join(l for l in loop.stdout.splitlines() if "parallel<0> t" in l)
            if tiled and not has_tiles:
                failures.append(f"{name}: the contraction was not register tiled")
            vec = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"), "--emit=loop",
                                  "--device-profile", "generic-avx512"],
                                 env=env)
            want_vectors = out_dtype == np.float32 and name not in SCALAR_F32
            if ("f32x" in vec.stdout) != want_vectors:
                failures.append(f"{name}: expected {'vector' if want_vectors else 'scalar'} accumulators")
            if bool(WEIGHT_OUTER_LOOPS.search(loop.stdout)) != (name in WEIGHT_OUTER):
                failures.append(f"{name}: expected the channel blocks "
                                f"{'outside' if name in WEIGHT_OUTER else 'inside'} the batch")
            for want, merged in MERGED.get(name, []):
                if (want in loop.stdout) != merged:
                    failures.append(f"{name}: expected '{want}' {'in' if merged else 'not in'} the Loop IR")
            configs, _ = emitted_configs(aotc, case, env)
            prefetch = any(c.get("prefetch") for c in (configs or {}).values())
            if name in TOKEN_TILES:
                tiles = sorted({(c.get("tm"), c.get("tn")) for c in (configs or {}).values()
                                if c.get("template") == "contraction"})
                if tiles != [TOKEN_TILES[name]]:
                    failures.append(f"{name}: expected {TOKEN_TILES[name]} tiles under "
                                    f"generic-avx2, got {configs}")
            if prefetch != (name in PREFETCHED) or (prefetch and "prefetch " not in loop.stdout):
                failures.append(f"{name}: expected {'a' if name in PREFETCHED else 'no'} prefetch")
            if prefetch:
                cl = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"),
                                        "--emit=cl"], env=env)
                if "aotc_prefetch(" not in cl.stdout or "#define aotc_prefetch" not in cl.stdout:
                    failures.append(f"{name}: no aotc_prefetch in the OpenCL C")
            for profile in ("zen5-avx512", "generic-avx512"):
                got, _ = emitted_configs(aotc, case, env, ("--device-profile", profile))
                wide = any(c.get("tm") == 14 and c.get("tn") == 32 for c in (got or {}).values())
                if wide != (name in WIDE_CONV_TILE):
                    failures.append(f"{name}: expected {'a' if name in WIDE_CONV_TILE else 'no'} "
                                    f"14 x 32 tile under {profile}, got {got}")
                if name in HALF_LAST_TILE:
                    cl = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"),
                                            "--emit=cl", "--device-profile", profile], env=env)
                    if not HALF_LAST_TEST.search(cl.stdout):
                        failures.append(f"{name}: no whole-tile test of 14 of the 49 pixels "
                                        f"under {profile}")
                if profile == "zen5-avx512":
                    # The kernels whose tile the short budget changes: those
                    # that zen5-avx512 without it (a JSON copy) tiles otherwise.
                    plain, _ = emitted_configs(aotc, case, env, ("--device-profile", zen5_plain))
                    changed = {k: c for k, c in (got or {}).items() if (plain or {}).get(k) != c}
                    if bool(changed) != (name in SHORT_CONV_TILE) or any(
                            (c.get("tm"), c.get("tn")) != (4, 32) for c in changed.values()):
                        failures.append(f"{name}: expected {'4 x 32 tiles' if name in SHORT_CONV_TILE else 'no tile'} "
                                        f"from zen5-avx512's short convolution budget, got {changed} "
                                        f"(without it {plain})")
                if profile != "generic-avx512":
                    continue
                looped = {k for k, c in (got or {}).items() if "row_loop" in c}
                if bool(looped) != (name in ROW_LOOP):
                    failures.append(f"{name}: expected {'a' if name in ROW_LOOP else 'no'} row loop "
                                    f"under generic-avx512, got {got}")
                for k in looped:
                    if "row_loop" in (got or {}).get(k + "_at8", {"row_loop": 0}):
                        failures.append(f"{name}: {k} has no kernel planned for 8 images without "
                                        f"the row loop: {got}")
                if looped:
                    cl = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"),
                                            "--emit=cl", "--device-profile", profile], env=env)
                    if "row_accs[" not in cl.stdout or "aotc_prefetch(" not in cl.stdout:
                        failures.append(f"{name}: no private row_accs array or prefetch in the OpenCL C")
                sliced = {k for k, c in (got or {}).items() if c.get("prefetch_next")}
                if bool(sliced) != (name in NEXT_SLICE) or sliced & looped:
                    failures.append(f"{name}: expected {'a' if name in NEXT_SLICE else 'no'} next "
                                    f"slice prefetch (and none with a row loop) under "
                                    f"generic-avx512, got {got}")
                if sliced:
                    cl = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"),
                                            "--emit=cl", "--device-profile", profile], env=env)
                    if not NEXT_SLICE_TEST.search(cl.stdout):
                        failures.append(f"{name}: no prefetch of the next slice in turns in the "
                                        f"OpenCL C")
                unrolled = {k: c for k, c in (got or {}).items() if c.get("unroll")}
                if (name in UNROLLED) != bool(unrolled) and name in UNROLLED:
                    failures.append(f"{name}: expected an unrolled reduction loop under "
                                    f"generic-avx512, got {got}")
                if any(tile_registers(c) > 31 for c in unrolled.values() if c.get("unroll") == 2):
                    failures.append(f"{name}: unrolled beyond the register budget: {unrolled}")
                whole = {k: c for k, c in unrolled.items() if c.get("unroll") != 2}
                if bool(whole) != (name in WHOLE_UNROLLED) or any(
                        c.get("unroll") != 3 for c in whole.values()):
                    failures.append(f"{name}: expected {'a' if name in WHOLE_UNROLLED else 'no'} "
                                    f"reduction loop of 3 steps unrolled whole under "
                                    f"generic-avx512, got {got}")
                if name in UNROLLED:
                    cl = run_fuzz.run_tool([aotc, "compile", os.path.join(case, "model.onnx"),
                                            "--emit=cl", "--device-profile", profile], env=env)
                    if not UNROLLED_LOOP.search(cl.stdout):
                        failures.append(f"{name}: no loop of two steps an iteration in the OpenCL C")
                for cols, expected in ((64, TILE_COLUMNS_64), (48, TILE_COLUMNS_48)):
                    rows = [c.get("tm") for c in (got or {}).values() if c.get("tn") == cols]
                    if rows != ([expected[name]] if name in expected else []):
                        failures.append(f"{name}: expected {expected.get(name, 'no')} rows of "
                                        f"{cols} columns under generic-avx512, got {got}")
            if name.startswith("attn_scores") and "kernel k0_kt(" not in loop.stdout:
                failures.append(f"{name}: K^T was not given its own buffer")
            if name == "attn_proj_flatten":
                if "for r0o in [0, 0 + 3)" not in loop.stdout or "floordiv 8" in loop.stdout:
                    failures.append(f"{name}: the reduction loop was not split by 8")
            dirs.append(case)
        # zen5-avx512 allows 16 accumulator vectors: taller tiles (8 x 32).
        failures += run_fuzz.test_with_profiles(
            aotc, dirs, env, ("generic-avx2", "generic-avx512", "zen5-avx512", "generic-gpu"))
        if not profiles_only:
            failures += check_config_variants(aotc, dirs, env, tmp, rng)
    for f in failures:
        print("FAILED:", f)
    if failures:
        sys.exit(1)
    print("register tile ok:", len(dirs), "cases")


if __name__ == "__main__":
    main()
