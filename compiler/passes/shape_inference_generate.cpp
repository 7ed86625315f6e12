/// \file
/// Shape inference of the ops that generate their values from indices
/// rather than read them: EyeLike (a shape's diagonal) and OneHot (a class
/// index spread over a new axis of `depth` classes). Their lowering is
/// compiler/lowering/lower_generate.cpp.
#include "compiler/passes/shape_inference_internal.h"

#include <cmath>

namespace aotc {
namespace shape_inference {

namespace {

/// OneHot's depth as an int64 expression: a constant (an integer, or a
/// float truncated toward zero, as ONNX casts it), or the value a graph input
/// gives at run time; an error otherwise.
Expected<Expr> depthOf(Context &c, const Node &n) {
  const Value *d = n.input(1);
  DType t = d->type().dtype;
  if (d->isConstant()) {
    c.graph.freezeInitializer(d, "read at compile time as the depth of " +
                                     n.describe());
    if (!isFloat(t))
      return Expr(tensorDataInt(d->data(), t, 0));
    double v = std::trunc(tensorDataFloat(d->data(), t, 0));
    if (!(std::fabs(v) < double(int64_t{1} << 40)))
      return makeError(n.describe(), ": ", inputLabel(n, 1), " (depth) ",
                       tensorDataFloat(d->data(), t, 0), " is out of range");
    return Expr(static_cast<int64_t>(v));
  }
  if (d->symbolicData() && d->symbolicData()->size() == 1) {
    const Expr &e = d->symbolicData()->front();
    if (const FloatImm *f = e.as<FloatImm>()) { // a constant cast to float
      double v = std::trunc(f->value);
      if (!(std::fabs(v) < double(int64_t{1} << 40)))
        return makeError(n.describe(), ": ", inputLabel(n, 1), " (depth) ",
                         f->value, " is out of range");
      return Expr(static_cast<int64_t>(v));
    }
    return e.type() == DType::Int64 ? e : Cast::make(DType::Int64, e);
  }
  return makeError(n.describe(), ": ", inputLabel(n, 1),
                   " (depth) must be known at compile time or given by a "
                   "graph input");
}

Status inferEyeLike(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  if (x.rank() != 2)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must have rank 2, got ", x.str());
  DType t = x.dtype;
  if (n.hasAttr("dtype") && !dtypeFromCode(n.intAttr("dtype"), t))
    return makeError(n.describe(), ": attribute 'dtype': unsupported dtype ",
                     n.intAttr("dtype"));
  setResult(c, n, 0, t, x.dims);
  return Status::ok();
}

Status inferOneHot(Context &c, Node &n) {
  const TensorType &indices = inputType(n, 0);
  const TensorType &values = inputType(n, 2);
  if (indices.dtype == DType::Bool)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must be numeric, got bool");
  if (!simplifyDim(c, inputType(n, 1).numel()).isConstValue(1))
    return makeError(n.describe(), ": ", inputLabel(n, 1),
                     " (depth) must have one element, got ",
                     inputType(n, 1).str());
  if (inputType(n, 1).dtype == DType::Bool)
    return makeError(n.describe(), ": ", inputLabel(n, 1),
                     " (depth) must be numeric, got bool");
  if (values.rank() != 1 || !simplifyDim(c, values.dims[0]).isConstValue(2))
    return makeError(n.describe(), ": ", inputLabel(n, 2),
                     " (values: off, on) must have two elements, got ",
                     values.str());
  const int64_t rank = indices.rank() + 1;
  int64_t axis = n.intAttr("axis");
  if (axis < -rank || axis >= rank)
    return makeError(n.describe(), ": axis ", axis, " is out of range for ",
                     "an output of rank ", rank);
  if (axis < 0)
    axis += rank;
  AOTC_ASSIGN_OR_RETURN(Expr depth, depthOf(c, n));
  int64_t k;
  Expr dim;
  if (depth.isConst(k)) {
    // ONNX Runtime refuses a depth of 0 too ("Depth is negative").
    if (k < 1)
      return makeError(n.describe(), ": depth must be positive, got ", k);
    dim = Expr(k);
  } else {
    c.graph.addAssumption(Binary::make(BinOp::GE, depth, Expr(1)),
                          n.describe() + ": depth must be positive");
    dim = deriveSymbol(c, n.output(0)->name() + "_depth",
                       maxExpr(depth, Expr(0)));
  }
  std::vector<Expr> dims = indices.dims;
  dims.insert(dims.begin() + axis, dim);
  setResult(c, n, 0, values.dtype, std::move(dims));
  return Status::ok();
}

} // namespace

Status inferGenerate(Context &c, Node &n) {
  switch (n.op()) {
  case OpKind::EyeLike:
    return inferEyeLike(c, n);
  case OpKind::OneHot:
    return inferOneHot(c, n);
  default:
    return makeError(n.describe(), ": not an op of shape_inference_generate");
  }
}

} // namespace shape_inference
} // namespace aotc
