/// \file
/// Merging neighbouring output dimensions: see collapse_dims.h.
#include "compiler/schedule/collapse_dims.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <memory>

namespace aotc {
namespace {

using Shapes = std::map<std::string, std::vector<Expr>>;

/// Rewrites the accesses of an instantiated term or finish for merging
/// dimensions k, k+1 (variables a, b, extents ea, eb) into one indexed by
/// \p merged. ok turns false when an access reads a or b in any other way;
/// views collects the shape each rewritten buffer is then viewed with.
class MergeAccesses : public IRMutator {
public:
  MergeAccesses(const Var *a, const Var *b, Expr ea, Expr eb, Expr merged,
                const Shapes &shapes)
      : a_(a), b_(b), ea_(std::move(ea)), eb_(std::move(eb)),
        merged_(std::move(merged)), shapes_(shapes) {}

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
    std::vector<Expr> idx;
    for (const Expr &e : in)
      idx.push_back(simplify(e));
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
    auto sh = shapes_.find(buffer);
    if (sh == shapes_.end() || sh->second.size() != idx.size() ||
        !proveEqual(sh->second[at], ea_) || !proveEqual(sh->second[at + 1], eb_)) {
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
  const Shapes &shapes_;
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

/// The pieces of one merge that the term and finish of the merged nest
/// share: which dimension, the extents, the shapes before it.
struct Merge {
  ReductionNest inner;
  int k = 0;
  Expr ea, eb;
  Shapes shapes;
};

/// The inner nest's indices for merged indices \p idx: fresh variables a, b
/// at k, k+1.
std::vector<Expr> expand(const Merge &m, const std::vector<Expr> &idx,
                         Expr &a, Expr &b) {
  a = Var::make("ma");
  b = Var::make("mb");
  std::vector<Expr> in(idx.begin(), idx.begin() + m.k);
  in.push_back(a);
  in.push_back(b);
  in.insert(in.end(), idx.begin() + m.k + 1, idx.end());
  return in;
}

/// Tries to merge dimensions k and k+1 of \p nest; on success returns the
/// merged nest and updates \p shapes with the views.
bool tryMerge(ReductionNest &nest, int k, Shapes &shapes) {
  auto m = std::make_shared<Merge>();
  m->inner = nest;
  m->k = k;
  m->ea = nest.shape[k];
  m->eb = nest.shape[k + 1];
  m->shapes = shapes;

  // Check once on fresh variables.
  std::vector<Expr> idx;
  for (size_t d = 0; d + 1 < nest.shape.size(); ++d)
    idx.push_back(Var::make("c" + std::to_string(d)));
  std::vector<Expr> r;
  for (size_t d = 0; d < nest.reduceExtents.size(); ++d)
    r.push_back(Var::make("cr" + std::to_string(d)));
  Expr a, b;
  std::vector<Expr> in = expand(*m, idx, a, b);
  Expr p = idx[k];
  MergeAccesses rw(a.as<Var>(), b.as<Var>(), m->ea, m->eb, p, m->shapes);
  if (nest.term) {
    Expr t = rw.mutate(nest.term(in, r));
    if (usesVar(t, a.as<Var>()) || usesVar(t, b.as<Var>()))
      return false;
  }
  Stmt f = rw.mutate(nest.finish(in, Var::make("cacc", nest.accType)));
  if (!rw.ok || stmtUses(f, a.as<Var>()) || stmtUses(f, b.as<Var>()))
    return false;
  bool any = false;
  for (const auto &[buffer, at] : rw.pairAt)
    any |= at >= 0;
  if (!any)
    return false;

  ReductionNest out = nest;
  out.shape.erase(out.shape.begin() + k + 1);
  out.shape[k] = simplify(m->ea * m->eb);
  if (nest.term)
    out.term = [m](const std::vector<Expr> &idx, const std::vector<Expr> &r) {
      Expr a, b;
      std::vector<Expr> in = expand(*m, idx, a, b);
      MergeAccesses rw(a.as<Var>(), b.as<Var>(), m->ea, m->eb, idx[m->k],
                       m->shapes);
      return rw.mutate(m->inner.term(in, r));
    };
  out.finish = [m](const std::vector<Expr> &idx, const Expr &acc) {
    Expr a, b;
    std::vector<Expr> in = expand(*m, idx, a, b);
    MergeAccesses rw(a.as<Var>(), b.as<Var>(), m->ea, m->eb, idx[m->k],
                     m->shapes);
    return rw.mutate(m->inner.finish(in, acc));
  };
  for (const auto &[buffer, at] : rw.pairAt) {
    if (at < 0)
      continue;
    std::vector<Expr> &s = shapes[buffer];
    s[at] = simplify(s[at] * s[at + 1]);
    s.erase(s.begin() + at + 1);
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

CollapsedNest collapseDims(const ReductionNest &nest, const Shapes &shapes) {
  CollapsedNest c;
  c.nest = dropUnitReductions(nest);
  Shapes views = shapes;
  bool merged = true;
  while (merged && c.nest.shape.size() >= 2) {
    merged = false;
    for (int k = static_cast<int>(c.nest.shape.size()) - 2; k >= 0; --k)
      if (tryMerge(c.nest, k, views)) {
        merged = true;
        break;
      }
  }
  for (auto &[buffer, shape] : views) {
    const std::vector<Expr> &orig = shapes.at(buffer);
    if (shape.size() != orig.size())
      c.views[buffer] = shape;
  }
  return c;
}

} // namespace aotc
