/// \file
/// Integer arithmetic and conversions in OpenCL C (cl_scalar.h).
#include "codegen/opencl/cl_scalar.h"

#include "ir/scalar_ops.h"
#include "ir/status.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace aotc {

namespace {

/// The suffix of a helper for an integer type: c, uc, s, us, i, ui, l.
const char *suffix(DType t) {
  switch (t) {
  case DType::Int8:
    return "c";
  case DType::UInt8:
  case DType::Bool:
    return "uc";
  case DType::Int16:
    return "s";
  case DType::UInt16:
    return "us";
  case DType::Int32:
    return "i";
  case DType::UInt32:
    return "ui";
  default:
    return "l";
  }
}

Expr helper(const std::string &name, DType t, std::vector<Expr> args,
            ClHelpers &used) {
  used.insert(name);
  return Call::make(t, name, std::move(args));
}

/// True if \p op on operands in their ranges gives results inside \p t.
bool provablyFits(BinOp op, const Expr &a, const Expr &b, DType t,
                  const RangeEnv &env) {
  auto ra = boundsOf(a, env), rb = boundsOf(b, env);
  if (!ra || !rb)
    return false;
  int64_t c[4];
  bool ovf = false;
  switch (op) {
  case BinOp::Add:
    ovf |= __builtin_add_overflow(ra->min, rb->min, &c[0]);
    ovf |= __builtin_add_overflow(ra->max, rb->max, &c[1]);
    c[2] = c[0], c[3] = c[1];
    break;
  case BinOp::Sub:
    ovf |= __builtin_sub_overflow(ra->min, rb->max, &c[0]);
    ovf |= __builtin_sub_overflow(ra->max, rb->min, &c[1]);
    c[2] = c[0], c[3] = c[1];
    break;
  case BinOp::Mul:
    ovf |= __builtin_mul_overflow(ra->min, rb->min, &c[0]);
    ovf |= __builtin_mul_overflow(ra->min, rb->max, &c[1]);
    ovf |= __builtin_mul_overflow(ra->max, rb->min, &c[2]);
    ovf |= __builtin_mul_overflow(ra->max, rb->max, &c[3]);
    break;
  default:
    return false;
  }
  if (ovf)
    return false;
  for (int64_t v : c)
    if (v < scalar::minOf(t) || v > scalar::maxOf(t))
      return false;
  return true;
}

bool nonNegative(const Expr &e, const RangeEnv &env) {
  auto r = boundsOf(e, env);
  return r && r->min >= 0;
}

/// One helper: its name and definition; what it calls comes first in the
/// table below.
struct HelperDef {
  const char *name;
  const char *text;
};

// clang-format off
const HelperDef kHelpers[] = {
  // Wrapping arithmetic: compute in the unsigned type, reinterpret the bits.
#define AOTC_WRAP_OPS(S, T, U)                                                 \
  {"aotc_add_" S, T " aotc_add_" S "(" T " a, " T " b) { return as_" T "((" U ")((" U ")a + (" U ")b)); }\n"}, \
  {"aotc_sub_" S, T " aotc_sub_" S "(" T " a, " T " b) { return as_" T "((" U ")((" U ")a - (" U ")b)); }\n"}, \
  {"aotc_mul_" S, T " aotc_mul_" S "(" T " a, " T " b) { return as_" T "((" U ")((" U ")a * (" U ")b)); }\n"},
  AOTC_WRAP_OPS("c", "char", "uchar")
  AOTC_WRAP_OPS("uc", "uchar", "uchar")
  AOTC_WRAP_OPS("s", "short", "ushort")
  AOTC_WRAP_OPS("us", "ushort", "ushort")
  AOTC_WRAP_OPS("i", "int", "uint")
  AOTC_WRAP_OPS("ui", "uint", "uint")
  AOTC_WRAP_OPS("l", "long", "ulong")
#undef AOTC_WRAP_OPS
  // Bitwise operators (BitwiseAnd/Or/Xor/Not): the result narrowed back.
#define AOTC_BIT_OPS(S, T)                                                     \
  {"aotc_bitand_" S, T " aotc_bitand_" S "(" T " a, " T " b) { return (" T ")(a & b); }\n"}, \
  {"aotc_bitor_" S, T " aotc_bitor_" S "(" T " a, " T " b) { return (" T ")(a | b); }\n"}, \
  {"aotc_bitxor_" S, T " aotc_bitxor_" S "(" T " a, " T " b) { return (" T ")(a ^ b); }\n"}, \
  {"aotc_bitnot_" S, T " aotc_bitnot_" S "(" T " a) { return (" T ")(~a); }\n"},
  AOTC_BIT_OPS("c", "char")
  AOTC_BIT_OPS("uc", "uchar")
  AOTC_BIT_OPS("s", "short")
  AOTC_BIT_OPS("us", "ushort")
  AOTC_BIT_OPS("i", "int")
  AOTC_BIT_OPS("ui", "uint")
  AOTC_BIT_OPS("l", "long")
#undef AOTC_BIT_OPS
  // BitShift of unsigned values: a shift by the width or more gives 0 (C
  // leaves it undefined; NumPy's shifts give 0).
#define AOTC_SHIFT_OPS(S, T, W)                                                \
  {"aotc_shl_" S, T " aotc_shl_" S "(" T " a, " T " b) { return b >= " W " ? 0 : (" T ")(a << b); }\n"}, \
  {"aotc_shr_" S, T " aotc_shr_" S "(" T " a, " T " b) { return b >= " W " ? 0 : (" T ")(a >> b); }\n"},
  AOTC_SHIFT_OPS("uc", "uchar", "8")
  AOTC_SHIFT_OPS("us", "ushort", "16")
  AOTC_SHIFT_OPS("ui", "uint", "32")
#undef AOTC_SHIFT_OPS
  // Truncating division: x / 0 = 0, MIN / -1 = MIN (wrapped).
  {"aotc_div_c", "char aotc_div_c(char a, char b) { return b == 0 ? 0 : as_char((uchar)(a / b)); }\n"},
  {"aotc_div_uc", "uchar aotc_div_uc(uchar a, uchar b) { return b == 0 ? 0 : (uchar)(a / b); }\n"},
  {"aotc_div_s", "short aotc_div_s(short a, short b) { return b == 0 ? 0 : as_short((ushort)(a / b)); }\n"},
  {"aotc_div_us", "ushort aotc_div_us(ushort a, ushort b) { return b == 0 ? 0 : (ushort)(a / b); }\n"},
  {"aotc_div_ui", "uint aotc_div_ui(uint a, uint b) { return b == 0 ? 0 : a / b; }\n"},
  {"aotc_div_i", "int aotc_div_i(int a, int b) { return b == 0 ? 0 : b == -1 ? as_int(0u - (uint)a) : a / b; }\n"},
  {"aotc_div_l", "long aotc_div_l(long a, long b) { return b == 0 ? 0 : b == -1 ? as_long(0ul - (ulong)a) : a / b; }\n"},
  // Floor division and its remainder; by 0: 0.
  {"aotc_floordiv_l", "long aotc_floordiv_l(long a, long b) {\n"
                      "  if (b == 0) return 0;\n"
                      "  if (b == -1) return as_long(0ul - (ulong)a);\n"
                      "  long q = a / b;\n"
                      "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
                      "}\n"},
  {"aotc_floormod_l", "long aotc_floormod_l(long a, long b) {\n"
                      "  if (b == 0 || b == -1) return 0;\n"
                      "  long r = a % b;\n"
                      "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
                      "}\n"},
  // Their int twins, for index math that index_width.h proved inside int
  // (the same values: nothing there wraps).
  {"aotc_floordiv_i", "int aotc_floordiv_i(int a, int b) {\n"
                      "  if (b == 0) return 0;\n"
                      "  if (b == -1) return as_int(0u - (uint)a);\n"
                      "  int q = a / b;\n"
                      "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
                      "}\n"},
  {"aotc_floormod_i", "int aotc_floormod_i(int a, int b) {\n"
                      "  if (b == 0 || b == -1) return 0;\n"
                      "  int r = a % b;\n"
                      "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
                      "}\n"},
  // Narrowing to signed types wraps.
  {"aotc_to_c", "char aotc_to_c(long x) { return as_char((uchar)x); }\n"},
  {"aotc_to_s", "short aotc_to_s(long x) { return as_short((ushort)x); }\n"},
  {"aotc_to_i", "int aotc_to_i(long x) { return as_int((uint)x); }\n"},
  // Float to integer: NaN -> 0, truncate toward zero, saturate to long.
  {"aotc_f2l_f", "long aotc_f2l_f(float x) { return isnan(x) ? 0 : x >= 0x1.0p63f ? LONG_MAX : x < -0x1.0p63f ? LONG_MIN : (long)x; }\n"},
  {"aotc_f2l_d", "long aotc_f2l_d(double x) { return isnan(x) ? 0 : x >= 0x1.0p63 ? LONG_MAX : x < -0x1.0p63 ? LONG_MIN : (long)x; }\n"},
  // A float rounded to float16 (aotc/half.hpp's floatToHalf, read back): to
  // nearest even, 65520 and above to infinity, NaN kept. A kernel computes
  // float16 values in float; this is Cast<f16> without cl_khr_fp16.
  {"aotc_round_half",
   "float aotc_round_half(float x) {\n"
   "  uint u = as_uint(x), sign = u & 0x80000000u, a = u ^ sign;\n"
   "  if (a >= 0x7f800000u) return x;\n"
   "  if (a >= 0x477ff000u) return as_float(sign | 0x7f800000u);\n"
   "  if (a < 0x38800000u)\n"
   "    return as_float(sign | as_uint(rint(as_float(a) * 16777216.0f) * 5.9604644775390625e-8f));\n"
   "  return as_float(sign | ((a + 0x0fffu + ((a >> 13) & 1u)) & ~0x1fffu));\n"
   "}\n"},
  {"aotc_round_half_d",
   "float aotc_round_half_d(double x) {\n"
   "  ulong u = as_ulong(x), sign = u & 0x8000000000000000ul, a = u ^ sign;\n"
   "  float s = sign ? -1.0f : 1.0f;\n"
   "  if (a >= 0x7ff0000000000000ul) return (float)x;\n"
   "  if (a >= 0x40effe0000000000ul) return s * INFINITY;\n"
   "  if (a < 0x3f10000000000000ul)\n"
   "    return s * (float)(rint(as_double(a) * 16777216.0) * 5.9604644775390625e-8);\n"
   "  return s * (float)as_double((a + 0x1fffffffffful + ((a >> 42) & 1ul)) & ~0x3fffffffffful);\n"
   "}\n"},
  // bfloat16: the bits of a float rounded to its top half (nearest even,
  // NaN kept), as one value or a vector of them, and Cast<bf16>.
  {"aotc_bf16_bits",
   "ushort aotc_bf16_bits(float x) {\n"
   "  uint u = as_uint(x);\n"
   "  return isnan(x) ? (ushort)((u >> 16) | 0x40u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
   "}\n"},
#define AOTC_BF16_VECTOR(N)                                                    \
  {"aotc_bf16_bits" #N,                                                        \
   "ushort" #N " aotc_bf16_bits" #N "(float" #N " x) {\n"                      \
   "  uint" #N " u = as_uint" #N "(x);\n"                                       \
   "  uint" #N " r = (u + (uint" #N ")(0x7fffu) + ((u >> 16) & (uint" #N ")(1u))) >> 16;\n" \
   "  return convert_ushort" #N "(select(r, (u >> 16) | (uint" #N ")(0x40u), as_uint" #N "(isnan(x))));\n" \
   "}\n"},
  AOTC_BF16_VECTOR(2)
  AOTC_BF16_VECTOR(4)
  AOTC_BF16_VECTOR(8)
  AOTC_BF16_VECTOR(16)
#undef AOTC_BF16_VECTOR
  {"aotc_round_bf16",
   "float aotc_round_bf16(float x) {\n"
   "  uint u = as_uint(x);\n"
   "  return isnan(x) ? x : as_float(((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16);\n"
   "}\n"},
  // Two steps of an int32 sum of products of 16-bit values at once
  // (register_tile.cpp's pairProduct): a0 * b0 + a1 * b1 lane by lane,
  // modulo 2^32. On x86 CPUs with AVX-512BW (16 lanes) or AVX2 (8) one
  // vpmaddwd over the two steps' lanes interleaved as shorts (exact: every
  // factor fits in int16, and vpmaddwd's one overflow, -32768 squared
  // twice, wraps as the int32 sum does); elsewhere the plain products.
  {"aotc_dot2_i16",
   "#if defined(__clang__) && defined(__AVX512BW__)\n"
   "typedef short aotc_short32 __attribute__((ext_vector_type(32)));\n"
   "int16 aotc_dot2_i16(int16 a0, int16 b0, int16 a1, int16 b1) {\n"
   "  aotc_short32 x = __builtin_shufflevector(convert_short16(a0), convert_short16(a1), 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);\n"
   "  aotc_short32 y = __builtin_shufflevector(convert_short16(b0), convert_short16(b1), 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);\n"
   "  return __builtin_ia32_pmaddwd512(x, y);\n"
   "}\n"
   "#else\n"
   "int16 aotc_dot2_i16(int16 a0, int16 b0, int16 a1, int16 b1) {\n"
   "  return as_int16(as_uint16(a0) * as_uint16(b0) + as_uint16(a1) * as_uint16(b1));\n"
   "}\n"
   "#endif\n"},
  {"aotc_dot2_i8",
   "#if defined(__clang__) && defined(__AVX2__)\n"
   "int8 aotc_dot2_i8(int8 a0, int8 b0, int8 a1, int8 b1) {\n"
   "  short16 x = __builtin_shufflevector(convert_short8(a0), convert_short8(a1), 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);\n"
   "  short16 y = __builtin_shufflevector(convert_short8(b0), convert_short8(b1), 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);\n"
   "  return __builtin_ia32_pmaddwd256(x, y);\n"
   "}\n"
   "#else\n"
   "int8 aotc_dot2_i8(int8 a0, int8 b0, int8 a1, int8 b1) {\n"
   "  return as_int8(as_uint8(a0) * as_uint8(b0) + as_uint8(a1) * as_uint8(b1));\n"
   "}\n"
   "#endif\n"},
  // A prefetch hint (Prefetch statements, CPU tiles): clang's builtin where
  // the OpenCL compiler is clang (PoCL: prefetcht0; OpenCL's own
  // prefetch() is a no-op there), else OpenCL's.
  {"aotc_prefetch",
   "#ifdef __clang__\n"
   "#define aotc_prefetch(p) __builtin_prefetch(p)\n"
   "#else\n"
   "#define aotc_prefetch(p) prefetch((p), 1)\n"
   "#endif\n"},
  // Indices from data: the first bad one of a run is recorded
  // (AotcErrorRecord: code + 1, value, extent) and reads 0.
  {"aotc_record_error",
   "void aotc_record_error(__global int *err, int code, long v, long n) {\n"
   "  if (atomic_cmpxchg((volatile __global int *)err, 0, code + 1) == 0) {\n"
   "    ((__global long *)err)[1] = v;\n"
   "    ((__global long *)err)[2] = n;\n"
   "  }\n"
   "}\n"},
  {"aotc_check_index",
   "long aotc_check_index(long v, long n, __global int *err, int code) {\n"
   "  if (v >= 0 && v < n)\n"
   "    return v;\n"
   "  aotc_record_error(err, code, v, n);\n"
   "  return 0;\n"
   "}\n"},
  {"aotc_check_index_wrap",
   "long aotc_check_index_wrap(long v, long n, __global int *err, int code) {\n"
   "  long w = v < 0 ? as_long((ulong)v + (ulong)n) : v;\n"
   "  if (w >= 0 && w < n)\n"
   "    return w;\n"
   "  aotc_record_error(err, code, v, n);\n"
   "  return 0;\n"
   "}\n"},
};
// clang-format on

} // namespace

