/// \file
/// The scalar semantics of integer and conversion operations, defined once.
///
/// Every place that computes a value at compile time (Expr constant folding,
/// the simplifier's linear forms, shape inference's symbolic data) calls these
/// functions, and the OpenCL printer emits code with the same results
/// (codegen/opencl/cl_printer.cpp prints the device side; a test checks that
/// both agree on every op and dtype at the boundary values). The definitions:
///
///  - Integers are two's complement of their width. Add, Sub, Mul and Neg
///    wrap around (no undefined behaviour): the result is the exact result
///    modulo 2^bits, read back as the type. Every result is narrowed to its
///    type after each operation, fused or not.
///  - Div is C's truncating division (ONNX Div on integers). Division by zero
///    gives 0; INT_MIN / -1 wraps to INT_MIN. FloorDiv and Mod (index math)
///    round toward negative infinity; by zero they give 0.
///  - Float to integer: NaN gives 0; other values are truncated toward zero,
///    saturated to the int64 range, then wrapped to the target width (so
///    Cast<uint8>(-2.7) is 254 everywhere, and Cast<int32>(1e10) is
///    1410065408). ONNX leaves out-of-range conversions undefined; this is
///    aotc's one documented result on every device.
///  - Integer to integer: wrap to the target width. To bool: x != 0.
///    Bool to anything: 0 or 1.
#pragma once

#include "ir/dtype.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace aotc {
namespace scalar {

inline int bitsOf(DType t) {
  switch (t) {
  case DType::Bool:
    return 1;
  case DType::Int8:
  case DType::UInt8:
    return 8;
  case DType::Int16:
  case DType::UInt16:
    return 16;
  case DType::Int32:
  case DType::UInt32:
    return 32;
  default:
    return 64;
  }
}

inline bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool; }

/// The smallest and largest value of an integer type (bool: 0 and 1).
inline int64_t minOf(DType t) {
  switch (t) {
  case DType::Int8:
    return INT8_MIN;
  case DType::Int16:
    return INT16_MIN;
  case DType::Int32:
    return INT32_MIN;
  case DType::Int64:
    return INT64_MIN;
  default:
    return 0;
  }
}
inline int64_t maxOf(DType t) {
  switch (t) {
  case DType::Bool:
    return 1;
  case DType::Int8:
    return INT8_MAX;
  case DType::UInt8:
    return UINT8_MAX;
  case DType::Int16:
    return INT16_MAX;
  case DType::UInt16:
    return UINT16_MAX;
  case DType::Int32:
    return INT32_MAX;
  case DType::UInt32:
    return UINT32_MAX;
  default:
    return INT64_MAX;
  }
}

/// \p v (any int64, or the low bits of a wider result) as a value of
/// integer type \p t: modulo 2^bits, two's complement. Bool: v != 0.
inline int64_t wrap(DType t, uint64_t v) {
  switch (t) {
  case DType::Bool:
    return v != 0;
  case DType::Int8:
    return static_cast<int8_t>(static_cast<uint8_t>(v));
  case DType::UInt8:
    return static_cast<uint8_t>(v);
  case DType::Int16:
    return static_cast<int16_t>(static_cast<uint16_t>(v));
  case DType::UInt16:
    return static_cast<uint16_t>(v);
  case DType::Int32:
    return static_cast<int32_t>(static_cast<uint32_t>(v));
  case DType::UInt32:
    return static_cast<uint32_t>(v);
  default:
    return static_cast<int64_t>(v);
  }
}
inline int64_t wrapSigned(DType t, int64_t v) {
  return wrap(t, static_cast<uint64_t>(v));
}

inline int64_t add(DType t, int64_t a, int64_t b) {
  return wrap(t, static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t sub(DType t, int64_t a, int64_t b) {
  return wrap(t, static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t mul(DType t, int64_t a, int64_t b) {
  return wrap(t, static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t neg(DType t, int64_t a) { return sub(t, 0, a); }

/// C's truncating division; by zero: 0; INT_MIN / -1: INT_MIN.
inline int64_t div(DType t, int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return neg(t, a);
  return wrap(t, static_cast<uint64_t>(a / b));
}
/// C's remainder (sign of the dividend); by zero: 0.
inline int64_t rem(DType t, int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  return wrap(t, static_cast<uint64_t>(a % b));
}
/// Floor division and its remainder (index math); by zero: 0.
inline int64_t floorDiv(DType t, int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return neg(t, a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return wrap(t, static_cast<uint64_t>(q));
}
inline int64_t floorMod(DType t, int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return wrap(t, static_cast<uint64_t>(r));
}

/// Float to integer type \p t (see the file comment).
inline int64_t fromFloat(DType t, double v) {
  if (t == DType::Bool)
    return v != 0.0; // NaN is true, as in NumPy
  if (std::isnan(v))
    return 0;
  double r = std::trunc(v);
  int64_t i;
  if (r >= 9223372036854775808.0)
    i = INT64_MAX;
  else if (r < -9223372036854775808.0)
    i = INT64_MIN;
  else
    i = static_cast<int64_t>(r);
  return wrapSigned(t, i);
}

/// Integer value \p v of type \p from as a double of type \p to (float32
/// rounds to nearest).
inline double toFloat(DType to, int64_t v, DType from) {
  double d = static_cast<double>(isFloat(from) ? v : wrapSigned(from, v));
  if (to == DType::Float32)
    return static_cast<double>(static_cast<float>(
        from == DType::Int64 ? static_cast<float>(v) : static_cast<float>(d)));
  return d;
}

/// Whether a cast from integer \p from to integer \p to makes it wider
/// (more bytes): what a load of narrow integers widens as it reads them.
inline bool widensInteger(DType from, DType to) {
  return isInteger(from) && isInteger(to) && dtypeSize(from) < dtypeSize(to);
}

/// True if \p v is a value of integer type \p t.
inline bool fits(DType t, int64_t v) { return v >= minOf(t) && v <= maxOf(t); }

/// A float type OpenCL C computes in as itself (not float16/bfloat16).
inline bool plainFloat(DType t) {
  return t == DType::Float32 || t == DType::Float64;
}

/// Whether a vector of \p from converts to \p to lane by lane in plain
/// OpenCL C (convert_T<n>) with these semantics: between float32 and
/// float64, integers to them, integers to integers that hold every value.
inline bool exactVectorCast(DType from, DType to) {
  if (plainFloat(to))
    return plainFloat(from) || isInteger(from);
  return isInteger(from) && isInteger(to) && minOf(to) <= minOf(from) &&
         maxOf(to) >= maxOf(from);
}

/// Whether a vector of \p from converts to \p to lane by lane in the
/// generated OpenCL C with these semantics: the exact conversions
/// (exactVectorCast); an integer narrowing (convert_T<n> keeps the low
/// bits, as wrap does); a float32 or float64 to an integer (fromFloat:
/// truncated, saturated at 64 bits, NaN 0, then the low bits), which the
/// code printer writes as aotc_f2l_f<n> (convert_long<n>_sat) and a
/// narrowing.
inline bool vectorCast(DType from, DType to) {
  if (exactVectorCast(from, to))
    return true;
  if (!isInteger(to))
    return false;
  return isInteger(from) || plainFloat(from);
}

} // namespace scalar
} // namespace aotc
