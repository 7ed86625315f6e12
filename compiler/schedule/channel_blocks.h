/// \file
/// Channel-blocked activations (NCHW[B]c) for CPU-style convolutions.
///
/// A convolution over NCHW reads, at each reduction step, a few pixels of
/// one channel plane: a new cache line and a new page per step, used for a
/// few bytes. With the channels in blocks of B (two vectors: channelBlock)
/// stored innermost, [N, C/B, H, W, B], a step reads B consecutive channels
/// of a pixel (one line serves 16 steps) and a tile of output channels is
/// two contiguous vectors per pixel. ONNX Runtime (MLAS's NCHWc kernels), oneDNN
/// and TVM run CNNs on x86 this way.
///
/// blockChannels rewrites the lowered graph: the region of rank-4 defs
/// around the convolutions whose channels B divides (their inputs' padded
/// copies, their epilogues, residual additions, pools) gets the blocked
/// shape, each body re-indexed (channel i1 -> i1 * B + i4), and every read
/// of a blocked def, wherever it is, reads element (n, c / B, h, w, c % B).
/// A reduction over the input channels of a blocked def is split into
/// blocks and lanes (c -> cb * B + ci, ci innermost), so no step divides.
/// Graph inputs and outputs keep their layout: the region's first and last
/// kernels change it on the way (a reader outside the region reads through
/// the division). The rewrite only renames where elements live, so it
/// cannot change a value.
#pragma once

#include "compiler/lowering/lowering.h"
#include "compiler/schedule/device_profile.h"

namespace aotc {

/// The channel block for \p target: two vectors of its lanes on a
/// CPU-style target with explicit vectors (32 with AVX-512's 16 lanes: a
/// tile of 7 pixels x 32 channels fills 14 accumulators and reads 2 weight
/// vectors and 7 pixels per step, where one vector of 16 left half the
/// registers idle); 0 (none) elsewhere.
int64_t channelBlock(const DeviceProfile &target);

/// Blocks the channels of the convolution region of \p lg by \p block
/// (channelBlock). Returns the number of defs blocked.
int blockChannels(LoweredGraph &lg, int64_t block);

} // namespace aotc
