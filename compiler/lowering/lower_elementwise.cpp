/// \file
/// Lowering of element-wise ops (NumPy broadcasting) and inference-mode
/// BatchNormalization to pointwise defs.
#include "compiler/lowering/lowering.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace aotc {

namespace {

Expr call(const char *name, const Expr &x) {
  return Call::make(x.type(), name, {x});
}

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

/// The value of a one-element constant that no caller can replace
/// (Graph::isFixedConstant: not an updatable initializer, which
/// aotc_container_update_constants may change), or nothing.
std::optional<double> constantScalar(const Value *v, const LowerCtx &ctx) {
  if (!ctx.graph().isFixedConstant(v) || !v->type().numel().isConstValue(1))
    return std::nullopt;
  return tensorDataFloat(v->data(), v->type().dtype, 0);
}

/// \p v as a literal where it is a float scalar no update can change
/// (constantScalar: a Constant node's, a folded one, a frozen initializer),
/// else undefined. A literal instead of a load: the kernel takes no buffer
/// for it (PoCL's 1,024 bytes of arguments a launch held MobileNetV2's
/// persistent kernels to 7 while 70 of their buffers were the 0 and 6 of
/// its ReLU6s) and its arithmetic folds.
Expr fixedLiteral(const Value *v, const LowerCtx &ctx) {
  if (!isFloat(v->type().dtype))
    return Expr();
  std::optional<double> c = constantScalar(v, ctx);
  return c ? literal(v->type().dtype, *c) : Expr();
}

/// Reads input \p i of \p n broadcast to the output's shape (a literal
/// where fixedLiteral gives one).
Expr operand(const Node &n, size_t i, LowerCtx &ctx) {
  const TensorType &out = n.output(0)->type();
  const Value *v = n.input(i);
  if (Expr c = fixedLiteral(v, ctx); c.defined())
    return c;
  return ctx.readBroadcast(ctx.defOf(v), out.dims, ctx.idxVars(out.rank()));
}

/// The reciprocal of a float divisor known at compile time (a scalar that
/// no update can change, constantScalar), as a literal of \p t, where
/// multiplying by it stays within the error OpenCL allows a division (2.5
/// ulp for float32): 1 / c rounded to \p t, then one rounded product, is
/// within 1.5 ulp of x / c (exact for a power of two), for every x, and
/// the same for zeros, infinities and NaNs, as long as 1 / c is a normal
/// number (|c| in [2^-126, 2^126] for float32). A vector division costs
/// 10-16 cycles on the CPUs aotc targets, a multiplication 0.5; GELU's
/// x / sqrt(2) and attention's scores / 8 divide every element. Undefined
/// otherwise (the division stays).
Expr reciprocalOfConstant(const Value *v, DType t, const LowerCtx &ctx) {
  std::optional<double> c = constantScalar(v, ctx);
  if (!c || (t != DType::Float32 && t != DType::Float64))
    return Expr();
  const int maxExp = t == DType::Float32 ? 126 : 1022;
  const double m = std::fabs(*c);
  if (!(m >= std::ldexp(1.0, -maxExp) && m <= std::ldexp(1.0, maxExp)))
    return Expr();
  double r = 1.0 / *c;
  if (t == DType::Float32)
    r = static_cast<double>(static_cast<float>(r));
  return literal(t, r);
}

/// A scalar (0-d or single-element) optional input, or \p def when omitted;
/// a literal where fixedLiteral gives one.
Expr scalarOperand(const Node &n, size_t i, LowerCtx &ctx, Expr def) {
  const Value *v = n.input(i);
  if (!v)
    return def;
  if (Expr c = fixedLiteral(v, ctx); c.defined())
    return c;
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
  case OpKind::Acos:
  case OpKind::Acosh:
  case OpKind::Asin:
  case OpKind::Asinh:
  case OpKind::Atan:
  case OpKind::Atanh:
  case OpKind::Cos:
  case OpKind::Cosh:
  case OpKind::Sin:
  case OpKind::Sinh:
  case OpKind::Tan: {
    std::string name = opName(n.op());
    name[0] = static_cast<char>(std::tolower(name[0]));
    return Call::make(t, name, {x});
  }
  case OpKind::Round: // half to even, the default rounding mode
    return flt ? call("rint", x) : x;
  case OpKind::Sign:
    // NaN stays NaN (NumPy), zeros stay zeros.
    return Select::make(bin(BinOp::GT, x, zero), one,
                        Select::make(bin(BinOp::LT, x, zero),
                                     literal(t, -1), flt ? x : zero));
  case OpKind::IsNaN:
    return Call::make(DType::Bool, "isnan", {x});
  case OpKind::IsInf: {
    Expr inf = Call::make(DType::Bool, "isinf", {x});
    bool pos = n.intAttr("detect_positive") != 0;
    bool neg = n.intAttr("detect_negative") != 0;
    if (pos && neg)
      return inf;
    if (!pos && !neg)
      return literal(DType::Bool, 0);
    return Binary::make(BinOp::And, inf,
                        bin(pos ? BinOp::GT : BinOp::LT, x, zero));
  }
  case OpKind::Softplus:
    // log(1 + exp(x)); x itself above 20, where exp would overflow first.
    return Select::make(bin(BinOp::GT, x, literal(t, 20)), x,
                        call("log1p", call("exp", x)));
  case OpKind::Softsign:
    return bin(BinOp::Div, x, bin(BinOp::Add, one, call("fabs", x)));
  case OpKind::Elu: {
    Expr alpha = literal(t, n.floatAttr("alpha"));
    return Select::make(bin(BinOp::LT, x, zero),
                        bin(BinOp::Mul, alpha, call("expm1", x)), x);
  }
  case OpKind::Selu: {
    Expr alpha = literal(t, n.floatAttr("alpha"));
    Expr gamma = literal(t, n.floatAttr("gamma"));
    return bin(BinOp::Mul, gamma,
               Select::make(bin(BinOp::LE, x, zero),
                            bin(BinOp::Mul, alpha, call("expm1", x)), x));
  }
  case OpKind::Celu: {
    Expr alpha = literal(t, n.floatAttr("alpha"));
    return Select::make(
        bin(BinOp::GT, x, zero), x,
        bin(BinOp::Mul, alpha, call("expm1", bin(BinOp::Div, x, alpha))));
  }
  case OpKind::HardSigmoid:
  case OpKind::HardSwish: {
    bool swish = n.op() == OpKind::HardSwish;
    Expr alpha = literal(t, swish ? 1.0 / 6 : n.floatAttr("alpha"));
    Expr beta = literal(t, swish ? 0.5 : n.floatAttr("beta"));
    Expr v = bin(BinOp::Add, bin(BinOp::Mul, alpha, x), beta);
    // Clamped to [0, 1] by selects (fmin/fmax would drop a NaN).
    v = Select::make(bin(BinOp::LT, v, zero), zero,
                     Select::make(bin(BinOp::GT, v, one), one, v));
    return swish ? bin(BinOp::Mul, x, v) : v;
  }
  case OpKind::Mish: {
    Expr sp = Select::make(bin(BinOp::GT, x, literal(t, 20)), x,
                           call("log1p", call("exp", x)));
    return bin(BinOp::Mul, x, call("tanh", sp));
  }
  case OpKind::ThresholdedRelu:
    return Select::make(bin(BinOp::GT, x, literal(t, n.floatAttr("alpha"))),
                        x, zero);
  case OpKind::Gelu: {
    Expr half = literal(t, 0.5);
    Expr inner;
    if (n.stringAttr("approximate") == "tanh") {
      Expr cube = bin(BinOp::Mul, x, bin(BinOp::Mul, x, x));
      inner = call("tanh",
                   bin(BinOp::Mul, literal(t, std::sqrt(2.0 / M_PI)),
                       bin(BinOp::Add, x,
                           bin(BinOp::Mul, literal(t, 0.044715), cube))));
    } else {
      inner = call("erf", bin(BinOp::Mul, x, literal(t, M_SQRT1_2)));
    }
    return bin(BinOp::Mul, bin(BinOp::Mul, half, x),
               bin(BinOp::Add, one, inner));
  }
  case OpKind::Swish: {
    Expr ax = bin(BinOp::Mul, literal(t, n.floatAttr("alpha")), x);
    return bin(BinOp::Div, x,
               bin(BinOp::Add, one, call("exp", bin(BinOp::Sub, zero, ax))));
  }
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
    BinOp op = ops.at(n.op());
    // One element keeps its correctly rounded division: there is no
    // throughput to gain, and a scale computed per run (DynamicQuantize-
    // Linear's (max - min) / 255) sets a grid that values are rounded to,
    // where an ulp of the scale moves whole steps (ONNX Runtime's
    // dynamically quantized ResNet-18: 234 of the first block's 200,704
    // uint8 activations one step apart, the logits 0.6%).
    if (n.op() == OpKind::Div && !out->type().numel().isConstValue(1))
      if (Expr r = reciprocalOfConstant(n.input(1), outT, ctx); r.defined()) {
        op = BinOp::Mul; // a * (1 / c): see reciprocalOfConstant
        b = r;
      }
    Expr v = bin(op, a, b);
    if (v.type() != outT)
      v = Cast::make(outT, v);
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  case OpKind::BitwiseAnd:
  case OpKind::BitwiseOr:
  case OpKind::BitwiseXor:
  case OpKind::BitShift: {
    // Generic calls that the OpenCL printer turns into the helper of the
    // integer type (cl_scalar.h: lowerBitwiseCall).
    const char *name = n.op() == OpKind::BitwiseAnd   ? "aotc_bitand"
                       : n.op() == OpKind::BitwiseOr  ? "aotc_bitor"
                       : n.op() == OpKind::BitwiseXor ? "aotc_bitxor"
                       : n.stringAttr("direction") == "LEFT" ? "aotc_shl"
                                                             : "aotc_shr";
    ctx.addPointwise(out, Call::make(outT, name, {operand(n, 0, ctx),
                                                  operand(n, 1, ctx)}));
    return Status::ok();
  }
  case OpKind::BitwiseNot:
    ctx.addPointwise(out, Call::make(outT, "aotc_bitnot", {operand(n, 0, ctx)}));
    return Status::ok();
  case OpKind::Mod: {
    Expr a = operand(n, 0, ctx), b = operand(n, 1, ctx);
    Expr v;
    if (isFloat(outT))
      v = Call::make(outT, "fmod", {a, b});
    else if (n.intAttr("fmod") == 0) // the divisor's sign (Python's %)
      v = bin(BinOp::Mod, a, b);
    else // the dividend's sign (C's %); x mod 0 is 0, as for fmod=0
      v = Select::make(bin(BinOp::EQ, b, literal(outT, 0)), literal(outT, 0),
                       bin(BinOp::Sub, a,
                           bin(BinOp::Mul, b, bin(BinOp::Div, a, b))));
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  case OpKind::PRelu: {
    Expr x = operand(n, 0, ctx), slope = operand(n, 1, ctx);
    ctx.addPointwise(out, Select::make(bin(BinOp::LT, x, literal(outT, 0)),
                                       bin(BinOp::Mul, slope, x), x));
    return Status::ok();
  }
  case OpKind::Sum:
  case OpKind::Mean: {
    Expr v = operand(n, 0, ctx);
    for (size_t i = 1; i < n.numInputs(); ++i)
      v = bin(BinOp::Add, v, operand(n, i, ctx));
    if (n.op() == OpKind::Mean)
      v = bin(BinOp::Div, v,
              literal(outT, static_cast<double>(n.numInputs())));
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  case OpKind::Pow: {
    Expr a = operand(n, 0, ctx), b = operand(n, 1, ctx);
    // A float base raised to a compile-time exponent of 1, 2 or 3 (the
    // variance of a LayerNormalization written as Pow(x - mean, 2)) is
    // multiplied out: the same value as pow (x * x is correctly rounded;
    // x * x * x is within the 16 ulp OpenCL allows pow) at a fraction of its
    // cost (about 400 cycles per element through PoCL's pow).
    if (auto e = constantScalar(n.input(1), ctx); e && isFloat(a.type()) &&
                                                (*e == 1 || *e == 2 || *e == 3)) {
      Expr v = a;
      for (double k = 1; k < *e; ++k)
        v = bin(BinOp::Mul, v, a);
      ctx.addPointwise(out, v);
      return Status::ok();
    }
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
        v = combineWith(op == BinOp::Max ? Combiner::Max : Combiner::Min, v, x);
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
    // Opset 11 made min and max inputs; before, attributes. At opsets 6-10
    // an absent one is its default, the lowest and the largest float
    // (an infinity is clamped to them: ONNX's reference and ONNX Runtime);
    // at 1-5 and from 11 an absent bound clamps nothing.
    const int64_t opset = ctx.graph().opsetVersion;
    const bool attrDefaults = opset >= 6 && opset <= 10;
    const double fmax = std::numeric_limits<float>::max();
    // A float bound given as a constant is a literal (scalarOperand: shape
    // inference froze it).
    lo = n.hasAttr("min")  ? literal(outT, n.floatAttr("min"))
         : attrDefaults    ? literal(outT, -fmax)
                           : scalarOperand(n, 1, ctx, Expr());
    hi = n.hasAttr("max")  ? literal(outT, n.floatAttr("max"))
         : attrDefaults    ? literal(outT, fmax)
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
