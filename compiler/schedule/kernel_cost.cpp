/// \file
/// Work estimates of each kernel, for profiles: how many arithmetic
/// operations one launch performs and how many bytes of buffers it touches.
///
/// Operations are counted in the Loop IR as the kernel will execute them:
/// every floating-point arithmetic operator or math call, and every integer
/// sum, difference or product of data (exprFlops), in a stored,
/// assigned or bound value, times the extents of the loops around it (an
/// `fma` counts 2, a comparison 0). A branch whose condition reads only
/// enclosing loops of constant range counts each arm for the iterations that
/// take it (a register tile's full tiles and its partial last one); a
/// branch whose else arm is for exceptional values only (rareElse) counts
/// its then arm; any other branch counts its costlier arm, an upper bound.
/// Recomputed inlined producers are counted each time, since the kernel does
/// the work. Bytes are the sizes of the buffers the kernel reads and writes,
/// each once: the compulsory traffic, not cache misses. Both are
/// expressions over the module's symbols, which the wrapper evaluates per
/// run (in double).
#include "compiler/schedule/schedule.h"
#include "ir/simplify.h"
#include "ir/visitor.h"

#include <optional>
#include <set>
#include <utility>

namespace aotc {

namespace {

/// Arithmetic operations in one evaluation of an expression (an operation
/// on a vector counts once per lane): floating-point ones, and the integer
/// arithmetic of data narrower than the index type (an int32 contraction's
/// products and sums, a quantization's differences), not the int64 index
/// arithmetic.
int64_t exprFlops(const Expr &e) {
  struct V : IRVisitor {
    int64_t n = 0;
    void visitBinary(const Binary *op) override {
      const bool arith = !isComparison(op->op) && op->op != BinOp::And &&
                         op->op != BinOp::Or;
      const bool data = isFloat(op->type) ||
                        (op->type != DType::Int64 && op->type != DType::Bool &&
                         (op->op == BinOp::Add || op->op == BinOp::Sub ||
                          op->op == BinOp::Mul));
      if (arith && data)
        n += op->lanes;
      IRVisitor::visitBinary(op);
    }
    void visitCall(const Call *op) override {
      if (isFloat(op->type))
        n += ((op->name == "fma" || op->name == "mad") ? 2 : 1) * op->lanes;
      IRVisitor::visitCall(op);
    }
  } v;
  if (e.defined())
    v.visit(e);
  return v.n;
}

class FlopCounter {
public:
  FlopCounter(const std::set<uint64_t> &symbols, const RangeEnv &env)
      : symbols_(symbols), env_(env) {}

  Expr count(const Stmt &s, const Expr &times) {
    if (!s.defined())
      return Expr(0);
    switch (s.kind()) {
    case StmtKind::Store: {
      const Store *st = s.as<Store>();
      return scaled(exprFlops(st->value), times);
    }
    case StmtKind::For: {
      const For *f = s.as<For>();
      int64_t mn = 0, ext = 0;
      bool constant = f->min.isConst(mn) && f->extent.isConst(ext);
      if (constant)
        loops_.push_back({f->var, mn, ext});
      Expr c = count(f->body, times * extentOf(f->extent));
      if (constant)
        loops_.pop_back();
      return c;
    }
    case StmtKind::Block: {
      Expr sum(0);
      for (const Stmt &c : s.as<Block>()->stmts)
        sum = sum + count(c, times);
      return sum;
    }
    case StmtKind::LetStmt: {
      const LetStmt *l = s.as<LetStmt>();
      return scaled(exprFlops(l->value), times) + count(l->body, times);
    }
    case StmtKind::LocalDecl: {
      const LocalDecl *d = s.as<LocalDecl>();
      return scaled(exprFlops(d->init), times) + count(d->body, times);
    }
    case StmtKind::LocalAssign:
      return scaled(exprFlops(s.as<LocalAssign>()->value), times);
    case StmtKind::IfThenElse: {
      const IfThenElse *i = s.as<IfThenElse>();
      Expr cond = scaled(exprFlops(i->cond), times);
      Expr t = count(i->thenCase, times);
      if (i->rareElse)
        return cond + t;
      Expr e = i->elseCase.defined() ? count(i->elseCase, times) : Expr(0);
      if (std::optional<std::pair<int64_t, int64_t>> f =
              takenFraction(i->cond)) {
        // t and e count every iteration; `total` of the loops' iterations
        // divide them, `taken` of those take the then arm.
        auto [taken, total] = *f;
        return cond + floorDiv(t * Expr(taken), Expr(total)) +
               floorDiv(e * Expr(total - taken), Expr(total));
      }
      // Otherwise one arm runs: the costlier one bounds it.
      return cond + (e.isConstValue(0) ? t : maxExpr(t, e));
    }
    case StmtKind::Barrier:
    case StmtKind::Prefetch:
      return Expr(0);
    }
    return Expr(0);
  }

private:
  struct Loop {
    Expr var;
    int64_t min, extent;
  };

