/// \file
/// The next weight slice of a CPU register tile, prefetched in shares by
/// the work-items of the current one (next_slice.h).
#include "compiler/schedule/next_slice.h"

#include "compiler/schedule/tile_loops.h"
#include "ir/simplify.h"
#include "ir/visitor.h"

namespace aotc {

NextSlice nextSlice(const ReductionNest &nest, const RegisterTile &t,
                    const std::vector<int> &order,
                    const std::vector<Expr> &extents) {
  NextSlice s;
  if (t.m < 0 || t.n < 0 || !nest.term)
    return s;
  const std::vector<bool> reads = weightReads(nest, t);
  std::vector<int> shares;
  int64_t count = 1;
  for (size_t k = order.size(); k-- > 0;) {
    const int d = order[k];
    int64_t e = 0;
    if (extents[d].isConstValue(1))
      continue;
    if (reads[d]) {
      if (count < 2)
        return s;
      s.dim = d;
      s.shares.assign(shares.rbegin(), shares.rend());
      s.count = count;
      return s;
    }
    if (!extents[d].isConst(e))
      return s;
    shares.push_back(d);
    count *= e;
  }
  return s;
}

std::vector<Stmt> nextSlicePrefetches(const NextSlice &s,
                                      const std::vector<Expr> &terms,
                                      const std::vector<Expr> &notWeight,
                                      const std::vector<Expr> &loopVars,
                                      const std::vector<Expr> &extents,
                                      const std::vector<int64_t> &steps,
                                      const std::vector<Expr> &r) {
  if (s.dim < 0 || r.empty() || steps.size() != r.size())
    return {};
  std::vector<Stmt> out =
      prefetchLoads(terms, loopVars[s.dim].as<Var>(), notWeight);
  if (out.empty())
    return out;
  // The work-item's number among the sharers, and the step's turn: the
  // index over the outermost reduction loops whose steps number at least
  // the sharers (nextSliceProblem: never the innermost), so each sharer's
  // turns are whole runs of the inner loops, spread over the reduction.
  Expr who(0);
  for (int d : s.shares) {
    int64_t e = 0;
    extents[d].isConst(e);
    who = who * Expr(e) + loopVars[d];
  }
  Expr turn(0);
  int64_t outer = 1;
  for (size_t k = 0; k < r.size() && outer < s.count; ++k) {
    turn = turn * Expr(steps[k]) + r[k];
    outer *= steps[k];
  }
  Expr mine = cmp(BinOp::EQ, mod(simplify(turn), Expr(s.count)), simplify(who));
  return std::vector<Stmt>{IfThenElse::make(mine, Block::make(out))};
}

} // namespace aotc
