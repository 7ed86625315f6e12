/// \file
/// Math functions that kernels compute with aotc's own OpenCL C instead of
/// the driver's builtin, where the builtin is slow.
///
/// erf on float values (float32, and float16/bfloat16 computed in float):
/// PoCL 3.1's erf(float16) took 0.85 ms per million values on the 2-core
/// AVX-512 VM (a copy: 0.1), which made BERT's GELU-epilogue GEMMs 45%
/// slower than the same GEMM without it (1.83 against 1.24 ms). aotc_erf
/// is the method of ARM's optimized-routines erff with coefficients fitted
/// here (bench/cpu/fit_math.py): x + x * P(x^2) below 0.921875, and
/// 1 - exp(-(a + a * Q(a))) up to 4 (the exp reduced by ln 2 and a
/// degree-5 polynomial, scaled through the exponent bits), 1 beyond, the
/// sign copied; both branches computed and selected, so it vectorizes.
/// Measured on PoCL against double erf (2 million float bit patterns spread
/// over each of [1e-30, 6], [0.5, 4.5] and [0.9, 1.5], and their negatives):
/// at most 1.06 ulp, mean 0.25-0.28 (the builtin: 0.84 and 0.25; OpenCL
/// allows 16); NaN stays NaN, +-inf gives +-1, -0 gives -0
/// (tests/e2e/erf_accuracy_test.cpp). The GELU GEMM took 1.38 ms with it
/// (bench/cpu/clbench.c, weights hot in the L3).
///
/// PoCL's tanh measured no slower than a helper of this kind (0.43-0.46
/// against 0.47-0.50 ms per million values), so it keeps the builtin.
///
/// Used where ClOptions::ownMath is set (CPU profiles). float64 keeps the
/// builtins.
#pragma once

#include "codegen/opencl/cl_scalar.h"
#include "ir/expr.h"

#include <string>
#include <vector>

namespace aotc {

/// \p op (a Call) with already rewritten \p args as the call of aotc's
/// own implementation (recorded in \p used) where there is one for its
/// function and type and \p ownMath asks for it; undefined otherwise.
Expr lowerMathCall(const Call *op, std::vector<Expr> args, bool ownMath,
                   ClHelpers &used);

/// The definitions of the math helpers in \p used.
std::string clMathDefinitions(const ClHelpers &used);

} // namespace aotc
