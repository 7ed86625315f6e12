/// \file
/// Row-major linearize/delinearize.
#include "ir/indexing.h"

#include <algorithm>

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

} // namespace aotc
