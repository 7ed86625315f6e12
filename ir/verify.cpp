/// \file
/// The Loop IR verifier (verify.h).
#include "ir/verify.h"

#include "ir/scalar_ops.h"

#include "ir/bounds.h"
#include "ir/in_place.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace aotc {

namespace {

/// True if the products of \p a and \p b have the same factors (a view
/// that merges dims: [x1 * x2 * x0] of [x0, x1, x2]). The simplifier orders
/// the two operands of one product but does not reorder nested ones.
bool sameFactors(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  auto keys = [](const std::vector<Expr> &dims) {
    std::vector<Expr> factors;
    for (const Expr &d : dims)
      collectFactors(d, factors);
    std::vector<std::string> k;
    for (const Expr &f : factors)
      k.push_back(printExpr(f));
    std::sort(k.begin(), k.end());
    return k;
  };
  return keys(a) == keys(b);
}

bool isIntegral(DType t) { return !isFloat(t) && t != DType::Bool; }

class KernelVerifier {
public:
  KernelVerifier(const LoopModule &m, const Kernel &k,
                 std::vector<UnprovenAccess> *collect = nullptr,
                 const LoopModule *foldOf = nullptr,
                 ProofCache *proofs = nullptr)
      : m_(m), k_(k), prover_(symbolRanges(m), proofs), foldOf_(foldOf),
        collect_(collect) {
    for (const Assumption &a : m.assumptions)
      prover_.addFact(a.holds, true);
  }

  Status run();

private:
  static RangeEnv symbolRanges(const LoopModule &m) {
    RangeEnv env;
    for (const Symbol &s : m.symbols)
      env.set(s.var, s.range);
    return env;
  }

  Status fail(const std::string &msg) const {
    return Status::error("kernel '" + k_.name + "': " + msg);
  }
  static std::string name(const Expr &v) {
    const Var *x = v.as<Var>();
    return x ? x->name : printExpr(v);
  }

  Status checkBuffers();
  Status checkSymbols();
  Status outerNest(const Stmt &body);
  Status stmt(const Stmt &s);
  Status expr(const Expr &e);
  Status define(const Expr &var, const char *what);
  void undefine(const Expr &var) { scope_.erase(var.as<Var>()->id); }
  /// \p vector: a vector access's lane, collected as UnprovenAccess::vector.
  Status access(const std::string &buffer, const std::vector<Expr> &indices,
                DType type, bool store, const void *node, bool vector = false);
  /// A vector access: the indices of its first and last lanes proven (or,
  /// collecting, recorded as one unproven vector access).
  Status vectorAccess(const std::string &buffer,
                      const std::vector<Expr> &first,
                      const std::vector<Expr> &last, DType type, bool store,
                      const void *node);
  /// The kernel's parameter \p buffer, or null (and \p st the failure) for
  /// a \p verb ("load from", "prefetch of") that names another.
  const KernelBuffer *param(const char *verb, const std::string &buffer,
                            Status &st);
  /// \p indices against \p b: one per dimension, each an integer
  /// expression that verifies (not yet proven inside the buffer).
  Status indexExprs(const char *verb, const std::string &buffer,
                    const KernelBuffer &b, const std::vector<Expr> &indices);
  /// Fails unless every free variable of \p e is a symbol or, with
  /// \p letsOk, an outer let.
  Status onlySymbols(const Expr &e, const std::string &what, bool letsOk) const;

