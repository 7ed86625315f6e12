/// \file
/// The interior columns of a reduction that reads its input through
/// bounds selects (column_interior.cpp): a depthwise convolution lowered
/// without a padded copy reads x[clamp(h*s + r - p), clamp(w*s + q - p)]
/// under `h*s + r - p` and `w*s + q - p` inside the input, else 0. For
/// the output columns w in [lo, hi) every tap is inside along w whatever
/// the other indices: there the conditions on w are true and the clamps on
/// w vanish, so the term's load is contiguous along w and the register
/// tiler vectorizes it (the conditions on h, the same for every lane of a
/// row, stay as selects). The few columns outside [lo, hi) (the padding's
/// reach: 1 on each side for a 3x3 window) are computed element by element
/// with the selects (registerTiledNest's border columns).
#pragma once

#include "compiler/schedule/schedule.h"

#include <optional>

namespace aotc {

struct ColumnInterior {
  int n = -1;            ///< the output dimension of the columns (innermost)
  int64_t lo = 0, hi = 0; ///< the interior columns [lo, hi)
  int64_t extent = 0;     ///< all the columns
  /// The nest over the interior columns: shape[n] = hi - lo, its column
  /// c is the original's lo + c, its term without the column conditions.
  ReductionNest interior;
};

/// The interior split of \p nest, or none: its innermost output dimension
/// static, some select of its term bounded by comparisons affine in that
/// column alone (with constant steps in the reduction indices, which have
/// static extents), and a non-empty interior.
std::optional<ColumnInterior> columnInterior(const ReductionNest &nest);

/// The kernel body of \p nest split by \p ci (columnInterior(nest)): the
/// interior tiled by \p t (1 x tn along ci.n), the border columns computed
/// by the work-item of the first tile of each row (registerTiledNest).
Stmt tiledWithBorderColumns(const ReductionNest &nest,
                            const ColumnInterior &ci, const RegisterTile &t);

} // namespace aotc
