/// \file
/// IEEE 754 binary16 (ONNX float16, AOTC_DTYPE_FLOAT16) and bfloat16
/// (AOTC_DTYPE_BFLOAT16: a float's top 16 bits) on the host, header only:
/// how a host fills such an input and reads such an output (HostTensor holds
/// the bits as uint16_t). The compiler and its tools use the same functions.
/// They round as the device does (vstore_half_rte, and a cast in a kernel):
/// to nearest, ties to even; float16 overflows to infinity from 65520 on,
/// bfloat16 from the float halfway above its largest value; NaN stays NaN.
/// Every function is pure: any thread may call it, it owns nothing and
/// cannot fail.
#pragma once

#include <cstdint>
#include <cstring>

namespace aotc {

namespace half_detail {
inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
} // namespace half_detail

inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) { // infinity or NaN
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) { // normal
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) { // zero
    bits = sign;
  } else { // subnormal: man * 2^-24, exact in float
    bits = sign | half_detail::bitsOf(static_cast<float>(man) *
                                      5.9604644775390625e-8f);
  }
  return half_detail::floatOf(bits);
}

inline uint16_t floatToHalf(float f) {
  uint32_t u = half_detail::bitsOf(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN: keep it quiet and a NaN
    return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) // 65520 and above (and infinity) round to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < 0x38800000u) { // below 2^-14: a subnormal half, quantum 2^-24
    float q = half_detail::floatOf(a) * 16777216.0f; // exact: times 2^24
    uint32_t n = static_cast<uint32_t>(q);
    float rest = q - static_cast<float>(n);
    if (rest > 0.5f || (rest == 0.5f && (n & 1u)))
      ++n; // 1024 carries into the smallest normal, which is right
    return static_cast<uint16_t>(sign | n);
  }
  // Normal: rebias the exponent and round 13 dropped bits to nearest even.
  uint32_t lsb = (a >> 13) & 1u;
  a += 0x0fffu + lsb;
  return static_cast<uint16_t>(sign | (((a >> 13) - (112u << 10)) & 0x7fffu));
}

inline float bfloat16ToFloat(uint16_t b) {
  return half_detail::floatOf(static_cast<uint32_t>(b) << 16);
}

inline uint16_t floatToBfloat16(float f) {
  uint32_t u = half_detail::bitsOf(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet and a NaN
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

} // namespace aotc
