/// \file
/// Identifier sanitizing and literal quoting for generated code.
#include "codegen/opencl/identifiers.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <set>

namespace aotc {

namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }

bool startsWith(const std::string &s, const char *prefix) {
  return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

/// Keywords of C, C++ and OpenCL C, OpenCL scalar types, work-item and
/// math builtins, and object-like macros of the OpenCL C headers.
// clang-format off
const char *const kReserved[] = {
    "HUGE_VAL", "HUGE_VALF", "INFINITY", "MAXFLOAT", "NAN", "NULL", "_Bool",
    "abs", "abs_diff", "acos", "acosh", "acospi", "add_sat", "alignas",
    "alignof", "all", "and", "any", "asin", "asinh", "asinpi", "asm", "atan",
    "atan2", "atan2pi", "atanh", "atanpi", "auto", "barrier", "bitselect",
    "bool", "break", "case", "catch", "cbrt", "ceil", "char", "clamp", "class",
    "clz", "const", "constant", "constexpr", "continue", "copysign", "cos",
    "cosh", "cospi", "cross", "default", "degrees", "delete", "distance", "do",
    "dot", "double", "else", "enum", "erf", "erfc", "event_t", "exp", "exp10",
    "exp2", "explicit", "expm1", "extern", "fabs", "false", "fdim", "float",
    "floor", "fma", "fmax", "fmin", "fmod", "for", "fract", "frexp", "friend",
    "get_global_id", "get_global_offset", "get_global_size", "get_group_id",
    "get_local_id", "get_local_size", "get_num_groups", "get_work_dim",
    "global", "goto", "hadd", "half", "hypot", "if", "ilogb", "image1d_t",
    "image2d_t", "image3d_t", "inline", "int", "intptr_t", "isequal",
    "isfinite", "isinf", "isnan", "isnormal", "kernel", "ldexp", "length",
    "lgamma", "local", "log", "log10", "log1p", "log2", "logb", "long", "mad",
    "mad24", "mad_hi", "mad_sat", "max", "mem_fence", "min", "mix", "modf",
    "mul24", "mul_hi", "mutable", "namespace", "new", "nextafter", "normalize",
    "not", "nullptr", "operator", "or", "pipe", "popcount", "pow", "pown",
    "powr", "private", "protected", "ptrdiff_t", "public", "radians",
    "read_only", "read_write", "register", "remainder", "remquo", "restrict",
    "return", "rhadd", "rint", "rootn", "rotate", "round", "rsqrt", "sampler_t",
    "select", "short", "sign", "signbit", "signed", "sin", "sincos", "sinh",
    "sinpi", "size_t", "sizeof", "smoothstep", "sqrt", "static", "step",
    "struct", "sub_sat", "switch", "tan", "tanh", "tanpi", "template", "tgamma",
    "this", "throw", "true", "trunc", "try", "typedef", "typename", "uchar",
    "uint", "uintptr_t", "ulong", "uniform", "union", "unsigned", "upsample",
    "ushort", "using", "virtual", "void", "volatile", "while", "write_only",
    "xor",
};
// clang-format on

/// Prefixes of builtin families and macro groups; a name starting with one is
/// reserved.
const char *const kReservedPrefixes[] = {
    "__",          "aotc_",  "as_",     "async_",     "atom_", "atomic_",
    "convert_",    "half_",  "native_", "read_image", "vload", "vstore",
    "write_image", "CHAR_",  "CL_",     "DBL_",       "FLT_",  "FP_",
    "INT_",        "LONG_",  "M_",      "SCHAR_",     "SHRT_", "UCHAR_",
    "UINT_",       "ULONG_", "USHRT_"};

/// Scalar type names whose vector forms (float4, long16, ...) are reserved.
const char *const kVectorBases[] = {"char",  "uchar",  "short", "ushort",
                                    "int",   "uint",   "long",  "ulong",
                                    "float", "double", "half",  "bool"};

bool isVectorTypeName(const std::string &s) {
  for (const char *base : kVectorBases) {
    if (!startsWith(s, base))
      continue;
    std::string rest = s.substr(std::char_traits<char>::length(base));
    if (rest == "2" || rest == "3" || rest == "4" || rest == "8" ||
        rest == "16")
      return true;
  }
  return false;
}

std::string replaceNonIdentChars(const std::string &s) {
  std::string out = s;
  for (char &c : out)
    if (!isIdentChar(c))
      c = '_';
  return out;
}

} // namespace

bool isCIdentifier(const std::string &s) {
  if (s.empty() || !isIdentStart(s[0]))
    return false;
  return std::all_of(s.begin(), s.end(), isIdentChar);
}

bool isReservedIdentifier(const std::string &s) {
  static const std::set<std::string> reserved(std::begin(kReserved),
                                              std::end(kReserved));
  if (reserved.count(s))
    return true;
  for (const char *p : kReservedPrefixes)
    if (startsWith(s, p))
      return true;
  return isVectorTypeName(s);
}

std::string sanitizeIdentifier(const std::string &s) {
  std::string out = replaceNonIdentChars(s);
  if (out.empty() || !isIdentStart(out[0]))
    out = "v_" + out;
  return out;
}

std::string Namer::fresh(const std::string &hint,
                         const std::vector<std::string> &suffixes) {
  // Long model names make unreadable code; 40 characters keep them
  // recognizable.
  std::string base = sanitizeIdentifier(hint.substr(0, 40));
  auto usable = [&](const std::string &id) {
    if (used_.count(id) || isReservedIdentifier(id))
      return false;
    for (const std::string &s : suffixes)
      if (used_.count(id + s) || isReservedIdentifier(id + s))
        return false;
    return true;
  };
  std::string id = base;
  for (int n = 1; !usable(id); ++n)
    id = base + "_" + std::to_string(n);
  used_.insert(id);
  for (const std::string &s : suffixes)
    used_.insert(id + s);
  return id;
}

std::string cStringLiteral(const std::string &s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '?') {
      out += "\\?"; // no trigraphs
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string commentText(const std::string &s) {
  std::string out = s;
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = ' ';
  return out;
}

} // namespace aotc
