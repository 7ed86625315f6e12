/// \file
/// The device side of ir/scalar_ops.h: how integer arithmetic and
/// conversions print in OpenCL C so that kernels compute exactly what the
/// compile-time folder computes.
///
/// OpenCL C inherits C's rules: signed overflow is undefined (and compilers
/// exploit it), char arithmetic is done in int and never narrowed back, and
/// float-to-integer conversion out of range is undefined. So:
///  - Add, Sub and Mul on int and long print as plain C only where the
///    operands' ranges prove that the result fits; otherwise they call a
///    helper that computes in the unsigned type and reinterprets the bits
///    (as_int), which wraps by definition. On char and uchar they always call
///    a helper that narrows the result back to 8 bits.
///  - Integer Div calls a helper that defines x / 0 = 0 and MIN / -1 = MIN;
///    FloorDiv and Mod print as C's / and % only when the numerator is
///    provably non-negative and the divisor positive.
///  - Conversions that narrow a signed type wrap through the unsigned type
///    and as_T; float to integer goes through aotc_f2l (NaN -> 0, truncate,
///    saturate to long) and then wraps.
/// Helpers are emitted once per program, only those a kernel uses.
#pragma once

#include "ir/expr.h"
#include "ir/simplify.h"

#include <set>
#include <string>
#include <vector>

namespace aotc {

/// The helper functions a program uses, by name.
using ClHelpers = std::set<std::string>;

/// \p op (a Binary of an integer type) with already rewritten operands, as
/// OpenCL-printable IR: the Binary itself where plain C is exact, else a
/// helper Call (recorded in \p used). In \p trustedIndex, Add/Sub/Mul on i64
/// are the linearization of a verified in-bounds index, which the wrapper's
/// check_symbols keeps below 2^63, and print plain.
Expr lowerIntBinary(const Binary *op, const Expr &a, const Expr &b,
                    const RangeEnv &env, bool trustedIndex, ClHelpers &used);

/// Cast of \p v to \p to as OpenCL-printable IR (helpers as needed).
Expr lowerCast(DType to, const Expr &v, const RangeEnv &env, ClHelpers &used);

/// A bitwise operation the lowering wrote as a generic Call (aotc_bitand,
/// aotc_bitor, aotc_bitxor, aotc_bitnot, aotc_shl, aotc_shr) over \p args,
/// as the helper for its integer type (recorded in \p used); undefined for
/// any other Call.
Expr lowerBitwiseCall(const Call *op, std::vector<Expr> args,
                      ClHelpers &used);

/// The definitions of \p used (and of what they call), in a fixed order.
std::string clHelperDefinitions(const ClHelpers &used);

} // namespace aotc
