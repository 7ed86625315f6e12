/// \file
/// Whether a kernel may store its output over an input it reads for the
/// last time (in_place.cpp), the test memory_plan.cpp asks before it gives
/// the output that input's arena slot.
///
/// A store to a line of memory not in the cache first reads the line
/// (write-allocate), so a kernel that reads R and writes O moves R, O's old
/// contents and O: where O takes R's place, the line its store needs is
/// the one it just read. ResNet-50's 64 -> 256 1 x 1 convolutions with
/// their residual addition, at batch 8 (26 MB in, 26 MB out): 2.83-2.96 ms
/// against 2.64-2.68 in place (`clbench`, minimum of 30 launches).
///
/// The kernel writes O where it read R only where no work-item can read an
/// element of R after any work-item stored that element of O:
///  - R and O have the same element type and the same shape in the kernel
///    (so one index names the same bytes of both), R is only read and O
///    only written;
///  - every load of R reads, with a contiguous vector of some lanes or an
///    element, exactly what a store of O in the same work-item writes (the
///    same index expressions, the same lanes): no work-item reads an
///    element another one writes, since a kernel writes each element of
///    its output once;
///  - within the work-item, no load of R comes after the store of that
///    element, in program order (a store's value and the lets before it are
///    read before it; of an if's two arms one runs), and neither is inside
///    a serial loop (whose next iteration would read after this one
///    stored);
///  - no index reads memory (a data-dependent index could name any
///    element).
/// Anything else (a stencil over R, a row kernel that reads its row in
/// several passes, partial tiles computed row by row) keeps its own slot.
#pragma once

#include "ir/stmt.h"

#include <string>

namespace aotc {

/// True where \p k may store \p written over \p read (see above).
bool storesInPlace(const Kernel &k, const std::string &read,
                   const std::string &written);

} // namespace aotc
