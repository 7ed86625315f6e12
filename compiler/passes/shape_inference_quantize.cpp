/// \file
/// Shape inference of linear quantization (opsets 10-25):
///   QuantizeLinear:   y = saturate(round_even(x / scale) + zero_point)
///   DequantizeLinear: y = (x - zero_point) * scale
/// The output has x's shape. The scale's shape gives the granularity, as
/// ONNX's reference implementation reads it: one element (per tensor), a
/// vector of x's dim `axis` (per axis), or x's shape with dim `axis`
/// ceil(D / block_size) (blocked, opset 21). The zero point has the
/// scale's shape. Records the granularity for the lowering
/// (compiler/lowering/lower_quantize.cpp) as `aotc_granularity` (0, 1, 2)
/// and `aotc_axis` (normalized).
///
/// Integer types only: float8, int4 and int2 are refused where the model is
/// imported (unsupported dtypes), an int32 or float8e8m0 scale here.
#include "compiler/passes/shape_inference_internal.h"

namespace aotc {
namespace shape_inference {

namespace {

bool isQuantized(DType t) {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::UInt16 ||
         t == DType::Int16;
}

bool isScale(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}

/// An ONNX dtype code of an attribute as a DType, or an error naming it.
Expected<DType> dtypeAttr(const Node &n, const char *name) {
  int64_t code = n.intAttr(name);
  DType t;
  if (!dtypeFromCode(code, t))
    return makeError(n.describe(), ": attribute '", name,
                     "': unsupported dtype ", code);
  return t;
}

/// Fails unless the scale (input 1) is f32, f16 or bf16.
Status requireScale(const Node &n) {
  DType t = inputType(n, 1).dtype;
  if (!isScale(t))
    return makeError(n.describe(), ": ", inputLabel(n, 1),
                     " (scale) must be f32, f16 or bf16, got ", dtypeName(t));
  return Status::ok();
}

enum Granularity : int64_t { kPerTensor = 0, kPerAxis = 1, kBlocked = 2 };

/// The granularity of the scale (input 1), checked against x (input 0) and
/// the zero point (input 2, if given), written onto the node.
Status inferGranularity(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  const TensorType &scale = inputType(n, 1);
  if (n.input(2)) {
    const TensorType &zp = inputType(n, 2);
    if (zp.rank() != scale.rank())
      return makeError(n.describe(), ": ", inputLabel(n, 2),
                       " (zero point) must have the scale's shape ",
                       scale.str(), ", got ", zp.str());
    for (int k = 0; k < zp.rank(); ++k)
      AOTC_RETURN_IF_ERROR(requireEqual(
          c, n, zp.dims[k], scale.dims[k],
          "dim " + std::to_string(k) + " of the zero point and of the scale"));
  }
  const int64_t rank = x.rank();
  const int64_t blockSize = n.intAttr("block_size");
  if (blockSize < 0)
    return makeError(n.describe(), ": block_size must be positive, got ",
                     blockSize);
  if (simplifyDim(c, scale.numel()).isConstValue(1)) {
    n.setAttr("aotc_granularity", Attribute{int64_t{kPerTensor}, std::nullopt});
    n.setAttr("aotc_axis", Attribute{int64_t{0}, std::nullopt});
    return Status::ok();
  }
  if (c.opset < 13)
    return makeError(n.describe(), ": ", inputLabel(n, 1),
                     " (scale) must have one element before opset 13, got ",
                     scale.str());
  int64_t axis = n.intAttr("axis");
  if (axis < -rank || axis >= rank)
    return makeError(n.describe(), ": axis ", axis,
                     " is out of range for an input of rank ", rank);
  if (axis < 0)
    axis += rank;
  if (blockSize == 0) {
    if (scale.rank() != 1)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " (scale) must have one element or be a vector of "
                       "dim ",
                       axis, " of the input (per axis), got ", scale.str(),
                       " (blocked quantization needs block_size)");
    AOTC_RETURN_IF_ERROR(
        requireEqual(c, n, scale.dims[0], x.dims[axis],
                     "the scale's length and dim " + std::to_string(axis) +
                         " of the input"));
    n.setAttr("aotc_granularity", Attribute{int64_t{kPerAxis}, std::nullopt});
  } else {
    if (scale.rank() != rank)
      return makeError(n.describe(), ": ", inputLabel(n, 1),
                       " (scale) of blocked quantization must have the "
                       "input's rank ",
                       rank, ", got ", scale.str());
    for (int64_t k = 0; k < rank; ++k) {
      Expr want = k == axis ? simplifyDim(c, Binary::make(
                                                 BinOp::FloorDiv,
                                                 x.dims[k] + Expr(blockSize - 1),
                                                 Expr(blockSize)))
                            : x.dims[k];
      AOTC_RETURN_IF_ERROR(requireEqual(
          c, n, scale.dims[k], want,
          k == axis ? "dim " + std::to_string(k) +
                          " of the scale and ceil(dim / block_size) of the "
                          "input"
                    : "dim " + std::to_string(k) +
                          " of the scale and of the input"));
    }
    n.setAttr("aotc_granularity", Attribute{int64_t{kBlocked}, std::nullopt});
  }
  n.setAttr("aotc_axis", Attribute{axis, std::nullopt});
  return Status::ok();
}

Status inferQuantizeLinear(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  DType xT = x.dtype;
  if (!isScale(xT) && xT != DType::Int32)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must be f32, f16, bf16 or i32, got ",
                     dtypeName(xT));
  AOTC_RETURN_IF_ERROR(requireScale(n));
  DType outT = DType::UInt8;
  bool haveDtype = n.intAttr("output_dtype") != 0;
  if (haveDtype) {
    AOTC_ASSIGN_OR_RETURN(outT, dtypeAttr(n, "output_dtype"));
  }
  if (n.input(2)) {
    DType zT = inputType(n, 2).dtype;
    if (haveDtype && zT != outT)
      return makeError(n.describe(), ": output_dtype ", dtypeName(outT),
                       " differs from the zero point's dtype ",
                       dtypeName(zT));
    outT = zT;
  }
  if (!isQuantized(outT))
    return makeError(n.describe(), ": quantization to ", dtypeName(outT),
                     " is not supported (u8, i8, u16 and i16 are)");
  if (n.intAttr("precision") != 0) {
    AOTC_ASSIGN_OR_RETURN(DType p, dtypeAttr(n, "precision"));
    if (!isScale(p))
      return makeError(n.describe(), ": attribute 'precision': ",
                       dtypeName(p),
                       " is not supported (f32, f16 and bf16 are)");
  }
  AOTC_RETURN_IF_ERROR(inferGranularity(c, n));
  setResult(c, n, 0, outT, x.dims);
  return Status::ok();
}

Status inferDequantizeLinear(Context &c, Node &n) {
  const TensorType &x = inputType(n, 0);
  DType xT = x.dtype;
  if (!isQuantized(xT) && xT != DType::Int32)
    return makeError(n.describe(), ": ", inputLabel(n, 0),
                     " must be u8, i8, u16, i16 or i32, got ",
                     dtypeName(xT));
  if (n.input(2)) {
    AOTC_RETURN_IF_ERROR(requireSameDType(n, 0, 2));
  }
  AOTC_RETURN_IF_ERROR(requireScale(n));
  DType outT = inputType(n, 1).dtype;
  if (n.intAttr("output_dtype") != 0) {
    AOTC_ASSIGN_OR_RETURN(outT, dtypeAttr(n, "output_dtype"));
    if (!isScale(outT))
      return makeError(n.describe(), ": attribute 'output_dtype': ",
                       dtypeName(outT),
                       " is not supported (f32, f16 and bf16 are)");
  }
  AOTC_RETURN_IF_ERROR(inferGranularity(c, n));
  setResult(c, n, 0, outT, x.dims);
  return Status::ok();
}

} // namespace

Status inferQuantize(Context &c, Node &n) {
  switch (n.op()) {
  case OpKind::QuantizeLinear:
    return inferQuantizeLinear(c, n);
  case OpKind::DequantizeLinear:
    return inferDequantizeLinear(c, n);
  default:
    return makeError(n.describe(), ": not an op of shape_inference_quantize");
  }
}

} // namespace shape_inference
} // namespace aotc