  /// How many iterations of the enclosing loops that \p cond reads take its
  /// then arm, out of how many: where it reads only loops of constant range
  /// with at most kMaxEnumerated iterations together, else nullopt.
  std::optional<std::pair<int64_t, int64_t>>
  takenFraction(const Expr &cond) const {
    constexpr int64_t kMaxEnumerated = 1 << 16;
    std::vector<const Loop *> used;
    int64_t total = 1;
    for (const Expr &v : freeVars(cond)) {
      const Loop *found = nullptr;
      for (const Loop &l : loops_)
        if (l.var.as<Var>()->id == v.as<Var>()->id)
          found = &l;
      if (!found || found->extent <= 0 ||
          total > kMaxEnumerated / found->extent)
        return std::nullopt;
      used.push_back(found);
      total *= found->extent;
    }
    if (used.empty())
      return std::nullopt;
    // Each iteration's condition interpreted (a register tile's tests of
    // its rows and columns: ResNet-50 asks 1.5 million), simplified where
    // the interpreter does not know a node.
    int64_t taken = 0;
    std::vector<std::pair<Expr, int64_t>> values(used.size());
    for (int64_t i = 0; i < total; ++i) {
      int64_t rest = i;
      for (size_t u = 0; u < used.size(); ++u) {
        values[u] = {used[u]->var, used[u]->min + rest % used[u]->extent};
        rest /= used[u]->extent;
      }
      std::optional<int64_t> v = interpret(cond, values);
      if (!v) {
        VarBindings bound;
        for (const auto &[var, value] : values)
          bound.push_back({var, Expr(value)});
        int64_t folded = 0;
        if (!simplify(substitute(cond, bound)).isConst(folded))
          return std::nullopt;
        v = folded;
      }
      taken += *v != 0;
    }
    return std::make_pair(taken, total);
  }

  static Expr scaled(int64_t n, const Expr &times) {
    return n == 0 ? Expr(0) : times * Expr(n);
  }
  /// A loop's trip count as an expression over the symbols only: an extent
  /// that depends on an outer loop (none today) counts as its upper bound
  /// when one is known, else as 1.
  Expr extentOf(const Expr &extent) const {
    for (const Expr &v : freeVars(extent))
      if (!symbols_.count(v.as<Var>()->id)) {
        std::optional<Range> r = boundsOf(extent, env_);
        return Expr(r && r->max > 0 && r->max < (int64_t(1) << 40) ? r->max
                                                                   : 1);
      }
    return extent;
  }

  const std::set<uint64_t> &symbols_;
  const RangeEnv &env_;
  std::vector<Loop> loops_; ///< enclosing loops of constant range
};

} // namespace

void estimateKernelCosts(LoopModule &m, const RangeEnv &env) {
  std::set<uint64_t> symbols;
  for (const Symbol &s : m.symbols)
    symbols.insert(s.var.as<Var>()->id);
  for (Kernel &k : m.kernels) {
    k.flops = simplify(FlopCounter(symbols, env).count(k.body, Expr(1)), env);
    Expr bytes(0);
    for (const KernelBuffer &b : k.buffers)
      bytes = bytes + product(b.shape) * Expr(dtypeSize(b.dtype));
    k.bytes = simplify(bytes, env);
  }
}

} // namespace aotc
