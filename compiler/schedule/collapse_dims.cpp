/// \file
/// Merging neighbouring output dimensions: see collapse_dims.h.
#include "compiler/schedule/collapse_dims.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <memory>

namespace aotc {
namespace {

using Shapes = std::map<std::string, std::vector<Expr>>;

/// The shape a kernel views \p buffer with: after earlier merges \p views,
/// else the module's; null for a buffer the module does not declare.
const std::vector<Expr> *shapeOf(const std::string &buffer,
                                 const Shapes &views, const LoopModule &m) {
  if (auto it = views.find(buffer); it != views.end())
    return &it->second;
  const ModuleBuffer *b = m.findBuffer(buffer);
  return b ? &b->shape : nullptr;
}

/// Rewrites the accesses of an instantiated term or finish for merging
/// dimensions k, k+1 (variables a, b, extents ea, eb) into one indexed by
/// \p merged. ok turns false when an access reads a or b in any other way;
/// views collects the shape each rewritten buffer is then viewed with.
class MergeAccesses : public IRMutator {
public:
  MergeAccesses(const Var *a, const Var *b, Expr ea, Expr eb, Expr merged,
                const Shapes &views, const LoopModule &m)
      : a_(a), b_(b), ea_(std::move(ea)), eb_(std::move(eb)),
        merged_(std::move(merged)), views_(views), module_(m) {}

  bool ok = true;
  /// Buffer -> position of its merged pair, or -1 where it is read without.
  std::map<std::string, int> pairAt;

protected:
  Expr mutateLoad(const Load *op, const Expr &self) override {
    Expr e = IRMutator::mutateLoad(op, self);
    const Load *l = e.as<Load>();
    std::vector<Expr> idx;
    if (!rewrite(l->buffer, l->indices, idx))
      return e;
    return Load::make(l->type, l->buffer, std::move(idx));
  }
  Stmt mutateStore(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::mutateStore(op, self);
    const Store *st = s.as<Store>();
    std::vector<Expr> idx;
    if (!rewrite(st->buffer, st->indices, idx))
      return s;
    return Store::make(st->buffer, std::move(idx), st->value);
  }
  Expr mutateVectorLoad(const VectorLoad *op, const Expr &self) override {
    ok = false; // only scalar accesses are instantiated before tiling
    return self;
  }

private:
  bool uses(const Expr &e) const { return usesVar(e, a_) || usesVar(e, b_); }
  static bool is(const Expr &e, const Var *v) {
    const Var *x = e.as<Var>();
    return x && x->id == v->id;
  }

  /// The merged indices of an access to \p buffer at \p in, if it reads
  /// the pair; false (leaving the access as it is) if it reads neither.
  bool rewrite(const std::string &buffer, const std::vector<Expr> &in,
               std::vector<Expr> &out) {
    // Only an access that reads the pair is simplified (to see `a` in
    // `a * 1 + 0`); the others stay as they are.
    bool reads = false;
    for (const Expr &e : in)
      reads |= uses(e);
    std::vector<Expr> idx;
    for (const Expr &e : in)
      idx.push_back(reads ? simplify(e) : e);
    int at = -1;
    for (size_t j = 0; j + 1 < idx.size(); ++j)
      if (is(idx[j], a_) && is(idx[j + 1], b_))
        at = static_cast<int>(j);
    for (size_t j = 0; j < idx.size(); ++j)
      if ((at < 0 || (j != size_t(at) && j != size_t(at) + 1)) &&
          uses(idx[j]))
        ok = false;
    auto [it, fresh] = pairAt.emplace(buffer, at);
    if (!fresh && it->second != at)
      ok = false; // read both merged and not, or at two places
    if (at < 0)
      return false;
    const std::vector<Expr> *shape = shapeOf(buffer, views_, module_);
    if (!shape || shape->size() != idx.size() ||
        !proveEqual((*shape)[at], ea_) || !proveEqual((*shape)[at + 1], eb_)) {
      ok = false;
      return false;
    }
    out.assign(idx.begin(), idx.begin() + at);
    out.push_back(merged_);
    out.insert(out.end(), idx.begin() + at + 2, idx.end());
    return true;
  }

  const Var *a_, *b_;
  Expr ea_, eb_, merged_;
  const Shapes &views_;
  const LoopModule &module_;
};

/// True if \p s reads variable \p v anywhere.
bool stmtUses(const Stmt &s, const Var *v) {
  struct Finder : IRVisitor {
    const Var *v;
    bool found = false;
    void visitVar(const Var *op) override { found |= op->id == v->id; }
  } f;
  f.v = v;
  f.visit(s);
  return f.found;
}

/// One merge of dimensions k and k+1, shared by the merged nest's term and
/// finish: the nest before it, the extents, the views before it.
struct Merge {
  ReductionNest inner;
  int k = 0;
  Expr ea, eb;
  Shapes views;
  const LoopModule *module = nullptr;