  const LoopModule &m_;
  const Kernel &k_;
  BoundsProver prover_;
  /// Set when m_ is the folding program of *foldOf_: it writes the
  /// latter's computed constants.
  const LoopModule *foldOf_ = nullptr;
  /// Collect unproven accesses instead of failing on them.
  std::vector<UnprovenAccess> *collect_;
  std::map<std::string, const KernelBuffer *> buffers_;
  std::set<uint64_t> symbols_; ///< the kernel's symbols
  std::set<uint64_t> defined_; ///< every variable defined so far
  std::set<uint64_t> outerLets_;
  /// Variables in scope: id -> kind.
  enum class Kind { Loop, Let, Local };
  std::map<uint64_t, Kind> scope_;
  std::set<std::string> stored_;
  int conditional_ = 0; ///< IfThenElse statements around the current one
  int variedLoops_ = 0; ///< loops around it with non-uniform bounds
};

Status KernelVerifier::checkSymbols() {
  std::set<uint64_t> module;
  for (const Symbol &s : m_.symbols)
    module.insert(s.var.as<Var>()->id);
  for (const Expr &s : k_.symbols) {
    const Var *v = s.as<Var>();
    if (!v)
      return fail("a symbol that is not a variable");
    if (!module.count(v->id))
      return fail("symbol '" + v->name + "' is not a symbol of the module");
    if (!symbols_.insert(v->id).second)
      return fail("symbol '" + v->name + "' is listed twice");
  }
  // The launch condition: the wrapper evaluates it from the module's
  // symbols.
  if (k_.launchIf.defined()) {
    if (k_.launchIf.type() != DType::Bool)
      return fail("the launch condition is not a Bool");
    for (const Expr &v : freeVars(k_.launchIf))
      if (!module.count(v.as<Var>()->id))
        return fail("the launch condition reads '" + v.as<Var>()->name +
                    "', which is not a symbol of the module");
  }
  return Status::ok();
}

Status KernelVerifier::checkBuffers() {
  for (const KernelBuffer &b : k_.buffers) {
    if (!buffers_.emplace(b.name, &b).second)
      return fail("buffer '" + b.name + "' is listed twice");
    const ModuleBuffer *mb = m_.findBuffer(b.name);
    if (!mb)
      return fail("buffer '" + b.name + "' is not a buffer of the module");
    if (mb->dtype != b.dtype)
      return fail(std::string("buffer '") + b.name + "' is " +
                  dtypeName(b.dtype) + " in the kernel but " +
                  dtypeName(mb->dtype) + " in the module");
    bool computed = foldOf_ && mb->role == BufferRole::Constant &&
                    mb->index >= 0 &&
                    mb->index < static_cast<int>(foldOf_->constants.size()) &&
                    foldOf_->constants[mb->index].computed;
    if (b.written && !computed &&
        (mb->role == BufferRole::Input || mb->role == BufferRole::Constant))
      return fail("buffer '" + b.name +
                  "' is read-only (an input or a constant) but the kernel "
                  "declares it written");
    for (const Expr &d : b.shape) {
      if (!d.defined() || d.type() != DType::Int64)
        return fail("buffer '" + b.name + "' has a bad dimension");
      AOTC_RETURN_IF_ERROR(
          onlySymbols(d, "the shape of buffer '" + b.name + "'", false));
    }
    // The kernel's view holds no more elements than the buffer.
    bool same = b.shape.size() == mb->shape.size();
    for (size_t i = 0; same && i < b.shape.size(); ++i)
      same = structurallyEqual(b.shape[i], mb->shape[i]);
    if (!same && !sameFactors(b.shape, mb->shape) &&
        !prover_.proveNonNegative(product(mb->shape) - product(b.shape)))
      return fail("buffer '" + b.name + "' is viewed as [" +
                  printExprs(b.shape) + "], which may exceed its [" +
                  printExprs(mb->shape) + "] elements");
  }
  if (k_.workGroupSize < 0 || (!k_.locals.empty() && k_.workGroupSize == 0))
    return fail("local arrays need a fixed work-group size");
  // Local and private arrays: names of their own, writable, static.
  for (bool local : {true, false})
    for (const KernelBuffer &b : local ? k_.locals : k_.privates) {
      const std::string what = local ? "local array '" : "private array '";
      if (!buffers_.emplace(b.name, &b).second || m_.findBuffer(b.name))
        return fail(what + b.name +
                    "' has the name of a buffer or another array");
      if (!b.written)
        return fail(what + b.name + "' is not writable");
      int64_t d;
      for (const Expr &e : b.shape)
        if (!e.defined() || !e.isConst(d) || d <= 0)
          return fail(what + b.name + "' has a non-static shape");
    }
  return Status::ok();
}

Status KernelVerifier::onlySymbols(const Expr &e, const std::string &what,
                                   bool letsOk) const {
  for (const Expr &v : freeVars(e)) {
    uint64_t id = v.as<Var>()->id;
    if (symbols_.count(id) || (letsOk && outerLets_.count(id)))
      continue;
    return fail(
        what + " reads '" + name(v) + "', which is not " +
        (letsOk ? "a kernel symbol or an outer let" : "a kernel symbol"));
  }
  return Status::ok();
}

Status KernelVerifier::define(const Expr &var, const char *what) {
  const Var *v = var.as<Var>();
  if (!v)
    return fail(std::string("a ") + what + " that is not a variable");
  if (symbols_.count(v->id))
    return fail(std::string("the ") + what + " '" + v->name +
                "' redefines a symbol");
  if (!defined_.insert(v->id).second)
    return fail("variable '" + v->name + "' is defined twice");
  return Status::ok();
}

const KernelBuffer *KernelVerifier::param(const char *verb,
                                          const std::string &buffer,
                                          Status &st) {
  auto it = buffers_.find(buffer);
  if (it != buffers_.end())
    return it->second;
  st = fail(std::string(verb) + " buffer '" + buffer +
            "', which is not a parameter of the kernel");
  return nullptr;
}

Status KernelVerifier::indexExprs(const char *verb, const std::string &buffer,
                                  const KernelBuffer &b,
                                  const std::vector<Expr> &indices) {
  if (indices.size() != b.shape.size())
    return fail(std::string(verb) + " buffer '" + buffer + "' with " +
                std::to_string(indices.size()) +
                " indices; its shape has rank " +
                std::to_string(b.shape.size()));
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i].defined() || !isIntegral(indices[i].type()))
      return fail(std::string(verb) + " buffer '" + buffer + "': index " +
                  std::to_string(i) + " is not an integer");
    AOTC_RETURN_IF_ERROR(expr(indices[i]));
  }
  return Status::ok();
}

