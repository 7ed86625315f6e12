/// \file
/// MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv, imported as
/// the Graph IR ops ONNX defines them by (see onnx_internal.h):
///   MatMulInteger:  Y = (A - a_zero_point) @ (B - b_zero_point), in int32
///                   (b's zero points one per column: (A - a_zero_point) @ B
///                   less the rows' sums times them, productByColumns)
///   ConvInteger:    Y = Conv(X - x_zero_point, W - w_zero_point), in int32
///                   (w's zero point one or one per output channel); the
///                   padding of the centred X is 0, X's zero point
///   QLinearConv:    as QLinearMatMul, of that Conv plus the int32 bias,
///                   w's scale one or one per output channel
///   QLinearMatMul:  Y = QuantizeLinear(float(C) * (a_scale * b_scale /
///                   y_scale), 1, y_zero_point) with C the MatMulInteger of
///                   a and b by their zero points
/// The multiplier is one float32 product and quotient, as ONNX Runtime
/// computes it, and QuantizeLinear rounds half to even and saturates. A zero
/// point or scale of A is a scalar, a vector of A's rows (A of rank 2: read
/// as a column, [M, 1]) or [..., M, 1]; one of B a scalar, a vector of B's
/// columns or [..., 1, N]: both broadcast as they are but A's vector. Such
/// a per-row vector is told apart from a scalar by its rank: its type where
/// it is a constant or graph input, ONNX's inference where a node computes
/// it (DynamicQuantizeLinear's zero point, in ONNX Runtime's dynamic
/// quantization).
#include "compiler/frontend/onnx_internal.h"
#include "ir/scalar_ops.h"

#include <cstring>

namespace aotc {
namespace onnx_import {

namespace {

class Expander {
public:
  Expander(Graph &g, std::string name, std::string desc, std::string out,
           const std::map<std::string, onnx::TypeProto> &onnxTypes)
      : g_(g), name_(std::move(name)), desc_(std::move(desc)),
        out_(std::move(out)), onnxTypes_(onnxTypes) {}

  /// A node of \p op over \p in, its result named after the ONNX output.
  Value *node(OpKind op, const std::string &what,
              const std::vector<Value *> &in) {
    Node *n = g_.addNode(op, name_ + "#" + what, in, {out_ + "#" + what});
    return n->output(0);
  }
  Value *cast(Value *v, DType to, const std::string &what) {
    Value *c = node(OpKind::Cast, what, {v});
    c->producer()->setAttr(
        "to", Attribute{static_cast<int64_t>(to), std::nullopt});
    return c;
  }

  /// Whether \p v is int8 or uint8: a constant's or graph input's type is
  /// known at import, a computed value's (DynamicQuantizeLinear's) is
  /// ONNX's inference's.
  bool isByte(const Value *v) const {
    if (!v->producer())
      return v->type().dtype == DType::Int8 || v->type().dtype == DType::UInt8;
    auto it = onnxTypes_.find(v->name());
    if (it == onnxTypes_.end() || !it->second.has_tensor_type())
      return false;
    int t = it->second.tensor_type().elem_type();
    return t == onnx::TensorProto::INT8 || t == onnx::TensorProto::UINT8;
  }

  /// Whether \p v is an integer constant whose every element is 0.
  static bool allZero(const Value *v) {
    if (!v->isConstant() || !v->data().defined() ||
        !scalar::isInteger(v->type().dtype))
      return false;
    const TensorData &d = v->data();
    for (int64_t i = 0; i < d.size(); ++i)
      if (d.data()[i] != 0)
        return false;
    return true;
  }

  /// \p v's rank (-1 where it is not known) and, for a vector, its
  /// length (-1 where not static). A constant's or graph input's type is
  /// known at import; a computed value's (DynamicQuantizeLinear's zero
  /// point) is ONNX's inference's.
  std::pair<int, int64_t> rankAndLength(const Value *v) const {
    int rank = -1;
    int64_t n = -1;
    if (!v->producer()) {
      const TensorType &t = v->type();
      rank = t.rank();
      if (rank == 1 && !t.dims[0].isConst(n))
        n = -1;
    } else if (auto it = onnxTypes_.find(v->name());
               it != onnxTypes_.end() && it->second.has_tensor_type() &&
               it->second.tensor_type().has_shape()) {
      const onnx::TensorShapeProto &s = it->second.tensor_type().shape();
      rank = s.dim_size();
      if (rank == 1 && s.dim(0).has_dim_value())
        n = s.dim(0).dim_value();
    }
    return {rank, n};
  }

