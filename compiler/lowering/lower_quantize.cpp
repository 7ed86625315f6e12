/// \file
/// Lowering of linear quantization (compiler/passes/shape_inference_quantize.cpp
/// checks the shapes and records the granularity), one pointwise value each:
///   QuantizeLinear:   y = clamp(rint(x / scale) + zero_point, lo, hi)
///   DequantizeLinear: y = (x - zero_point) * scale
/// QuantizeLinear divides in its precision P (the attribute since opset 25,
/// else the scale's dtype): x and the scale are rounded to P, and so is
/// their quotient (computed in float, as a float16 or bfloat16 quotient
/// rounded once from float is the one rounded directly). rint rounds half
/// to even. The zero point is added in float, exact for every quantized
/// type (|zero point| <= 65535 and a quotient above 2^24 saturates anyway);
/// a NaN saturates to lo, as ONNX's reference implementation and ONNX
/// Runtime give. DequantizeLinear subtracts in integers (int64, exact for
/// every input type), then multiplies in float and rounds to the output's
/// dtype once, as ONNX's reference implementation does.
#include "compiler/lowering/lowering.h"

#include "ir/scalar_ops.h"

namespace aotc {

namespace {

/// The index of the scale (and zero point) element for output index \p iv.
std::vector<Expr> scaleIndex(const Node &n, const Value *scale,
                             const std::vector<Expr> &iv) {
  int64_t granularity = n.intAttr("aotc_granularity");
  int64_t axis = n.intAttr("aotc_axis");
  if (granularity == 0)
    return std::vector<Expr>(scale->type().rank(), Expr(0));
  if (granularity == 1)
    return {iv[axis]};
  std::vector<Expr> at = iv;
  at[axis] = floorDiv(iv[axis], Expr(n.intAttr("block_size")));
  return at;
}

/// \p v rounded to \p p and read back as float32.
Expr roundedTo(DType p, const Expr &v) {
  Expr f = v.type() == DType::Float32 ? v : Cast::make(DType::Float32, v);
  if (p == DType::Float32)
    return f;
  return Cast::make(DType::Float32, Cast::make(p, f));
}

Status lowerQuantizeLinear(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *scale = n.input(1), *zp = n.input(2),
              *out = n.output(0);
  DType outT = out->type().dtype;
  DType p = scale->type().dtype;
  if (n.intAttr("precision") != 0 && !dtypeFromCode(n.intAttr("precision"), p))
    return makeError(n.describe(), ": unsupported precision");
  std::vector<Expr> iv = ctx.idxVars(out->type().rank());
  std::vector<Expr> at = scaleIndex(n, scale, iv);
  Expr q = Binary::make(BinOp::Div, roundedTo(p, ctx.readValue(x, iv)),
                        roundedTo(p, ctx.readValue(scale, at)));
  q = Call::make(DType::Float32, "rint", {roundedTo(p, q)});
  if (zp)
    q = Binary::make(BinOp::Add, q,
                     Cast::make(DType::Float32, ctx.readValue(zp, at)));
  Expr lo = literal(DType::Float32, static_cast<double>(scalar::minOf(outT)));
  Expr hi = literal(DType::Float32, static_cast<double>(scalar::maxOf(outT)));
  Expr clamped = Select::make(
      Binary::make(BinOp::LT, q, lo), lo,
      Select::make(Binary::make(BinOp::GT, q, hi), hi, q));
  clamped = Select::make(Call::make(DType::Bool, "isnan", {q}), lo, clamped);
  ctx.addPointwise(out, Cast::make(outT, clamped));
  return Status::ok();
}

Status lowerDequantizeLinear(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *scale = n.input(1), *zp = n.input(2),
              *out = n.output(0);
  DType outT = out->type().dtype;
  std::vector<Expr> iv = ctx.idxVars(out->type().rank());
  std::vector<Expr> at = scaleIndex(n, scale, iv);
  Expr d = ctx.readValue(x, iv);
  if (zp) {
    d = Binary::make(BinOp::Sub, Cast::make(DType::Int64, d),
                     Cast::make(DType::Int64, ctx.readValue(zp, at)));
  }
  Expr y = Binary::make(BinOp::Mul, Cast::make(DType::Float32, d),
                        roundedTo(DType::Float32, ctx.readValue(scale, at)));
  ctx.addPointwise(out, outT == DType::Float32 ? y : Cast::make(outT, y));
  return Status::ok();
}

} // namespace

Status lowerQuantize(const Node &n, LowerCtx &ctx) {
  switch (n.op()) {
  case OpKind::QuantizeLinear:
    return lowerQuantizeLinear(n, ctx);
  case OpKind::DequantizeLinear:
    return lowerDequantizeLinear(n, ctx);
  default:
    return makeError(n.describe(), ": not an op of lower_quantize");
  }
}

} // namespace aotc
