/// \file
/// Row-major linearize/delinearize.
#include "ir/indexing.h"

#include <algorithm>
#include <set>

namespace aotc {

Expr clampSliceIndex(const Expr &value, const Expr &dim, int64_t lo,
                     int64_t hiOffset, const RangeEnv &env) {
  constexpr int64_t kHuge = int64_t(1) << 48;
  Expr v = simplify(value, env);
  int64_t k;
  if (v.isConst(k))
    v = Expr(std::min(std::max(k, -kHuge), kHuge));
  auto b = boundsOf(v, env);
  Expr adjusted;
  if (b && b->min >= 0)
    adjusted = v;
  else if (b && b->max < 0)
    adjusted = dim + v;
  else
    adjusted = Select::make(cmp(BinOp::LT, v, Expr(0)), dim + v, v);
  Expr hi = simplify(dim + Expr(hiOffset), env);
  return simplify(
      minProven(maxProven(simplify(adjusted, env), Expr(lo), env), hi, env),
      env);
}

Expr hitBlocks(const Expr &n) {
  return floorDiv(n + Expr(kHitBlock - 1), Expr(kHitBlock));
}

Expr linearize(const std::vector<Expr> &idx, const std::vector<Expr> &shape) {
  Expr flat = Expr(0);
  for (size_t k = 0; k < idx.size(); ++k)
    flat = flat * shape[k] + idx[k];
  return flat;
}

std::vector<Expr> delinearize(const Expr &flat,
                              const std::vector<Expr> &shape) {
  std::vector<Expr> idx(shape.size());
  Expr stride = Expr(1);
  for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
    Expr q = floorDiv(flat, stride);
    idx[k] = k == 0 ? q : mod(q, shape[k]);
    stride = stride * shape[k];
  }
  return idx;
}

Expected<int64_t> normalizeAxis(const Node &n, int64_t axis, int64_t rank,
                                const std::string &what) {
  if (axis < -rank || axis >= rank)
    return makeError(n.describe(), ": ", what, " ", axis,
                     " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

Expected<std::vector<int64_t>> normalizeAxes(const Node &n,
                                             std::vector<int64_t> axes,
                                             int64_t rank, bool sort,
                                             const std::string &what) {
  std::set<int64_t> seen;
  for (int64_t &a : axes) {
    AOTC_ASSIGN_OR_RETURN(a, normalizeAxis(n, a, rank, what));
    if (!seen.insert(a).second)
      return makeError(n.describe(), ": ", what, " has axis ", a, " twice");
  }
  if (sort)
    std::sort(axes.begin(), axes.end());
  return axes;
}

Expected<std::vector<Expr>> padAmounts(const Node &n) {
  int64_t rank = n.input(0)->type().rank();
  auto data = [&](size_t i, const char *what) -> Expected<std::vector<Expr>> {
    const Value *v = n.input(i);
    if (!v->symbolicData())
      return makeError(n.describe(), ": input ", i, " ('", v->name(), "') (",
                       what, ") must be known at compile time or computed ",
                       "from sizes and integer inputs");
    return *v->symbolicData();
  };
  std::vector<Expr> pads;
  if (n.numInputs() > 1 && n.input(1)) {
    AOTC_ASSIGN_OR_RETURN(pads, data(1, "pads"));
  } else {
    for (int64_t p : n.intsAttr("pads"))
      pads.push_back(Expr(p));
  }
  std::vector<int64_t> axes;
  if (n.numInputs() > 3 && n.input(3)) {
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> given, data(3, "axes"));
    for (const Expr &e : given) {
      int64_t a;
      if (!e.isConst(a))
        return makeError(n.describe(), ": axes must be constants, has ",
                         printExpr(e));
      axes.push_back(a);
    }
    AOTC_ASSIGN_OR_RETURN(axes, normalizeAxes(n, axes, rank, false));
  } else {
    for (int64_t a = 0; a < rank; ++a)
      axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size())
    return makeError(n.describe(), ": pads has ", pads.size(),
                     " values, expected ", 2 * axes.size(), " for input ",
                     n.input(0)->type().str());
  std::vector<Expr> full(2 * rank, Expr(0));
  for (size_t i = 0; i < axes.size(); ++i) {
    full[axes[i]] = pads[i];
    full[axes[i] + rank] = pads[i + axes.size()];
  }
  return full;
}

PadKept padKept(const Expr &dim, const Expr &begin, const Expr &end,
                const RangeEnv &env) {
  Expr start = simplify(maxExpr(Expr(0) - begin, Expr(0)), env);
  Expr cutEnd = simplify(maxExpr(Expr(0) - end, Expr(0)), env);
  return PadKept{start, simplify(dim - start - cutEnd, env)};
}

const std::vector<Expr> *givenAtRunTime(const Node &n, size_t i) {
  const Value *v = n.input(i);
  if (!v || !v->symbolicData())
    return nullptr;
  for (const Expr &e : *v->symbolicData())
    if (int64_t c; !e.isConst(c))
      return &*v->symbolicData();
  return nullptr;
}

namespace {

/// Whether axis \p a (in [-rank, rank)) names dim \p i.
Expr namesDim(const Expr &a, int64_t i, int64_t rank) {
  return logicalOr(cmp(BinOp::EQ, a, Expr(i)),
                   cmp(BinOp::EQ, a, Expr(i - rank)));
}

} // namespace

std::vector<Expr> runtimeAxisMask(const std::vector<Expr> &axes,
                                  int64_t rank) {
  std::vector<Expr> mask;
  for (int64_t i = 0; i < rank; ++i) {
    Expr named;
    for (const Expr &a : axes) {
      Expr hit = namesDim(a, i, rank);
      named = named.defined() ? logicalOr(named, hit) : hit;
    }
    mask.push_back(named.defined() ? named : cmp(BinOp::NE, Expr(0), Expr(0)));
  }
  return mask;
}

std::vector<Expr> runtimeAxisExtents(const std::vector<Expr> &mask,
                                     const std::vector<Expr> &dims) {
  std::vector<Expr> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    out.push_back(Select::make(mask[i], Expr(1), dims[i]));
    out.push_back(Select::make(mask[i], dims[i], Expr(1)));
  }
  return out;
}

