/// \file
/// Helpers shared by the ONNX importer's files: dtype, tensor and attribute
/// conversion (onnx_tensor.cpp) and the per-op attribute tables
/// (onnx_op_attrs.cpp). Not a public header.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace aotc {
namespace onnx_import {

/// ONNX's name of a TensorProto.DataType ("float16", "string", ...).
std::string onnxDTypeName(int32_t elemType);

/// Maps an ONNX element type to a DType; an error "unsupported dtype
/// 'float16'" for types aotc does not handle.
Expected<DType> dtypeFromOnnx(int32_t elemType);

class ExternalData;

/// Converts a tensor (raw_data, the typed *_data fields, or external data
/// read through \p external) into a type and little-endian bytes. Errors
/// name the tensor; external data without \p external is an error.
Expected<std::pair<TensorType, TensorData>>
convertTensor(const onnx::TensorProto &t, ExternalData *external);

/// The shortest decimal double that reads back as \p f: 0.01f -> 0.01.
double floatToDouble(float f);

/// Converts an attribute's value; graph- and sparse-valued attributes are
/// errors.
Expected<Attribute> convertAttribute(const onnx::AttributeProto &a);

/// Checks attribute names and kinds of \p node against the attributes
/// \p op has at \p opset (ir/op_attrs.h). Errors name the node and
/// attribute.
Status checkAttributeNames(OpKind op, const onnx::NodeProto &node,
                           const std::string &nodeDesc, int64_t opset);

/// Checks attribute values that aotc supports only in part (3-D convolution,
/// unknown auto_pad, training-mode BatchNormalization, unsupported dtypes).
Status checkAttributeValues(const Node &n, int64_t opset);

/// MatMulInteger or QLinearMatMul (\p op) named \p name (\p desc in
/// errors), added to \p g as the ops ONNX defines it by
/// (expand_quantized_matmul.cpp); returns the value named \p output.
/// \p onnxTypes: ONNX's inferred types, for the rank of a computed zero
/// point or scale.
Expected<Value *>
expandQuantizedMatMul(Graph &g, OpKind op, const std::string &name,
                      const std::string &desc,
                      const std::vector<Value *> &inputs,
                      const std::string &output,
                      const std::map<std::string, onnx::TypeProto> &onnxTypes);

/// ConvInteger or QLinearConv (\p op), the same way: a Conv in int32 of
/// the inputs less their zero points, with \p attrs (the node's: pads,
/// strides, dilations, group, kernel_shape, auto_pad); QLinearConv's
/// result (plus its int32 bias) requantized as QLinearMatMul's.
Expected<Value *>
expandQuantizedConv(Graph &g, OpKind op, const std::string &name,
                    const std::string &desc, const std::vector<Value *> &inputs,
                    const std::string &output,
                    const std::vector<std::pair<std::string, Attribute>> &attrs,
                    int64_t opset,
                    const std::map<std::string, onnx::TypeProto> &onnxTypes);

/// Fills the symbolic data of a small (<= 64 elements) 0-D/1-D integer
/// constant.
void setConstantSymbolicData(Value *v);

} // namespace onnx_import
} // namespace aotc