Expr lowerIntBinary(const Binary *op, const Expr &a, const Expr &b,
                    const RangeEnv &env, bool trustedIndex, ClHelpers &used) {
  DType t = op->type;
  auto plain = [&] {
    return a.sameAs(op->a) && b.sameAs(op->b)
               ? Expr(std::make_shared<Binary>(t, op->op, op->a, op->b))
               : Expr(std::make_shared<Binary>(t, op->op, a, b));
  };
  // Narrow operands are promoted to int in C: the result must wrap back.
  bool narrow = scalar::bitsOf(t) < 32;
  switch (op->op) {
  case BinOp::Add:
  case BinOp::Sub:
  case BinOp::Mul: {
    if (!narrow && ((trustedIndex && t == DType::Int64) ||
                    provablyFits(op->op, a, b, t, env)))
      return plain();
    const char *name = op->op == BinOp::Add   ? "aotc_add_"
                       : op->op == BinOp::Sub ? "aotc_sub_"
                                              : "aotc_mul_";
    // On vectors (an integer sum's accumulators and terms, vectorize.cpp):
    // the helper of their width, aotc_add_i16 (vectorHelperDefinition).
    std::string lanes =
        a.lanes() > 1 ? std::to_string(a.lanes()) : std::string();
    return helper(std::string(name) + suffix(t) + lanes, t, {a, b}, used);
  }
  case BinOp::Div:
    AOTC_CHECK(a.lanes() == 1, "integer division of vectors");
    return helper(std::string("aotc_div_") + suffix(t), t, {a, b}, used);
  case BinOp::FloorDiv:
  case BinOp::Mod: {
    AOTC_CHECK(a.lanes() == 1, "integer floor division of vectors");
    auto rb = boundsOf(b, env);
    if (nonNegative(a, env) && rb && rb->min >= 1)
      return plain();
    const char *name =
        op->op == BinOp::FloorDiv ? "aotc_floordiv_l" : "aotc_floormod_l";
    if (t == DType::Int64)
      return helper(name, t, {a, b}, used);
    Expr wide = helper(name, DType::Int64,
                       {lowerCast(DType::Int64, a, env, used),
                        lowerCast(DType::Int64, b, env, used)},
                       used);
    return lowerCast(t, wide, env, used);
  }
  default:
    return plain();
  }
}