Expr runtimeAxisLength(const std::vector<Expr> &mask,
                       const std::vector<Expr> &dims) {
  Expr length = Expr(0);
  for (size_t i = 0; i < dims.size(); ++i)
    length = length + Select::make(mask[i], dims[i], Expr(0));
  return length;
}

std::vector<Expr> runtimeAxisDroppedDims(const std::vector<Expr> &mask,
                                         const std::vector<Expr> &dims,
                                         size_t outRank) {
  std::vector<Expr> out;
  for (size_t j = 0; j < outRank; ++j) {
    // Dims kept before dim i: dim i is output dim j when it is kept and
    // exactly j were kept before it.
    Expr before = Expr(0), dim = Expr(0);
    for (size_t i = 0; i < dims.size(); ++i) {
      Expr kept = Select::make(mask[i], Expr(0), Expr(1));
      dim = dim + Select::make(
                      logicalAnd(cmp(BinOp::EQ, kept, Expr(1)),
                                 cmp(BinOp::EQ, before, Expr(int64_t(j)))),
                      dims[i], Expr(0));
      before = before + kept;
    }
    out.push_back(dim);
  }
  return out;
}

std::vector<SliceDim> runtimeSlice(const std::vector<Expr> &starts,
                                   const std::vector<Expr> &ends,
                                   const std::vector<Expr> &axes,
                                   const std::vector<Expr> &steps,
                                   const std::vector<Expr> &dims) {
  int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<Expr> mask = runtimeAxisMask(axes, rank);
  std::vector<SliceDim> out;
  for (int64_t i = 0; i < rank; ++i) {
    const Expr &dim = dims[i];
    if (axes.empty()) { // nothing sliced
      out.push_back({Expr(0), Expr(1), dim});
      continue;
    }
    // The operands of the axis that names dim i (at most one does).
    Expr start = Expr(0), end = Expr(0), step = Expr(0);
    for (size_t j = 0; j < axes.size(); ++j) {
      Expr hit = namesDim(axes[j], i, rank);
      start = start + Select::make(hit, starts[j], Expr(0));
      end = end + Select::make(hit, ends[j], Expr(0));
      step = step + Select::make(hit, steps[j], Expr(0));
    }
    const Expr &named = mask[i];
    SliceDim d;
    step = Select::make(named, step, Expr(1));
    start = Select::make(named, start, Expr(0));
    end = Select::make(named, end, dim);
    Expr up = cmp(BinOp::GT, step, Expr(0));
    RangeEnv none;
    Expr s = Select::make(up, clampSliceIndex(start, dim, 0, 0, none),
                          clampSliceIndex(start, dim, 0, -1, none));
    Expr e = Select::make(up, clampSliceIndex(end, dim, 0, 0, none),
                          clampSliceIndex(end, dim, -1, -1, none));
    Expr size = Select::make(up, floorDiv(e - s + step - Expr(1), step),
                             floorDiv(s - e - step - Expr(1), Expr(0) - step));
    d.start = s;
    d.step = step;
    d.size = maxExpr(size, Expr(0));
    out.push_back(d);
  }
  return out;
}

} // namespace aotc
