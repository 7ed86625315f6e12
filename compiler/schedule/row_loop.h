/// \file
/// Row loops of CPU register tiles (row_loop.cpp, RegisterTile::rowLoop):
/// a work-item that walks all rows of an output dimension itself, the
/// reduction in blocks that every row takes in turn, each row's
/// accumulators in a private array between blocks, and the next block's
/// weight prefetched a share per row. A weight slice larger than the L2
/// (ResNet's 512-channel 3 x 3 convolutions on 7 x 7 maps: 590 KB per
/// channel block of 32) is then streamed from memory once per work-item,
/// spread over all its rows, instead of once per row in a burst at more
/// than a core's bandwidth.
#pragma once

#include "compiler/schedule/schedule.h"
#include "compiler/schedule/tile_loops.h"

#include <string>
#include <vector>

namespace aotc {

/// Sets \p t's row loop (rowLoop, rowBlock) where the heuristic expects it
/// to pay: see row_loop.cpp. \p symbolsAt: the value the symbols are
/// planned at.
void chooseRowLoop(const ReductionNest &nest, RegisterTile &t,
                   int64_t symbolsAt);

/// One tile of a row loop, as registerTiledNest built it for one row.
struct RowLoopParts {
  const ReductionNest *nest = nullptr;
  int rowBlock = 0;        ///< reduction loops outside the rows
  std::vector<Expr> accs;  ///< the tile's accumulators, read by finishes
  std::vector<Expr> rvars; ///< the reduction variables
  Updates updates;         ///< one reduction step's updates of its targets
  std::vector<Stmt> finishes; ///< the tile's stores, at row \p row
  Expr row;                ///< the row variable, read by terms and finishes
  int64_t rows = 0;        ///< its extent
  /// The term at each group of columns' first column, over rvars: the
  /// loads that do not read the row are prefetched for the next block.
  std::vector<Expr> columnTerms;
  std::string array; ///< the private array of the rows' accumulators
};

/// The statements of a row loop's tile: every row's accumulators
/// initialized in the private array; the blocks, each row in turn loading
/// its accumulators, running the block's inner loops (with a share of the
/// next block's prefetches) and saving them; each row's finish. Raises
/// \p arrayElems to the elements the array needs.
Stmt rowLoopTile(const RowLoopParts &p, int64_t &arrayElems);

} // namespace aotc
