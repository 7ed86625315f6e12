/// \file
/// Each value computed once: a subexpression that a stored value holds more
/// than once (an inlined producer read twice, as ReLU's
/// select(v < 0, 0, v) reads the normalization v, or a Clip's bounds test
/// and result) is bound by a LetStmt before the store and read through it.
///
/// Only what may be evaluated ahead is bound: floating-point arithmetic and
/// math calls over variables and constants, or over loads when one
/// occurrence is evaluated anyway (not only inside a select's arm, where the
/// load may be out of bounds when the arm is not taken); never an index
/// check or an integer division (whose divisor an untaken arm may make 0).
/// The largest repeated subexpression is bound first, then the next in
/// what remains, so nested repeats become chains of lets.
#include "compiler/schedule/schedule.h"

#include "ir/visitor.h"

#include <functional>
#include <unordered_map>

namespace aotc {

namespace {

/// The binding candidates of one expression.
struct Node {
  Expr e;
  size_t hash = 0;
  int size = 1;
  bool memory = false;   ///< reads a buffer
  bool unsafe = false;   ///< an index check or integer division inside
  bool conditional = false; ///< only inside a select's arm
};

class Collector {
public:
  std::vector<Node> nodes;

  /// Returns the index of \p e's Node.
  size_t visit(const Expr &e, bool conditional) {
    Node n;
    n.e = e;
    n.conditional = conditional;
    n.hash = std::hash<int>()(static_cast<int>(e.kind())) * 31 +
             static_cast<size_t>(e.lanes());
    auto child = [&](const Expr &c, bool cond) {
      if (!c.defined())
        return;
      size_t k = visit(c, cond);
      const Node &cn = nodes[k];
      n.size += cn.size;
      n.memory |= cn.memory;
      n.unsafe |= cn.unsafe;
      n.hash = n.hash * 1000003u ^ cn.hash;
    };
    switch (e.kind()) {
    case ExprKind::IntImm:
      n.hash ^= std::hash<int64_t>()(e.as<IntImm>()->value);
      break;
    case ExprKind::FloatImm:
      n.hash ^= std::hash<double>()(e.as<FloatImm>()->value);
      break;
    case ExprKind::Var:
      n.hash ^= std::hash<uint64_t>()(e.as<Var>()->id);
      break;
    case ExprKind::Binary: {
      const Binary *b = e.as<Binary>();
      n.hash ^= static_cast<size_t>(b->op) * 7919u;
      if (!isFloat(b->a.type()) &&
          (b->op == BinOp::Div || b->op == BinOp::FloorDiv ||
           b->op == BinOp::Mod))
        n.unsafe = true;
      child(b->a, conditional);
      child(b->b, conditional);
      break;
    }
    case ExprKind::Not:
      child(e.as<Not>()->a, conditional);
      break;
    case ExprKind::Select: {
      const Select *s = e.as<Select>();
      child(s->cond, conditional);
      child(s->trueValue, true);
      child(s->falseValue, true);
      break;
    }
    case ExprKind::Cast:
      n.hash ^= static_cast<size_t>(e.type()) * 131u;
      child(e.as<Cast>()->value, conditional);
      break;
    case ExprKind::Call: {
      const Call *c = e.as<Call>();
      n.hash ^= std::hash<std::string>()(c->name);
      for (const Expr &a : c->args)
        child(a, conditional);
      break;
    }
    case ExprKind::Broadcast:
      child(e.as<Broadcast>()->value, conditional);
      break;
    case ExprKind::Lane:
      n.hash ^= static_cast<size_t>(e.as<Lane>()->lane) * 17u;
      child(e.as<Lane>()->vector, conditional);
      break;
    case ExprKind::Load:
    case ExprKind::VectorLoad:
    case ExprKind::Access:
      // Compared whole (structurallyEqual); not a binding candidate alone.
      n.memory = true;
      n.size = 2;
      if (const Load *l = e.as<Load>())
        n.hash ^= std::hash<std::string>()(l->buffer);
      break;
    case ExprKind::IndexCheck:
    case ExprKind::FiniteOrSum: // expanded before this pass
      n.unsafe = true;
      break;
    }
    nodes.push_back(n);
    return nodes.size() - 1;
  }
};

/// Worth a let: float arithmetic beyond a single operation on leaves, or
/// any math call or division.
bool worthBinding(const Node &n) {
  if (n.unsafe || !isFloat(n.e.type()))
    return false;
  switch (n.e.kind()) {
  case ExprKind::Call:
    return true;
  case ExprKind::Binary:
    return n.e.as<Binary>()->op == BinOp::Div || n.size >= 5;
  case ExprKind::Select:
  case ExprKind::Cast:
    return n.size >= 5;
  default:
    return false;
  }
}

/// Replaces every subexpression structurally equal to \p from by \p to.
class Replace : public IRMutator {
public:
  Replace(Expr from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}

protected:
#define AOTC_REPLACE_CHILDREN(n)                                               \
  Expr mutate##n(const n *op, const Expr &self) override {                     \
    if (structurallyEqual(self, from_))                                        \
      return to_;                                                              \
    return IRMutator::mutate##n(op, self);                                     \
  }
  AOTC_REPLACE_CHILDREN(Binary)
  AOTC_REPLACE_CHILDREN(Not)
  AOTC_REPLACE_CHILDREN(Select)
  AOTC_REPLACE_CHILDREN(Cast)
  AOTC_REPLACE_CHILDREN(Call)
  AOTC_REPLACE_CHILDREN(Broadcast)
  AOTC_REPLACE_CHILDREN(Lane)
#undef AOTC_REPLACE_CHILDREN

private:
  Expr from_, to_;
};

/// True if \p e reads one of the Vars of \p lets.
bool readsLet(const Expr &e, const std::vector<std::pair<Expr, Expr>> &lets) {
  struct Finder : IRVisitor {
    const std::vector<std::pair<Expr, Expr>> &lets;
    bool found = false;
    explicit Finder(const std::vector<std::pair<Expr, Expr>> &l) : lets(l) {}
    void visitVar(const Var *op) override {
      for (const auto &[var, value] : lets)
        found |= var.as<Var>()->id == op->id;
    }
  } f(lets);
  f.visit(e);
  return f.found;
}

constexpr size_t kMaxNodes = 600;
constexpr int kMaxLets = 16;

/// \p value with its repeated subexpressions bound; the lets (outermost
/// first) go to \p lets.
Expr bindRepeats(Expr value, std::vector<std::pair<Expr, Expr>> &lets) {
  for (int round = 0; round < kMaxLets; ++round) {
    Collector c;
    c.visit(value, false);
    if (c.nodes.size() > kMaxNodes)
      break;
    std::unordered_map<size_t, std::vector<size_t>> byHash;
    for (size_t i = 0; i < c.nodes.size(); ++i)
      if (worthBinding(c.nodes[i]))
        byHash[c.nodes[i].hash].push_back(i);
    const Node *best = nullptr;
    for (auto &[hash, group] : byHash) {
      for (size_t a = 0; a < group.size(); ++a) {
        const Node &na = c.nodes[group[a]];
        if (best && na.size <= best->size)
          continue;
        int count = 0;
        bool unconditional = false;
        for (size_t b : group)
          if (structurallyEqual(c.nodes[b].e, na.e)) {
            ++count;
            unconditional |= !c.nodes[b].conditional;
          }
        // A repeat that reads an earlier let would need it bound outside
        // its own let; never happens for the largest-first order, checked.
        if (count >= 2 && (!na.memory || unconditional) &&
            !readsLet(na.e, lets))
          best = &na;
      }
    }
    if (!best)
      break;
    Expr var = Var::make("cse", best->e.type(), best->e.lanes());
    Expr bound = best->e;
    value = Replace(bound, var).mutate(value);
    lets.emplace_back(var, bound);
  }
  return value;
}

class BindCommon : public IRMutator {
public:
  int bound = 0;

protected:
  Stmt mutateStore(const Store *op, const Stmt &self) override {
    std::vector<std::pair<Expr, Expr>> lets;
    Expr value = bindRepeats(op->value, lets);
    if (lets.empty())
      return self;
    return wrap(Store::make(op->buffer, op->indices, value), lets);
  }
  Stmt mutateLocalAssign(const LocalAssign *op, const Stmt &self) override {
    std::vector<std::pair<Expr, Expr>> lets;
    Expr value = bindRepeats(op->value, lets);
    if (lets.empty())
      return self;
    return wrap(LocalAssign::make(op->var, value), lets);
  }

private:
  /// The lets around \p s. They were bound largest first, so a later
  /// (smaller) one may occur inside an earlier one's value: later lets go
  /// outside and the earlier values read them.
  Stmt wrap(Stmt s, const std::vector<std::pair<Expr, Expr>> &lets) {
    for (size_t i = 0; i < lets.size(); ++i) {
      Expr value = lets[i].second;
      for (size_t j = i + 1; j < lets.size(); ++j)
        value = Replace(lets[j].second, lets[j].first).mutate(value);
      s = LetStmt::make(lets[i].first, value, s);
    }
    bound += static_cast<int>(lets.size());
    return s;
  }
};

} // namespace

int bindCommonSubexpressions(LoopModule &m) {
  int total = 0;
  for (Kernel &k : m.kernels) {
    BindCommon pass;
    k.body = pass.mutate(k.body);
    total += pass.bound;
  }
  return total;
}

} // namespace aotc
