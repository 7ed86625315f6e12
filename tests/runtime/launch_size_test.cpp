// The work-group size the runtime picks for CPU launches (launch_size.h).
#include "launch_size.h"

#include <gtest/gtest.h>

using aotc::rt::cpuLocalSize;

TEST(LaunchSize, CpuLaunchesGetEightGroupsPerComputeUnit) {
  // Large launches keep the largest size.
  EXPECT_EQ(cpuLocalSize(1 << 20, 256, 2), 256u);
  // BERT's LayerNorm rows (128) on 2 units: 8 groups of 16, not 1 of 256.
  EXPECT_EQ(cpuLocalSize(128, 256, 2), 8u);
  // A GEMM's 4224 tiles: 17 groups of 256 already give 2 units 8 each; 16
  // units need smaller groups.
  EXPECT_EQ(cpuLocalSize(4224, 256, 2), 256u);
  EXPECT_EQ(cpuLocalSize(4224, 256, 16), 32u);
  // Always a power of two, within the kernel's limit, at least 1.
  for (uint64_t g : {0ull, 1ull, 15ull, 17ull, 100ull, 1000ull, 99999ull})
    for (size_t limit : {1u, 7u, 64u, 256u})
      for (uint32_t units : {0u, 1u, 2u, 64u}) {
        size_t l = cpuLocalSize(g, limit, units);
        EXPECT_GE(l, 1u);
        EXPECT_LE(l, std::max<size_t>(limit, 1));
        EXPECT_EQ(l & (l - 1), 0u) << g << " " << limit << " " << units;
        uint32_t u = units ? units : 1;
        if (l > 1) { // every group it chose leaves 8 per unit
          EXPECT_GE(g / l, 8u * u);
        }
      }
}
