/// \file
/// Chained kernels: two consecutive register-tiled contractions run as one
/// kernel where each work-item of the second reads only what the same
/// work-item of the first wrote (chain_kernels.cpp).
///
/// An inverted-residual block's projection (a 1 x 1 convolution, with its
/// residual addition) and the next block's expansion (a 1 x 1 convolution
/// of the projection's output) tile the same pixels: the expansion's tile
/// of 8 pixels reads the projection's outputs of those 8 pixels and no
/// others. Run as one kernel, a work-item computes the projection's tile
/// (every channel tile of it, one after another), stores it, and then the
/// expansion's tiles of the same pixels, which read those values back from
/// its cache. Nothing is computed twice; the run launches one kernel
/// fewer, and on PoCL's CPU device each launch costs a command's overhead
/// and a worker's late start (docs/PERFORMANCE.md, stop 68: 15-20 us a
/// pair at the minimum).
///
/// The proof is exact, not a pattern match: with the two kernels' shared
/// work-item variables fixed (matched by their extents and their
/// coefficients in the buffer's index), the elements of the buffer the
/// second kernel's work-item reads (every load, every lane, over every
/// iteration of its loops) are enumerated, and each must be one the first
/// kernel's work-item stores (enumerated the same way), at an offset from
/// the same base, under a subset of the conditions the read runs under (a
/// partial tile's rows: the read of row r runs only where the store of row
/// r did). A work-item reads its own stores in program order, so the merged
/// kernel computes what the two did. Refused: indices that are not affine
/// in the enumerated variables (a padding's clamp), conditions that are
/// not the store's own, the first kernel reading anything the second
/// writes, kernels with size variants, work-groups, local arrays or a sync
/// point between them, and a first kernel of more than 4 tiles per merged
/// work-item (each would read all of its weights).
#pragma once

#include "ir/module.h"
#include "ir/simplify.h"

namespace aotc {

/// Merges every consecutive pair of CPU register-tiled contraction kernels
/// of \p m that may run as one (see above) and whose merged kernel keeps
/// enough work-items at the planned sizes (symbols at 1; \p env has their
/// ranges): minChainWorkItems(\p units). Where the work-items grow with
/// the symbols and \p sizeVariantAt > 1, the chain is a size variant
/// (size_variants.cpp): it runs where they are fewer than the geometric
/// mean of their counts at 1 and at \p sizeVariantAt (a batch of 1 or 2),
/// and the pair, kept after it, from there on. Returns the number of
/// chains.
int chainKernels(LoopModule &m, const RangeEnv &env, int64_t units,
                 int64_t sizeVariantAt);

/// The least number of work-items a merged kernel keeps (the first
/// kernel's, whose other tiles and all of the second's run serially in
/// each): 8 per compute unit where the profile knows them (\p units > 0),
/// at least 16. MobileNetV2's 14 x 14 layers have 25 tiles of 8 pixels, its
/// 7 x 7 layers 7, which stay separate kernels.
inline int64_t minChainWorkItems(int64_t units) {
  return units > 2 ? 8 * units : 16;
}

} // namespace aotc
