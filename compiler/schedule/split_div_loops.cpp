/// \file
/// Splitting serial loops along their variable's divisors: see
/// split_div_loops.h.
#include "compiler/schedule/split_div_loops.h"

#include "ir/visitor.h"

namespace aotc {
namespace {

/// The largest constant c > 1 dividing \p extent by which \p var (or an
/// expression reading it) is divided or reduced anywhere in the body.
class DivisorFinder : public IRVisitor {
public:
  DivisorFinder(const Var *var, int64_t extent) : var_(var), extent_(extent) {}
  int64_t best = 0;

protected:
  void visitBinary(const Binary *b) override {
    int64_t c;
    if ((b->op == BinOp::FloorDiv || b->op == BinOp::Mod) &&
        b->b.isConst(c) && c > 1 && c < extent_ && extent_ % c == 0 &&
        c > best && usesVar(b->a, var_))
      best = c;
    IRVisitor::visitBinary(b);
  }

private:
  const Var *var_;
  int64_t extent_;
};

class Splitter : public IRMutator {
public:
  explicit Splitter(const RangeEnv &env) : env_(env) {}

protected:
  Stmt mutateFor(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    int64_t extent = 0;
    int64_t c = 0;
    if (op->forKind == ForKind::Serial && op->min.isConstValue(0) &&
        op->extent.isConst(extent)) {
      DivisorFinder find(op->var.as<Var>(), extent);
      find.visit(body);
      c = find.best;
    }
    if (!c) // not split: the loop as it is, over its mutated body
      return body.sameAs(op->body) ? self
                                   : For::make(op->var, op->min, op->extent,
                                               op->forKind, op->dim, body);
    const std::string &hint = op->var.as<Var>()->name;
    Expr outer = Var::make(hint + "o"), inner = Var::make(hint + "i");
    // Simplified at once, so that the divisions by c are gone before the
    // new loops are looked at.
    RangeEnv env = env_;
    env.set(outer, Range{0, extent / c - 1});
    env.set(inner, Range{0, c - 1});
    Stmt split =
        simplify(substitute(body, {{op->var, outer * Expr(c) + inner}}), env);
    // The inner loop may be split again by a smaller divisor (and the outer
    // by what divides E / c).
    Stmt in = mutate(For::make(inner, Expr(0), Expr(c), ForKind::Serial,
                               op->dim, split));
    return mutate(For::make(outer, Expr(0), Expr(extent / c), ForKind::Serial,
                            op->dim, in));
  }

private:
  const RangeEnv &env_;
};

} // namespace

Stmt splitDivModLoops(const Stmt &s, const RangeEnv &env) {
  Stmt split = Splitter(env).mutate(s);
  return split.sameAs(s) ? s : simplify(split, env);
}

} // namespace aotc
