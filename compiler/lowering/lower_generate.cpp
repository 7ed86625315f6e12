/// \file
/// Lowering of the ops that generate their values from indices
/// (compiler/passes/shape_inference_generate.cpp infers their shapes):
///   EyeLike: out[i, j] = (j - i == k) ? 1 : 0, of the attribute's dtype;
///            the input gives the shape only and is not read.
///   OneHot:  out[..., c, ...] (c on the axis) = (w == c) ? on : off, where
///            w is the index cast to int64 (a float truncated toward zero,
///            as ONNX casts it; a NaN names no class), plus depth where it
///            is negative. An index
///            outside [-depth, depth) matches no class: the whole row is
///            off, as ONNX says and ONNX Runtime does (ONNX's reference
///            evaluator wraps it modulo depth instead).
#include "compiler/lowering/lowering.h"

namespace aotc {

namespace {

Status lowerEyeLike(const Node &n, LowerCtx &ctx) {
  const Value *out = n.output(0);
  DType t = out->type().dtype;
  std::vector<Expr> iv = ctx.idxVars(2);
  Expr diff = Cast::make(DType::Int64, iv[1]) - Cast::make(DType::Int64, iv[0]);
  Expr on = Binary::make(BinOp::EQ, diff, Expr(n.intAttr("k")));
  ctx.addPointwise(out, Select::make(on, literal(t, 1), literal(t, 0)));
  return Status::ok();
}

Status lowerOneHot(const Node &n, LowerCtx &ctx) {
  const Value *indices = n.input(0), *values = n.input(2), *out = n.output(0);
  const int rank = out->type().rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += rank;
  std::vector<Expr> iv = ctx.idxVars(rank);
  std::vector<Expr> at = iv;
  at.erase(at.begin() + axis);
  Expr read = ctx.readValue(indices, at);
  Expr index =
      read.type() == DType::Int64 ? read : Cast::make(DType::Int64, read);
  // depth >= 1 (shape inference), so index + depth cannot overflow where
  // index < 0; a wrapped index still outside [0, depth) equals no class.
  Expr depth = out->type().dims[axis];
  Expr wrapped = Select::make(Binary::make(BinOp::LT, index, Expr(0)),
                              index + depth, index);
  Expr on =
      Binary::make(BinOp::EQ, wrapped, Cast::make(DType::Int64, iv[axis]));
  // A NaN index names no class (its cast would give 0); infinities saturate
  // outside [-depth, depth) by themselves.
  if (isFloat(read.type()))
    on = Binary::make(BinOp::And, on, Binary::make(BinOp::EQ, read, read));
  ctx.addPointwise(out, Select::make(on, ctx.readValue(values, {Expr(1)}),
                                     ctx.readValue(values, {Expr(0)})));
  return Status::ok();
}

} // namespace

Status lowerGenerate(const Node &n, LowerCtx &ctx) {
  switch (n.op()) {
  case OpKind::EyeLike:
    return lowerEyeLike(n, ctx);
  case OpKind::OneHot:
    return lowerOneHot(n, ctx);
  default:
    return makeError(n.describe(), ": not an op of lower_generate");
  }
}

} // namespace aotc