Status KernelVerifier::access(const std::string &buffer,
                              const std::vector<Expr> &indices, DType type,
                              bool store, const void *node, bool vector) {
  const char *verb = store ? "store into" : "load from";
  Status found;
  const KernelBuffer *param = this->param(verb, buffer, found);
  if (!param)
    return found;
  const KernelBuffer &b = *param;
  if (type != b.dtype)
    return fail(std::string(store ? "store of a " : "load of a ") +
                dtypeName(type) + " " + (store ? "into" : "from") +
                " buffer '" + buffer + "' of type " + dtypeName(b.dtype));
  if (store && !b.written)
    return fail("store into buffer '" + buffer +
                "', which the kernel declares read-only");
  AOTC_RETURN_IF_ERROR(indexExprs(verb, buffer, b, indices));
  UnprovenAccess unproven{node, {}, vector};
  for (size_t i = 0; i < indices.size(); ++i) {
    if (prover_.proveInRange(indices[i], b.shape[i]))
      continue;
    if (collect_) {
      unproven.dims.push_back(i);
      continue;
    }
    return fail(std::string(verb) + " buffer '" + buffer + "': index " +
                std::to_string(i) + " (" + printExpr(indices[i]) +
                ") is not provably inside dimension " + std::to_string(i) +
                " (size " + printExpr(b.shape[i]) +
                ") for every size in the declared ranges, nor guarded");
  }
  if (!unproven.dims.empty())
    collect_->push_back(std::move(unproven));
  return Status::ok();
}

Status KernelVerifier::vectorAccess(const std::string &buffer,
                                    const std::vector<Expr> &first,
                                    const std::vector<Expr> &last, DType type,
                                    bool store, const void *node) {
  // Its first and last lanes; collected as one access (the dims of both).
  size_t before = collect_ ? collect_->size() : 0;
  Status st = access(buffer, first, type, store, node, true);
  if (st.isOk())
    st = access(buffer, last, type, store, node, true);
  if (collect_ && collect_->size() > before + 1) {
    UnprovenAccess &a = (*collect_)[before];
    for (size_t d : collect_->back().dims)
      if (std::find(a.dims.begin(), a.dims.end(), d) == a.dims.end())
        a.dims.push_back(d);
    collect_->pop_back();
  }
  return st;
}

