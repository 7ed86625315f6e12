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

TEST(LaunchSize, HeavyCpuLaunchesSplitGroupsForBalance) {
  const double gemm = 2.0 * 128 * 768 * 768; // 151 MFLOP over 264 tiles
  // Without costs, and for light work, 17 groups of 16 as before.
  EXPECT_EQ(cpuLocalSize(264, 256, 2), 16u);
  EXPECT_EQ(cpuLocalSize(264, 256, 2, 264 * 100.0), 16u);
  // A heavy launch: 33 groups of 8, the units' last round within 1/32.
  EXPECT_EQ(cpuLocalSize(264, 256, 2, gemm), 8u);
  // BERT's 1,056-tile GEMM (4 x 128 x 3072 x 768 flops): 17 groups of 64
  // -> 33 of 32.
  EXPECT_EQ(cpuLocalSize(1056, 256, 2, 2.0 * 128 * 3072 * 768), 32u);
  // Groups the units already divide evenly stay whole.
  EXPECT_EQ(cpuLocalSize(256, 256, 2, gemm), 16u);
  EXPECT_EQ(cpuLocalSize(1 << 20, 256, 2, 1e12), 256u);
  // Every choice: a power of two within the limit, no larger than without
  // costs, and smaller only while its groups held kCpuBalanceGroupFlops and
  // left the units uneven.
  for (uint64_t g : {1ull, 17ull, 100ull, 264ull, 1000ull, 4224ull, 99999ull})
    for (uint32_t units : {1u, 2u, 3u, 16u})
      for (double flops : {0.0, 1e5, 1e8, 1e10}) {
        size_t base = cpuLocalSize(g, 256, units);
        size_t l = cpuLocalSize(g, 256, units, flops);
        EXPECT_EQ(l & (l - 1), 0u);
        EXPECT_LE(l, base);
        if (l < base) {
          EXPECT_GE(2.0 * l * flops / g, aotc::rt::kCpuBalanceGroupFlops)
              << g << " " << units << " " << flops;
          uint64_t groups = (g + 2 * l - 1) / (2 * l);
          uint64_t rounds = (groups + units - 1) / units;
          EXPECT_GT(rounds * 2 * l * units, g + g / 32);
        }
      }
}

