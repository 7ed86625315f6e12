/// \file
/// Weight packing: constant weights are laid out at compile time the way the
/// register-tiled kernels read them (a folded constant, computed once).
///
///  - Panels. A weight whose output columns (a one-group Conv's output
///    channels when a multiple of the vector lanes L, the n of a MatMul's or
///    Gemm's constant B when more than L: the last panel padded with zero
///    columns, which a Slice view drops again) becomes P[n / L, rest..., L]: a
///    tile of L (or 2L) columns streams one (two) contiguous panels, one
///    vector load per reduction step, instead of reading rows of B with a
///    stride of n floats (8 KB at n = 2048), which thrashed the TLB and the
///    prefetchers (gemm_2048: 161 -> 413 GFLOP/s). The operation reads it
///    back through views, Transpose then Reshape to the weight's shape; the
///    scheduler inlines them and the simplifier, given the loop ranges,
///    turns the index back into P[t, k, lane].
///  - Otherwise a Conv with a constant weight W[co, ci, k...] reads it
///    through a Transpose of W'[ci, k..., co], contiguous along output
///    channels (a 7 x 7 feature map has no 8 contiguous outputs along its
///    width to vectorize), and a Gemm with transB = 1 and a constant B[n, k]
///    gets B'[k, n] and transB = 0.
///
/// A weight computed from weights alone (a Conv's weight with a
/// BatchNormalization folded in, a Cast of a float16 weight: fold_program.h)
/// is packed the same way by Pad/Reshape/Transpose nodes after it, which
/// the folding program runs at load (the packed value is its output).
///
/// Only constants the caller cannot replace per run are packed (an
/// overridable initializer keeps its layout), and a packed constant is
/// marked folded with no ONNX name: its bytes are not the ONNX weight's.
/// Each packing is recorded as a fold recipe (Graph::addFoldRecipe: a
/// permutation of the weight, split into panels first), so the runtime
/// repacks a weight that aotc_container_update_constants replaces.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

namespace aotc {

/// Packs the weights of \p g in place for kernels whose vectors have
/// \p lanes float lanes (the panel width; below 4, a target without
/// explicit vectors such as a GPU, no panels: a convolution's weight still
/// gets its output channels innermost); returns the number packed.
/// With \p convBlock > 0 (the channel block of channel_blocks.h), a
/// one-group Conv whose input and output channels it divides gets
/// P[co / B, k..., ci, B] instead.
int packWeights(Graph &g, int64_t lanes, int64_t convBlock = 0);

} // namespace aotc
