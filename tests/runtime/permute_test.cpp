// The host permutation that repacks updated weights and reads them back
// (permute.h), against an element-by-element reference: every rank up to
// AOTC_MAX_RANK + 1, random permutations, sizes around the 32-element tile
// (0, 1, 31, 33, 70), element sizes 1, 2, 3, 4 and 8, both directions.
#include "permute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace {

using aotc::rt::kMaxPermuteRank;

// target[t] = source[s] where target dim k is source dim perm[k].
std::vector<uint8_t> reference(const std::vector<uint8_t> &src, int32_t rank,
                               const int64_t *shape, const int32_t *perm,
                               size_t elem) {
  int64_t stride[kMaxPermuteRank], out[kMaxPermuteRank], o[kMaxPermuteRank] = {};
  int64_t total = 1;
  for (int32_t k = rank - 1; k >= 0; --k) {
    stride[k] = total;
    total *= shape[k];
  }
  for (int32_t k = 0; k < rank; ++k)
    out[k] = shape[perm[k]];
  std::vector<uint8_t> dst(src.size());
  for (int64_t t = 0; t < total; ++t) {
    int64_t at = 0;
    for (int32_t k = 0; k < rank; ++k)
      at += o[k] * stride[perm[k]];
    std::memcpy(&dst[t * elem], &src[at * elem], elem);
    for (int32_t k = rank - 1; k >= 0 && ++o[k] == out[k]; --k)
      o[k] = 0;
  }
  return dst;
}

TEST(Permute, MatchesTheElementwiseReferenceBothWays) {
  std::mt19937 rng(7);
  const int64_t sizes[] = {1, 31, 33, 70, 2, 5, 0};
  const size_t elems[] = {1, 2, 3, 4, 8};
  int cases = 0;
  for (int32_t rank = 1; rank <= kMaxPermuteRank; ++rank)
    for (int rep = 0; rep < 12; ++rep) {
      int64_t shape[kMaxPermuteRank];
      int64_t total = 1;
      for (int32_t k = 0; k < rank; ++k) {
        // Sizes around the tile on two dims only, so that tensors stay small.
        shape[k] = k < 2 ? sizes[rng() % 7] : static_cast<int64_t>(1 + rng() % 3);
        total *= shape[k];
      }
      int32_t perm[kMaxPermuteRank];
      std::iota(perm, perm + rank, 0);
      std::shuffle(perm, perm + rank, rng);
      const size_t elem = elems[rng() % 5];
      std::vector<uint8_t> src(static_cast<size_t>(total) * elem);
      for (auto &b : src)
        b = static_cast<uint8_t>(rng());
      const std::vector<uint8_t> want = reference(src, rank, shape, perm, elem);
      std::vector<uint8_t> got(src.size(), 0xAB);
      aotc::rt::permute(src.data(), got.data(), rank, shape, perm, elem, true);
      ASSERT_EQ(got, want) << "forward, rank " << rank << " elem " << elem;
      std::vector<uint8_t> back(src.size(), 0xCD);
      aotc::rt::permute(want.data(), back.data(), rank, shape, perm, elem, false);
      ASSERT_EQ(back, src) << "inverse, rank " << rank << " elem " << elem;
      ++cases;
    }
  EXPECT_EQ(cases, 12 * kMaxPermuteRank);
}

TEST(Permute, TransposesALargeMatrixAndKeepsRowsWhole) {
  const int64_t shape[2] = {257, 1000};
  std::vector<uint8_t> src(257 * 1000 * 4);
  std::iota(src.begin(), src.end(), 0);
  const int32_t t[2] = {1, 0}, id[2] = {0, 1};
  for (const int32_t *perm : {t, id}) {
    std::vector<uint8_t> got(src.size());
    aotc::rt::permute(src.data(), got.data(), 2, shape, perm, 4, true);
    EXPECT_EQ(got, reference(src, 2, shape, perm, 4));
  }
}

} // namespace