Status KernelVerifier::expr(const Expr &e) {
  if (!e.defined())
    return fail("an undefined expression");
  switch (e.kind()) {
  case ExprKind::IntImm:
  case ExprKind::FloatImm:
    return Status::ok();
  case ExprKind::Var: {
    const Var *v = e.as<Var>();
    if (symbols_.count(v->id) || scope_.count(v->id))
      return Status::ok();
    if (defined_.count(v->id))
      return fail("variable '" + v->name + "' is used outside its scope");
    return fail("variable '" + v->name +
                "' is neither defined before its use nor a kernel symbol");
  }
  case ExprKind::Binary: {
    const Binary *b = e.as<Binary>();
    if (!b->a.defined() || !b->b.defined())
      return fail(std::string("undefined operand of ") + binOpName(b->op));
    if (b->a.type() != b->b.type())
      return fail(std::string("operands of ") + binOpName(b->op) + " are " +
                  dtypeName(b->a.type()) + " and " + dtypeName(b->b.type()));
    // Vectors: float arithmetic and comparisons, integer sums, differences
    // and products (wrapping), and the logic of lane conditions (a vector
    // max's `v > acc | isnan(v)`).
    bool vectorLogic = b->a.type() == DType::Bool &&
                       (b->op == BinOp::And || b->op == BinOp::Or);
    bool vectorInt = isIntegral(b->type) &&
                     (b->op == BinOp::Add || b->op == BinOp::Sub ||
                      b->op == BinOp::Mul);
    if (b->a.lanes() != b->b.lanes() || b->lanes != b->a.lanes() ||
        (b->lanes > 1 && !isFloat(b->a.type()) && !vectorLogic &&
         !vectorInt) ||
        (b->lanes > 1 && !isFloat(b->type) && !isComparison(b->op) &&
         !vectorLogic && !vectorInt))
      return fail(std::string("operands of ") + binOpName(b->op) + " have " +
                  std::to_string(b->a.lanes()) + " and " +
                  std::to_string(b->b.lanes()) + " lanes");
    bool boolResult =
        isComparison(b->op) || b->op == BinOp::And || b->op == BinOp::Or;
    if (b->type != (boolResult ? DType::Bool : b->a.type()))
      return fail(std::string("result of ") + binOpName(b->op) + " has type " +
                  dtypeName(b->type));
    if ((b->op == BinOp::And || b->op == BinOp::Or) &&
        b->a.type() != DType::Bool)
      return fail(std::string("operands of ") + binOpName(b->op) +
                  " are not bool");
    AOTC_RETURN_IF_ERROR(expr(b->a));
    // && and || evaluate their right operand only when the left one is true
    // (false): a guard for what the right operand reads.
    // (Lane by lane, both operands are evaluated: no guard.)
    size_t mark = prover_.mark();
    if ((b->op == BinOp::And || b->op == BinOp::Or) && b->lanes == 1)
      prover_.addFact(b->a, b->op == BinOp::And);
    Status s = expr(b->b);
    prover_.release(mark);
    return s;
  }
  case ExprKind::Not: {
    const Not *n = e.as<Not>();
    if (!n->a.defined() || n->a.type() != DType::Bool)
      return fail("operand of ! is not bool");
    return expr(n->a);
  }
  case ExprKind::Select: {
    const Select *s = e.as<Select>();
    if (s->cond.type() != DType::Bool)
      return fail("select condition is not bool");
    if ((s->cond.lanes() != 1 && s->cond.lanes() != s->trueValue.lanes()) ||
        s->trueValue.lanes() != s->falseValue.lanes())
      return fail("select of different widths");
    if (s->trueValue.type() != s->falseValue.type() ||
        s->type != s->trueValue.type())
      return fail(std::string("select branches are ") +
                  dtypeName(s->trueValue.type()) + " and " +
                  dtypeName(s->falseValue.type()));
    AOTC_RETURN_IF_ERROR(expr(s->cond));
    // A vector condition selects lane by lane after both arms are
    // evaluated: each arm must be valid without it.
    if (s->cond.lanes() > 1) {
      AOTC_RETURN_IF_ERROR(expr(s->trueValue));
      return expr(s->falseValue);
    }
    size_t mark = prover_.mark();
    prover_.addFact(s->cond, true);
    Status st = expr(s->trueValue);
    prover_.release(mark);
    AOTC_RETURN_IF_ERROR(st);
    prover_.addFact(s->cond, false);
    st = expr(s->falseValue);
    prover_.release(mark);
    return st;
  }
  case ExprKind::Cast: {
    const Cast *c = e.as<Cast>();
    if (c->lanes > 1 && !scalar::vectorCast(c->value.type(), c->type))
      return fail(std::string("vector conversion from ") +
                  dtypeName(c->value.type()) + " to " + dtypeName(c->type));
    return expr(c->value);
  }
  case ExprKind::Call:
    for (const Expr &a : e.as<Call>()->args)
      AOTC_RETURN_IF_ERROR(expr(a));
    return Status::ok();
  case ExprKind::Load: {
    const Load *l = e.as<Load>();
    return access(l->buffer, l->indices, l->type, false, l);
  }
  case ExprKind::Access:
    return fail("tensor access %t" + std::to_string(e.as<Access>()->tensor) +
                " was not resolved to a buffer load");
  case ExprKind::IndexCheck: {
    const IndexCheck *c = e.as<IndexCheck>();
    if (!k_.reportsErrors)
      return fail("an index check in a kernel that does not report errors");
    // The folding program's messages are in its model's table
    // (attachFoldProgram).
    const size_t messages = (foldOf_ ? foldOf_ : &m_)->errors.size();
    if (c->code < 0 || c->code >= static_cast<int>(messages))
      return fail("index check with error code " + std::to_string(c->code) +
                  " of " + std::to_string(messages));
    if (!c->value.defined() || c->value.type() != DType::Int64 ||
        !c->extent.defined() || c->extent.type() != DType::Int64)
      return fail("index check of a non-i64 value");
    AOTC_RETURN_IF_ERROR(expr(c->value));
    return expr(c->extent);
  }
  case ExprKind::Broadcast: {
    const Broadcast *b = e.as<Broadcast>();
    if (b->value.lanes() != 1 || b->type == DType::Bool)
      return fail("broadcast of a vector or a bool");
    return expr(b->value);
  }
  case ExprKind::VectorLoad: {
    // Every lane inside the buffer: the first lane's index and the last
    // one's along the last dimension. Collected (for the passes that ask
    // which accesses are unproven) it is marked as a vector:
    // speculate_loads.cpp must then leave it where it was, and
    // guard_accesses.cpp checks its first lane against the size less the
    // lanes after it.
    const VectorLoad *l = e.as<VectorLoad>();
    std::vector<Expr> last = l->indices;
    last.back() = last.back() + Expr(int64_t{l->stride} * (l->lanes - 1));
    return vectorAccess(l->buffer, l->indices, last, l->type, false, l);
  }
  case ExprKind::Lane: {
    const Lane *l = e.as<Lane>();
    if (l->lane < 0 || l->lane >= l->vector.lanes())
      return fail("lane " + std::to_string(l->lane) + " of a " +
                  std::to_string(l->vector.lanes()) + "-lane vector");
    return expr(l->vector);
  }
  case ExprKind::FiniteOrSum:
    return fail("a finite-or-sum left in a kernel (expand_fallbacks.cpp "
                "turns each into statements)");
  }
  return fail("unknown expression");
}

