/// \file
/// The expand-fallbacks step: every FiniteOrSum (ir/expr.h) left in a
/// kernel by lowering and tiling becomes statements. A store (or local
/// assignment) whose value holds one binds the fast value once, and
/// branches on its lanes all being finite:
///
///   let v = <value>
///   if (isfinite(v.s0) && ... ) y[..] = f(v)
///   else { sum = the body summed over its variables, lane by lane into a
///          private array for a vector; y[..] = f(sum) }
///
/// so the sum (a Winograd convolution's direct form, lower_winograd.cpp)
/// costs one test per vector where every value is finite and is computed
/// only where one is not. A let of such a value becomes a local assigned
/// in either arm. Each expansion takes fresh variables, and each vector sum
/// its own private array.
///
/// A finite-or-sum the value reads only in a select's arm (a Concat of a
/// Winograd convolution and another input) is valid only where that arm is
/// taken: its reads index the convolution's channels by the concatenated
/// one minus an offset. Bound up front, it is read under the arms' path
/// condition (else zero, which is finite) and its sum is computed only
/// where that holds, so no index is evaluated outside the arm that owns it.
#include "compiler/schedule/schedule.h"

#include "ir/visitor.h"

namespace aotc {

namespace {

/// The distinct FiniteOrSum nodes of \p e, outermost first (none nests).
std::vector<Expr> fallbacksOf(const Expr &e) {
  // A mutator that changes nothing, for the node's own handle.
  struct Finder : IRMutator {
    std::vector<Expr> found;
    Expr mutateFiniteOrSum(const FiniteOrSum *op, const Expr &self) override {
      for (const Expr &f : found)
        if (structurallyEqual(f, self))
          return self;
      found.push_back(self);
      return self;
    }
  } finder;
  finder.mutate(e);
  return finder.found;
}

/// \p e with every subexpression structurally equal to \p from replaced by
/// \p to.
Expr replaceAll(const Expr &e, const Expr &from, const Expr &to) {
  struct Replace : IRMutator {
    Expr from, to;
    Expr mutateFiniteOrSum(const FiniteOrSum *op, const Expr &self) override {
      if (structurallyEqual(self, from))
        return to;
      return IRMutator::mutateFiniteOrSum(op, self);
    }
  } r;
  r.from = from;
  r.to = to;
  return r.mutate(e);
}

/// True where any lane of condition \p c is (a scalar: \p c).
Expr anyLane(const Expr &c) {
  if (c.lanes() == 1)
    return c;
  Expr any;
  for (int l = 0; l < c.lanes(); ++l)
    any = logicalOr(any, Lane::make(c, l));
  return any;
}

/// Conditions \p a and \p b joined by \p op (logicalAnd or logicalOr;
/// either undefined: the other). Of different lanes (a scalar and a vector
/// select's condition: a pixel inside the padding and a mask of channels),
/// each is reduced to any of its lanes first: a Bool does not broadcast,
/// and the guard is read as any of its lanes (expand), where any(s && v)
/// is s && any(v) and any(s || v) is s || any(v).
Expr joined(const Expr &a, const Expr &b,
            Expr (*op)(const Expr &, const Expr &)) {
  if (!a.defined() || !b.defined() || a.lanes() == b.lanes())
    return op(a, b);
  return op(anyLane(a), anyLane(b));
}

/// Where \p value reads \p target: the disjunction of the select
/// conditions on each path from the root to an occurrence of it (an arm's
/// own condition, or its negation for the false arm). Undefined where one
/// occurrence is read unconditionally, or where there is none.
Expr pathCondition(const Expr &value, const Expr &target) {
  struct Paths : IRMutator {
    Expr target, path, guard;
    bool always = false;
    Expr mutateSelect(const Select *op, const Expr &self) override {
      mutate(op->cond);
      // A condition that reads a finite-or-sum cannot be part of a let's
      // guard. One that reads the target (a Relu of it) reads it on the
      // outer path already, which covers both arms; the arms of one that
      // reads another stay unguarded, as before this guard existed (the
      // run-time index checks cover what the prover cannot show).
      if (!fallbacksOf(op->cond).empty()) {
        mutate(op->trueValue);
        mutate(op->falseValue);
        return self;
      }
      Expr outer = path;
      path = joined(outer, op->cond, logicalAnd);
      mutate(op->trueValue);
      path = joined(outer, Not::make(op->cond), logicalAnd);
      mutate(op->falseValue);
      path = outer;
      return self;
    }
    Expr mutateFiniteOrSum(const FiniteOrSum *op, const Expr &self) override {
      if (!structurallyEqual(self, target))
        return IRMutator::mutateFiniteOrSum(op, self);
      if (!path.defined())
        always = true;
      else if (!guard.defined())
        guard = path;
      else if (!structurallyEqual(guard, path))
        guard = joined(guard, path, logicalOr);
      return self;
    }
  } paths;
  paths.target = target;
  paths.mutate(value);
  return paths.always ? Expr() : paths.guard;
}

/// True where every lane of \p v is finite.
Expr allFinite(const Expr &v) {
  if (v.lanes() == 1)
    return Call::make(DType::Bool, "isfinite", {v});
  Expr all;
  for (int k = 0; k < v.lanes(); ++k)
    all = logicalAnd(all, Call::make(DType::Bool, "isfinite",
                                     {Lane::make(v, k)}));
  return all;
}

class Expander : public IRMutator {
public:
  explicit Expander(Kernel &k) : k_(k) {}
  int expanded = 0;

protected:
  Stmt mutateStore(const Store *op, const Stmt &self) override {
    for (const Expr &i : op->indices)
      AOTC_CHECK(fallbacksOf(i).empty(),
                 "kernel '" << k_.name << "': a finite-or-sum in an index");
    const std::string buffer = op->buffer;
    const std::vector<Expr> indices = op->indices;
    return expand(op->value, [&](const Expr &v) {
      return Store::make(buffer, indices, v);
    }, self);
  }
  Stmt mutateLocalAssign(const LocalAssign *op, const Stmt &self) override {
    const Expr var = op->var;
    return expand(op->value,
                  [&](const Expr &v) { return LocalAssign::make(var, v); },
                  self);
  }
  /// A let of a value that holds one: a local assigned in either arm, then
  /// the body reading it.
  Stmt mutateLetStmt(const LetStmt *op, const Stmt &self) override {
    if (fallbacksOf(op->value).empty())
      return IRMutator::mutateLetStmt(op, self);
    const Expr &v = op->value;
    Expr local = Var::make("wlet", v.type(), v.lanes());
    Expr zero = isFloat(v.type()) ? FloatImm::make(0.0, v.type())
                                  : IntImm::make(0, v.type());
    if (v.lanes() > 1)
      zero = Broadcast::make(zero, v.lanes());
    Stmt assign = expand(
        v, [&](const Expr &x) { return LocalAssign::make(local, x); }, Stmt());
    Stmt body = mutate(substitute(op->body, {{op->var, local}}));
    return LocalDecl::make(local, zero, Block::make({assign, body}));
  }

private:
  template <typename Make>
  Stmt expand(const Expr &value, Make make, const Stmt &self) {
    std::vector<Expr> fs = fallbacksOf(value);
    if (fs.empty())
      return self;
    ++expanded;
    Expr fast = value, slow = value, cond;
    std::vector<std::pair<Expr, Expr>> lets; // (var, value)
    // The else arm: each sum, then the store; the scalar sums' accumulators
    // declared around it.
    std::vector<Stmt> slowStmts;
    std::vector<Expr> scalarAccs;
    for (const Expr &e : fs) {
      const FiniteOrSum *f = e.as<FiniteOrSum>();
      Expr v = Var::make("wv", f->type, e.lanes());
      Expr zero = FloatImm::make(0.0, f->type);
      if (e.lanes() > 1)
        zero = Broadcast::make(zero, e.lanes());
      // Read only under the select arms that read it (undefined: always);
      // a condition of several lanes (a vector select's) as any of them, as
      // the value's own lanes are read together.
      Expr guard = pathCondition(value, e);
      if (guard.defined())
        guard = anyLane(guard);
      lets.emplace_back(v, guard.defined()
                               ? Select::make(guard, f->value, zero)
                               : f->value);
      cond = logicalAnd(cond, allFinite(v));
      fast = replaceAll(fast, e, v);
      // The sum: fresh variables for the body's, nested loops, the first
      // outermost, an accumulator per lane.
      Expr acc = Var::make("wsum", f->type);
      auto loops = [f, acc](const Expr &laneValue) {
        VarBindings fresh;
        std::vector<Expr> vars;
        for (const Expr &x : f->vars) {
          vars.push_back(Var::make(x.as<Var>()->name));
          fresh.emplace_back(x, vars.back());
        }
        if (f->lane.defined())
          fresh.emplace_back(f->lane, laneValue);
        Stmt s = LocalAssign::make(
            acc, Binary::make(BinOp::Add, acc, substitute(f->body, fresh)));
        for (size_t i = vars.size(); i-- > 0;)
          s = For::make(vars[i], Expr(0), f->extents[i], ForKind::Serial, 0,
                        s);
        return s;
      };
      if (e.lanes() == 1) {
        slow = replaceAll(slow, e, acc);
        scalarAccs.push_back(acc);
        slowStmts.push_back(guard.defined() ? IfThenElse::make(guard, loops(Expr()))
                                            : loops(Expr()));
      } else {
        const std::string name =
            "wsum" + std::to_string(k_.privates.size());
        k_.privates.push_back(
            KernelBuffer{name, f->type, true, {Expr(int64_t{e.lanes()})}});
        Expr lane = Var::make("wlane");
        slow = replaceAll(
            slow, e, VectorLoad::make(f->type, name, {Expr(0)}, e.lanes()));
        Stmt sums = For::make(
            lane, Expr(0), Expr(int64_t{e.lanes()}), ForKind::Serial, 0,
            LocalDecl::make(acc, FloatImm::make(0.0, f->type),
                            Block::make({loops(lane),
                                         Store::make(name, {lane}, acc)})));
        if (guard.defined()) {
          // Where the arm is not taken the array holds zeros, not garbage.
          Expr z = Var::make("wzero");
          sums = IfThenElse::make(
              guard, sums,
              For::make(z, Expr(0), Expr(int64_t{e.lanes()}), ForKind::Serial,
                        0, Store::make(name, {z}, FloatImm::make(0.0, f->type))));
        }
        slowStmts.push_back(sums);
      }
    }
    slowStmts.push_back(make(slow));
    Stmt slowStmt = Block::make(std::move(slowStmts));
    for (size_t i = scalarAccs.size(); i-- > 0;)
      slowStmt = LocalDecl::make(
          scalarAccs[i], FloatImm::make(0.0, scalarAccs[i].type()), slowStmt);
    Stmt s = IfThenElse::make(cond, make(fast), slowStmt, /*rareElse=*/true);
    for (size_t i = lets.size(); i-- > 0;)
      s = LetStmt::make(lets[i].first, lets[i].second, s);
    return s;
  }

  Kernel &k_;
};

} // namespace

int expandFallbacks(LoopModule &m) {
  int expanded = 0;
  for (Kernel &k : m.kernels) {
    Expander e(k);
    k.body = e.mutate(k.body);
    expanded += e.expanded;
  }
  return expanded;
}

} // namespace aotc