Expr lowerCast(DType to, const Expr &v, const RangeEnv &env, ClHelpers &used) {
  DType from = v.type();
  if (to == DType::BFloat16 && from != DType::BFloat16)
    return helper("aotc_round_bf16", to,
                  {lowerCast(DType::Float32, v, env, used)}, used);
  if (to == DType::Float16 && from != DType::Float16)
    return from == DType::Float64
               ? helper("aotc_round_half_d", to, {v}, used)
               : helper("aotc_round_half", to,
                        {lowerCast(DType::Float32, v, env, used)}, used);
  if (from == to || isFloat(to) || to == DType::Bool)
    return Cast::make(to, v);
  if (v.lanes() > 1) {
    // vectorize.cpp makes only the conversions of scalar::vectorCast: a
    // float to an integer saturates at 64 bits, as aotc_f2l_f does
    // (aotc_f2l_f16: convert_long16_sat, NaN 0), then keeps the low bits
    // (convert_T<n> of an integer, as the scalar wrap).
    AOTC_CHECK(scalar::vectorCast(from, to), "vector conversion from "
                                                 << dtypeName(from) << " to "
                                                 << dtypeName(to));
    const std::string lanes = std::to_string(v.lanes());
    if (isFloat(from)) {
      Expr l = helper(std::string(from == DType::Float64 ? "aotc_f2l_d"
                                                         : "aotc_f2l_f") +
                          lanes,
                      DType::Int64, {v}, used);
      return lowerCast(to, l, env, used);
    }
    if (scalar::exactVectorCast(from, to) || !isSigned(to))
      return Cast::make(to, v);
    // A signed narrowing: to the unsigned type of the width (modulo, as
    // C defines it), then its bits as the signed type (C leaves a signed
    // out-of-range conversion to the implementation): aotc_as_c16.
    const DType u = to == DType::Int8    ? DType::UInt8
                    : to == DType::Int16 ? DType::UInt16
                                         : DType::UInt32;
    AOTC_CHECK(to == DType::Int8 || to == DType::Int16 || to == DType::Int32,
               "vector narrowing to " << dtypeName(to));
    return helper(std::string("aotc_as_") + suffix(to) + lanes, to,
                  {Cast::make(u, v)}, used);
  }
  if (isFloat(from)) {
    Expr l = helper(from == DType::Float64 ? "aotc_f2l_d" : "aotc_f2l_f",
                    DType::Int64, {v}, used);
    return lowerCast(to, l, env, used);
  }
  // Integer (or bool) to integer: widening and unsigned targets are exact
  // in C (conversion to unsigned is modulo 2^bits); a signed narrowing
  // wraps through the helper.
  if (to == DType::Int64 || !isSigned(to) || scalar::exactVectorCast(from, to))
    return Cast::make(to, v);
  auto r = boundsOf(v, env);
  if (r && r->min >= scalar::minOf(to) && r->max <= scalar::maxOf(to))
    return Cast::make(to, v);
  const char *name = to == DType::Int8    ? "aotc_to_c"
                     : to == DType::Int16 ? "aotc_to_s"
                                          : "aotc_to_i";
  return helper(name, to, {v}, used);
}

