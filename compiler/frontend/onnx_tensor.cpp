/// \file
/// Conversion of ONNX element types, tensors and attribute values into the
/// Graph IR's DType, TensorType/TensorData and Attribute.
#include "compiler/frontend/onnx_internal.h"
#include "compiler/frontend/external_data.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace aotc {
namespace onnx_import {

std::string onnxDTypeName(int32_t elemType) {
  switch (elemType) {
  case onnx::TensorProto_DataType_UNDEFINED:
    return "undefined";
  case onnx::TensorProto_DataType_FLOAT:
    return "float";
  case onnx::TensorProto_DataType_UINT8:
    return "uint8";
  case onnx::TensorProto_DataType_INT8:
    return "int8";
  case onnx::TensorProto_DataType_UINT16:
    return "uint16";
  case onnx::TensorProto_DataType_INT16:
    return "int16";
  case onnx::TensorProto_DataType_INT32:
    return "int32";
  case onnx::TensorProto_DataType_INT64:
    return "int64";
  case onnx::TensorProto_DataType_STRING:
    return "string";
  case onnx::TensorProto_DataType_BOOL:
    return "bool";
  case onnx::TensorProto_DataType_FLOAT16:
    return "float16";
  case onnx::TensorProto_DataType_DOUBLE:
    return "double";
  case onnx::TensorProto_DataType_UINT32:
    return "uint32";
  case onnx::TensorProto_DataType_UINT64:
    return "uint64";
  case onnx::TensorProto_DataType_COMPLEX64:
    return "complex64";
  case onnx::TensorProto_DataType_COMPLEX128:
    return "complex128";
  case onnx::TensorProto_DataType_BFLOAT16:
    return "bfloat16";
  default: {
    // The newer types by ONNX's own name: "float8e4m3fn", "int4", ...
    std::string name;
    if (onnx::TensorProto_DataType_IsValid(elemType))
      name = onnx::TensorProto_DataType_Name(
          static_cast<onnx::TensorProto_DataType>(elemType));
    if (name.empty())
      return "type " + std::to_string(elemType);
    for (char &c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return name;
  }
  }
}

Expected<DType> dtypeFromOnnx(int32_t elemType) {
  switch (elemType) {
  case onnx::TensorProto_DataType_FLOAT:
    return DType::Float32;
  case onnx::TensorProto_DataType_UINT8:
    return DType::UInt8;
  case onnx::TensorProto_DataType_INT8:
    return DType::Int8;
  case onnx::TensorProto_DataType_UINT16:
    return DType::UInt16;
  case onnx::TensorProto_DataType_INT16:
    return DType::Int16;
  case onnx::TensorProto_DataType_UINT32:
    return DType::UInt32;
  case onnx::TensorProto_DataType_INT32:
    return DType::Int32;
  case onnx::TensorProto_DataType_INT64:
    return DType::Int64;
  case onnx::TensorProto_DataType_BOOL:
    return DType::Bool;
  case onnx::TensorProto_DataType_DOUBLE:
    return DType::Float64;
  case onnx::TensorProto_DataType_FLOAT16:
    return DType::Float16;
  case onnx::TensorProto_DataType_BFLOAT16:
    return DType::BFloat16;
  default:
    return makeError("unsupported dtype '", onnxDTypeName(elemType), "'");
  }
}

namespace {

/// Copies the elements of a typed repeated field, converting each to \p Dst.
template <typename Dst, typename Field>
std::vector<uint8_t> packField(const Field &field) {
  std::vector<uint8_t> bytes(field.size() * sizeof(Dst));
  Dst *out = reinterpret_cast<Dst *>(bytes.data());
  for (int i = 0; i < field.size(); ++i)
    out[i] = static_cast<Dst>(field.Get(i));
  return bytes;
}

std::string tensorLabel(const onnx::TensorProto &t) {
  return t.name().empty() ? std::string("tensor") : "tensor '" + t.name() + "'";
}

} // namespace

Expected<std::pair<TensorType, TensorData>>
convertTensor(const onnx::TensorProto &t, ExternalData *external) {
  std::string label = tensorLabel(t);
  bool isExternal =
      t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
  if (!isExternal && t.external_data_size() > 0)
    return makeError(label, ": has external_data entries but its "
                            "data_location is not EXTERNAL");
  if (isExternal && !external)
    return makeError(label, ": external data is only read for a model "
                            "compiled from its file");
  if (t.has_segment())
    return makeError(label, ": segmented tensors are not supported");
  auto dtype = dtypeFromOnnx(t.data_type());
  if (!dtype)
    return dtype.status().withContext(label);
  TensorType type;
  type.dtype = *dtype;
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return makeError(label, ": negative dim ", d);
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / 16 / d)
      return makeError(label, ": too many elements");
    numel *= d;
    type.dims.push_back(Expr(d));
  }
  int64_t elemSize = dtypeSize(*dtype);
  if (isExternal) {
    AOTC_ASSIGN_OR_RETURN(TensorData data, external->read(t, numel * elemSize));
    return std::make_pair(std::move(type), std::move(data));
  }
  std::vector<uint8_t> bytes;
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    if (static_cast<int64_t>(raw.size()) != numel * elemSize)
      return makeError(label, ": raw_data has ", raw.size(),
                       " bytes, expected ", numel * elemSize, " for ",
                       type.str());
    bytes.assign(raw.begin(), raw.end());
  } else {
    int64_t count = 0;
    switch (*dtype) {
    case DType::Float32:
      count = t.float_data_size();
      bytes = packField<float>(t.float_data());
      break;
    case DType::Float64:
      count = t.double_data_size();
      bytes = packField<double>(t.double_data());
      break;
    case DType::Int64:
      count = t.int64_data_size();
      bytes = packField<int64_t>(t.int64_data());
      break;
    case DType::Int32:
      count = t.int32_data_size();
      bytes = packField<int32_t>(t.int32_data());
      break;
    case DType::Int8:
      count = t.int32_data_size();
      bytes = packField<int8_t>(t.int32_data());
      break;
    case DType::UInt8:
      count = t.int32_data_size();
      bytes = packField<uint8_t>(t.int32_data());
      break;
    case DType::Int16:
      count = t.int32_data_size();
      bytes = packField<int16_t>(t.int32_data());
      break;
    case DType::Float16:  // the bits, in int32_data
    case DType::BFloat16: // the bits, in int32_data
    case DType::UInt16:  // stored in int32_data, like uint8
      count = t.int32_data_size();
      bytes = packField<uint16_t>(t.int32_data());
      break;
    case DType::UInt32: // stored in uint64_data
      count = t.uint64_data_size();
      bytes = packField<uint32_t>(t.uint64_data());
      break;
    case DType::Bool:
      count = t.int32_data_size();
      bytes = packField<uint8_t>(t.int32_data());
      for (uint8_t &b : bytes)
        b = b != 0;
      break;
    }
    if (count != numel)
      return makeError(label, ": has ", count, " elements, expected ", numel,
                       " for ", type.str());
  }
  return std::make_pair(std::move(type), TensorData::fromBytes(std::move(bytes)));
}

