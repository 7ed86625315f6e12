/// \file
/// Default traversals of IRVisitor and IRMutator, and substitute().
#include "ir/visitor.h"

#include "ir/status.h"

#include <map>

namespace aotc {

void IRVisitor::visit(const Expr &e) {
  if (!e.defined())
    return;
  switch (e.kind()) {
#define AOTC_X(n)                                                              \
  case ExprKind::n:                                                            \
    return visit##n(e.as<n>());
    AOTC_FOR_EACH_EXPR(AOTC_X)
#undef AOTC_X
  }
}

void IRVisitor::visit(const Stmt &s) {
  if (!s.defined())
    return;
  switch (s.kind()) {
#define AOTC_X(n)                                                              \
  case StmtKind::n:                                                            \
    return visit##n(s.as<n>());
    AOTC_FOR_EACH_STMT(AOTC_X)
#undef AOTC_X
  }
}

void IRVisitor::visitIntImm(const IntImm *) {}
void IRVisitor::visitFloatImm(const FloatImm *) {}
void IRVisitor::visitVar(const Var *) {}
void IRVisitor::visitBinary(const Binary *op) { visit(op->a), visit(op->b); }
void IRVisitor::visitNot(const Not *op) { visit(op->a); }
void IRVisitor::visitSelect(const Select *op) {
  visit(op->cond), visit(op->trueValue), visit(op->falseValue);
}
void IRVisitor::visitCast(const Cast *op) { visit(op->value); }
void IRVisitor::visitCall(const Call *op) {
  for (const Expr &a : op->args)
    visit(a);
}
void IRVisitor::visitLoad(const Load *op) {
  for (const Expr &i : op->indices)
    visit(i);
}
void IRVisitor::visitAccess(const Access *op) {
  for (const Expr &i : op->indices)
    visit(i);
}
void IRVisitor::visitIndexCheck(const IndexCheck *op) {
  visit(op->value), visit(op->extent);
}
void IRVisitor::visitBroadcast(const Broadcast *op) { visit(op->value); }
void IRVisitor::visitVectorLoad(const VectorLoad *op) {
  for (const Expr &i : op->indices)
    visit(i);
}
void IRVisitor::visitLane(const Lane *op) { visit(op->vector); }
void IRVisitor::visitFiniteOrSum(const FiniteOrSum *op) {
  visit(op->value);
  for (const Expr &e : op->extents)
    visit(e);
  visit(op->body);
}
void IRVisitor::visitStore(const Store *op) {
  for (const Expr &i : op->indices)
    visit(i);
  visit(op->value);
}
void IRVisitor::visitFor(const For *op) {
  visit(op->min), visit(op->extent), visit(op->body);
}
void IRVisitor::visitBlock(const Block *op) {
  for (const Stmt &s : op->stmts)
    visit(s);
}
void IRVisitor::visitLetStmt(const LetStmt *op) {
  visit(op->value), visit(op->body);
}
void IRVisitor::visitLocalDecl(const LocalDecl *op) {
  visit(op->init), visit(op->body);
}
void IRVisitor::visitLocalAssign(const LocalAssign *op) { visit(op->value); }
void IRVisitor::visitIfThenElse(const IfThenElse *op) {
  visit(op->cond), visit(op->thenCase), visit(op->elseCase);
}
void IRVisitor::visitBarrier(const Barrier *) {}
void IRVisitor::visitPrefetch(const Prefetch *op) {
  for (const Expr &i : op->indices)
    visit(i);
}

bool IRMutator::mutateAll(const std::vector<Expr> &in,
                          std::vector<Expr> &out) {
  bool changed = false;
  out.clear();
  for (const Expr &a : in) {
    out.push_back(mutate(a));
    changed |= !out.back().sameAs(a);
  }
  return changed;
}

Expr IRMutator::mutate(const Expr &e) {
  if (!e.defined())
    return e;
  switch (e.kind()) {
#define AOTC_X(n)                                                              \
  case ExprKind::n:                                                            \
    return mutate##n(e.as<n>(), e);
    AOTC_FOR_EACH_EXPR(AOTC_X)
#undef AOTC_X
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt &s) {
  if (!s.defined())
    return s;
  switch (s.kind()) {
#define AOTC_X(n)                                                              \
  case StmtKind::n:                                                            \
    return mutate##n(s.as<n>(), s);
    AOTC_FOR_EACH_STMT(AOTC_X)
#undef AOTC_X
  }
  return s;
}

Expr IRMutator::mutateIntImm(const IntImm *, const Expr &self) { return self; }
Expr IRMutator::mutateFloatImm(const FloatImm *, const Expr &self) {
  return self;
}
Expr IRMutator::mutateVar(const Var *, const Expr &self) { return self; }
Expr IRMutator::mutateBinary(const Binary *op, const Expr &self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.sameAs(op->a) && b.sameAs(op->b))
    return self;
  return Binary::make(op->op, a, b);
}
Expr IRMutator::mutateNot(const Not *op, const Expr &self) {
  Expr a = mutate(op->a);
  return a.sameAs(op->a) ? self : Not::make(a);
}
Expr IRMutator::mutateSelect(const Select *op, const Expr &self) {
  Expr c = mutate(op->cond), t = mutate(op->trueValue),
       f = mutate(op->falseValue);
  if (c.sameAs(op->cond) && t.sameAs(op->trueValue) && f.sameAs(op->falseValue))
    return self;
  return Select::make(c, t, f);
}
Expr IRMutator::mutateCast(const Cast *op, const Expr &self) {
  Expr v = mutate(op->value);
  return v.sameAs(op->value) ? self : Cast::make(op->type, v);
}
Expr IRMutator::mutateCall(const Call *op, const Expr &self) {
  std::vector<Expr> args;
  bool changed = mutateAll(op->args, args);
  return changed ? Call::make(op->type, op->name, args) : self;
}
Expr IRMutator::mutateLoad(const Load *op, const Expr &self) {
  std::vector<Expr> idx;
  bool changed = mutateAll(op->indices, idx);
  return changed ? Load::make(op->type, op->buffer, idx) : self;
}
Expr IRMutator::mutateAccess(const Access *op, const Expr &self) {
  std::vector<Expr> idx;
  bool changed = mutateAll(op->indices, idx);
  return changed ? Access::make(op->type, op->tensor, idx) : self;
}
Expr IRMutator::mutateIndexCheck(const IndexCheck *op, const Expr &self) {
  Expr v = mutate(op->value), n = mutate(op->extent);
  if (v.sameAs(op->value) && n.sameAs(op->extent))
    return self;
  return IndexCheck::make(v, n, op->code, op->wrapNegative);
}
Expr IRMutator::mutateBroadcast(const Broadcast *op, const Expr &self) {
  Expr v = mutate(op->value);
  return v.sameAs(op->value) ? self : Broadcast::make(v, op->lanes);
}
Expr IRMutator::mutateVectorLoad(const VectorLoad *op, const Expr &self) {
  std::vector<Expr> idx;
  bool changed = mutateAll(op->indices, idx);
  return changed ? VectorLoad::make(op->type, op->buffer, idx, op->lanes,
                                    op->stride)
                 : self;
}
Expr IRMutator::mutateFiniteOrSum(const FiniteOrSum *op, const Expr &self) {
  Expr v = mutate(op->value), b = mutate(op->body);
  std::vector<Expr> extents;
  bool changed = mutateAll(op->extents, extents);
  if (!changed && v.sameAs(op->value) && b.sameAs(op->body))
    return self;
  return FiniteOrSum::make(v, b, op->vars, extents, op->lane);
}
Expr IRMutator::mutateLane(const Lane *op, const Expr &self) {
  Expr v = mutate(op->vector);
  return v.sameAs(op->vector) ? self : Lane::make(v, op->lane);
}

Stmt IRMutator::mutateStore(const Store *op, const Stmt &self) {
  std::vector<Expr> idx;
  bool changed = mutateAll(op->indices, idx);
  Expr v = mutate(op->value);
  if (!changed && v.sameAs(op->value))
    return self;
  return Store::make(op->buffer, idx, v);
}
Stmt IRMutator::mutateFor(const For *op, const Stmt &self) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  Stmt b = mutate(op->body);
  if (mn.sameAs(op->min) && ext.sameAs(op->extent) && b.sameAs(op->body))
    return self;
  return For::make(op->var, mn, ext, op->forKind, op->dim, b);
}
Stmt IRMutator::mutateBlock(const Block *op, const Stmt &self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt &s : op->stmts) {
    out.push_back(mutate(s));
    changed |= !out.back().sameAs(s);
  }
  return changed ? Block::make(out) : self;
}
Stmt IRMutator::mutateLetStmt(const LetStmt *op, const Stmt &self) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.sameAs(op->value) && b.sameAs(op->body))
    return self;
  return LetStmt::make(op->var, v, b);
}
Stmt IRMutator::mutateLocalDecl(const LocalDecl *op, const Stmt &self) {
  Expr i = mutate(op->init);
  Stmt b = mutate(op->body);
  if (i.sameAs(op->init) && b.sameAs(op->body))
    return self;
  return LocalDecl::make(op->var, i, b);
}
Stmt IRMutator::mutateLocalAssign(const LocalAssign *op, const Stmt &self) {
  Expr v = mutate(op->value);
  return v.sameAs(op->value) ? self : LocalAssign::make(op->var, v);
}
Stmt IRMutator::mutateIfThenElse(const IfThenElse *op, const Stmt &self) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->thenCase), e = mutate(op->elseCase);
  if (c.sameAs(op->cond) && t.sameAs(op->thenCase) && e.sameAs(op->elseCase))
    return self;
  return IfThenElse::make(c, t, e, op->rareElse);
}
Stmt IRMutator::mutateBarrier(const Barrier *, const Stmt &self) {
  return self;
}
Stmt IRMutator::mutatePrefetch(const Prefetch *op, const Stmt &self) {
  std::vector<Expr> idx;
  return mutateAll(op->indices, idx) ? Prefetch::make(op->buffer, std::move(idx))
                                     : self;
}