Status KernelVerifier::stmt(const Stmt &s) {
  if (!s.defined())
    return Status::ok();
  switch (s.kind()) {
  case StmtKind::Store: {
    const Store *st = s.as<Store>();
    AOTC_RETURN_IF_ERROR(expr(st->value));
    stored_.insert(st->buffer);
    if (st->value.lanes() == 1)
      return access(st->buffer, st->indices, st->value.type(), true, st);
    // A vector store: every lane proven (or guarded), like VectorLoad.
    if (st->value.type() == DType::Bool || st->indices.empty())
      return fail("vector store of bools into '" + st->buffer + "'");
    std::vector<Expr> last = st->indices;
    last.back() = last.back() + Expr(st->value.lanes() - 1);
    return vectorAccess(st->buffer, st->indices, last, st->value.type(), true,
                        st);
  }
  case StmtKind::For: {
    const For *f = s.as<For>();
    if (f->forKind == ForKind::Parallel)
      return fail("parallel loop '" + name(f->var) +
                  "' is not in the kernel's outermost loop nest");
    if (f->var.type() != DType::Int64 || f->min.type() != DType::Int64 ||
        f->extent.type() != DType::Int64)
      return fail("loop '" + name(f->var) + "' is not over i64");
    AOTC_RETURN_IF_ERROR(expr(f->min));
    AOTC_RETURN_IF_ERROR(expr(f->extent));
    AOTC_RETURN_IF_ERROR(define(f->var, "loop variable"));
    size_t mark = prover_.mark();
    scope_[f->var.as<Var>()->id] = Kind::Loop;
    prover_.addLoop(f->var, f->min, f->extent);
    // Bounds over anything but symbols may differ between work-items.
    bool varied = false;
    for (const Expr &b : {f->min, f->extent})
      for (const Expr &v : freeVars(b))
        varied |= !symbols_.count(v.as<Var>()->id);
    variedLoops_ += varied;
    Status st = stmt(f->body);
    variedLoops_ -= varied;
    prover_.release(mark);
    undefine(f->var);
    return st;
  }
  case StmtKind::Block:
    for (const Stmt &c : s.as<Block>()->stmts)
      AOTC_RETURN_IF_ERROR(stmt(c));
    return Status::ok();
  case StmtKind::LetStmt: {
    const LetStmt *l = s.as<LetStmt>();
    AOTC_RETURN_IF_ERROR(expr(l->value));
    if (l->value.type() != l->var.type() ||
        l->value.lanes() != l->var.lanes())
      return fail("let '" + name(l->var) + "' of type " +
                  dtypeName(l->var.type()) + " bound to a " +
                  dtypeName(l->value.type()));
    AOTC_RETURN_IF_ERROR(define(l->var, "let"));
    size_t mark = prover_.mark();
    scope_[l->var.as<Var>()->id] = Kind::Let;
    prover_.addLet(l->var, l->value);
    Status st = stmt(l->body);
    prover_.release(mark);
    undefine(l->var);
    return st;
  }
  case StmtKind::LocalDecl: {
    const LocalDecl *d = s.as<LocalDecl>();
    AOTC_RETURN_IF_ERROR(expr(d->init));
    if (d->init.type() != d->var.type() || d->init.lanes() != d->var.lanes())
      return fail("local '" + name(d->var) + "' of type " +
                  dtypeName(d->var.type()) + " initialized with a " +
                  dtypeName(d->init.type()));
    AOTC_RETURN_IF_ERROR(define(d->var, "local"));
    scope_[d->var.as<Var>()->id] = Kind::Local;
    Status st = stmt(d->body);
    undefine(d->var);
    return st;
  }
  case StmtKind::LocalAssign: {
    const LocalAssign *a = s.as<LocalAssign>();
    const Var *v = a->var.as<Var>();
    auto it = v ? scope_.find(v->id) : scope_.end();
    if (it == scope_.end() || it->second != Kind::Local)
      return fail("assignment to '" + name(a->var) +
                  "', which is not a local in scope");
    AOTC_RETURN_IF_ERROR(expr(a->value));
    if (a->value.type() != v->type || a->value.lanes() != v->lanes)
      return fail(std::string("assignment of a ") + dtypeName(a->value.type()) +
                  " to local '" + v->name + "' of type " + dtypeName(v->type));
    return Status::ok();
  }
  case StmtKind::IfThenElse: {
    const IfThenElse *i = s.as<IfThenElse>();
    if (!i->cond.defined() || i->cond.type() != DType::Bool)
      return fail("if condition is not bool");
    AOTC_RETURN_IF_ERROR(expr(i->cond));
    size_t mark = prover_.mark();
    ++conditional_;
    prover_.addFact(i->cond, true);
    Status st = stmt(i->thenCase);
    prover_.release(mark);
    if (st.isOk()) {
      prover_.addFact(i->cond, false);
      st = stmt(i->elseCase);
      prover_.release(mark);
    }
    --conditional_;
    return st;
  }
  case StmtKind::Prefetch: {
    // A hint: the buffer and the rank are checked, the index expressions
    // verified, but not proven inside the buffer (Prefetch reads nothing).
    const Prefetch *p = s.as<Prefetch>();
    Status found;
    const KernelBuffer *b = param("prefetch of", p->buffer, found);
    if (!b)
      return found;
    return indexExprs("prefetch of", p->buffer, *b, p->indices);
  }
  case StmtKind::Barrier:
    // Every work-item of the group must reach it as often as the others.
    if (k_.workGroupSize <= 0)
      return fail("a barrier in a kernel without a fixed work-group");
    if (conditional_ > 0)
      return fail("a barrier under a condition");
    if (variedLoops_ > 0)
      return fail("a barrier in a loop whose bounds are not the same for "
                  "every work-item");
    return Status::ok();
  }
  return fail("unknown statement");
}

