/// \file
/// BatchNormalization folded into the convolution before it.
///
/// Conv(x, W, b) -> BatchNormalization(scale, B, mean, var, epsilon) whose
/// parameters are weights becomes Conv(x, W', b') with
///   s  = scale / sqrt(var + epsilon)          (per output channel)
///   W' = W * s  (broadcast along W's first dim)
///   b' = (b - mean) * s + B   (or B - mean * s without b)
/// written as graph nodes over the weights. They read weights only, so the
/// folding program (fold_program.h) computes them when the model is loaded
/// and again when any of the six initializers is updated: the normalization
/// costs nothing per run and the result follows weight updates.
///
/// Folded only where it is exact in meaning: the Conv's result is read by
/// the BatchNormalization alone, every parameter is a weight no run can
/// replace (not a per-run default), all are float32 with one value per
/// output channel, and the BatchNormalization is in inference mode.
#pragma once

#include "ir/graph.h"

namespace aotc {

/// Folds every eligible Conv -> BatchNormalization pair of \p g; returns
/// how many.
int foldBatchNorms(Graph &g);

} // namespace aotc