namespace {
class Substituter : public IRMutator {
public:
  explicit Substituter(const VarBindings &b) {
    for (const auto &[k, v] : b) {
      const Var *var = k.as<Var>();
      AOTC_CHECK(var, "substitute() of something that is not a variable");
      map_[var->id] = v;
    }
  }

protected:
  Expr mutateVar(const Var *op, const Expr &self) override {
    auto it = map_.find(op->id);
    return it == map_.end() ? self : it->second;
  }

private:
  std::map<uint64_t, Expr> map_;
};
} // namespace

Expr substitute(const Expr &e, const VarBindings &bindings) {
  if (bindings.empty())
    return e;
  return Substituter(bindings).mutate(e);
}
Stmt substitute(const Stmt &s, const VarBindings &bindings) {
  if (bindings.empty())
    return s;
  return Substituter(bindings).mutate(s);
}

bool readsMemory(const Expr &e) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitLoad(const Load *) override { found = true; }
    void visitVectorLoad(const VectorLoad *) override { found = true; }
    void visitAccess(const Access *) override { found = true; }
  } f;
  f.visit(e);
  return f.found;
}

std::vector<const Load *> loadsIndexedBy(const Expr &e, const Var *var) {
  struct Finder : IRVisitor {
    const Var *var = nullptr;
    std::vector<const Load *> loads;
    void visitLoad(const Load *op) override {
      for (const Expr &i : op->indices)
        if (usesVar(i, var)) {
          loads.push_back(op);
          break;
        }
      IRVisitor::visitLoad(op);
    }
  } f;
  f.var = var;
  f.visit(e);
  return f.loads;
}

} // namespace aotc
