/// \file
/// Deep MatMuls split along K across work-groups (GPU profiles).
///
/// A GEMM whose reduction is much longer than its output is wide (BERT's
/// second feed-forward MatMul, 1024 x 768 x 3072 at batch 8) has too few
/// output blocks to fill a GPU, and its K is too long for the work-group
/// tile's in-group split (local memory). Split here, the product A[.., M, K]
/// x W[K, N] becomes S products of K/S steps each, as one batched MatMul,
/// and their sum:
///
///   A' = Transpose(Reshape(A, [.., M, S, K/S]))   [S, .., M, K/S]  (a view)
///   W' = Reshape(W, [S, 1.., K/S, N])              (a weight: folded)
///   Y  = ReduceSum(MatMul(A', W'), axes [0])       [.., M, N]
///
/// The batched MatMul has S times the work-groups of the original; the sum
/// reads S partial products, and the original's epilogue (bias, residual)
/// becomes the sum's. Exact in meaning; only the order of the float
/// additions changes (S partial sums added at the end, as the in-group
/// split does).
///
/// Applied where the reduction dominates: float32 A whose rows (leading
/// dims, a symbol counted as 1) are 64 or more (a GEMV has its own split),
/// a float32 [K, N] weight computable at load, K >= 2048 and K >= 4 N.
/// S is the largest power of 2 up to 8 and K / N that leaves K / S a
/// multiple of 64 and at least 512. A result that is a graph output keeps
/// its name: the sum takes it.
#pragma once

#include "compiler/schedule/device_profile.h"
#include "ir/graph.h"

namespace aotc {

/// Splits every deep MatMul of \p g on a GPU profile \p p (none on a CPU
/// one); returns how many.
int splitDeepMatMuls(Graph &g, const DeviceProfile &p);

/// The split count for a [M, K] x [K, N] product (1: none); \p rows is M
/// with symbols counted as 1.
int64_t deepMatMulSplit(int64_t rows, int64_t k, int64_t n);

} // namespace aotc
