/// \file
/// The reduction loops of a register tile (register_tile.cpp), shared with
/// the row loop (row_loop.cpp).
#pragma once

#include "compiler/schedule/schedule.h"

#include <functional>
#include <vector>

namespace aotc {

/// The reduction steps of \p nest (the product of its extents), or 0 if
/// one is symbolic.
int64_t staticSteps(const ReductionNest &nest);

/// The loads of a nest's term over output index variables i0.. and
/// reduction variables r0..: each load's indices and the output
/// dimensions it reads.
struct TermReads {
  std::vector<Expr> idx, r;
  Expr term; ///< owns the loads
  std::vector<std::vector<Expr>> indices;
  std::vector<std::vector<bool>> uses;
};
TermReads termReads(const ReductionNest &nest);

/// Per output dimension of \p nest, whether tile \p t's weight (the
/// term's loads that do not read output dimension m) reads it.
std::vector<bool> weightReads(const ReductionNest &nest, const RegisterTile &t);

/// One Prefetch per distinct address of the loads in \p terms whose
/// indices read variable \p by and none of \p avoid, each index mapped by
/// \p at (if given) and simplified. A load whose index reads memory (a
/// gather fused into it) is left out: its address would be a load of its
/// own, past the end of its buffer at the last tile.
std::vector<Stmt> prefetchLoads(const std::vector<Expr> &terms, const Var *by,
                                const std::vector<Expr> &avoid,
                                const std::function<Expr(const Expr &)> &at = {});

/// The tile counts of \p t's work-items per output dimension of \p nest
/// (the extent elsewhere than m and n).
std::vector<Expr> tileCounts(const ReductionNest &nest, const RegisterTile &t);

/// The bytes of the weight of tile \p t, the operand its rows share: the
/// term's loads that do not read output dimension m, every column of N (in
/// whole tiles) over every reduction step times the other output
/// dimensions they read (a convolution's channel blocks); 0 where an
/// extent is symbolic or there is no M or N.
int64_t tileWeightBytes(const ReductionNest &nest, const RegisterTile &t);

/// The initial value of accumulator \p acc (a vector: the init in every
/// lane).
Expr initialValue(const ReductionNest &nest, const Expr &acc);

/// The accumulations of \p targets (one per output element) at reduction
/// index \p r.
using Updates = std::function<std::vector<Stmt>(
    const std::vector<Expr> &targets, const std::vector<Expr> &r)>;

/// The serial reduction loops over \p rvars around \p updates of \p accs.
/// A float sum that may add more than kSumBlock terms accumulates in two
/// levels: each partial sum adds at most kSumBlock terms (the inner loops
/// from the outermost level whose nest is that small, or blocks of the
/// innermost loop when it alone may be longer), and the accumulator adds
/// the partials. Where \p unroll > 1 divides the innermost loop's static
/// extent and the sum is not split, that loop runs \p unroll steps an
/// iteration, \p updates made for each (RegisterTile::unroll).
Stmt reductionLoops(const ReductionNest &nest, const std::vector<Expr> &rvars,
                    const std::vector<Expr> &accs, const Updates &updates,
                    int unroll = 1);

} // namespace aotc
