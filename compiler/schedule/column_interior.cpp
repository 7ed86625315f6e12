/// \file
/// The interior columns of a reduction: see column_interior.h.
#include "compiler/schedule/column_interior.h"

#include "compiler/schedule/row_interior.h"
#include "ir/simplify.h"
#include "ir/visitor.h"

#include <algorithm>

namespace aotc {

namespace {

/// Floor of a / b for b > 0.
int64_t floorDivInt(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// The value a statement of a finish stores (through its bindings).
Expr storedValue(const Stmt &s) {
  VarBindings lets;
  const Store *st = storeUnderLets(s, lets);
  return st ? substitute(st->value, lets) : Expr();
}

/// A finish's statement with assumeColumnInside applied to every value it
/// stores or binds.
class AssumeInStmt : public IRMutator {
public:
  explicit AssumeInStmt(Expr column) : column_(std::move(column)) {}

protected:
  Stmt mutateStore(const Store *op, const Stmt &) override {
    return Store::make(op->buffer, op->indices,
                       assumeColumnInside(op->value, column_, RangeEnv()));
  }
  Stmt mutateLetStmt(const LetStmt *op, const Stmt &) override {
    return LetStmt::make(op->var,
                         assumeColumnInside(op->value, column_, RangeEnv()),
                         mutate(op->body));
  }

private:
  Expr column_;
};

} // namespace

std::optional<ColumnInterior> columnInterior(const ReductionNest &nest) {
  int rank = static_cast<int>(nest.shape.size());
  int64_t extent;
  if (rank < 1 || !nest.shape[rank - 1].isConst(extent) || extent < 2)
    return std::nullopt;
  int n = rank - 1;
  std::vector<Expr> idx, r;
  for (int k = 0; k < rank; ++k)
    idx.push_back(Var::make("i" + std::to_string(k)));
  std::vector<int64_t> rext;
  for (size_t k = 0; k < nest.reduceExtents.size(); ++k) {
    int64_t e;
    if (!nest.reduceExtents[k].isConst(e) || e < 1)
      return std::nullopt;
    r.push_back(Var::make("r" + std::to_string(k)));
    rext.push_back(e);
  }
  RangeEnv ranges;
  const Var *col = idx[n].as<Var>();
  // A reduction's term, or the value a pointwise kernel stores (a padded
  // copy: `inside ? x[clamped] : 0`).
  Expr value = nest.term ? nest.term(idx, r) : storedValue(nest.finish(idx, Expr()));
  if (!value.defined())
    return std::nullopt;
  std::vector<Expr> bounds = columnBounds(value, idx[n], ranges);
  if (bounds.empty())
    return std::nullopt;
  int64_t lo = 0, hi = extent;
  for (const Expr &d : bounds) {
    // d >= 0, affine: d = c * col + (steps in r) + constant.
    int64_t c;
    if (!simplify(substitute(d, {{idx[n], idx[n] + Expr(1)}}) - d, ranges)
             .isConst(c) ||
        c == 0)
      return std::nullopt;
    Expr e = simplify(substitute(d, {{idx[n], Expr(0)}}), ranges);
    // The worst reduction index: the end of each loop that lowers e.
    for (size_t k = 0; k < r.size(); ++k) {
      int64_t step;
      if (!simplify(substitute(e, {{r[k], r[k] + Expr(1)}}) - e, ranges)
               .isConst(step))
        return std::nullopt;
      e = simplify(substitute(e, {{r[k], Expr(step >= 0 ? 0 : rext[k] - 1)}}),
                   ranges);
    }
    int64_t e0;
    if (!e.isConst(e0) || usesVar(e, col))
      return std::nullopt;
    if (c > 0) // c * col + e0 >= 0: col >= ceil(-e0 / c)
      lo = std::max(lo, -floorDivInt(e0, c));
    else // col <= floor(e0 / -c)
      hi = std::min(hi, floorDivInt(e0, -c) + 1);
  }
  if (hi - lo < 1)
    return std::nullopt;
  ColumnInterior ci;
  ci.n = n;
  ci.lo = lo;
  ci.hi = hi;
  ci.extent = extent;
  ci.interior = nest;
  ci.interior.shape[n] = Expr(hi - lo);
  auto shift = [n, lo](std::vector<Expr> at) {
    at[n] = at[n] + Expr(lo);
    return at;
  };
  ReductionNest original = nest;
  if (original.term)
    ci.interior.term = [original, shift, n](const std::vector<Expr> &at,
                                            const std::vector<Expr> &red) {
      std::vector<Expr> s = shift(at);
      return assumeColumnInside(original.term(s, red), s[n], RangeEnv());
    };
  ci.interior.finish = [original, shift, n](const std::vector<Expr> &at,
                                            const Expr &acc) {
    std::vector<Expr> s = shift(at);
    Stmt f = original.finish(s, acc);
    return original.term ? f : AssumeInStmt(s[n]).mutate(f);
  };
  return ci;
}

Stmt tiledWithBorderColumns(const ReductionNest &nest,
                            const ColumnInterior &ci, const RegisterTile &t) {
  BorderColumns border{&nest, ci.lo, ci.hi, ci.extent};
  return registerTiledNest(ci.interior, t, &border);
}

} // namespace aotc
