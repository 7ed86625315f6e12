/// \file
/// The interior of a pointwise row: see row_interior.h.
#include "compiler/schedule/row_interior.h"

#include "ir/visitor.h"

#include <vector>

namespace aotc {

namespace {

/// A comparison of index expressions (int64, no loads) as d >= 0 (d
/// simplified); undefined for anything else (a comparison of data, even
/// integer data, is not an index bound).
Expr nonNegativeForm(const Expr &c, const RangeEnv &ranges) {
  const Binary *b = c.as<Binary>();
  if (!b || !isComparison(b->op) || b->a.type() != DType::Int64 ||
      b->b.type() != DType::Int64 || b->a.lanes() != 1 ||
      b->b.lanes() != 1 || readsMemory(b->a) || readsMemory(b->b))
    return Expr();
  switch (b->op) {
  case BinOp::GE:
    return simplify(b->a - b->b, ranges);
  case BinOp::GT:
    return simplify(b->a - b->b - Expr(1), ranges);
  case BinOp::LE:
    return simplify(b->b - b->a, ranges);
  case BinOp::LT:
    return simplify(b->b - b->a - Expr(1), ranges);
  default:
    return Expr();
  }
}

struct SelectConditions : IRVisitor {
  std::vector<Expr> conds;
  void visitSelect(const Select *s) override {
    conds.push_back(s->cond);
    IRVisitor::visitSelect(s);
  }
};

/// For each select of \p value on the indices alone (a padded copy's
/// bounds; not one on the data, a Clip fused into the copy), the d >= 0
/// forms (as d) of its conjuncts.
std::vector<std::vector<Expr>> indexBounds(const Expr &value,
                                           const RangeEnv &ranges) {
  SelectConditions sc;
  sc.visit(value);
  std::vector<std::vector<Expr>> out;
  for (const Expr &cond : sc.conds) {
    std::vector<Expr> cs, ds;
    conjuncts(cond, cs);
    for (const Expr &c : cs)
      if (Expr d = nonNegativeForm(c, ranges); d.defined())
        ds.push_back(d);
    if (ds.size() == cs.size())
      out.push_back(std::move(ds));
  }
  return out;
}

class AssumeInterior : public IRMutator {
public:
  /// \p partial: a select some of whose conjuncts are implied keeps the
  /// others as its condition (else it keeps its condition whole).
  AssumeInterior(std::vector<Expr> facts, const RangeEnv &ranges,
                 bool partial = false)
      : facts_(std::move(facts)), ranges_(ranges), partial_(partial) {}

protected:
  /// Whether e >= 0 follows from one fact d >= 0 (e - d a constant >= 0).
  bool implied(const Expr &e) {
    int64_t v;
    Expr s = simplify(e, ranges_);
    if (s.isConst(v))
      return v >= 0;
    for (const Expr &d : facts_)
      if (simplify(s - d, ranges_).isConst(v) && v >= 0)
        return true;
    return false;
  }
  bool holds(const Expr &cond) {
    std::vector<Expr> cs;
    conjuncts(cond, cs);
    for (const Expr &c : cs) {
      Expr d = nonNegativeForm(c, ranges_);
      if (!d.defined() || !implied(d))
        return false;
    }
    return true;
  }
  Expr mutateSelect(const Select *s, const Expr &self) override {
    if (holds(s->cond))
      return mutate(s->trueValue);
    if (partial_) {
      std::vector<Expr> cs;
      conjuncts(s->cond, cs);
      Expr kept;
      bool dropped = false;
      for (const Expr &c : cs) {
        Expr d = nonNegativeForm(c, ranges_);
        if (d.defined() && implied(d))
          dropped = true;
        else
          kept = logicalAnd(kept, c);
      }
      if (dropped)
        return Select::make(mutate(kept), mutate(s->trueValue),
                            mutate(s->falseValue));
    }
    return IRMutator::mutateSelect(s, self);
  }
  Expr mutateBinary(const Binary *b, const Expr &self) override {
    Expr e = IRMutator::mutateBinary(b, self);
    const Binary *m = e.as<Binary>();
    if (!m || m->type != DType::Int64 || m->a.lanes() != 1 ||
        (m->op != BinOp::Min && m->op != BinOp::Max) || readsMemory(e))
      return e; // only index clamps
    // max(p, q) = p where p >= q; min(p, q) = p where q >= p.
    bool aWins = m->op == BinOp::Max ? implied(m->a - m->b)
                                     : implied(m->b - m->a);
    if (aWins)
      return m->a;
    bool bWins = m->op == BinOp::Max ? implied(m->b - m->a)
                                     : implied(m->a - m->b);
    return bWins ? m->b : e;
  }

private:
  std::vector<Expr> facts_;
  const RangeEnv &ranges_;
  bool partial_;
};

/// The d >= 0 forms of the conjuncts of \p value's selects on the indices
/// alone that read a variable of \p column.
std::vector<Expr> columnConjuncts(const Expr &value, const Expr &column,
                                  const RangeEnv &ranges) {
  std::vector<Expr> vars = freeVars(column);
  std::vector<Expr> out;
  for (const std::vector<Expr> &ds : indexBounds(value, ranges))
    for (const Expr &d : ds) {
      bool reads = false;
      for (const Expr &v : vars)
        reads |= usesVar(d, v.as<Var>());
      if (reads)
        out.push_back(d);
    }
  return out;
}

} // namespace

Expr rowInteriorCondition(const Expr &value, const Expr &lane, int64_t cols,
                          const RangeEnv &ranges) {
  if (cols < 1)
    return Expr();
  const Var *lv = lane.as<Var>();
  VarBindings next{{lane, lane + Expr(1)}};
  VarBindings first{{lane, Expr(0)}}, last{{lane, Expr(cols - 1)}};
  Expr all;
  // Only a select on the indices alone (a padded copy's bounds) decides
  // the interior; one on the data (a Clip fused into the copy) stays.
  for (const std::vector<Expr> &ds : indexBounds(value, ranges)) {
    for (const Expr &d : ds) {
      // Affine in the lane: its step to the next lane does not depend on
      // the lane (so it is monotone, and holds between the ends).
      Expr step = simplify(substitute(d, next) - d, ranges);
      if (usesVar(step, lv))
        return Expr();
      if (!usesVar(d, lv)) {
        all = logicalAnd(all, cmp(BinOp::GE, d, Expr(0)));
        continue;
      }
      all = logicalAnd(all, cmp(BinOp::GE, simplify(substitute(d, first), ranges),
                                Expr(0)));
      all = logicalAnd(all, cmp(BinOp::GE, simplify(substitute(d, last), ranges),
                                Expr(0)));
    }
  }
  return all; // undefined when no select is on the indices alone
}

Expr assumeRowInterior(const Expr &value, const RangeEnv &ranges) {
  SelectConditions sc;
  sc.visit(value);
  std::vector<Expr> facts;
  for (const Expr &cond : sc.conds) {
    std::vector<Expr> cs;
    conjuncts(cond, cs);
    for (const Expr &c : cs)
      if (Expr d = nonNegativeForm(c, ranges); d.defined())
        facts.push_back(d);
  }
  return AssumeInterior(std::move(facts), ranges).mutate(value);
}

std::vector<Expr> columnBounds(const Expr &value, const Expr &column,
                               const RangeEnv &ranges) {
  return columnConjuncts(value, column, ranges);
}

Expr assumeColumnInside(const Expr &value, const Expr &column,
                        const RangeEnv &ranges) {
  std::vector<Expr> facts = columnConjuncts(value, column, ranges);
  if (facts.empty())
    return value;
  return AssumeInterior(std::move(facts), ranges, /*partial=*/true)
      .mutate(value);
}

} // namespace aotc