  /// The inner nest's indices for merged indices \p idx (fresh variables
  /// a, b at k, k+1) and the rewriter that merges them back into \p merged.
  std::pair<std::vector<Expr>, MergeAccesses>
  expand(const std::vector<Expr> &idx, const Expr &merged) const {
    Expr a = Var::make("ma"), b = Var::make("mb");
    std::vector<Expr> in(idx.begin(), idx.begin() + k);
    in.push_back(a);
    in.push_back(b);
    in.insert(in.end(), idx.begin() + k + 1, idx.end());
    return {std::move(in), MergeAccesses(a.as<Var>(), b.as<Var>(), ea, eb,
                                         merged, views, *module)};
  }

  /// The inner nest's finish at merged indices \p idx, rewritten by
  /// \p rw (expand's): where the finish may divide (finishDivides), the
  /// pair is first replaced by merged / eb and merged % eb.
  Stmt finish(const std::vector<Expr> &idx, const std::vector<Expr> &in,
              MergeAccesses &rw, const Expr &acc) const {
    Stmt f = inner.finish(in, acc);
    if (inner.finishDivides)
      f = substitute(f, {{in[k], floorDiv(idx[k], eb)},
                         {in[k + 1], mod(idx[k], eb)}});
    return rw.mutate(f);
  }
};

/// Tries to merge dimensions k and k+1 of \p nest; on success replaces it
/// by the merged nest and records the new views in \p views.
bool tryMerge(ReductionNest &nest, int k, Shapes &views, const LoopModule &m) {
  auto merge = std::make_shared<Merge>();
  merge->inner = nest;
  merge->k = k;
  merge->ea = nest.shape[k];
  merge->eb = nest.shape[k + 1];
  merge->views = views;
  merge->module = &m;

  // Check once on fresh variables.
  std::vector<Expr> idx;
  for (size_t d = 0; d + 1 < nest.shape.size(); ++d)
    idx.push_back(Var::make("c" + std::to_string(d)));
  std::vector<Expr> r;
  for (size_t d = 0; d < nest.reduceExtents.size(); ++d)
    r.push_back(Var::make("cr" + std::to_string(d)));
  auto [in, rw] = merge->expand(idx, idx[k]);
  const Var *a = in[k].as<Var>(), *b = in[k + 1].as<Var>();
  if (nest.term) {
    Expr t = rw.mutate(nest.term(in, r));
    if (usesVar(t, a) || usesVar(t, b))
      return false;
  }
  Stmt f = merge->finish(idx, in, rw, Var::make("cacc", nest.accType));
  if (!rw.ok || stmtUses(f, a) || stmtUses(f, b))
    return false;
  bool any = false;
  for (const auto &[buffer, at] : rw.pairAt)
    any |= at >= 0;
  if (!any)
    return false;

  ReductionNest out = nest;
  out.shape.erase(out.shape.begin() + k + 1);
  out.shape[k] = simplify(merge->ea * merge->eb);
  if (nest.term)
    out.term = [merge](const std::vector<Expr> &idx,
                       const std::vector<Expr> &r) {
      auto [in, rw] = merge->expand(idx, idx[merge->k]);
      return rw.mutate(merge->inner.term(in, r));
    };
  out.finish = [merge](const std::vector<Expr> &idx, const Expr &acc) {
    auto [in, rw] = merge->expand(idx, idx[merge->k]);
    return merge->finish(idx, in, rw, acc);
  };
  for (const auto &[buffer, at] : rw.pairAt) {
    if (at < 0)
      continue;
    std::vector<Expr> s = *shapeOf(buffer, views, m);
    s[at] = simplify(s[at] * s[at + 1]);
    s.erase(s.begin() + at + 1);
    views[buffer] = std::move(s);
  }
  nest = std::move(out);
  return true;
}

/// \p nest without its reduction loops of extent 1 (their variables 0),
/// unless all are.
ReductionNest dropUnitReductions(const ReductionNest &nest) {
  std::vector<bool> unit;
  ReductionNest out = nest;
  out.reduceExtents.clear();
  for (const Expr &e : nest.reduceExtents) {
    int64_t c = 0;
    unit.push_back(e.isConst(c) && c == 1);
    if (!unit.back())
      out.reduceExtents.push_back(e);
  }
  // (A sum of one term keeps its loop: it is still a contraction to tile.)
  if (out.reduceExtents.size() == nest.reduceExtents.size() ||
      out.reduceExtents.empty() || !nest.term)
    return nest;
  out.term = [inner = nest.term, unit](const std::vector<Expr> &idx,
                                       const std::vector<Expr> &r) {
    std::vector<Expr> full;
    size_t next = 0;
    for (bool u : unit)
      full.push_back(u ? Expr(0) : r[next++]);
    return inner(idx, full);
  };
  return out;
}

} // namespace

CollapsedNest collapseDims(const ReductionNest &nest, const LoopModule &m) {
  CollapsedNest c;
  c.nest = dropUnitReductions(nest);
  bool merged = true;
  while (merged && c.nest.shape.size() >= 2) {
    merged = false;
    for (int k = static_cast<int>(c.nest.shape.size()) - 2; k >= 0; --k)
      if (tryMerge(c.nest, k, c.views, m)) {
        merged = true;
        break;
      }
  }
  return c;
}

} // namespace aotc
