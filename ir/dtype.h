/// \file
/// Element types shared by the Graph IR, the Loop IR and the runtime.
#pragma once

#include <cstdint>
#include <string>

namespace aotc {

/// Values match AOTC_DT_* in runtime/include/aotc/model_desc.h and ONNX's
/// TensorProto.DataType numbering.
enum class DType : int32_t {
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  Bool = 9,
  Float64 = 11,
  UInt32 = 12,
};

inline int64_t dtypeSize(DType t) {
  switch (t) {
  case DType::Bool:
  case DType::UInt8:
  case DType::Int8:
    return 1;
  case DType::Int16:
  case DType::UInt16:
    return 2;
  case DType::Int32:
  case DType::UInt32:
  case DType::Float32:
    return 4;
  case DType::Int64:
  case DType::Float64:
    return 8;
  }
  return 0;
}

inline bool isFloat(DType t) {
  return t == DType::Float32 || t == DType::Float64;
}
inline bool isSigned(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 ||
         t == DType::Int64 || isFloat(t);
}

/// Short lowercase name used by every printer: f32, i64, bool, ...
const char *dtypeName(DType t);
/// OpenCL C spelling: float, long, uchar, ushort (bool is stored as uchar).
const char *dtypeCLName(DType t);
/// Parses dtypeName() spellings; returns false if unknown.
bool parseDType(const std::string &s, DType &out);
/// The DType whose number (ONNX's TensorProto.DataType) is \p code; returns
/// false if aotc has no such type.
bool dtypeFromCode(int64_t code, DType &out);

} // namespace aotc
