/// \file
/// Padded copies written by their producers (padded_stores.h).
#include "compiler/schedule/padded_stores.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

namespace aotc {

namespace {

/// The constant c of an index `i - c` into the padded def, seen through
/// the clamps (min/max by what does not read \p i) around it.
bool shiftOf(Expr j, const Expr &i, int64_t &c) {
  const Var *v = i.as<Var>();
  for (;;) {
    const Binary *b = j.as<Binary>();
    if (!b || (b->op != BinOp::Min && b->op != BinOp::Max))
      break;
    bool inA = usesVar(b->a, v), inB = usesVar(b->b, v);
    if (inA == inB)
      return false;
    j = inA ? b->a : b->b;
  }
  int64_t d = 0;
  if (!simplify(j - i).isConst(d))
    return false;
  c = -d;
  return true;
}

/// Rewrites each read of \p source into a read of \p copy's interior.
class ReadInterior : public IRMutator {
public:
  ReadInterior(int source, int copy, const std::vector<int64_t> &before)
      : source_(source), copy_(copy), before_(before) {}
  bool changed = false;

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    if (a->tensor != source_)
      return e;
    changed = true;
    return Access::make(a->type, copy_, shiftedIndices(a->indices, before_));
  }

private:
  int source_, copy_;
  const std::vector<int64_t> &before_;
};

} // namespace

std::vector<Expr> shiftedIndices(const std::vector<Expr> &at,
                                 const std::vector<int64_t> &by) {
  std::vector<Expr> out;
  for (size_t k = 0; k < at.size(); ++k)
    out.push_back(by[k] == 0 ? at[k] : simplify(at[k] + Expr(by[k])));
  return out;
}

VarBindings interiorBindings(const std::vector<Expr> &idx,
                             const PaddedCopy &pc) {
  std::vector<Expr> to = shiftedIndices(idx, pc.before);
  VarBindings b;
  for (size_t k = 0; k < idx.size(); ++k)
    b.push_back({idx[k], to[k]});
  return b;
}

std::optional<PaddedCopy> matchPaddedCopy(const LoweredGraph &lg, int def) {
  const TensorDef &d = lg.defs[def];
  if (d.kind != TensorDef::Kind::Pointwise || !d.materialize || d.isView ||
      d.rank() < 1)
    return std::nullopt;
  const Select *s = d.body.as<Select>();
  if (!s || readsMemory(s->cond) ||
      !(s->falseValue.as<IntImm>() || s->falseValue.as<FloatImm>()))
    return std::nullopt;
  const Access *a = s->trueValue.as<Access>();
  if (!a || a->tensor == def)
    return std::nullopt;
  const TensorDef &x = lg.defs[a->tensor];
  const int rank = d.rank();
  if (x.rank() != rank || static_cast<int>(a->indices.size()) != rank ||
      x.dtype != d.dtype)
    return std::nullopt;
  PaddedCopy pc;
  pc.source = a->tensor;
  pc.fill = s->falseValue;
  const std::vector<Expr> i = lg.vars.idxVars(rank);
  bool pads = false;
  for (int k = 0; k < rank; ++k) {
    int64_t c = 0, after = 0;
    if (!shiftOf(a->indices[k], i[k], c) || c < 0 ||
        !simplify(d.shape[k] - x.shape[k] - Expr(c), lg.env).isConst(after) ||
        after < 0)
      return std::nullopt;
    pc.before.push_back(c);
    pc.after.push_back(after);
    pads |= c > 0 || after > 0;
  }
  if (!pads)
    return std::nullopt;
  // The interior: the copy at i + before is x[i], for every i of x.
  Expr inner =
      simplify(substitute(d.body, interiorBindings(i, pc)), defRanges(lg, x));
  if (!structurallyEqual(inner, Access::make(x.dtype, pc.source, i)))
    return std::nullopt;
  // The border: the condition is false at each of its indices, whatever
  // the other indices.
  const RangeEnv env = defRanges(lg, d);
  for (int k = 0; k < rank; ++k) {
    std::vector<Expr> border;
    for (int64_t t = 0; t < pc.before[k]; ++t)
      border.push_back(Expr(t));
    for (int64_t t = 0; t < pc.after[k]; ++t)
      border.push_back(simplify(Expr(pc.before[k] + t) + x.shape[k]));
    for (const Expr &b : border)
      if (!simplify(substitute(s->cond, {{i[k], b}}), env).isConstValue(0))
        return std::nullopt;
  }
  return pc;
}