  /// \p v (a zero point or scale of A) as a column where it is a vector
  /// of more than one element, so that it broadcasts along A's rows.
  Expected<Value *> rowsAsColumn(Value *v, const char *label) {
    auto [rank, n] = rankAndLength(v);
    if (rank < 0)
      return makeError(desc_, ": the rank of ", label,
                       " is not known at compile time (it tells a per-row "
                       "vector from a scalar)");
    if (rank != 1 || n == 1)
      return v;
    return node(OpKind::Reshape, std::string(label) + "_column",
                {v, g_.addShapeConstant(out_ + "#" + label + "_column_shape",
                                        {-1, 1})});
  }

  /// \p x - \p zeroPoint in int32 (x alone where there is none, or where
  /// it is a constant of zeros: ONNX Runtime's per-channel quantization of
  /// int8 weights is symmetric, one zero point of 0 per column or output
  /// channel; the weight is then read as it is, narrow (fold_program.cpp,
  /// pack_weights.cpp), where a vector of zero points would be folded into
  /// an int32 copy. Such a zero point is frozen: the kernels no longer
  /// read it, so an update of it is refused by name).
  Expected<Value *> centred(Value *x, Value *zeroPoint, bool rows,
                            const char *label) {
    // A computed 8-bit x (DynamicQuantizeLinear's) less an 8-bit zero
    // point is in [-255, 255]: it is computed and stored in int16 and
    // widened where the contraction reads it (fusion.cpp's storesNarrow),
    // so that its kernel sees both factors fit in 16 bits
    // (register_tile.cpp's pairProduct) and reads half the bytes. A graph
    // input or a constant is read as it is and widened in the
    // contraction's loads, where the kernel sees the same.
    const bool narrow = x->producer() && isByte(x) &&
                        (!zeroPoint || isByte(zeroPoint));
    const DType wide = narrow ? DType::Int16 : DType::Int32;
    const char *suffix = narrow ? "_i16" : "_i32";
    Value *xw = cast(x, wide, std::string(label) + suffix);
    auto widened = [&](Value *v) {
      return narrow ? cast(v, DType::Int32, std::string(label) + "_centred")
                    : v;
    };
    if (!zeroPoint)
      return widened(xw);
    if (allZero(zeroPoint)) {
      g_.freezeInitializer(zeroPoint,
                           "read at compile time: its values are all 0, so "
                           "the kernels read the quantized values without it");
      return widened(xw);
    }
    Value *z = zeroPoint;
    if (rows) {
      AOTC_ASSIGN_OR_RETURN(
          z, rowsAsColumn(z, (std::string(label) + "_zero_point").c_str()));
    }
    Value *zw = cast(z, wide, std::string(label) + "_zero_point" + suffix);
    Value *d = node(OpKind::Sub,
                    std::string(label) + (narrow ? "_centred16" : "_centred"),
                    {xw, zw});
    return widened(d);
  }

  /// Whether \p zeroPoint, B's, is one per column (a vector of more than
  /// one element, or of a length not known) that is not a constant of
  /// zeros (centred drops those).
  bool perColumn(const Value *zeroPoint) const {
    if (!zeroPoint || allZero(zeroPoint))
      return false;
    auto [rank, n] = rankAndLength(zeroPoint);
    return rank == 1 && n != 1;
  }

