/// \file
/// Shape inference of element-wise ops: NumPy broadcasting, result dtypes,
/// and symbolic data of integer shape arithmetic.
#include "compiler/passes/shape_inference_internal.h"

#include "ir/scalar_ops.h"

namespace aotc {
namespace shape_inference {

namespace {

bool isIntegral(DType t) { return !isFloat(t) && t != DType::Bool; }

/// Broadcast shape of all inputs.
Expected<std::vector<Expr>> broadcastInputs(const Context &c, const Node &n) {
  std::vector<Expr> dims = inputType(n, 0).dims;
  for (size_t i = 1; i < n.numInputs(); ++i) {
    AOTC_ASSIGN_OR_RETURN(dims,
                          broadcastShapes(c, n, dims, inputType(n, i).dims));
  }
  return dims;
}

/// Element \p i of the symbolic data \p d broadcast to \p count elements.
const Expr &elementAt(const std::vector<Expr> &d, size_t i) {
  return d.size() == 1 ? d[0] : d[i];
}

/// Symbolic data of an element-wise op over small integer tensors, when all
/// inputs have it and the output is small. Elements are i64 expressions that
/// stand for values of the output dtype: constants fold with the semantics
/// of ir/scalar_ops.h (wrapping to the dtype's width), and an expression
/// over symbols is kept only where its declared range proves that it fits
/// the dtype (otherwise the value is left to the kernels, which wrap).
void propagateData(const Context &c, Node &n) {
  const TensorType &outType = n.output(0)->type();
  if (outType.rank() > 1 || !outType.isStatic())
    return;
  DType outT = outType.dtype;
  // The dtype the arithmetic happens in (Cast: the input's).
  DType opT = n.numInputs() > 0 && n.input(0) ? n.input(0)->type().dtype : outT;
  size_t count = outType.rank() == 0 ? 1 : outType.staticDims()[0];
  std::vector<const std::vector<Expr> *> ins;
  for (const Value *v : n.inputs()) {
    if (!v || !v->symbolicData() || v->type().rank() > 1)
      return;
    size_t sz = v->symbolicData()->size();
    if (sz != 1 && sz != count)
      return;
    ins.push_back(&*v->symbolicData());
  }
  auto fits = [&](const Expr &e, DType t) {
    int64_t v;
    if (e.isConst(v))
      return scalar::fits(t, v);
    auto b = boundsOf(e, c.env);
    return b && b->min >= scalar::minOf(t) && b->max <= scalar::maxOf(t) &&
           b->min > INT64_MIN && b->max < INT64_MAX;
  };
  std::vector<Expr> out;
  for (size_t i = 0; i < count; ++i) {
    std::vector<Expr> args;
    for (const auto *d : ins)
      args.push_back(simplifyDim(c, elementAt(*d, i)));
    std::vector<int64_t> k(args.size());
    bool allConst = true;
    for (size_t j = 0; j < args.size(); ++j)
      allConst &= args[j].isConst(k[j]);
    Expr r;
    switch (n.op()) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
      if (allConst) {
        int64_t v = n.op() == OpKind::Add   ? scalar::add(opT, k[0], k[1])
                    : n.op() == OpKind::Sub ? scalar::sub(opT, k[0], k[1])
                                            : scalar::mul(opT, k[0], k[1]);
        r = Expr(v);
        break;
      }
      r = n.op() == OpKind::Add   ? args[0] + args[1]
          : n.op() == OpKind::Sub ? args[0] - args[1]
                                  : args[0] * args[1];
      break;
    case OpKind::Div: {
      if (allConst) {
        r = Expr(scalar::div(opT, k[0], k[1])); // truncating, x / 0 = 0
        break;
      }
      auto ba = boundsOf(args[0], c.env), bb = boundsOf(args[1], c.env);
      if (!bb || bb->min <= 0)
        return;
      if (ba && ba->min >= 0) {
        r = floorDiv(args[0], args[1]); // = truncation for these signs
        break;
      }
      // A numerator of either sign (a difference of sizes): truncation
      // toward zero, as the kernels divide.
      r = Select::make(cmp(BinOp::GE, args[0], Expr(0)),
                       floorDiv(args[0], args[1]),
                       Expr(0) - floorDiv(Expr(0) - args[0], args[1]));
      break;
    }
    case OpKind::Max:
    case OpKind::Min:
      r = args[0];
      for (size_t j = 1; j < args.size(); ++j)
        r = n.op() == OpKind::Max ? maxOf(c, r, args[j]) : minOf(c, r, args[j]);
      break;
    case OpKind::Equal:
      if (proveEqual(args[0], args[1], c.env))
        r = Expr(1);
      else if (allConst)
        r = Expr(k[0] == k[1] ? 1 : 0);
      else
        return;
      break;
    case OpKind::Less:
    case OpKind::Greater:
    case OpKind::LessOrEqual:
    case OpKind::GreaterOrEqual:
      if (!allConst)
        return;
      r = Expr(n.op() == OpKind::Less           ? k[0] < k[1]
               : n.op() == OpKind::Greater      ? k[0] > k[1]
               : n.op() == OpKind::LessOrEqual  ? k[0] <= k[1]
                                                : k[0] >= k[1]);
      break;
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
      if (!allConst)
        return;
      r = Expr(n.op() == OpKind::And  ? (k[0] && k[1])
               : n.op() == OpKind::Or ? (k[0] || k[1])
                                      : ((k[0] != 0) != (k[1] != 0)));
      break;
    case OpKind::Not:
      if (!allConst)
        return;
      r = Expr(k[0] ? 0 : 1);
      break;
    case OpKind::Mod:
      if (!allConst) {
        // Floor mod (fmod 0, integers) by a positive divisor: the IR's mod
        // ("same" padding: -dim mod stride).
        auto bb = boundsOf(args[1], c.env);
        if (n.intAttr("fmod") != 0 || !bb || bb->min <= 0)
          return;
        r = mod(args[0], args[1]);
        break;
      }
      if (n.intAttr("fmod") == 0) {
        r = Expr(scalar::floorMod(opT, k[0], k[1]));
      } else { // the dividend's sign; x mod 0 = 0 as in the kernels
        int64_t q = scalar::div(opT, k[0], k[1]);
        r = Expr(k[1] == 0 ? 0
                           : scalar::sub(opT, k[0], scalar::mul(opT, k[1], q)));
      }
      break;
    case OpKind::Where:
      if (!args[0].isConst(k[0]))
        return;
      r = k[0] ? args[1] : args[2];
      break;
    case OpKind::Cast:
      // Integer to integer: wrap to the target width.
      if (allConst) {
        r = Expr(scalar::wrapSigned(outT, k[0]));
        break;
      }
      r = args[0];
      break;
    case OpKind::Identity:
      r = args[0];
      break;
    case OpKind::Neg:
      if (allConst) {
        r = Expr(scalar::sub(opT, 0, k[0])); // wraps like the kernel
        break;
      }
      r = Expr(0) - args[0];
      break;
    case OpKind::Abs:
    case OpKind::Relu:
      if (!allConst)
        return;
      r = Expr(n.op() == OpKind::Relu ? std::max<int64_t>(k[0], 0)
                                      : k[0] < 0 ? scalar::sub(opT, 0, k[0])
                                                 : k[0]);
      break;
    default:
      return;
    }
    r = simplifyDim(c, r);
    if (!fits(r, outT))
      return;
    out.push_back(r);
  }
  setResultData(c, n, 0, std::move(out));
}

} // namespace

Status inferElementwise(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  switch (n.op()) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Mod:
  case OpKind::Sum:
  case OpKind::Mean:
  case OpKind::Max:
  case OpKind::Min: {
    if (n.op() == OpKind::Mod && isFloat(x.dtype) && n.intAttr("fmod") != 1)
      return makeError(n.describe(), ": attribute 'fmod' must be 1 for ",
                       dtypeName(x.dtype), " inputs");
    for (size_t i = 1; i < n.numInputs(); ++i)
      AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, i));
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> dims, broadcastInputs(c, n));
    setResult(c, n, 0, x.dtype, std::move(dims));
    if (isIntegral(x.dtype))
      propagateData(c, n);
    return Status::ok();
  }
  case OpKind::Pow: {
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> dims, broadcastInputs(c, n));
    setResult(c, n, 0, x.dtype, std::move(dims));
    return Status::ok();
  }
  case OpKind::BitwiseAnd:
  case OpKind::BitwiseOr:
  case OpKind::BitwiseXor:
  case OpKind::BitShift:
  case OpKind::BitwiseNot: {
    // Integers (BitShift: unsigned ones, as ONNX defines it).
    bool shift = n.op() == OpKind::BitShift;
    for (size_t i = 0; i < n.numInputs(); ++i) {
      DType t = inputType(n, i).dtype;
      bool ok = shift ? t == DType::UInt8 || t == DType::UInt16 ||
                            t == DType::UInt32
                      : isIntegral(t);
      if (!ok)
        return makeError(n.describe(), ": ", inputLabel(n, i), " must be ",
                         shift ? "uint8, uint16 or uint32" : "an integer",
                         ", got ", dtypeName(t));
    }
    if (shift && n.stringAttr("direction") != "LEFT" &&
        n.stringAttr("direction") != "RIGHT")
      return makeError(n.describe(), ": attribute 'direction' must be LEFT "
                                     "or RIGHT, got '",
                       n.stringAttr("direction"), "'");
    if (n.op() == OpKind::BitwiseNot) {
      setResult(c, n, 0, x.dtype, x.dims);
      return Status::ok();
    }
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, 1));
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> dims, broadcastInputs(c, n));
    setResult(c, n, 0, x.dtype, std::move(dims));
    return Status::ok();
  }
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor:
    for (size_t i = 0; i < 2; ++i)
      if (inputType(n, i).dtype != DType::Bool)
        return makeError(n.describe(), ": ", inputLabel(n, i),
                         " must be bool, got ",
                         dtypeName(inputType(n, i).dtype));
    [[fallthrough]];
  case OpKind::Equal:
  case OpKind::Less:
  case OpKind::Greater:
  case OpKind::LessOrEqual:
  case OpKind::GreaterOrEqual: {
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, 1));
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> dims, broadcastInputs(c, n));
    setResult(c, n, 0, DType::Bool, std::move(dims));
    if (isIntegral(x.dtype) || x.dtype == DType::Bool)
      propagateData(c, n);
    return Status::ok();
  }
  case OpKind::Where: {
    if (x.dtype != DType::Bool)
      return makeError(n.describe(), ": ", inputLabel(n, 0),
                       " (condition) must be bool, got ", dtypeName(x.dtype));
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 1, 2));
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> dims, broadcastInputs(c, n));
    DType dt = inputType(n, 1).dtype;
    setResult(c, n, 0, dt, std::move(dims));
    if (isIntegral(dt))
      propagateData(c, n);
    return Status::ok();
  }
  case OpKind::Not:
    if (x.dtype != DType::Bool)
      return makeError(n.describe(), ": ", inputLabel(n, 0),
                       " must be bool, got ", dtypeName(x.dtype));
    setResult(c, n, 0, DType::Bool, x.dims);
    propagateData(c, n);
    return Status::ok();
  case OpKind::Cast: {
    int64_t to = n.intAttr("to");
    DType dt;
    if (!dtypeFromCode(to, dt))
      return makeError(n.describe(), ": attribute 'to': unsupported dtype ",
                       to);
    setResult(c, n, 0, dt, x.dims);
    if (isIntegral(x.dtype) && isIntegral(dt))
      propagateData(c, n);
    // Integer sizes cast to float (a window's length for a float Range):
    // the data as float expressions, which only derived sizes read.
    if (isIntegral(x.dtype) && (dt == DType::Float32 || dt == DType::Float64) &&
        n.input(0)->symbolicData()) {
      std::vector<Expr> data;
      for (const Expr &e : *n.input(0)->symbolicData()) {
        int64_t k;
        data.push_back(e.isConst(k) ? FloatImm::make(dt == DType::Float32
                                                         ? double(float(k))
                                                         : double(k),
                                                     dt)
                                    : Cast::make(dt, e));
      }
      n.output(0)->setSymbolicData(std::move(data));
    }
    return Status::ok();
  }
  case OpKind::CastLike:
    // The second input gives the dtype only (ONNX's checker has checked it
    // is one CastLike accepts; aotc's dtypes are all castable).
    setResult(c, n, 0, inputType(n, 1).dtype, x.dims);
    return Status::ok();
  case OpKind::Identity:
    setResult(c, n, 0, x.dtype, x.dims);
    if (n.input(0)->symbolicData())
      setResultData(c, n, 0, *n.input(0)->symbolicData());
    return Status::ok();
  case OpKind::Clip:
    for (size_t i = 1; i < n.numInputs(); ++i) {
      if (!n.input(i))
        continue;
      AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, i));
      if (inputType(n, i).rank() != 0 &&
          !inputType(n, i).numel().isConstValue(1))
        return makeError(n.describe(), ": ", inputLabel(n, i),
                         " must be a scalar, got ", inputType(n, i).str());
      // A float bound given as a constant is compiled into the code as a
      // literal (lower_elementwise.cpp): no buffer argument for it (two per
      // ReLU6 were 70 of MobileNetV2's kernel arguments, which PoCL's 1,024
      // bytes a launch cut into 7 persistent launches instead of 4), and the
      // clamp against an immediate. Its initializer no longer takes updates.
      // Not a default a run may replace (an initializer the graph also
      // lists as an input): that one stays a buffer, and updatable.
      if (isFloat(inputType(n, i).dtype) && n.input(i)->isConstant() &&
          !n.input(i)->overridable())
        c.graph.freezeInitializer(n.input(i),
                                  std::string("read at compile time as the ") +
                                      (i == 1 ? "min" : "max") + " of " +
                                      n.describe());
    }
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  case OpKind::PRelu: {
    // The slope broadcasts to X (unidirectionally).
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, 1));
    AOTC_ASSIGN_OR_RETURN(std::vector<Expr> dims, broadcastInputs(c, n));
    if (dims.size() != x.dims.size())
      return makeError(n.describe(), ": ", inputLabel(n, 1), " ",
                       inputType(n, 1).str(), " does not broadcast to ",
                       x.str());
    for (size_t k = 0; k < dims.size(); ++k)
      AOTC_RETURN_IF_ERROR(
          requireEqual(c, n, dims[k], x.dims[k], "slope dims"));
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  }
  case OpKind::IsNaN:
  case OpKind::IsInf:
    AOTC_RETURN_IF_ERROR(requireFloat(n, 0));
    setResult(c, n, 0, DType::Bool, x.dims);
    return Status::ok();
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
  case OpKind::Tan:
  case OpKind::Round:
  case OpKind::Softplus:
  case OpKind::Softsign:
  case OpKind::Elu:
  case OpKind::Selu:
  case OpKind::Celu:
  case OpKind::HardSigmoid:
  case OpKind::HardSwish:
  case OpKind::Mish:
  case OpKind::ThresholdedRelu:
  case OpKind::Gelu:
  case OpKind::Swish:
    AOTC_RETURN_IF_ERROR(requireFloat(n, 0));
    if (n.op() == OpKind::Gelu && n.stringAttr("approximate") != "none" &&
        n.stringAttr("approximate") != "tanh")
      return makeError(n.describe(), ": attribute 'approximate' has ",
                       "unsupported value '", n.stringAttr("approximate"),
                       "'");
    setResult(c, n, 0, x.dtype, x.dims);
    return Status::ok();
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Reciprocal:
  case OpKind::Erf:
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Sign:
  case OpKind::Floor:
  case OpKind::Ceil:
    setResult(c, n, 0, x.dtype, x.dims);
    if (isIntegral(x.dtype) &&
        (n.op() == OpKind::Neg || n.op() == OpKind::Abs ||
         n.op() == OpKind::Relu))
      propagateData(c, n);
    return Status::ok();
  default:
    return makeError(n.describe(), ": not an element-wise op");
  }
}

} // namespace shape_inference
} // namespace aotc
