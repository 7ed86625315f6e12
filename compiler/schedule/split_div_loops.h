/// \file
/// Splitting serial loops along the divisors their variable is read by
/// (split_div_loops.cpp). A reduction over a Reshape of a Transpose reads
/// its operand at `8192 * (r floordiv 64) + r mod 64`: a division and a
/// remainder per load in the innermost loop. With c dividing the extent, the
/// loop `for r < E` becomes `for ro < E / c { for ri < c }` with r = ro * c +
/// ri, and the simplifier turns `r floordiv c` into ro and `r mod c` into ri:
/// the index is affine again.
#pragma once

#include "ir/simplify.h"
#include "ir/stmt.h"

namespace aotc {

/// \p s with every serial loop from 0 to a constant extent E whose variable
/// is divided (floordiv or mod) by a constant c > 1 with E % c == 0 split
/// by the largest such c, repeatedly, then simplified over \p env.
Stmt splitDivModLoops(const Stmt &s, const RangeEnv &env);

} // namespace aotc