  /// \p a @ (\p b - \p zeroPoint) in int32 for B's zero points one per
  /// column, as a @ b - rowsum(a) * zeroPoint, named \p name with output
  /// \p output: the same sum of products modulo 2^32 (int32's wrapping
  /// arithmetic distributes), with B read as it is (narrow, in panels
  /// where it is a constant) where B less a zero point per column would
  /// be folded into an int32 copy of it (4 bytes a weight).
  Value *productByColumns(Value *a, Value *b, Value *zeroPoint,
                          const std::string &name, const std::string &output) {
    Value *product = node(OpKind::MatMul, "product_by_columns",
                          {a, cast(b, DType::Int32, "b_i32")});
    Value *rows = node(OpKind::ReduceSum, "a_row_sums",
                       {a, g_.addShapeConstant(out_ + "#a_row_sums_axes", {-1})});
    rows->producer()->setAttr("keepdims", Attribute{int64_t{1}, std::nullopt});
    Value *correction =
        node(OpKind::Mul, "zero_point_correction",
             {rows, cast(zeroPoint, DType::Int32, "b_zero_point_i32")});
    return g_.addNode(OpKind::Sub, name, {product, correction}, {output})
        ->output(0);
  }

  /// QuantizeLinear(float(\p c) * (\p aScale * \p bScale / \p yScale), 1,
  /// \p yZero): the multiplier one float32 product and quotient, as ONNX
  /// Runtime computes it; the result named out_.
  Expected<Value *> requantize(Value *c, Value *aScale, Value *bScale,
                               Value *yScale, Value *yZero) {
    // The scales in float32 (float16 and bfloat16 ones widened exactly).
    Value *scales = node(OpKind::Mul, "scales",
                         {cast(aScale, DType::Float32, "a_scale_f32"),
                          cast(bScale, DType::Float32, "b_scale_f32")});
    Value *multiplier =
        node(OpKind::Div, "multiplier",
             {scales, cast(yScale, DType::Float32, "y_scale_f32")});
    Value *scaled = node(OpKind::Mul, "scaled",
                         {cast(c, DType::Float32, "product"), multiplier});
    // Quantized by a scale of 1 of the zero point's shape ([] or [1]).
    int64_t n;
    if (yZero->producer() || yZero->type().rank() > 1 ||
        (yZero->type().rank() == 1 &&
         !(yZero->type().dims[0].isConst(n) && n == 1)))
      return makeError(desc_, ": y_zero_point must be a constant or graph "
                              "input of one element (per-tensor output "
                              "quantization)");
    std::vector<uint8_t> one(sizeof(float));
    const float unit = 1.0f;
    std::memcpy(one.data(), &unit, sizeof unit);
    Value *unitScale = g_.addConstant(
        out_ + "#unit_scale", TensorType{DType::Float32, yZero->type().dims},
        TensorData::fromBytes(std::move(one)), "", /*folded=*/true);
    return g_
        .addNode(OpKind::QuantizeLinear, name_, {scaled, unitScale, yZero},
                 {out_})
        ->output(0);
  }

