/// \file
/// Row-major linearize/delinearize.
#include "ir/indexing.h"

namespace aotc {

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
