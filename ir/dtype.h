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
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  BFloat16 = 16,
};

inline int64_t dtypeSize(DType t) {
  switch (t) {
  case DType::Bool:
  case DType::UInt8:
  case DType::Int8:
    return 1;
  case DType::Int16:
  case DType::UInt16:
  case DType::Float16:
  case DType::BFloat16:
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

/// float16 and bfloat16 are storage types: kernels read them as float
/// (vload_half; the bits shifted into a float's top half), compute in float
/// and round to nearest even when they store them or cast to them, so they
/// need no device extension.
inline bool isFloat(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 ||
         t == DType::BFloat16;
}
/// True if a kernel holds the type's values as float32: float32 itself and
/// the 16-bit storage types (float16, bfloat16) that are computed in float.
inline bool isFloat32Valued(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}
inline bool isSigned(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 ||
         t == DType::Int64 || isFloat(t);
}

/// Short lowercase name used by every printer: f32, i64, bool, ...
const char *dtypeName(DType t);
/// OpenCL C spelling of a value of the type: float, long, uchar, ushort
/// (bool is stored as uchar; a float16 value is a float).
const char *dtypeCLName(DType t);
/// OpenCL C spelling of the type in memory (a buffer's element): as
/// dtypeCLName, except float16 is `half`, read and written only through
/// vload_half and vstore_half_rte, and bfloat16 is `ushort` (its bits).
const char *dtypeCLStorageName(DType t);
/// Parses dtypeName() spellings; returns false if unknown.
bool parseDType(const std::string &s, DType &out);
/// The DType whose number (ONNX's TensorProto.DataType) is \p code; returns
/// false if aotc has no such type.
bool dtypeFromCode(int64_t code, DType &out);

} // namespace aotc
