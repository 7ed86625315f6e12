/// \file
/// The next weight slice of a CPU register tile, prefetched in shares
/// (next_slice.cpp, RegisterTile::prefetchNext). The work-items that read
/// one weight slice (a convolution's output channel block: its rows, its
/// tiles of pixels) run one after another; while they compute, each also
/// prefetches its share of the slice that the work-items after them read
/// (the next channel block), so that a weight larger than the L2 is not
/// read from L3 or memory in a burst at the start of each slice.
#pragma once

#include "compiler/schedule/schedule.h"

#include <cstdint>
#include <vector>

namespace aotc {

/// Which work-items share a slice, and which slice is next.
struct NextSlice {
  /// The output dimension the weight reads whose next index is the next
  /// slice (-1: none).
  int dim = -1;
  /// The work-items' output dimensions inside it in launch order that the
  /// weight does not read (their tile counts above 1, all static), outer
  /// to inner: the work-items of one slice.
  std::vector<int> shares;
  int64_t count = 1; ///< how many work-items share a slice (their product)
};

/// The next slice of tile \p t, whose work-items run in \p order (output
/// dimensions, outermost first) over \p extents (tile counts): the
/// innermost dimension of the order with more than one tile that the
/// weight reads (the term's loads that do not read output dimension m),
/// where the dimensions inside it number at least 2 work-items, all
/// static; dim -1 otherwise.
NextSlice nextSlice(const ReductionNest &nest, const RegisterTile &t,
                    const std::vector<int> &order,
                    const std::vector<Expr> &extents);

/// One reduction step's prefetches of the next slice \p s: the loads of
/// \p terms (the term at each vector group's first column, at reduction
/// index \p r, with output dimension s.dim already at the next slice)
/// that read s.dim and none of \p notWeight (the share dimensions' and
/// M's loop variables), at the steps whose index over the outermost
/// reduction loops with s.count steps or more (never the innermost:
/// nextSliceProblem), modulo s.count, is the work-item's number among the
/// sharers, so that together they fetch the whole slice once. \p loopVars, \p extents:
/// the work-items' loop variables and tile counts; \p steps: the
/// reduction's static extents.
std::vector<Stmt> nextSlicePrefetches(const NextSlice &s,
                                      const std::vector<Expr> &terms,
                                      const std::vector<Expr> &notWeight,
                                      const std::vector<Expr> &loopVars,
                                      const std::vector<Expr> &extents,
                                      const std::vector<int64_t> &steps,
                                      const std::vector<Expr> &r);

} // namespace aotc
