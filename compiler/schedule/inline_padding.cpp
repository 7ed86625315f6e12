/// \file
/// Padded copies read through their selects (inline_padding.h).
#include "compiler/schedule/inline_padding.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <vector>

namespace aotc {

namespace {

/// Whether \p d is a padded copy: a materialized pointwise def whose value
/// is `inside ? x[...] : fill`, the condition on its indices alone (no
/// load), the fill a literal, and the condition not reading its innermost
/// index.
bool paddedCopy(const TensorDef &d, const FormalVars &vars) {
  if (d.kind != TensorDef::Kind::Pointwise || !d.materialize || d.isView ||
      d.rank() < 1)
    return false;
  const Select *s = d.body.as<Select>();
  if (!s || readsMemory(s->cond) || !s->trueValue.as<Access>() ||
      !(s->falseValue.as<IntImm>() || s->falseValue.as<FloatImm>()))
    return false;
  const Var *last = vars.idx(d.rank() - 1).as<Var>();
  return !usesVar(s->cond, last);
}

/// Every read of \p tensor in \p e, by its indices.
std::vector<std::vector<Expr>> readsOf(const Expr &e, int tensor) {
  struct V : IRVisitor {
    int tensor;
    std::vector<std::vector<Expr>> reads;
    void visitAccess(const Access *op) override {
      if (op->tensor == tensor)
        reads.push_back(op->indices);
      IRVisitor::visitAccess(op);
    }
  } v;
  v.tensor = tensor;
  if (e.defined())
    v.visit(e);
  return v.reads;
}

/// The number of reads of each def in \p lg's bodies and epilogues, with
/// the outputs and the counts read back counted as readers.
std::vector<int> readCounts(const LoweredGraph &lg) {
  std::vector<int> count(lg.defs.size(), 0);
  struct V : IRVisitor {
    std::vector<int> *count;
    void visitAccess(const Access *op) override {
      ++(*count)[op->tensor];
      IRVisitor::visitAccess(op);
    }
  } v;
  v.count = &count;
  for (const TensorDef &d : lg.defs)
    forEachExpr(d, [&](const Expr &e) { v.visit(e); });
  for (int o : lg.outputs)
    ++count[o];
  for (const LoweredGraph::Sync &s : lg.syncs)
    ++count[s.def];
  return count;
}

/// Replaces each read of \p tensor by its body at the read's indices.
class InlineReads : public IRMutator {
public:
  InlineReads(int tensor, const TensorDef &def, const FormalVars &vars)
      : tensor_(tensor), def_(def), vars_(vars) {}

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    if (a->tensor != tensor_)
      return e;
    VarBindings at;
    for (int k = 0; k < def_.rank(); ++k)
      at.push_back({vars_.idx(k), a->indices[k]});
    return substitute(def_.body, at);
  }

private:
  int tensor_;
  const TensorDef &def_;
  const FormalVars &vars_;
};

/// Renumbers every read after the defs removed from \p lg.
class Renumber : public IRMutator {
public:
  explicit Renumber(const std::vector<int> &to) : to_(to) {}

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    return Access::make(a->type, to_[a->tensor], a->indices);
  }

private:
  const std::vector<int> &to_;
};

/// Removes the defs of \p lg marked in \p gone (read by nothing) and
/// renumbers the rest.
void removeDefs(LoweredGraph &lg, const std::vector<bool> &gone) {
  std::vector<int> to(lg.defs.size(), -1);
  std::vector<TensorDef> kept;
  for (size_t id = 0; id < lg.defs.size(); ++id)
    if (!gone[id]) {
      to[id] = static_cast<int>(kept.size());
      kept.push_back(std::move(lg.defs[id]));
    }
  Renumber renumber(to);
  for (TensorDef &d : kept)
    forEachExpr(d, [&](Expr &e) { e = renumber.mutate(e); });
  lg.defs = std::move(kept);
  for (int &i : lg.inputs)
    i = to[i];
  for (int &o : lg.outputs)
    o = to[o];
  for (LoweredGraph::Sync &s : lg.syncs)
    s.def = to[s.def];
}

} // namespace

int inlinePaddedReads(LoweredGraph &lg) {
  std::vector<int> reads = readCounts(lg);
  std::vector<bool> gone(lg.defs.size(), false);
  int count = 0;
  for (TensorDef &d : lg.defs) {
    if (d.kind != TensorDef::Kind::Reduction || d.rank() < 1 || d.attention)
      continue;
    const Expr own = lg.vars.idx(d.rank() - 1);
    bool inlined = false;
    for (int p : accessedDefs(d.body)) {
      const TensorDef &pd = lg.defs[p];
      std::vector<std::vector<Expr>> at = readsOf(d.body, p);
      if (!paddedCopy(pd, lg.vars) || !readsOf(d.epilogue, p).empty() ||
          reads[p] != static_cast<int>(at.size()))
        continue;
      bool ownLane = true;
      for (const std::vector<Expr> &i : at)
        ownLane &= static_cast<int>(i.size()) == pd.rank() &&
                   structurallyEqual(i.back(), own);
      if (!ownLane)
        continue;
      d.body = InlineReads(p, pd, lg.vars).mutate(d.body);
      reads[p] = 0;
      gone[p] = true;
      inlined = true;
      ++count;
    }
    if (inlined)
      d.body = simplify(d.body, defRanges(lg, d));
  }
  if (count > 0)
    removeDefs(lg, gone);
  return count;
}

} // namespace aotc