Expr lowerBitwiseCall(const Call *op, std::vector<Expr> args,
                      ClHelpers &used) {
  static const char *const kGeneric[] = {"aotc_bitand", "aotc_bitor",
                                         "aotc_bitxor", "aotc_bitnot",
                                         "aotc_shl",    "aotc_shr"};
  if (std::find(std::begin(kGeneric), std::end(kGeneric), op->name) ==
      std::end(kGeneric))
    return Expr();
  std::string name = op->name + "_" + suffix(op->type);
  bool known = false;
  for (const HelperDef &h : kHelpers)
    known |= name == h.name;
  if (!known) // (shape inference admits only the types there are helpers for)
    return Expr();
  return helper(name, op->type, std::move(args), used);
}

namespace {

/// The definition of a wrapping vector helper, `aotc_add_i16` (T16
/// lanes computed in the unsigned type), or "" if \p name is none.
std::string vectorHelperDefinition(const std::string &name) {
  static const char *const kOps[][2] = {
      {"add", "+"}, {"sub", "-"}, {"mul", "*"}};
  static const char *const kTypes[][3] = {
      {"c", "char", "uchar"},  {"uc", "uchar", "uchar"}, {"s", "short", "ushort"},
      {"us", "ushort", "ushort"}, {"i", "int", "uint"},  {"ui", "uint", "uint"},
      {"l", "long", "ulong"}};
  for (int lanes : {2, 4, 8, 16})
    for (const auto &ty : kTypes)
      if (std::string(ty[1]) != ty[2] && // a signed type
          name == std::string("aotc_as_") + ty[0] + std::to_string(lanes)) {
        // The bits of an unsigned vector as the signed type of its width.
        const std::string n = std::to_string(lanes);
        return std::string(ty[1]) + n + " " + name + "(" + ty[2] + n +
               " x) { return as_" + ty[1] + n + "(x); }\n";
      }
  for (int lanes : {2, 4, 8, 16})
    for (const char *f : {"f", "d"})
      if (name == std::string("aotc_f2l_") + f + std::to_string(lanes)) {
        // Truncated, saturated, NaN 0: OpenCL's _sat conversion of a float
        // to an integer (rounding toward zero by default), as aotc_f2l_f.
        const std::string n = std::to_string(lanes);
        return "long" + n + " " + name + "(" + (*f == 'f' ? "float" : "double") +
               n + " x) { return convert_long" + n + "_sat(x); }\n";
      }
  for (const auto &op : kOps)
    for (const auto &ty : kTypes)
      for (int lanes : {2, 4, 8, 16}) {
        const std::string n = std::to_string(lanes);
        if (name != std::string("aotc_") + op[0] + "_" + ty[0] + n)
          continue;
        const std::string t = ty[1] + n, u = ty[2] + n;
        return t + " " + name + "(" + t + " a, " + t + " b) { return as_" +
               t + "(as_" + u + "(a) " + op[1] + " as_" + u + "(b)); }\n";
      }
  return "";
}

} // namespace

std::string clHelperDefinitions(const ClHelpers &used) {
  ClHelpers all = used;
  if (all.count("aotc_check_index") || all.count("aotc_check_index_wrap"))
    all.insert("aotc_record_error");
  std::string out;
  for (const HelperDef &h : kHelpers)
    if (all.count(h.name))
      out += h.text;
  for (const std::string &name : all)
    out += vectorHelperDefinition(name);
  return out;
}

} // namespace aotc
