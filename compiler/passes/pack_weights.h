/// \file
/// Weight packing: constant weights are laid out at compile time the way the
/// register-tiled kernels read them (a folded constant, computed once).
///
///  - Conv (one group) with a constant weight W[co, ci, k...] reads it through
///    a Transpose of a folded constant W'[ci, k..., co]: the Transpose is a
///    view, inlined into the convolution's load, so the kernel reads W' with
///    the output channel contiguous, and the tiler can vectorize across output
///    channels (a 7 x 7 feature map has no 8 contiguous outputs along its
///    width to vectorize).
///  - Gemm with transB = 1 and a constant B[n, k] gets B'[k, n] and transB = 0,
///    contiguous along the output's columns.
///
/// Only constants the caller cannot replace per run are packed (an
/// overridable initializer keeps its layout), and a packed constant is
/// marked folded with no ONNX name: its bytes are not the ONNX weight's.
/// Each packing is recorded as a fold recipe (Graph::addFoldRecipe), so the
/// runtime repacks a weight that aotc_container_update_constants replaces.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

namespace aotc {

/// Packs the weights of \p g in place; returns the number of weights packed.
int packWeights(Graph &g);

} // namespace aotc
