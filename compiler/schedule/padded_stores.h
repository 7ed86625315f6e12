/// \file
/// Padded copies written by their producers (padded_stores.cpp).
///
/// A dense convolution reads its padded input from a padded copy
/// (lower_contraction.cpp): a kernel of its own that reads the value and
/// writes it again with a border of zeros, so that the convolution's
/// loads need no bounds test. ResNet-18 has 16 of them (batch 1: 0.48 ms
/// of 9.7 ms of kernels, plus a launch each). The value padded is most
/// often the output of a reduction (the previous convolution, its
/// residual addition and activation fused into it): that kernel can store
/// each element where the copy would put it, and the few elements of the
/// border besides, and the copy disappears.
///
/// Two steps:
///  - readThroughPaddedCopies (a lowered-graph pass) makes the copy the
///    only reader of the value it pads: any other reader of that value (a
///    residual addition, a strided 1x1 downsampling convolution) reads the
///    copy's interior instead, the same elements;
///  - fusion (planFusion) then fuses the reduction that computes the value
///    into the copy (FusionPlan::paddedStore): the kernel walks the
///    reduction's elements and stores each one shifted by the padding;
///    the element at the edge of the reduction's range also stores the
///    border elements nearest to it (paddedStores), so every element of
///    the copy is written once, by one work-item, in the same kernel.
#pragma once

#include "compiler/lowering/lowering.h"
#include "ir/visitor.h"

#include <optional>

namespace aotc {

/// A def that is exactly another def padded with a constant.
struct PaddedCopy {
  int source = -1;             ///< the def padded
  std::vector<int64_t> before; ///< per dimension: the padding before
  std::vector<int64_t> after;  ///< per dimension: the padding after
  Expr fill;                   ///< the value of the padding (a literal)
};

/// \p at with \p by[k] added to each index (simplified; an index whose
/// offset is 0 unchanged): where an element of the value padded sits in
/// its copy (by = before), or a border element beside it.
std::vector<Expr> shiftedIndices(const std::vector<Expr> &at,
                                 const std::vector<int64_t> &by);

/// The bindings of index variables \p idx to their interior positions in
/// \p pc's copy (idx[k] -> idx[k] + before[k]): a body of the copy so
/// bound is its value at the element idx of the value padded.
VarBindings interiorBindings(const std::vector<Expr> &idx,
                             const PaddedCopy &pc);

/// \p def as a padded copy: a materialized pointwise def whose value is
/// `inside ? x[j] : fill`, the condition on its indices alone, each index
/// j_k of x its own index i_k less a constant before_k (clamped into x or
/// not), proved to hold x[i] at i + before for every i of x, and fill
/// everywhere else (the condition proved false at every index of the
/// border, which is static). None otherwise.
std::optional<PaddedCopy> matchPaddedCopy(const LoweredGraph &lg, int def);

/// Makes each def that has exactly one padded copy (and is neither an
/// input, a constant, an output nor a count read back) read by that copy
/// alone: every other read x[j] becomes copy[j + before]. Returns the
/// number of defs so redirected.
int readThroughPaddedCopies(LoweredGraph &lg);

/// The border stores of a padded store: for the element at \p at of the
/// padded value (\p shape, the unpadded extents), the elements of the
/// border whose nearest interior element it is, each stored with
/// \p store(index, fill) under the condition that \p at is at that edge,
/// all under one test that it is at some edge. Undefined when \p pc pads
/// nothing.
Stmt paddedBorderStores(
    const PaddedCopy &pc, const std::vector<Expr> &shape,
    const std::vector<Expr> &at,
    const std::function<Stmt(const std::vector<Expr> &)> &store);

/// The number of border stores per element paddedBorderStores makes for
/// \p pc: fusion leaves a copy whose padding is wider than this allows.
int64_t paddedBorderCount(const PaddedCopy &pc);

} // namespace aotc
