/// \file
/// aotc's own OpenCL C math functions (cl_math.h).
#include "codegen/opencl/cl_math.h"

namespace aotc {

namespace {

/// aotc_erf for float and each OpenCL float vector width. The coefficients
/// (P, Q and E) are bench/cpu/fit_erf.py's, rounded to float. exp(t) for
/// t = -r in [-18.1, -0.85]: n = rint(t / ln 2), f = t - n ln 2 (ln 2 in
/// two parts), e^f - 1 = f + f^2 E(f), and 2^n from n's bits (n + 1.5 *
/// 2^23 holds n in its low mantissa bits; n + 127 shifted into the
/// exponent). A NaN reaches the result through f.
const char *const kErf =
    "#define AOTC_ERF(T, IT)                                                \\\n"
    "  T __attribute__((overloadable)) aotc_erf(T x) {                      \\\n"
    "    const T a = fabs(x), x2 = x * x;                                   \\\n"
    "    T p = fma(x2, (T)(-0x1.3a1f0ep-11f), (T)(0x1.473dc6p-8f));         \\\n"
    "    p = fma(p, x2, (T)(-0x1.b68bc8p-6f));                              \\\n"
    "    p = fma(p, x2, (T)(0x1.ce1a76p-4f));                               \\\n"
    "    p = fma(p, x2, (T)(-0x1.8126e6p-2f));                              \\\n"
    "    p = fma(p, x2, (T)(0x1.06eba6p-3f));                               \\\n"
    "    const T lo = fma(p, x, x);                                         \\\n"
    "    T q = fma(a, (T)(0x1.8500f4p-17f), (T)(-0x1.5637d6p-12f));         \\\n"
    "    q = fma(q, a, (T)(0x1.df4966p-9f));                                \\\n"
    "    q = fma(q, a, (T)(-0x1.85ccd0p-6f));                               \\\n"
    "    q = fma(q, a, (T)(0x1.b34882p-4f));                                \\\n"
    "    q = fma(q, a, (T)(0x1.452ff6p-1f));                                \\\n"
    "    q = fma(q, a, (T)(0x1.077b5ap-3f));                                \\\n"
    "    const T t = -fma(q, a, a);                                         \\\n"
    "    const T n = rint(t * 0x1.715476p+0f);                              \\\n"
    "    T f = fma(n, (T)(-0x1.62e43p-1f), t);                              \\\n"
    "    f = fma(n, (T)(0x1.05c61p-29f), f);                                \\\n"
    "    T e = fma(f, (T)(0x1.6a2428p-10f), (T)(0x1.1239dap-7f));           \\\n"
    "    e = fma(e, f, (T)(0x1.5558f2p-5f));                                \\\n"
    "    e = fma(e, f, (T)(0x1.555492p-3f));                                \\\n"
    "    e = fma(e, f, (T)(0x1.fffffcp-2f));                                \\\n"
    "    e = fma(e, f * f, f);                                              \\\n"
    "    const T s = as_##T((as_##IT(n + 0x1.8p23f) - 0x4b3fff81) << 23);  \\\n"
    "    const T hi =                                                       \\\n"
    "        copysign(a >= 4.0f ? (T)(1.0f) : (T)(1.0f) - fma(e, s, s), x); \\\n"
    "    return a < 0.921875f ? lo : hi;                                    \\\n"
    "  }\n"
    "AOTC_ERF(float, int)\n"
    "AOTC_ERF(float2, int2)\n"
    "AOTC_ERF(float3, int3)\n"
    "AOTC_ERF(float4, int4)\n"
    "AOTC_ERF(float8, int8)\n"
    "AOTC_ERF(float16, int16)\n"
    "#undef AOTC_ERF\n";

} // namespace

Expr lowerMathCall(const Call *op, std::vector<Expr> args, bool ownErf,
                   ClHelpers &used) {
  if (ownErf && op->name == "erf" && isFloat32Valued(op->type) &&
      args.size() == 1) {
    used.insert("aotc_erf");
    return Call::make(op->type, "aotc_erf", std::move(args));
  }
  return Expr();
}

std::string clMathDefinitions(const ClHelpers &used) {
  std::string out;
  if (used.count("aotc_erf"))
    out += kErf;
  return out;
}

} // namespace aotc
