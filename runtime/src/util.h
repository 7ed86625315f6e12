/// \file
/// Small helpers shared by the runtime's files: dtype sizes and names, tensor
/// byte counts with overflow checks, and printf-friendly integer casts.
#ifndef AOTC_RUNTIME_SRC_UTIL_H
#define AOTC_RUNTIME_SRC_UTIL_H

#include "aotc/model_desc.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace aotc::rt {

inline size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
  case AOTC_DT_FLOAT32:
  case AOTC_DT_INT32:
  case AOTC_DT_UINT32:
    return 4;
  case AOTC_DT_UINT16:
  case AOTC_DT_INT16:
  case AOTC_DT_FLOAT16:
  case AOTC_DT_BFLOAT16:
    return 2;
  case AOTC_DT_UINT8:
  case AOTC_DT_INT8:
  case AOTC_DT_BOOL:
    return 1;
  case AOTC_DT_INT64:
  case AOTC_DT_FLOAT64:
    return 8;
  default:
    return 0;
  }
}

inline const char *dtypeName(int32_t dtype) {
  switch (dtype) {
  case AOTC_DT_FLOAT32:
    return "float32";
  case AOTC_DT_UINT8:
    return "uint8";
  case AOTC_DT_INT8:
    return "int8";
  case AOTC_DT_UINT16:
    return "uint16";
  case AOTC_DT_INT16:
    return "int16";
  case AOTC_DT_UINT32:
    return "uint32";
  case AOTC_DT_INT32:
    return "int32";
  case AOTC_DT_INT64:
    return "int64";
  case AOTC_DT_BOOL:
    return "bool";
  case AOTC_DT_FLOAT64:
    return "float64";
  case AOTC_DT_FLOAT16:
    return "float16";
  case AOTC_DT_BFLOAT16:
    return "bfloat16";
  default:
    return "unknown";
  }
}

/// Bytes of a dense tensor; false on overflow, a negative dim or an unknown
/// dtype.
inline bool tensorBytes(int32_t dtype, int32_t rank, const int64_t *shape,
                 uint64_t &out) {
  uint64_t bytes = dtypeSize(dtype);
  if (bytes == 0)
    return false;
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] < 0)
      return false;
  // An empty tensor has 0 bytes, however large its other dims.
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] == 0) {
      out = 0;
      return true;
    }
  for (int32_t i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[i]), &bytes))
      return false;
  out = bytes;
  return true;
}

inline std::string shapeString(int32_t rank, const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

inline unsigned long long ull(uint64_t value) {
  return static_cast<unsigned long long>(value);
}

inline long long ll(int64_t value) { return static_cast<long long>(value); }

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_UTIL_H
