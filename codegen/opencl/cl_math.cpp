/// \file
/// aotc's own OpenCL C math functions (cl_math.h).
#include "codegen/opencl/cl_math.h"

namespace aotc {

namespace {

// Each is defined for float and every OpenCL float vector width through a
// macro over the type (T) and the unsigned integer type of its width (UT;
// erf takes it unused, so that one list of instances serves both).
// The coefficients (P, Q, E) are bench/cpu/fit_math.py's, rounded to
// float.

/// e^t for t in [-87, 88] (a NaN gives NaN; elsewhere any value, which the
/// callers select away): n = rint(t / ln 2), f = t - n ln 2 (ln 2 in two
/// parts), e^f - 1 = f + f^2 E(f), and 2^n from n's bits (n + 1.5 * 2^23
/// holds n in its low mantissa bits; n + 127 shifted into the exponent,
/// unsigned so that no shift overflows).
const char *const kExp =
    "#define AOTC_EXP(T, UT)                                                \\\n"
    "  T __attribute__((overloadable)) aotc_exp_in(T t) {                   \\\n"
    "    const T n = rint(t * 0x1.715476p+0f);                              \\\n"
    "    T f = fma(n, (T)(-0x1.62e43p-1f), t);                              \\\n"
    "    f = fma(n, (T)(0x1.05c61p-29f), f);                                \\\n"
    "    T e = fma(f, (T)(0x1.6a2428p-10f), (T)(0x1.1239dap-7f));           \\\n"
    "    e = fma(e, f, (T)(0x1.5558f2p-5f));                                \\\n"
    "    e = fma(e, f, (T)(0x1.555492p-3f));                                \\\n"
    "    e = fma(e, f, (T)(0x1.fffffcp-2f));                                \\\n"
    "    e = fma(e, f * f, f);                                              \\\n"
    "    const T s = as_##T((as_##UT(n + 0x1.8p23f) - 0x4b3fff81u) << 23); \\\n"
    "    return fma(e, s, s);                                               \\\n"
    "  }\n";

/// erf: x + x P(x^2) below 0.921875; 1 - e^-(a + a Q(a)) up to 4; 1 beyond;
/// the sign copied.
const char *const kErf =
    "#define AOTC_ERF(T, UT)                                                \\\n"
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
    "    const T e = aotc_exp_in(-fma(q, a, a));                            \\\n"
    "    const T hi = copysign(a >= 4.0f ? (T)(1.0f) : (T)(1.0f) - e, x);   \\\n"
    "    return a < 0.921875f ? lo : hi;                                    \\\n"
    "  }\n";

/// The instances of the macro \p name (defined by \p text) for each width.
std::string instances(const char *text, const std::string &name) {
  std::string out = text;
  for (const char *w : {"", "2", "3", "4", "8", "16"})
    out += name + "(float" + w + ", uint" + w + ")\n";
  return out + "#undef " + name + "\n";
}

} // namespace

Expr lowerMathCall(const Call *op, std::vector<Expr> args, bool ownMath,
                   ClHelpers &used) {
  if (!ownMath || op->name != "erf" || !isFloat32Valued(op->type) ||
      args.size() != 1)
    return Expr();
  used.insert("aotc_erf");
  return Call::make(op->type, "aotc_erf", std::move(args));
}

std::string clMathDefinitions(const ClHelpers &used) {
  std::string out;
  if (used.count("aotc_erf"))
    out += instances(kExp, "AOTC_EXP") + instances(kErf, "AOTC_ERF");
  return out;
}

} // namespace aotc
