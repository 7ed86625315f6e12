/// \file
/// ExprVisitor walks an expression or statement tree; IRMutator rebuilds one,
/// returning the original node wherever no child changed (so unchanged
/// subtrees stay shared). Passes override only the node kinds they care about.
#pragma once

#include "ir/expr.h"
#include "ir/stmt.h"

namespace aotc {

class IRVisitor {
public:
  virtual ~IRVisitor() = default;
  void visit(const Expr &e);
  void visit(const Stmt &s);

protected:
#define AOTC_X(n) virtual void visit##n(const n *op);
  AOTC_FOR_EACH_EXPR(AOTC_X)
  AOTC_FOR_EACH_STMT(AOTC_X)
#undef AOTC_X
};

class IRMutator {
public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr &e);
  Stmt mutate(const Stmt &s);

protected:
  /// \p in mutated element by element into \p out; true if any changed.
  bool mutateAll(const std::vector<Expr> &in, std::vector<Expr> &out);
#define AOTC_X(n) virtual Expr mutate##n(const n *op, const Expr &self);
  AOTC_FOR_EACH_EXPR(AOTC_X)
#undef AOTC_X
#define AOTC_X(n) virtual Stmt mutate##n(const n *op, const Stmt &self);
  AOTC_FOR_EACH_STMT(AOTC_X)
#undef AOTC_X
};

/// Variable -> replacement pairs for substitute(). The first of each pair is
/// a Var; it is matched by identity.
using VarBindings = std::vector<std::pair<Expr, Expr>>;

/// Replaces every use of the bound Vars (all at once: a replacement is not
/// substituted again) with their expressions.
Expr substitute(const Expr &e, const VarBindings &bindings);
Stmt substitute(const Stmt &s, const VarBindings &bindings);

/// True if \p e reads memory (a Load, VectorLoad or Access).
bool readsMemory(const Expr &e);

/// The scalar loads of \p e whose index uses \p var, in the order they are
/// read; the pointers are into \p e (valid while it lives).
std::vector<const Load *> loadsIndexedBy(const Expr &e, const Var *var);

} // namespace aotc