double floatToDouble(float f) {
  if (f != f || f == std::numeric_limits<float>::infinity() ||
      f == -std::numeric_limits<float>::infinity())
    return static_cast<double>(f);
  char buf[64];
  for (int p = 1; p <= 9; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f)
      return std::strtod(buf, nullptr);
  }
  return static_cast<double>(f);
}

Expected<Attribute> convertAttribute(const onnx::AttributeProto &a) {
  Attribute r;
  switch (a.type()) {
  case onnx::AttributeProto_AttributeType_FLOAT:
    r.value = floatToDouble(a.f());
    return r;
  case onnx::AttributeProto_AttributeType_INT:
    r.value = static_cast<int64_t>(a.i());
    return r;
  case onnx::AttributeProto_AttributeType_STRING:
    r.value = a.s();
    return r;
  case onnx::AttributeProto_AttributeType_FLOATS: {
    std::vector<double> v;
    for (float f : a.floats())
      v.push_back(floatToDouble(f));
    r.value = std::move(v);
    return r;
  }
  case onnx::AttributeProto_AttributeType_INTS:
    r.value = std::vector<int64_t>(a.ints().begin(), a.ints().end());
    return r;
  case onnx::AttributeProto_AttributeType_STRINGS:
    r.value = std::vector<std::string>(a.strings().begin(), a.strings().end());
    return r;
  case onnx::AttributeProto_AttributeType_TENSOR: {
    auto t = convertTensor(a.t(), nullptr);
    if (!t)
      return t.status().withContext("attribute '" + a.name() + "'");
    r.tensor = t.take();
    return r;
  }
  default:
    return makeError("attribute '", a.name(), "' has an unsupported kind (",
                     onnx::AttributeProto_AttributeType_Name(a.type()), ")");
  }
}

void setConstantSymbolicData(Value *v) {
  const TensorType &t = v->type();
  if (t.rank() > 1 || isFloat(t.dtype) || t.dtype == DType::Bool)
    return;
  if (!t.isStatic())
    return;
  int64_t n = t.rank() == 0 ? 1 : t.staticDims()[0];
  if (n > 64)
    return;
  std::vector<Expr> elems;
  for (int64_t i = 0; i < n; ++i)
    elems.push_back(Expr(tensorDataInt(v->data(), t.dtype, i)));
  v->setSymbolicData(std::move(elems));
}

} // namespace onnx_import
} // namespace aotc