Status KernelVerifier::outerNest(const Stmt &body) {
  Stmt s = body;
  std::set<int> dims;
  bool sawLoop = false;
  const For *inner = nullptr; // the innermost parallel loop
  for (;;) {
    if (const LetStmt *l = s.as<LetStmt>()) {
      AOTC_RETURN_IF_ERROR(expr(l->value));
      if (l->value.type() != l->var.type())
        return fail("let '" + name(l->var) + "' of another type");
      AOTC_RETURN_IF_ERROR(define(l->var, "let"));
      scope_[l->var.as<Var>()->id] = Kind::Let;
      if (!sawLoop)
        outerLets_.insert(l->var.as<Var>()->id);
      prover_.addLet(l->var, l->value);
      s = l->body;
      continue;
    }
    const For *f = s.as<For>();
    if (!f || f->forKind != ForKind::Parallel)
      break;
    sawLoop = true;
    inner = f;
    if (f->dim < 0 || f->dim > 2)
      return fail("parallel loop '" + name(f->var) + "' has dimension " +
                  std::to_string(f->dim) + " (must be 0, 1 or 2)");
    if (!f->min.isConstValue(0))
      return fail("parallel loop '" + name(f->var) + "' does not start at 0");
    if (f->var.type() != DType::Int64 || f->extent.type() != DType::Int64)
      return fail("parallel loop '" + name(f->var) + "' is not over i64");
    AOTC_RETURN_IF_ERROR(onlySymbols(
        f->extent, "the extent of parallel loop '" + name(f->var) + "'", true));
    dims.insert(f->dim);
    AOTC_RETURN_IF_ERROR(define(f->var, "loop variable"));
    scope_[f->var.as<Var>()->id] = Kind::Loop;
    prover_.addLoop(f->var, f->min, f->extent);
    s = f->body;
  }
  int expect = 0;
  for (int d : dims)
    if (d != expect++)
      return fail("parallel loop dimensions are not 0.." +
                  std::to_string(dims.size() - 1));
  if (k_.workGroupSize > 0) {
    // The innermost parallel loop is the place in the group (dimension 0
    // only, so that the groups are the loops outside it).
    if (!inner || dims.size() != 1 ||
        !inner->extent.isConstValue(k_.workGroupSize))
      return fail("a kernel with a work-group of " +
                  std::to_string(k_.workGroupSize) +
                  " must have its innermost parallel loop of that extent, "
                  "all in dimension 0");
  }
  return stmt(s);
}

Status KernelVerifier::run() {
  if (!k_.body.defined())
    return fail("the kernel has no body");
  AOTC_RETURN_IF_ERROR(checkSymbols());
  AOTC_RETURN_IF_ERROR(checkBuffers());
  AOTC_RETURN_IF_ERROR(outerNest(k_.body));
  for (const KernelBuffer &b : k_.buffers)
    if (b.written && !stored_.count(b.name))
      return fail("buffer '" + b.name +
                  "' is declared written but nothing stores into it");
  return Status::ok();
}

/// First and last kernel that use each arena buffer.
std::map<std::string, std::pair<size_t, size_t>>
arenaLifetimes(const LoopModule &m) {
  std::map<std::string, std::pair<size_t, size_t>> life;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    for (const KernelBuffer &b : m.kernels[k].buffers) {
      const ModuleBuffer *mb = m.findBuffer(b.name);
      if (!mb || mb->role != BufferRole::Arena)
        continue;
      auto it = life.find(b.name);
      if (it == life.end())
        life[b.name] = {k, k};
      else
        it->second.second = k;
    }
  return life;
}

/// Each sync reads an int64 arena buffer its kernel writes, in kernel
/// order, and no kernel reads a symbol before the sync that binds it.
Status verifySyncs(const LoopModule &m) {
  int last = -1;
  for (size_t i = 0; i < m.syncs.size(); ++i) {
    const LoopModule::Sync &s = m.syncs[i];
    if (s.symbol < 0 || s.symbol >= static_cast<int>(m.symbols.size()) ||
        !m.symbols[s.symbol].isData())
      return makeError("sync ", i, " binds symbol ", s.symbol,
                       ", which is not a data symbol");
    if (s.afterKernel <= last ||
        s.afterKernel >= static_cast<int>(m.kernels.size()))
      return makeError("sync ", i, " is after kernel ", s.afterKernel,
                       " (out of order or past the last kernel)");
    last = s.afterKernel;
    const ModuleBuffer *b = m.findBuffer(s.buffer);
    if (!b || b->role != BufferRole::Arena || b->dtype != DType::Int64)
      return makeError("sync ", i, " reads '", s.buffer,
                       "', which is not an int64 arena buffer");
    bool written = false;
    for (const KernelBuffer &kb : m.kernels[s.afterKernel].buffers)
      written |= kb.name == s.buffer;
    if (!written)
      return makeError("sync ", i, " reads '", s.buffer, "', which kernel '",
                       m.kernels[s.afterKernel].name, "' does not use");
    if (m.syncOf(m.symbols[s.symbol].dataBound) >= static_cast<int>(i))
      return makeError("sync ", i, ": the bound of ",
                       m.symbols[s.symbol].name, " is known only after it");
  }
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    int known = 0; // syncs before kernel k
    while (known < static_cast<int>(m.syncs.size()) &&
           m.syncs[known].afterKernel < static_cast<int>(k))
      ++known;
    std::vector<Expr> read = m.kernels[k].symbols;
    for (const Expr &e : LoopModule::globalSize(m.kernels[k]))
      read.push_back(e);
    if (m.kernels[k].launchIf.defined())
      read.push_back(m.kernels[k].launchIf);
    for (const Expr &e : read)
      if (m.syncOf(e) >= known)
        return makeError("kernel '", m.kernels[k].name, "' reads ",
                         printExpr(e), " before the sync that binds it");
  }
  return Status::ok();
}