int readThroughPaddedCopies(LoweredGraph &lg) {
  const size_t n = lg.defs.size();
  std::vector<int> copies(n, 0), copyOf(n, -1);
  std::vector<std::optional<PaddedCopy>> match(n);
  for (size_t d = 0; d < n; ++d)
    if ((match[d] = matchPaddedCopy(lg, static_cast<int>(d)))) {
      ++copies[match[d]->source];
      copyOf[match[d]->source] = static_cast<int>(d);
    }
  std::vector<bool> root(n, false);
  for (int o : lg.outputs)
    root[o] = true;
  for (const LoweredGraph::Sync &s : lg.syncs)
    root[s.def] = true;
  int count = 0;
  for (size_t x = 0; x < n; ++x) {
    const TensorDef &xd = lg.defs[x];
    if (copies[x] != 1 || root[x] || xd.kind == TensorDef::Kind::Input ||
        xd.kind == TensorDef::Kind::Constant)
      continue;
    const int copy = copyOf[x];
    ReadInterior rw(static_cast<int>(x), copy, match[copy]->before);
    // Defs are in topological order: only a reader after the copy can
    // read it.
    for (size_t r = copy + 1; r < n; ++r)
      forEachExpr(lg.defs[r], [&](Expr &e) { e = rw.mutate(e); });
    count += rw.changed;
  }
  return count;
}

int64_t paddedBorderCount(const PaddedCopy &pc) {
  int64_t all = 1;
  for (size_t k = 0; k < pc.before.size(); ++k)
    all *= pc.before[k] + pc.after[k] + 1;
  return all - 1;
}

Stmt paddedBorderStores(
    const PaddedCopy &pc, const std::vector<Expr> &shape,
    const std::vector<Expr> &at,
    const std::function<Stmt(const std::vector<Expr> &)> &store) {
  const size_t rank = pc.before.size();
  std::vector<Stmt> stores;
  // Each offset o from the element (o_k in [-before_k, after_k]), but 0:
  // the element owns it where it is at the edges o points past.
  std::vector<int64_t> o(rank);
  for (size_t k = 0; k < rank; ++k)
    o[k] = -pc.before[k];
  for (;;) {
    bool zero = true;
    Expr cond;
    std::vector<int64_t> by(rank);
    for (size_t k = 0; k < rank; ++k) {
      zero &= o[k] == 0;
      if (o[k] < 0)
        cond = logicalAnd(cond, cmp(BinOp::EQ, at[k], Expr(0)));
      else if (o[k] > 0)
        cond = logicalAnd(cond, cmp(BinOp::EQ, at[k],
                                    simplify(shape[k] - Expr(1))));
      by[k] = pc.before[k] + o[k];
    }
    if (!zero)
      stores.push_back(IfThenElse::make(cond, store(shiftedIndices(at, by))));
    size_t k = 0;
    for (; k < rank; ++k) {
      if (o[k] < pc.after[k]) {
        ++o[k];
        break;
      }
      o[k] = -pc.before[k];
    }
    if (k == rank)
      break;
  }
  if (stores.empty())
    return Stmt();
  // One test for the common case, an element off every edge.
  Expr edge;
  for (size_t k = 0; k < rank; ++k) {
    if (pc.before[k] > 0)
      edge = logicalOr(edge, cmp(BinOp::EQ, at[k], Expr(0)));
    if (pc.after[k] > 0)
      edge = logicalOr(edge,
                       cmp(BinOp::EQ, at[k], simplify(shape[k] - Expr(1))));
  }
  return IfThenElse::make(edge, Block::make(std::move(stores)));
}

} // namespace aotc
