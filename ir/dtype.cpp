/// \file
/// Names of the element types: the short form every printer uses and the
/// OpenCL C spelling.
#include "ir/dtype.h"

namespace aotc {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::Float32:
    return "f32";
  case DType::UInt8:
    return "u8";
  case DType::Int8:
    return "i8";
  case DType::UInt16:
    return "u16";
  case DType::Int16:
    return "i16";
  case DType::UInt32:
    return "u32";
  case DType::Int32:
    return "i32";
  case DType::Int64:
    return "i64";
  case DType::Bool:
    return "bool";
  case DType::Float64:
    return "f64";
  case DType::Float16:
    return "f16";
  case DType::BFloat16:
    return "bf16";
  }
  return "?";
}

const char *dtypeCLName(DType t) {
  switch (t) {
  case DType::Float32:
    return "float";
  case DType::UInt8:
    return "uchar";
  case DType::Int8:
    return "char";
  case DType::UInt16:
    return "ushort";
  case DType::Int16:
    return "short";
  case DType::UInt32:
    return "uint";
  case DType::Int32:
    return "int";
  case DType::Int64:
    return "long";
  case DType::Bool:
    return "uchar";
  case DType::Float64:
    return "double";
  case DType::Float16:
  case DType::BFloat16:
    return "float";
  }
  return "?";
}

const char *dtypeCLStorageName(DType t) {
  return t == DType::Float16    ? "half"
         : t == DType::BFloat16 ? "ushort"
                                : dtypeCLName(t);
}

namespace {
const DType kAll[] = {DType::Float32, DType::UInt8,   DType::Int8,
                      DType::UInt16,  DType::Int16,   DType::Int32,
                      DType::UInt32,  DType::Int64,   DType::Bool,
                      DType::Float64, DType::Float16, DType::BFloat16};
} // namespace

bool dtypeFromCode(int64_t code, DType &out) {
  for (DType t : kAll) {
    if (code == static_cast<int64_t>(t)) {
      out = t;
      return true;
    }
  }
  return false;
}

bool parseDType(const std::string &s, DType &out) {
  for (DType t : kAll) {
    if (s == dtypeName(t)) {
      out = t;
      return true;
    }
  }
  return false;
}

} // namespace aotc
