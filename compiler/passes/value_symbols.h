/// \file
/// Shapes given at run time: an integer graph input whose values a shape-like
/// operand reads (Reshape's shape, Slice's starts and ends, Expand's shape,
/// Tile's repeats, Split's sizes, Pad's pads, Range's bounds,
/// ConstantOfShape's shape, TopK's k),
/// directly or through shape arithmetic, gets one value symbol per element
/// (Graph::addValueSymbol) as its symbolic data. Shape inference then sizes
/// everything downstream over those symbols, as it does over dims, and the
/// runtime binds them from the input's data before a run: one .so runs
/// every shape. Inputs of rank 0, or rank 1 with at most kMaxIORank
/// elements, of type int32 or int64; and float32 or float64 inputs that a
/// Resize reads as its scales or a float Range as a bound, directly: their
/// symbols are float (Symbol::isFloat), read only by the derived sizes the
/// wrapper computes from them in double.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

namespace aotc {

/// Runs before shape inference; declares the symbols and sets the inputs'
/// symbolic data.
Status bindValueSymbols(Graph &g);

} // namespace aotc
