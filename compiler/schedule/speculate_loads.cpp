/// \file
/// The speculate-loads pass: a load that is an arm of a select (a padded
/// copy's `inside ? x[clamped] : 0`) is read before the statement, bound to
/// a local, when the verifier proves its index inside the buffer without
/// the select's condition. OpenCL C evaluates only the chosen arm of `?:`,
/// so a load left in an arm is a branch per element, which keeps the loop
/// scalar; a bound value makes the select a plain (vectorizable) choice.
/// Loads the verifier cannot prove on their own stay where they are.
#include "compiler/schedule/schedule.h"

#include "ir/verify.h"
#include "ir/visitor.h"

#include <map>
#include <set>

namespace aotc {

namespace {

/// Hoists the loads under select arms (at any depth: the Relu inlined into
/// a padded copy is a select inside its arm) of each store or local
/// assignment into LetStmts around it, one per distinct load, except the
/// loads in \p keep (by node).
class Hoister : public IRMutator {
public:
  explicit Hoister(const std::set<const void *> &keep) : keep_(keep) {}
  /// Hoisted load (the new Load node) -> the original nodes it came from.
  std::map<const void *, std::vector<const void *>> hoisted;

protected:
  Stmt mutateStore(const Store *op, const Stmt &self) override {
    Expr v = value(op->value);
    return wrap(Store::make(op->buffer, op->indices, v));
  }
  Stmt mutateLocalAssign(const LocalAssign *op, const Stmt &self) override {
    Expr v = value(op->value);
    return wrap(LocalAssign::make(op->var, v));
  }
  Stmt mutateLetStmt(const LetStmt *op, const Stmt &self) override {
    Expr v = value(op->value);
    std::vector<std::pair<Expr, Expr>> lets;
    lets.swap(pending_);
    byKey_.clear();
    Stmt s = LetStmt::make(op->var, v, mutate(op->body));
    pending_.swap(lets);
    return wrap(s);
  }
  Expr mutateSelect(const Select *op, const Expr &self) override {
    Expr c = mutate(op->cond);
    ++armDepth_;
    Expr a = mutate(op->trueValue), b = mutate(op->falseValue);
    --armDepth_;
    return Select::make(c, a, b);
  }
  Expr mutateLoad(const Load *op, const Expr &self) override {
    if (!hoists(op, self))
      return IRMutator::mutateLoad(op, self);
    return hoist(op, self, Var::make("spec", op->type),
                 Load::make(op->type, op->buffer, op->indices));
  }
  /// A vector load in an arm (a depthwise convolution's row under the
  /// padding's select on its rows, column_interior.h): the same.
  Expr mutateVectorLoad(const VectorLoad *op, const Expr &self) override {
    if (!hoists(op, self))
      return IRMutator::mutateVectorLoad(op, self);
    return hoist(op, self, Var::make("spec", op->type, op->lanes),
                 VectorLoad::make(op->type, op->buffer, op->indices,
                                  op->lanes, op->stride));
  }

private:
  /// Whether load \p op (\p self) is one to read before its statement.
  bool hoists(const void *op, const Expr &self) const {
    return inValue_ && armDepth_ > 0 && !keep_.count(op) &&
           !hasIndexCheck(self);
  }
  /// \p self replaced by the local \p v bound to \p load before the
  /// statement (one binding per distinct load).
  Expr hoist(const void *op, const Expr &self, const Expr &v,
             const Expr &load) {
    std::string key = exprKey(self);
    auto it = byKey_.find(key);
    if (it == byKey_.end()) {
      pending_.push_back({v, load});
      it = byKey_.emplace(key, std::make_pair(v, load.get())).first;
    }
    hoisted[it->second.second].push_back(op);
    return it->second.first;
  }
  /// The value of a statement, whose select-arm loads are hoisted.
  Expr value(const Expr &e) {
    inValue_ = true;
    Expr v = mutate(e);
    inValue_ = false;
    return v;
  }
  Stmt wrap(Stmt s) {
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it)
      s = LetStmt::make(it->first, it->second, s);
    pending_.clear();
    byKey_.clear();
    return s;
  }

  const std::set<const void *> &keep_;
  int armDepth_ = 0;
  bool inValue_ = false;
  std::vector<std::pair<Expr, Expr>> pending_;
  std::map<std::string, std::pair<Expr, const void *>> byKey_;
};

} // namespace

int speculateSelectLoads(LoopModule &m, ProofCache *proofs) {
  int count = 0;
  for (Kernel &k : m.kernels) {
    std::set<const void *> keep;
    Stmt original = k.body;
    // Hoist every candidate; loads the verifier cannot prove once hoisted
    // stay in their arm (a second round hoists only the proven ones).
    for (int round = 0; round < 2; ++round) {
      Hoister h(keep);
      k.body = h.mutate(original);
      if (h.hoisted.empty())
        break;
      std::set<const void *> unproven;
      for (const UnprovenAccess &u : unprovenAccesses(m, k, proofs))
        if (auto it = h.hoisted.find(u.node); it != h.hoisted.end())
          unproven.insert(it->second.begin(), it->second.end());
      if (unproven.empty()) {
        count += static_cast<int>(h.hoisted.size());
        break;
      }
      keep.insert(unproven.begin(), unproven.end());
      if (round == 1)
        k.body = original; // still unproven: leave the kernel as it was
    }
  }
  return count;
}

} // namespace aotc
