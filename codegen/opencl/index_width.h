/// \file
/// 32-bit index math where the declared ranges prove that it fits.
///
/// The Loop IR computes every index in Int64, and a kernel printed as is
/// declares its work-item ids, loop variables, lets and symbols `long`.
/// Where every Int64 value a kernel computes stays inside int for every
/// value of the symbols in their declared ranges (`aotc compile --dim
/// NAME=MIN:MAX`; 0..65536 when undeclared; the runtime refuses values
/// outside them), the printer declares them `int` instead: the same values,
/// in narrower arithmetic (64-bit division by a constant and 64-bit
/// multiplies cost more on GPUs). The proof runs over what the printer
/// prints: the rewritten expressions (linearized indices, the integer
/// helpers of cl_scalar.h), with the ranges the printer knows at that point
/// (symbols, work-item ids, loops, lets). A kernel that reads an Int64 value
/// from memory, holds one in a local, or whose ranges are unknown keeps
/// 64-bit indices.
#pragma once

#include "codegen/opencl/cl_scalar.h"
#include "ir/expr.h"
#include "ir/simplify.h"

namespace aotc {

/// True if every Int64 value in \p e (it and each subexpression) lies inside
/// int for every value of the variables in \p env. \p e is an expression as
/// the printer rewrote it: the long helpers of cl_scalar.h count as the
/// operations they compute; any other Int64 call, an Int64 load, vector or
/// unranged variable fails.
bool fitsInt32(const Expr &e, const RangeEnv &env);

/// True if the range \p r lies inside int.
bool rangeFitsInt32(const Range &r);

/// \p e, of which fitsInt32 holds, with its Int64 casts made Int32 casts
/// and its long helpers their int twins: printed, it computes in int what
/// it computed in long. \p used, the helpers of this kernel alone, gets
/// each twin in place of its long helper (which the kernel, narrowed
/// whole, no longer calls).
Expr narrowToInt32(const Expr &e, ClHelpers &used);

} // namespace aotc
