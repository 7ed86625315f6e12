/// \file
/// Row-major index arithmetic shared by lowering (reshape views) and kernel
/// building (flat buffer indices): the simplifier undoes the pairs these
/// create.
#pragma once

#include "ir/expr.h"
#include "ir/simplify.h"

#include <vector>

namespace aotc {

/// Row-major flat index of multi-index \p idx in a tensor of shape \p shape.
Expr linearize(const std::vector<Expr> &idx, const std::vector<Expr> &shape);

/// Multi-index of flat index \p flat in \p shape; the outermost dim has no
/// mod because flat is below the element count.
std::vector<Expr> delinearize(const Expr &flat, const std::vector<Expr> &shape);

/// A Slice start or end as ONNX takes it, for sizes (shape inference) and
/// indices (lowering) alike: counted from the end of a dim of size \p dim
/// when negative, then clamped to [lo, dim + hiOffset]. Constants beyond
/// +-2^48 (INT64_MAX for "to the end") are clamped first, which keeps the
/// arithmetic far from overflow. Simplified over \p env.
Expr clampSliceIndex(const Expr &value, const Expr &dim, int64_t lo,
                     int64_t hiOffset, const RangeEnv &env);

} // namespace aotc