Status verifyArena(const LoopModule &m) {
  if (!m.arenaBytes.defined())
    return Status::ok(); // not planned yet
  RangeEnv env;
  for (const Symbol &s : m.symbols)
    env.set(s.var, s.range);
  BoundsProver prover(env);
  auto life = arenaLifetimes(m);
  std::vector<const ModuleBuffer *> bufs;
  for (const auto &[name, l] : life) {
    const ModuleBuffer *b = m.findBuffer(name);
    if (!b->arenaOffset.defined())
      return makeError("buffer '", name, "' has no arena offset");
    if (b->capacity.defined()) {
      // Planned at the data symbols' bounds: that must be what
      // boundDataSymbols gives (which checks the size only grows with them).
      Expected<Expr> planned = boundDataSymbols(
          b->bytes(), m.symbols, env, "buffer '" + name + "'");
      if (!planned)
        return planned.status();
      if (!prover.proveNonNegative(b->capacity - *planned))
        return makeError("buffer '", name, "' is planned at ",
                         printExpr(b->capacity), " bytes, less than ",
                         printExpr(*planned), " at its counts' bounds");
    } else if (m.syncOf(b->bytes()) >= 0) {
      return makeError("buffer '", name, "' (", printExpr(b->bytes()),
                       " bytes) depends on a count read mid-run but has no "
                       "planned capacity");
    }
    if (!prover.proveNonNegative(b->arenaOffset) ||
        !prover.proveNonNegative(m.arenaBytes - b->arenaOffset -
                                 b->plannedBytes()))
      return makeError("buffer '", name, "' at arena offset ",
                       printExpr(b->arenaOffset), " (",
                       printExpr(b->plannedBytes()),
                       " bytes) is not provably inside the arena of ",
                       printExpr(m.arenaBytes), " bytes");
    if (m.syncOf(b->arenaOffset) >= 0 || m.syncOf(m.arenaBytes) >= 0)
      return makeError("buffer '", name, "': its arena offset ",
                       printExpr(b->arenaOffset), " or the arena size ",
                       printExpr(m.arenaBytes),
                       " depends on a count read mid-run");
    bufs.push_back(b);
  }
  for (size_t i = 0; i < bufs.size(); ++i)
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      auto li = life[bufs[i]->name], lj = life[bufs[j]->name];
      if (li.second < lj.first || lj.second < li.first)
        continue; // never live together
      const ModuleBuffer *a = bufs[i], *b = bufs[j];
      if (prover.proveNonNegative(b->arenaOffset - a->arenaOffset -
                                  a->plannedBytes()) ||
          prover.proveNonNegative(a->arenaOffset - b->arenaOffset -
                                  b->plannedBytes()))
        continue;
      // One stored over the other by the kernel that reads it last and
      // writes the other first (in_place.h), at the same offset.
      auto inPlace = [&](const ModuleBuffer *read, const ModuleBuffer *written) {
        size_t k = life[read->name].second;
        return k == life[written->name].first &&
               prover.proveNonNegative(read->arenaOffset - written->arenaOffset) &&
               prover.proveNonNegative(written->arenaOffset - read->arenaOffset) &&
               storesInPlace(m.kernels[k], read->name,
                             written->name);
      };
      if (inPlace(a, b) || inPlace(b, a))
        continue;
      return makeError("arena buffers '", a->name, "' and '", b->name,
                       "' are live together but may overlap");
    }
  return Status::ok();
}

} // namespace

Status verifyKernel(const LoopModule &m, const Kernel &k) {
  return KernelVerifier(m, k).run();
}

std::vector<UnprovenAccess>
unprovenAccesses(const LoopModule &m, const Kernel &k, ProofCache *proofs) {
  std::vector<UnprovenAccess> out;
  (void)KernelVerifier(m, k, &out, nullptr, proofs).run();
  return out;
}

namespace {

Status verifyKernels(const LoopModule &m, const LoopModule *foldOf,
                     ProofCache *proofs) {
  std::set<std::string> names;
  for (const ModuleBuffer &b : m.buffers)
    if (!names.insert(b.name).second)
      return makeError("buffer '", b.name, "' is declared twice");
  names.clear();
  for (const Kernel &k : m.kernels) {
    if (!names.insert(k.name).second)
      return makeError("kernel '", k.name, "' is defined twice");
    AOTC_RETURN_IF_ERROR(KernelVerifier(m, k, nullptr, foldOf, proofs).run());
  }
  AOTC_RETURN_IF_ERROR(verifySyncs(m));
  return verifyArena(m);
}

} // namespace

