/// \file
/// Permuting a dense tensor's dims on the host: how the runtime repacks a
/// weight for its kernels on update and reads it back on extract.
#ifndef AOTC_RUNTIME_SRC_PERMUTE_H
#define AOTC_RUNTIME_SRC_PERMUTE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "aotc/aotc_runtime.h"

namespace aotc::rt {

/// The most dims a permuted view has: a fold's view of its source splits
/// one dim of a tensor (a packed weight's panels).
constexpr int32_t kMaxPermuteRank = AOTC_MAX_RANK + 1;

/// Copies one tile of a permutation: \p rows x \p cols elements, element
/// (i, j) from from[i * fromRow + j * fromCol] to to[i * toRow + j * toCol]
/// (strides in elements). A fixed-size memcpy compiles to one move.
template <size_t Elem>
inline void copyTile(const uint8_t *from, uint8_t *to, int64_t rows, int64_t cols,
              int64_t fromRow, int64_t fromCol, int64_t toRow, int64_t toCol) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(to + (i * toRow + j * toCol) * Elem,
                  from + (i * fromRow + j * fromCol) * Elem, Elem);
}

inline void copyTile(size_t elem, const uint8_t *from, uint8_t *to, int64_t rows,
              int64_t cols, int64_t fromRow, int64_t fromCol, int64_t toRow,
              int64_t toCol) {
  switch (elem) {
  case 1: return copyTile<1>(from, to, rows, cols, fromRow, fromCol, toRow, toCol);
  case 2: return copyTile<2>(from, to, rows, cols, fromRow, fromCol, toRow, toCol);
  case 4: return copyTile<4>(from, to, rows, cols, fromRow, fromCol, toRow, toCol);
  case 8: return copyTile<8>(from, to, rows, cols, fromRow, fromCol, toRow, toCol);
  default:
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(to + (i * toRow + j * toCol) * elem,
                    from + (i * fromRow + j * fromCol) * elem, elem);
  }
}

/// Permutes a dense tensor: target dim k is source dim perm[k]. Forward:
/// \p target[t] = \p source[s]; inverse (!forward): the same pairs, written
/// the other way (a target read back into the source layout).
///
/// Two target dims move fastest: `a`, the target's last (contiguous in the
/// target), and `b`, the one whose source dim is the source's last
/// (contiguous in the source). They are walked in 32 x 32 tiles, so that
/// both sides touch whole cache lines (a 4096 x 4096 transpose element by
/// element missed the cache on every read: 100 MB of weights took 0.4 s).
/// When a == b the permutation keeps the innermost dim and rows are copied
/// whole. Every other target dim is an outer loop.
inline void permute(const uint8_t *from, uint8_t *to, int32_t rank,
             const int64_t *sourceShape, const int32_t *perm, size_t elem,
             bool forward) {
  if (rank == 0) {
    std::memcpy(to, from, elem);
    return;
  }
  int64_t sstride[kMaxPermuteRank], tstride[kMaxPermuteRank], out[kMaxPermuteRank];
  int64_t total = 1;
  for (int32_t k = rank - 1; k >= 0; --k) {
    sstride[k] = total;
    total *= sourceShape[k];
  }
  if (total == 0)
    return;
  for (int32_t k = 0; k < rank; ++k)
    out[k] = sourceShape[perm[k]];
  int64_t t = 1;
  for (int32_t k = rank - 1; k >= 0; --k) {
    tstride[k] = t;
    t *= out[k];
  }
  const int32_t a = rank - 1;
  int32_t b = a;
  for (int32_t k = 0; k < rank; ++k)
    if (perm[k] == rank - 1)
      b = k;
  // Per target dim: its stride in the target and in the source.
  auto srcStride = [&](int32_t k) { return sstride[perm[k]]; };
  constexpr int64_t kTile = 32;
  int64_t o[kMaxPermuteRank] = {};
  for (;;) {
    int64_t tOff = 0, sOff = 0;
    for (int32_t k = 0; k < rank; ++k) {
      tOff += o[k] * tstride[k];
      sOff += o[k] * srcStride(k);
    }
    if (a == b) {
      // Innermost dim kept: one contiguous run.
      const uint8_t *src = forward ? from + sOff * elem : from + tOff * elem;
      uint8_t *dst = forward ? to + tOff * elem : to + sOff * elem;
      std::memcpy(dst, src, static_cast<size_t>(out[a]) * elem);
    } else {
      for (int64_t ib = 0; ib < out[b]; ib += kTile)
        for (int64_t ia = 0; ia < out[a]; ia += kTile) {
          const int64_t rows = std::min(kTile, out[b] - ib);
          const int64_t cols = std::min(kTile, out[a] - ia);
          const int64_t tBase = tOff + ib * tstride[b] + ia;
          const int64_t sBase = sOff + ib + ia * srcStride(a);
          if (forward)
            copyTile(elem, from + sBase * elem, to + tBase * elem, rows, cols,
                     1, srcStride(a), tstride[b], 1);
          else
            copyTile(elem, from + tBase * elem, to + sBase * elem, rows, cols,
                     tstride[b], 1, 1, srcStride(a));
        }
    }
    // Next outer index (dims a and b are walked above).
    int32_t k = rank - 1;
    for (; k >= 0; --k) {
      if (k == a || k == b)
        continue;
      if (++o[k] < out[k])
        break;
      o[k] = 0;
    }
    if (k < 0)
      return;
  }
}

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_PERMUTE_H
