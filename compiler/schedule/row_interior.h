/// \file
/// The interior of a pointwise row (row_interior.cpp): a padded copy (and
/// any pointwise def that selects between an in-bounds read and a constant
/// by comparisons of its indices) is, for most rows of a tile, a plain
/// shifted copy. These helpers find the condition under which every lane
/// of a row takes the in-bounds arm, and rewrite the element under it (the
/// selects pick their arm, the clamps of the read's indices vanish), so
/// the register tiler emits `if (interior) vector row; else element by
/// element`.
#pragma once

#include "ir/expr.h"
#include "ir/simplify.h"

namespace aotc {

/// The condition, over the other variables, under which the condition of
/// every select on the indices in \p value holds for every \p lane in
/// [0, cols - 1]. A select on the indices has a conjunction of integer
/// comparisons for condition (selects on data are left alone); each must be
/// affine in the lane (so holding at lane 0 and at cols - 1 is holding
/// everywhere between). Undefined when \p value has no select on the
/// indices, or one that is not affine in the lane.
Expr rowInteriorCondition(const Expr &value, const Expr &lane, int64_t cols,
                          const RangeEnv &ranges);

/// \p value with each select whose condition's conjuncts all hold replaced
/// by its true arm, and each integer min/max that those conjuncts decide
/// (a clamp of an index into the input) by the argument it picks. Only
/// valid where rowInteriorCondition holds.
Expr assumeRowInterior(const Expr &value, const RangeEnv &ranges);

/// The conditions d >= 0 (as d) of the selects on the indices alone in
/// \p value that read a variable of \p column (an output column index):
/// a padding's bounds along the columns (column_interior.h).
std::vector<Expr> columnBounds(const Expr &value, const Expr &column,
                               const RangeEnv &ranges);

/// \p value where every condition of columnBounds(value, column) holds:
/// those conjuncts are dropped from their selects (the others, a padding's
/// bounds along the rows, stay) and the integer min/max they decide (the
/// clamps of the column index into the input) pick their argument. Only
/// valid for columns where they all hold.
Expr assumeColumnInside(const Expr &value, const Expr &column,
                        const RangeEnv &ranges);

} // namespace aotc