Status verifyKernelFunctions(const LoopModule &m) {
  auto isPart = [&](const Kernel *k) {
    const Kernel *first = m.kernels.data();
    return k >= first && k < first + m.kernels.size() &&
           m.groupOf(static_cast<int>(k - first)) >= 0;
  };
  auto sameParameters = [](const Kernel &f, const Kernel &k) {
    bool same = f.buffers.size() == k.buffers.size() &&
                f.symbols.size() == k.symbols.size() &&
                f.reportsErrors == k.reportsErrors &&
                f.workGroupSize == k.workGroupSize;
    for (size_t i = 0; same && i < f.buffers.size(); ++i)
      same = f.buffers[i].dtype == k.buffers[i].dtype &&
             f.buffers[i].written == k.buffers[i].written;
    return same;
  };
  std::map<std::string, const Kernel *> own;
  for (const auto &[k, owner] : m.allKernels()) {
    if (k->function.empty()) {
      own.emplace(k->name, k);
      continue;
    }
    auto it = own.find(k->function);
    if (it == own.end())
      return makeError("kernel '", k->name, "' runs function '", k->function,
                       "', which no earlier kernel defines");
    const Kernel &f = *it->second;
    // A persistent kernel's part is a kernel of its own only where parts
    // are launched one by one: it shares a part's function, and others
    // never share one (AotcModelDesc::kernel_paths).
    if (isPart(&f) != isPart(k))
      return makeError("kernel '", k->name, "' runs function '", k->function,
                       "': a persistent kernel's part and a kernel that is "
                       "not one never share a function");
    if (!sameParameters(f, *k))
      return makeError("kernel '", k->name, "' runs function '", k->function,
                       "', whose parameters differ from its own");
  }
  // A persistent kernel runs an earlier one's function of as many parts
  // with the same parameters.
  std::map<std::string, int> ownGroup;
  for (size_t g = 0; g < m.persistent.size(); ++g) {
    const LoopModule::Persistent &p = m.persistent[g];
    if (p.function.empty()) {
      ownGroup.emplace(p.name, static_cast<int>(g));
      continue;
    }
    auto it = ownGroup.find(p.function);
    if (it == ownGroup.end())
      return makeError("persistent kernel '", p.name, "' runs function '",
                       p.function,
                       "', which no earlier persistent kernel defines");
    if (m.persistent[it->second].parts() != p.parts() ||
        !sameParameters(m.persistentSignature(it->second),
                        m.persistentSignature(static_cast<int>(g))))
      return makeError("persistent kernel '", p.name, "' runs function '",
                       p.function, "', whose parts or parameters differ");
  }
  return Status::ok();
}

namespace {

/// Persistent groups (LoopModule::persistent): in kernel order, disjoint,
/// of two kernels or more that may run as parts (one ND-range dimension or
/// none, no fixed work-group, no local arrays), no sync
/// point inside, names of their own, counters inside counterBytes without
/// overlap.
Status verifyPersistent(const LoopModule &m) {
  std::set<std::string> names;
  for (const Kernel &k : m.kernels)
    names.insert(k.name);
  int next = 0;
  int64_t counters = 0;
  for (const LoopModule::Persistent &p : m.persistent) {
    if (p.first < next || p.last <= p.first ||
        p.last >= static_cast<int>(m.kernels.size()))
      return makeError("persistent kernel '", p.name, "' runs kernels ",
                       p.first, "..", p.last,
                       ": not two or more kernels after the last group's");
    if (!names.insert(p.name).second)
      return makeError("persistent kernel '", p.name,
                       "' is named like another kernel");
    for (int k = p.first; k <= p.last; ++k) {
      const Kernel &part = m.kernels[k];
      if (part.workGroupSize > 0 || !part.locals.empty() ||
          LoopModule::globalSize(part).size() > 1)
        return makeError("persistent kernel '", p.name, "': kernel '",
                         part.name,
                         "' has a fixed work-group, local arrays or more "
                         "than one ND-range dimension");
      for (const LoopModule::Sync &s : m.syncs)
        if (s.afterKernel == k && k != p.last)
          return makeError("persistent kernel '", p.name,
                           "' holds a sync point after kernel '", part.name,
                           "'");
    }
    if (p.counterOffset != counters)
      return makeError("persistent kernel '", p.name, "': counters at ",
                       p.counterOffset, ", not ", counters);
    counters += LoopModule::Persistent::counterBytes(p.parts());
    next = p.last + 1;
  }
  if (counters != m.counterBytes)
    return makeError("the persistent kernels use ", counters,
                     " bytes of counters, the module declares ",
                     m.counterBytes);
  return Status::ok();
}

} // namespace

Status verifyModule(const LoopModule &m, ProofCache *proofs) {
  AOTC_RETURN_IF_ERROR(verifyPersistent(m));
  AOTC_RETURN_IF_ERROR(verifyKernels(m, nullptr, proofs));
  AOTC_RETURN_IF_ERROR(verifyKernelFunctions(m));
  if (!m.foldProgram)
    return Status::ok();
  const LoopModule &fold = *m.foldProgram;
  if (!fold.persistent.empty())
    return makeError("the folding program has persistent kernels");
  for (const Kernel &k : fold.kernels)
    for (const Kernel &main : m.kernels)
      if (k.name == main.name)
        return makeError("kernel '", k.name,
                         "' is defined twice (model and folding program)");
  for (const ModuleBuffer &b : fold.buffers)
    if (b.role == BufferRole::Input || b.role == BufferRole::Output ||
        (b.role == BufferRole::Constant &&
         (b.index < 0 || b.index >= static_cast<int>(m.constants.size()))))
      return makeError("folding program buffer '", b.name,
                       "' is not a constant of the model or an arena buffer");
  return verifyKernels(fold, &m, proofs).withContext("folding program");
}

} // namespace aotc
