/// \file
/// Convolution channels padded to whole channel blocks.
///
/// Channel-blocked activations (compiler/schedule/channel_blocks.h) need
/// channel counts that the block divides. MobileNetV2's 24- and 144-channel
/// stages do not (block 32), so they stayed NCHW: their 1 x 1 convolutions
/// changed the layout on the way in and out (the 96 -> 24 projection ran at
/// 70 GFLOP/s, storing a transposed tile) and their depthwise convolutions
/// read padded copies of their inputs (two kernels of their own), 0.95 of
/// the model's 2.8 ms at batch 1.
///
/// padChannels gives such a region counts that have a channel block
/// (channelBlockFor: B, else one vector, B / 2): each one-group Conv whose
/// C output channels B does not divide computes P channels, P whole blocks
/// where they add at most C / 8 (144 -> 160 in blocks of 32), else the
/// least count a vector divides (24 -> 32 with AVX-512's 32; with AVX2's
/// 16, 24 is not padded: blocks of 8), where P is at most 4/3 C; the
/// added channels with zero weights and zero
/// bias, and a Where on a constant mask sets them to exactly 0 (computed,
/// they are 0 x input: NaN where the input holds an infinity; a Relu would
/// keep that NaN while it makes the valid channels finite, and the next
/// convolution's zero weights would spread it into every valid channel).
/// The region grows from those results through what keeps the added
/// channels finite and apart from the valid ones: activations finite at 0
/// (Relu, Clip with finite constant bounds, Sigmoid, ...), depthwise
/// convolutions (group, weights and bias padded with zeros: an added
/// channel stays 0 x finite + 0) and sums or differences of two padded
/// values. A one-group Conv reading a padded value reads the added channels
/// with zero weights (its weight padded along its input channels), so its
/// reduction runs over whole blocks; except a 1 x 1 one whose input is a
/// single block (24 of 32), which keeps its weight and reduces over the
/// valid channels alone (ops.def: a Conv reads the first channels of a
/// wider input), a quarter fewer FMAs there. Every other reader, and the graph's
/// outputs, read the first C channels through a Slice (a view). The padded
/// weights are Pad nodes over the weights: the folding program computes
/// them at load and again when a weight is updated.
///
/// A region that no one-group convolution reads is not padded: it would
/// only compute the added channels, since channel_blocks.h keeps it NCHW.
/// Measured on MobileNetV2 (this VM, stop 41): 57 -> 55 kernels, the 24-
/// and 144-channel stages blocked, batch 1 2.95 -> 2.80 ms, batch 8 about
/// 5% less (with the prefetch threshold of register_tile.cpp at 128).
#pragma once

#include "ir/graph.h"

namespace aotc {

/// Pads the channels of \p g's convolution regions to multiples of
/// \p block (see above); returns the number of convolutions padded.
int padChannels(Graph &g, int64_t block);

} // namespace aotc