  Graph &g_;
  std::string name_, desc_, out_;
  const std::map<std::string, onnx::TypeProto> &onnxTypes_;
};

} // namespace

Expected<Value *>
expandQuantizedMatMul(Graph &g, OpKind op, const std::string &name,
                      const std::string &desc,
                      const std::vector<Value *> &inputs,
                      const std::string &output,
                      const std::map<std::string, onnx::TypeProto> &onnxTypes) {
  auto in = [&](size_t i) -> Value * {
    return i < inputs.size() ? inputs[i] : nullptr;
  };
  Expander e(g, name, desc, output, onnxTypes);
  if (op == OpKind::MatMulInteger) {
    AOTC_ASSIGN_OR_RETURN(Value * a, e.centred(in(0), in(2), true, "a"));
    if (e.perColumn(in(3)))
      return e.productByColumns(a, in(1), in(3), name, output);
    AOTC_ASSIGN_OR_RETURN(Value * b, e.centred(in(1), in(3), false, "b"));
    return g.addNode(OpKind::MatMul, name, {a, b}, {output})->output(0);
  }
  // QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point,
  // y_scale, y_zero_point (all eight present).
  for (size_t i = 0; i < 8; ++i)
    if (!in(i))
      return makeError(desc, ": input ", i, " is missing");
  AOTC_ASSIGN_OR_RETURN(Value * a, e.centred(in(0), in(2), true, "a"));
  Value *c;
  if (e.perColumn(in(5))) {
    c = e.productByColumns(a, in(3), in(5), name + "#product_i32",
                           output + "#product_i32");
  } else {
    AOTC_ASSIGN_OR_RETURN(Value * b, e.centred(in(3), in(5), false, "b"));
    c = e.node(OpKind::MatMul, "product_i32", {a, b});
  }
  AOTC_ASSIGN_OR_RETURN(Value * aScale, e.rowsAsColumn(in(1), "a_scale"));
  return e.requantize(c, aScale, in(4), in(6), in(7));
}

Expected<Value *>
expandQuantizedConv(Graph &g, OpKind op, const std::string &name,
                    const std::string &desc, const std::vector<Value *> &inputs,
                    const std::string &output,
                    const std::vector<std::pair<std::string, Attribute>> &attrs,
                    int64_t opset,
                    const std::map<std::string, onnx::TypeProto> &onnxTypes) {
  auto in = [&](size_t i) -> Value * {
    return i < inputs.size() ? inputs[i] : nullptr;
  };
  Expander e(g, name, desc, output, onnxTypes);
  const bool qlinear = op == OpKind::QLinearConv;
  if (qlinear)
    for (size_t i = 0; i < 8; ++i)
      if (!in(i))
        return makeError(desc, ": input ", i, " is missing");
  Value *x = in(0), *w = in(qlinear ? 3 : 1);
  Value *xZero = in(2), *wZero = in(qlinear ? 5 : 3);
  // (The ranks of x and w are checked with the Conv's shapes; here w's
  // tells how a per-channel zero point or scale broadcasts.)
  const int rank = e.rankAndLength(w).first;
  if (rank < 3)
    return makeError(desc, ": the weight's rank ",
                     rank < 0 ? std::string("is not known at compile time")
                              : std::to_string(rank) + " is below 3");
  // x's zero point is one value (ONNX requires a scalar); w's one or one
  // per output channel, [M] as [M, 1, ...] along the weight's dims.
  auto oneValue = [&](const Value *v) {
    auto [r, n] = e.rankAndLength(v);
    return r == 0 || (r == 1 && n == 1);
  };
  if (xZero && !oneValue(xZero))
    return makeError(desc, ": x_zero_point must be one value");
  auto perChannel = [&](Value *v, int dims, const char *label)
      -> Expected<Value *> {
    if (!v || oneValue(v))
      return v;
    if (e.rankAndLength(v).first != 1)
      return makeError(desc, ": ", label, " must be one value or one per "
                       "output channel");
    std::vector<int64_t> shape(dims, 1);
    shape[0] = -1;
    return e.node(OpKind::Reshape, std::string(label) + "_channels",
                  {v, g.addShapeConstant(output + "#" + label + "_shape",
                                         shape)});
  };
  AOTC_ASSIGN_OR_RETURN(Value * wZeroCh, perChannel(wZero, rank, "w_zero_point"));
  AOTC_ASSIGN_OR_RETURN(Value * xc, e.centred(x, xZero, false, "x"));
  AOTC_ASSIGN_OR_RETURN(Value * wc, e.centred(w, wZeroCh, false, "w"));
  std::vector<Value *> convIn = {xc, wc};
  if (qlinear && in(8))
    convIn.push_back(in(8)); // the int32 bias, added before requantizing
  Node *conv = g.addNode(OpKind::Conv, qlinear ? name + "#product_i32" : name,
                         convIn,
                         {qlinear ? output + "#product_i32" : output});
  for (const auto &[attrName, attr] : attrs)
    conv->setAttr(attrName, attr);
  AOTC_RETURN_IF_ERROR(checkAttributeValues(*conv, opset));
  if (!qlinear)
    return conv->output(0);
  // y = QuantizeLinear(float(conv) * x_scale * w_scale / y_scale): w's
  // scale per output channel along the result's dim 1.
  AOTC_ASSIGN_OR_RETURN(Value * wScale, perChannel(in(4), rank - 1, "w_scale"));
  return e.requantize(conv->output(0), in(1), wScale, in(6), in(7));
}

} // namespace onnx_import
} // namespace aotc
