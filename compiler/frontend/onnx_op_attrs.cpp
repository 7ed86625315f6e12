/// \file
/// The attributes aotc supports per op (names and kinds, for opsets 7-17),
/// and the checks of attribute values it supports only in part.
#include "compiler/frontend/onnx_internal.h"

#include <algorithm>

namespace aotc {
namespace onnx_import {

namespace {

using AK = onnx::AttributeProto_AttributeType;

struct AttrSpec {
  const char *name;
  AK kind;
};
using AttrSpecs = std::vector<AttrSpec>;

constexpr AK kInt = onnx::AttributeProto_AttributeType_INT;
constexpr AK kFloat = onnx::AttributeProto_AttributeType_FLOAT;
constexpr AK kString = onnx::AttributeProto_AttributeType_STRING;
constexpr AK kInts = onnx::AttributeProto_AttributeType_INTS;
constexpr AK kFloats = onnx::AttributeProto_AttributeType_FLOATS;
constexpr AK kStrings = onnx::AttributeProto_AttributeType_STRINGS;
constexpr AK kTensor = onnx::AttributeProto_AttributeType_TENSOR;
constexpr AK kSparseTensor = onnx::AttributeProto_AttributeType_SPARSE_TENSOR;

const AttrSpecs &attributeTable(OpKind op) {
  static const AttrSpecs kNone;
  static const AttrSpecs kLeakyRelu = {{"alpha", kFloat}};
  static const AttrSpecs kClip = {{"min", kFloat}, {"max", kFloat}};
  static const AttrSpecs kCast = {{"to", kInt}};
  static const AttrSpecs kGemm = {
      {"alpha", kFloat}, {"beta", kFloat}, {"transA", kInt}, {"transB", kInt}};
  static const AttrSpecs kConv = {
      {"auto_pad", kString},   {"dilations", kInts}, {"group", kInt},
      {"kernel_shape", kInts}, {"pads", kInts},      {"strides", kInts}};
  static const AttrSpecs kAxis = {{"axis", kInt}};
  static const AttrSpecs kReduce = {
      {"axes", kInts}, {"keepdims", kInt}, {"noop_with_empty_axes", kInt}};
  static const AttrSpecs kMaxPool = {
      {"auto_pad", kString},   {"ceil_mode", kInt}, {"dilations", kInts},
      {"kernel_shape", kInts}, {"pads", kInts},     {"storage_order", kInt},
      {"strides", kInts}};
  static const AttrSpecs kAveragePool = {
      {"auto_pad", kString},   {"ceil_mode", kInt}, {"count_include_pad", kInt},
      {"kernel_shape", kInts}, {"pads", kInts},     {"strides", kInts}};
  static const AttrSpecs kBatchNorm = {{"epsilon", kFloat},
                                       {"momentum", kFloat},
                                       {"spatial", kInt},
                                       {"is_test", kInt},
                                       {"training_mode", kInt}};
  static const AttrSpecs kReshape = {{"allowzero", kInt}};
  static const AttrSpecs kTranspose = {{"perm", kInts}};
  static const AttrSpecs kAxes = {{"axes", kInts}};
  static const AttrSpecs kSlice = {
      {"starts", kInts}, {"ends", kInts}, {"axes", kInts}};
  static const AttrSpecs kPad = {
      {"mode", kString}, {"pads", kInts}, {"value", kFloat}};
  static const AttrSpecs kShape = {{"start", kInt}, {"end", kInt}};
  static const AttrSpecs kConstant = {
      {"value", kTensor},          {"value_float", kFloat},
      {"value_floats", kFloats},   {"value_int", kInt},
      {"value_ints", kInts},       {"value_string", kString},
      {"value_strings", kStrings}, {"sparse_value", kSparseTensor}};
  static const AttrSpecs kConstantOfShape = {{"value", kTensor}};

  switch (op) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Pow:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Equal:
  case OpKind::Less:
  case OpKind::Greater:
  case OpKind::Where:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Reciprocal:
  case OpKind::Erf:
  case OpKind::Relu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Identity:
  case OpKind::Not:
  case OpKind::MatMul:
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool:
  case OpKind::Expand:
    return kNone;
  case OpKind::LeakyRelu:
    return kLeakyRelu;
  case OpKind::Clip:
    return kClip;
  case OpKind::Cast:
    return kCast;
  case OpKind::Gemm:
    return kGemm;
  case OpKind::Conv:
    return kConv;
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::Flatten:
  case OpKind::Concat:
  case OpKind::Gather:
    return kAxis;
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
    return kReduce;
  case OpKind::MaxPool:
    return kMaxPool;
  case OpKind::AveragePool:
    return kAveragePool;
  case OpKind::BatchNormalization:
    return kBatchNorm;
  case OpKind::Reshape:
    return kReshape;
  case OpKind::Transpose:
    return kTranspose;
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
    return kAxes;
  case OpKind::Slice:
    return kSlice;
  case OpKind::Pad:
    return kPad;
  case OpKind::Shape:
    return kShape;
  case OpKind::Constant:
    return kConstant;
  case OpKind::ConstantOfShape:
    return kConstantOfShape;
  }
  return kNone;
}

const char *kindName(AK k) {
  switch (k) {
  case onnx::AttributeProto_AttributeType_INT:
    return "an int";
  case onnx::AttributeProto_AttributeType_FLOAT:
    return "a float";
  case onnx::AttributeProto_AttributeType_STRING:
    return "a string";
  case onnx::AttributeProto_AttributeType_INTS:
    return "a list of ints";
  case onnx::AttributeProto_AttributeType_FLOATS:
    return "a list of floats";
  case onnx::AttributeProto_AttributeType_STRINGS:
    return "a list of strings";
  case onnx::AttributeProto_AttributeType_TENSOR:
    return "a tensor";
  case onnx::AttributeProto_AttributeType_SPARSE_TENSOR:
    return "a sparse tensor";
  default:
    return "of another kind";
  }
}

/// An error naming the node and the attribute.
template <typename... Args>
Status attrError(const Node &n, const std::string &attr, Args &&...args) {
  return makeError(n.describe(), ": attribute '", attr, "' ",
                   std::forward<Args>(args)...);
}

Status checkFlag(const Node &n, const std::string &attr) {
  AOTC_ASSIGN_OR_RETURN(int64_t v, n.attrInt(attr, 0));
  if (v != 0 && v != 1)
    return attrError(n, attr, "must be 0 or 1, got ", v);
  return Status::ok();
}

/// Conv, MaxPool, AveragePool: 1-D and 2-D windows, known auto_pad values,
/// consistent list lengths.
Status checkWindowAttrs(const Node &n) {
  AOTC_ASSIGN_OR_RETURN(std::string autoPad,
                        n.attrString("auto_pad", "NOTSET"));
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return attrError(n, "auto_pad", "has unsupported value '", autoPad, "'");
  if (autoPad != "NOTSET" && n.hasAttr("pads"))
    return makeError(n.describe(), ": attributes 'pads' and 'auto_pad' ('",
                     autoPad, "') cannot both be given");
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> kernel,
                        n.attrInts("kernel_shape", {}));
  if (kernel.size() > 2)
    return makeError(n.describe(), ": unsupported ", kernel.size(),
                     "-D window (attribute 'kernel_shape' has ", kernel.size(),
                     " dims); only 1-D and 2-D are supported");
  for (int64_t k : kernel)
    if (k < 1)
      return attrError(n, "kernel_shape", "has a non-positive value ", k);
  for (const char *attr : {"strides", "dilations"}) {
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> vs, n.attrInts(attr, {}));
    if (!kernel.empty() && !vs.empty() && vs.size() != kernel.size())
      return attrError(n, attr, "has ", vs.size(), " values, expected ",
                       kernel.size());
    if (vs.size() > 2)
      return makeError(n.describe(), ": unsupported ", vs.size(),
                       "-D window (attribute '", attr, "')");
    for (int64_t v : vs)
      if (v < 1)
        return attrError(n, attr, "has a non-positive value ", v);
  }
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, n.attrInts("pads", {}));
  if (!kernel.empty() && !pads.empty() && pads.size() != 2 * kernel.size())
    return attrError(n, "pads", "has ", pads.size(), " values, expected ",
                     2 * kernel.size());
  if (pads.size() > 4)
    return makeError(n.describe(), ": unsupported ", pads.size() / 2,
                     "-D window (attribute 'pads')");
  for (int64_t p : pads)
    if (p < 0)
      return attrError(n, "pads", "has a negative value ", p);
  if (n.op() == OpKind::Conv) {
    AOTC_ASSIGN_OR_RETURN(int64_t group, n.attrInt("group", 1));
    if (group < 1)
      return attrError(n, "group", "must be positive, got ", group);
  } else {
    AOTC_RETURN_IF_ERROR(checkFlag(n, "ceil_mode"));
  }
  if (n.op() == OpKind::MaxPool)
    AOTC_RETURN_IF_ERROR(checkFlag(n, "storage_order"));
  if (n.op() == OpKind::AveragePool)
    AOTC_RETURN_IF_ERROR(checkFlag(n, "count_include_pad"));
  return Status::ok();
}

} // namespace

