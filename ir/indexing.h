/// \file
/// Row-major index arithmetic shared by lowering (reshape views) and kernel
/// building (flat buffer indices): the simplifier undoes the pairs these
/// create.
#pragma once

#include "ir/expr.h"

#include <vector>

namespace aotc {

/// Row-major flat index of multi-index \p idx in a tensor of shape \p shape.
Expr linearize(const std::vector<Expr> &idx, const std::vector<Expr> &shape);

/// Multi-index of flat index \p flat in \p shape; the outermost dim has no
/// mod because flat is below the element count.
std::vector<Expr> delinearize(const Expr &flat, const std::vector<Expr> &shape);

} // namespace aotc
