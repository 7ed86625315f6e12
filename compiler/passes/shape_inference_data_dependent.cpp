/// \file
/// Shape inference of the ops whose output size is counted from data while
/// the model runs (NonZero, Compress, Unique): the count is a data symbol
/// (Symbol::isData), bounded by the number of elements it counts over, which
/// the run reads back mid-run (lowering makes the kernel that computes it).
#include "compiler/passes/shape_inference_internal.h"

namespace aotc {
namespace shape_inference {

namespace {

/// A data symbol for the number of hits among \p positions positions that
/// \p n's output holds; and the number of blocks lowering counts them in
/// (hitBlocks), a derived size unless it is a constant.
Expr countSymbol(Context &c, const Node &n, const Expr &positions) {
  Expr bound = simplifyDim(c, positions);
  Range r{0, int64_t{1} << 48};
  if (std::optional<Range> b = boundsOf(bound, c.env))
    r.max = std::clamp<int64_t>(b->max, 0, r.max);
  int64_t known = 0;
  if (!bound.isConst(known))
    deriveSymbol(c, n.output(0)->name() + "_blocks", hitBlocks(positions));
  Expr var = c.graph.addDataSymbol(n.output(0)->name() + "_count", r, bound);
  c.env.set(var, r);
  return var;
}

/// NonZero: int64 [rank, N], the indices of X's nonzero elements in
/// row-major order. A scalar is refused: ONNX's shape inference gives
/// [0, N], ONNX Runtime returns [1, N] and ONNX's reference fails, so no
/// answer is the expected one.
Status inferNonZero(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  if (x.rank() == 0)
    return makeError(n.describe(), ": NonZero of a scalar is not supported "
                                   "(ONNX's shape inference gives [0, N] and "
                                   "ONNX Runtime [1, N]); reshape it to [1]");
  Expr count = countSymbol(c, n, product(x.dims));
  setResult(c, n, 0, DType::Int64, {Expr(x.rank()), count});
  return Status::ok();
}

/// Compress: X's elements (or slices along `axis`) where the 1-D bool
/// condition is true; the count is at most the condition's length.
Status inferCompress(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0), &cond = inputType(n, 1);
  if (cond.dtype != DType::Bool || cond.rank() != 1)
    return makeError(n.describe(), ": ", inputLabel(n, 1),
                     " (the condition) must be a 1-D bool tensor, got ",
                     cond.str());
  Expr count = countSymbol(c, n, cond.dims[0]);
  if (!n.hasAttr("axis")) {
    setResult(c, n, 0, x.dtype, {count});
    return Status::ok();
  }
  AOTC_ASSIGN_OR_RETURN(int64_t axis,
                        normalizeAxis(n, n.intAttr("axis"), x.rank()));
  n.setAttr("axis", Attribute{axis, std::nullopt});
  std::vector<Expr> dims = x.dims;
  dims[axis] = count;
  setResult(c, n, 0, x.dtype, std::move(dims));
  return Status::ok();
}

/// Unique: the distinct elements of X (flattened) or its distinct slices
/// along `axis`: Y, then int64 indices (first occurrence of each), inverse
/// indices (each element's or slice's position in Y) and counts.
Status inferUnique(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  bool hasAxis = n.hasAttr("axis");
  int64_t axis = 0;
  if (hasAxis) {
    AOTC_ASSIGN_OR_RETURN(axis, normalizeAxis(n, n.intAttr("axis"), x.rank()));
    n.setAttr("axis", Attribute{axis, std::nullopt});
  }
  Expr length = hasAxis ? x.dims[axis] : product(x.dims);
  Expr count = countSymbol(c, n, length);
  std::vector<Expr> dims = {count};
  if (hasAxis) {
    dims = x.dims;
    dims[axis] = count;
  }
  setResult(c, n, 0, x.dtype, std::move(dims));
  if (n.outputs().size() > 1 && n.output(1))
    setResult(c, n, 1, DType::Int64, {count});
  if (n.outputs().size() > 2 && n.output(2))
    setResult(c, n, 2, DType::Int64, {simplifyDim(c, length)});
  if (n.outputs().size() > 3 && n.output(3))
    setResult(c, n, 3, DType::Int64, {count});
  return Status::ok();
}

} // namespace

Status inferDataDependent(Context &c, Node &n) {
  switch (n.op()) {
  case OpKind::NonZero:
    return inferNonZero(c, n);
  case OpKind::Compress:
    return inferCompress(c, n);
  case OpKind::Unique:
    return inferUnique(c, n);
  default:
    return makeError(n.describe(), ": no shape inference for this op");
  }
}

} // namespace shape_inference
} // namespace aotc
