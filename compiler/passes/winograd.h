/// \file
/// 3 x 3 convolutions as Winograd F(2x2, 3x3): the default on CPU profiles
/// (with channel blocks); `aotc compile --no-winograd` keeps them direct.
///
/// A stride-1 3 x 3 convolution computes each 2 x 2 block of outputs from a
/// 4 x 4 window of its (zero-padded) input. Winograd's minimal filtering
/// (Lavin and Gray, 2016) does it with 16 products per input channel where
/// the direct form needs 36:
///
///   V = Bt d B          the window transformed (additions only)
///   U = G g G^T         the filter transformed, 4 x 4, once per weight
///   M = sum over c of U * V, element by element: 16 GEMMs [co] x [c]
///   Y = At M A          the 2 x 2 outputs (additions only)
///
/// with Bt, G and At the constant matrices of F(2x2, 3x3). rewriteWinograd
/// replaces an eligible Conv by WinogradConv(x, U, w, bias), U computed from
/// the weight by MatMul, Reshape and Transpose nodes (the folding program
/// computes them at load and again when the weight is updated), laid out
/// [16, Co / B, C, B]: per transform element, the weight panels of the
/// channel-blocked 1 x 1 convolution (pack_weights.h). The lowering
/// (lower_winograd.cpp) makes the transforms and the GEMMs three kernels
/// over channel-blocked buffers (channel_blocks.h).
///
/// What it computes:
///  - where every value of the transforms is finite, the same sum as the
///    direct form, rounded differently: the transforms add and subtract
///    the inputs of a 4 x 4 window and the products before the sum over
///    channels, so an output's error is a few units in the last place of
///    the largest product in its tile's window, where the direct form's is
///    of its own 3 x 3 window (1e-7 to 1e-6 relative on ResNet-50 against
///    ONNX Runtime; an output beside a value 1e30 times larger than its
///    own window's is off by about that value times 1e-7);
///  - where one is not (an infinity in the window, which the transforms
///    subtract from itself; a NaN anywhere in the tile; a finite value so
///    large that a transform overflows), the output transform computes that
///    output's direct sum instead, from the padded input and the weight w
///    as ONNX lays it out (a FiniteOrSum, expand_fallbacks.cpp): the direct
///    form's infinities, NaNs and values, at one test per vector of outputs
///    where every value is finite.
/// ONNX Runtime's MLAS does not use Winograd for float32; cuDNN, oneDNN,
/// TVM and XNNPACK offer it as an algorithm a user or a tuner picks.
///
/// Eligible: a one-group float32 Conv over [N, C, H, W] with a 3 x 3
/// weight computable at load, strides and dilations 1, static C, H and W,
/// C and Co multiples of the channel block B (so that the three kernels and
/// their neighbours stay channel-blocked), 64 or more of each (the
/// profile's winograd_min_channels where set: 128 on zen5-avx512), and an
/// output map of 16 or more tiles of 2 x 2 (7 x 7 and up) on profiles of
/// 16 vector registers, 49 or more (13 x 13 and up) on those of 32. N may
/// be symbolic. By default not where the result leaves the channel blocks
/// at once: a graph output, or read only through element-wise ops that end
/// in graph outputs. Then channel_blocks.h keeps the GEMMs' result M in
/// NCHW (its one reader writes NCHW), and each GEMM tile stores its 32
/// channels a map apart: ResNet-50's 64-channel 3 x 3 over 56 x 56 alone
/// (`conv_r50_3x3`) took 9.0 ms at batch 8 against 4.59 direct (0.61
/// against 0.66 at batch 1; M blocked instead: GEMMs 5.05 -> 3.21 ms, the
/// output transform reading blocks to store NCHW rows 1.70 -> 4.50; stop
/// 80). `--winograd` rewrites those too.
#pragma once

#include "compiler/schedule/device_profile.h"
#include "ir/graph.h"

namespace aotc {

/// Rewrites every eligible Conv of \p g for channel blocks of \p block
/// (channelBlock(); 0: none, nothing rewritten) whose output map has enough
/// tiles for \p profile (winograd.cpp, minTiles), and, unless
/// \p atOutputs, whose result does not leave the channel blocks at once
/// (winograd.cpp, leavesBlocksAtOnce); returns how many.
int rewriteWinograd(Graph &g, int64_t block, const DeviceProfile &profile,
                    bool atOutputs = false);

} // namespace aotc