Status checkAttributeNames(OpKind op, const onnx::NodeProto &node,
                           const std::string &nodeDesc) {
  const AttrSpecs &table = attributeTable(op);
  for (const onnx::AttributeProto &a : node.attribute()) {
    auto it = std::find_if(table.begin(), table.end(), [&](const AttrSpec &s) {
      return a.name() == s.name;
    });
    if (it == table.end())
      return makeError(nodeDesc, ": unsupported attribute '", a.name(), "'");
    if (a.type() != it->kind)
      return makeError(nodeDesc, ": attribute '", a.name(), "' must be ",
                       kindName(it->kind), ", got ", kindName(a.type()));
  }
  return Status::ok();
}

Status checkAttributeValues(const Node &n, int64_t opset) {
  switch (n.op()) {
  case OpKind::Conv:
  case OpKind::MaxPool:
  case OpKind::AveragePool:
    return checkWindowAttrs(n);
  case OpKind::BatchNormalization: {
    AOTC_ASSIGN_OR_RETURN(int64_t training, n.attrInt("training_mode", 0));
    if (training != 0)
      return attrError(n, "training_mode",
                       "is 1: only inference mode is supported");
    AOTC_ASSIGN_OR_RETURN(int64_t spatial, n.attrInt("spatial", 1));
    if (spatial != 1)
      return attrError(n, "spatial", "is 0: only spatial=1 is supported");
    return Status::ok();
  }
  case OpKind::Gemm:
    AOTC_RETURN_IF_ERROR(checkFlag(n, "transA"));
    return checkFlag(n, "transB");
  case OpKind::Cast: {
    if (!n.hasAttr("to"))
      return makeError(n.describe(), ": missing attribute 'to'");
    AOTC_ASSIGN_OR_RETURN(int64_t to, n.attrInt("to", 0));
    auto dt = dtypeFromOnnx(static_cast<int32_t>(to));
    if (!dt)
      return dt.status().withContext(n.describe() + ": attribute 'to'");
    return Status::ok();
  }
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
    AOTC_RETURN_IF_ERROR(checkFlag(n, "keepdims"));
    return checkFlag(n, "noop_with_empty_axes");
  case OpKind::Reshape:
    return checkFlag(n, "allowzero");
  case OpKind::Slice:
    if (opset < 10 && (!n.hasAttr("starts") || !n.hasAttr("ends")))
      return makeError(n.describe(),
                       ": attributes 'starts' and 'ends' are required");
    return Status::ok();
  case OpKind::Pad: {
    AOTC_ASSIGN_OR_RETURN(std::string mode, n.attrString("mode", "constant"));
    if (mode != "constant" && mode != "reflect" && mode != "edge")
      return attrError(n, "mode", "has unsupported value '", mode, "'");
    if (opset < 11 && !n.hasAttr("pads"))
      return makeError(n.describe(), ": missing attribute 'pads'");
    return Status::ok();
  }
  case OpKind::ConstantOfShape: {
    auto it = n.attrs().find("value");
    if (it == n.attrs().end())
      return Status::ok();
    if (!it->second.tensor)
      return attrError(n, "value", "must be a tensor");
    if (it->second.tensor->first.numel().isConstValue(1))
      return Status::ok();
    return attrError(n, "value", "must have exactly one element");
  }
  default:
    return Status::ok();
  }
}

} // namespace onnx_import
} // namespace aotc
