/// \file
/// Attribute checks of the frontend: names and kinds against ir/op_attrs.h
/// (the one table of op attributes), and the values aotc supports only in
/// part.
#include "compiler/frontend/onnx_internal.h"
#include "ir/op_attrs.h"

#include <algorithm>

namespace aotc {
namespace onnx_import {

namespace {

/// The kind of an ONNX attribute in aotc's table, if aotc has one for it.
std::optional<AttrKind> kindOf(onnx::AttributeProto_AttributeType t) {
  switch (t) {
  case onnx::AttributeProto_AttributeType_INT:
    return AttrKind::Int;
  case onnx::AttributeProto_AttributeType_FLOAT:
    return AttrKind::Float;
  case onnx::AttributeProto_AttributeType_STRING:
    return AttrKind::String;
  case onnx::AttributeProto_AttributeType_INTS:
    return AttrKind::Ints;
  case onnx::AttributeProto_AttributeType_FLOATS:
    return AttrKind::Floats;
  case onnx::AttributeProto_AttributeType_STRINGS:
    return AttrKind::Strings;
  case onnx::AttributeProto_AttributeType_TENSOR:
    return AttrKind::Tensor;
  case onnx::AttributeProto_AttributeType_SPARSE_TENSOR:
    return AttrKind::Sparse;
  default:
    return std::nullopt;
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

/// Conv, MaxPool, AveragePool: 1-D to 3-D windows, known auto_pad values,
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
  if (kernel.size() > 3)
    return makeError(n.describe(), ": unsupported ", kernel.size(),
                     "-D window (attribute 'kernel_shape' has ", kernel.size(),
                     " dims); only 1-D to 3-D are supported");
  for (int64_t k : kernel)
    if (k < 1)
      return attrError(n, "kernel_shape", "has a non-positive value ", k);
  for (const char *attr : {"strides", "dilations"}) {
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> vs, n.attrInts(attr, {}));
    if (!kernel.empty() && !vs.empty() && vs.size() != kernel.size())
      return attrError(n, attr, "has ", vs.size(), " values, expected ",
                       kernel.size());
    if (vs.size() > 3)
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
  if (pads.size() > 6)
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
                           const std::string &nodeDesc, int64_t opset) {
  for (const onnx::AttributeProto &a : node.attribute()) {
    const AttrSchema *s = findAttribute(op, a.name(), opset);
    if (!s)
      return makeError(nodeDesc, ": unsupported attribute '", a.name(), "'",
                       opset ? " (at opset " + std::to_string(opset) + ")"
                             : std::string());
    std::optional<AttrKind> k = kindOf(a.type());
    if (!k || *k != s->kind)
      return makeError(nodeDesc, ": attribute '", a.name(), "' must be ",
                       attrKindName(s->kind), ", got ",
                       k ? attrKindName(*k) : "an unsupported kind");
  }
  for (const AttrSchema &s : opAttributes(op)) {
    if (s.presence != AttrSchema::Required || opset < s.sinceOpset ||
        opset > s.untilOpset)
      continue;
    bool present = false;
    for (const onnx::AttributeProto &a : node.attribute())
      present |= a.name() == s.name;
    if (!present)
      return makeError(nodeDesc, ": missing attribute '", s.name, "'");
  }
  return Status::ok();
}

Status checkAttributeValues(const Node &n, int64_t opset) {
  switch (n.op()) {
  case OpKind::Conv:
  case OpKind::ConvTranspose:
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
  case OpKind::ScatterND:
  case OpKind::ScatterElements: {
    AOTC_ASSIGN_OR_RETURN(std::string r, n.attrString("reduction", "none"));
    if (r != "none" && r != "add" && r != "mul" &&
        !((r == "max" || r == "min") && opset >= 18))
      return attrError(n, "reduction", "has unsupported value '", r, "'",
                       r == "max" || r == "min" ? " before opset 18" : "");
    return Status::ok();
  }
  case OpKind::Slice:
    if (opset < 10 && (!n.hasAttr("starts") || !n.hasAttr("ends")))
      return makeError(n.describe(),
                       ": attributes 'starts' and 'ends' are required");
    return Status::ok();
  case OpKind::Pad: {
    AOTC_ASSIGN_OR_RETURN(std::string mode, n.attrString("mode", "constant"));
    if (mode != "constant" && mode != "reflect" && mode != "edge" &&
        !(mode == "wrap" && opset >= 19))
      return attrError(n, "mode", "has unsupported value '", mode, "'",
                       mode == "wrap" ? " before opset 19" : "");
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
