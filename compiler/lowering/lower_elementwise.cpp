/// \file
/// Lowering of element-wise ops (NumPy broadcasting) and inference-mode
/// BatchNormalization to pointwise defs.
#include "compiler/lowering/lowering.h"

#include <cmath>

namespace aotc {

namespace {

Expr call(const char *name, const Expr &x) {
  return Call::make(x.type(), name, {x});
}

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

/// Reads input \p i of \p n broadcast to the output's shape.
Expr operand(const Node &n, size_t i, LowerCtx &ctx) {
  const TensorType &out = n.output(0)->type();
  return ctx.readBroadcast(ctx.defOf(n.input(i)), out.dims,
                           ctx.idxVars(out.rank()));
}

/// A scalar (0-d or single-element) optional input, or \p def when omitted.
Expr scalarOperand(const Node &n, size_t i, LowerCtx &ctx, Expr def) {
  const Value *v = n.input(i);
  if (!v)
    return def;
  std::vector<Expr> zeros(v->type().rank(), Expr(0));
  return ctx.readValue(v, zeros);
}

Expected<Expr> unary(const Node &n, const Expr &x) {
  DType t = x.type();
  Expr zero = literal(t, 0), one = literal(t, 1);
  bool flt = isFloat(t);
  switch (n.op()) {
  case OpKind::Neg:
    return bin(BinOp::Sub, zero, x);
  case OpKind::Abs:
    return flt ? call("fabs", x)
               : Select::make(bin(BinOp::LT, x, zero), bin(BinOp::Sub, zero, x),
                              x);
  case OpKind::Exp:
    return call("exp", x);
  case OpKind::Log:
    return call("log", x);
  case OpKind::Sqrt:
    return call("sqrt", x);
  case OpKind::Erf:
    return call("erf", x);
  case OpKind::Tanh:
    return call("tanh", x);
  case OpKind::Floor:
    return flt ? call("floor", x) : x;
  case OpKind::Ceil:
    return flt ? call("ceil", x) : x;
  case OpKind::Reciprocal:
    return bin(BinOp::Div, one, x);
  case OpKind::Relu:
    // x < 0 ? 0 : x keeps NaN, as PyTorch does.
    return Select::make(bin(BinOp::LT, x, zero), zero, x);
  case OpKind::LeakyRelu: {
    double alpha = n.floatAttr("alpha");
    return Select::make(bin(BinOp::LT, x, zero),
                        bin(BinOp::Mul, literal(t, alpha), x), x);
  }
  case OpKind::Sigmoid:
    return bin(BinOp::Div, one,
               bin(BinOp::Add, one, call("exp", bin(BinOp::Sub, zero, x))));
  case OpKind::Not:
    return Not::make(x);
  default:
    return makeError(n.describe(), ": not a unary op");
  }
}

} // namespace

Status lowerElementwise(const Node &n, LowerCtx &ctx) {
  const Value *out = n.output(0);
  DType outT = out->type().dtype;
  switch (n.op()) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Equal:
  case OpKind::Less:
  case OpKind::Greater:
  case OpKind::LessOrEqual:
  case OpKind::GreaterOrEqual:
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor: {
    static const std::map<OpKind, BinOp> ops = {
        {OpKind::Add, BinOp::Add},     {OpKind::Sub, BinOp::Sub},
        {OpKind::Mul, BinOp::Mul},     {OpKind::Div, BinOp::Div},
        {OpKind::Equal, BinOp::EQ},    {OpKind::Less, BinOp::LT},
        {OpKind::Greater, BinOp::GT},  {OpKind::LessOrEqual, BinOp::LE},
        {OpKind::GreaterOrEqual, BinOp::GE}, {OpKind::And, BinOp::And},
        {OpKind::Or, BinOp::Or},       {OpKind::Xor, BinOp::NE}};
    Expr a = operand(n, 0, ctx), b = operand(n, 1, ctx);
    Expr v = bin(ops.at(n.op()), a, b);
    if (v.type() != outT)
      v = Cast::make(outT, v);
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  case OpKind::Pow: {
    Expr a = operand(n, 0, ctx), b = operand(n, 1, ctx);
    DType ct = isFloat(a.type()) ? a.type() : DType::Float64;
    Expr v = bin(BinOp::Pow, Cast::make(ct, a), Cast::make(ct, b));
    ctx.addPointwise(out, Cast::make(outT, v));
    return Status::ok();
  }
  case OpKind::Max:
  case OpKind::Min: {
    BinOp op = n.op() == OpKind::Max ? BinOp::Max : BinOp::Min;
    Expr v = operand(n, 0, ctx);
    for (size_t i = 1; i < n.numInputs(); ++i) {
      Expr x = operand(n, i, ctx);
      if (isFloat(outT)) // NaN-propagating (NumPy), unlike fmax/fmin
        v = Select::make(
            Binary::make(BinOp::Or,
                         bin(op == BinOp::Max ? BinOp::GT : BinOp::LT, x, v),
                         Call::make(DType::Bool, "isnan", {x})),
            x, v);
      else
        v = bin(op, v, x);
    }
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  case OpKind::Where: {
    Expr c = operand(n, 0, ctx);
    ctx.addPointwise(out, Select::make(Cast::make(DType::Bool, c),
                                       operand(n, 1, ctx), operand(n, 2, ctx)));
    return Status::ok();
  }
  case OpKind::Clip: {
    Expr x = operand(n, 0, ctx);
    Expr lo, hi;
    // Opset 11 made min and max inputs; before, optional attributes.
    lo = n.hasAttr("min") ? literal(outT, n.floatAttr("min"))
                          : scalarOperand(n, 1, ctx, Expr());
    hi = n.hasAttr("max") ? literal(outT, n.floatAttr("max"))
                          : scalarOperand(n, 2, ctx, Expr());
    Expr v = x;
    if (lo.defined())
      v = Select::make(bin(BinOp::LT, v, lo), lo, v);
    if (hi.defined())
      v = Select::make(bin(BinOp::GT, v, hi), hi, v);
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  case OpKind::Cast:
  case OpKind::CastLike: { // CastLike: to the second input's dtype
    Expr x = operand(n, 0, ctx);
    if (outT == DType::Bool && isFloat(x.type()))
      x = bin(BinOp::NE, x, literal(x.type(), 0));
    ctx.addPointwise(out, Cast::make(outT, x));
    return Status::ok();
  }
  case OpKind::Identity:
    ctx.bind(out, ctx.defOf(n.input(0)));
    return Status::ok();
  default: {
    AOTC_ASSIGN_OR_RETURN(Expr v, unary(n, operand(n, 0, ctx)));
    if (v.type() != outT)
      v = Cast::make(outT, v);
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  }
}

} // namespace aotc
