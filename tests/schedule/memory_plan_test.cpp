// Arena planning (compiler/schedule/memory_plan.cpp): buffers whose
// lifetimes do not overlap share space, and of the two assignments (first
// fit, best fit) the smaller arena is kept.
#include "compiler/schedule/schedule.h"

#include <gtest/gtest.h>

namespace aotc {
namespace {

/// A module of \p floats arena buffers b0, b1, ... of the given sizes (in
/// floats) and one kernel per entry of \p kernels, which lists the buffers
/// the kernel uses.
LoopModule module(const std::vector<int64_t> &floats,
                  const std::vector<std::vector<int>> &kernels) {
  LoopModule m;
  for (size_t i = 0; i < floats.size(); ++i) {
    ModuleBuffer b;
    b.name = "b" + std::to_string(i);
    b.shape = {Expr(floats[i])};
    m.buffers.push_back(b);
  }
  for (size_t k = 0; k < kernels.size(); ++k) {
    Kernel kernel;
    kernel.name = "k" + std::to_string(k);
    for (int b : kernels[k])
      kernel.buffers.push_back(KernelBuffer{"b" + std::to_string(b),
                                            DType::Float32, true,
                                            {Expr(floats[b])}});
    m.kernels.push_back(kernel);
  }
  return m;
}

int64_t offsetOf(const LoopModule &m, const std::string &name) {
  return m.findBuffer(name)->arenaOffset.as<IntImm>()->value;
}

TEST(MemoryPlan, DisjointLifetimesShareASlot) {
  // b0 [k0, k1], b1 [k1, k2], b2 [k2, k3]: b2 takes b0's slot.
  LoopModule m = module({64, 64, 64}, {{0}, {0, 1}, {1, 2}, {2}});
  planMemory(m, RangeEnv());
  EXPECT_EQ(offsetOf(m, "b0"), offsetOf(m, "b2"));
  EXPECT_NE(offsetOf(m, "b0"), offsetOf(m, "b1"));
  EXPECT_TRUE(m.arenaBytes.isConstValue(512));
}

TEST(MemoryPlan, BestFitKeepsTheLargeSlotForTheLargeBuffer) {
  // b0 (1024 floats) and b1 (64) live together and die at k2; b2 (64)
  // lives k2-k3; b3 (64) from k3 and b4 (1024) from k4 live to the end.
  // First fit puts b3 in b0's large slot and grows b1's for b4: 8704
  // bytes. Best fit puts b3 in b1's slot and b4 in b0's: 4608.
  LoopModule m = module({1024, 64, 64, 64, 1024},
                        {{0}, {0, 1}, {0, 1, 2}, {2, 3}, {3, 4}, {3, 4}});
  planMemory(m, RangeEnv());
  EXPECT_TRUE(m.arenaBytes.isConstValue(4096 + 256 + 256))
      << printExpr(m.arenaBytes);
  EXPECT_EQ(offsetOf(m, "b4"), offsetOf(m, "b0"));
  EXPECT_EQ(offsetOf(m, "b3"), offsetOf(m, "b1"));
  // Every pair of buffers live in the same kernel is disjoint.
  auto bytesOf = [&](const std::string &name) {
    return m.findBuffer(name)->bytes().as<IntImm>()->value;
  };
  for (const Kernel &k : m.kernels)
    for (const KernelBuffer &a : k.buffers)
      for (const KernelBuffer &b : k.buffers) {
        if (a.name == b.name)
          continue;
        int64_t oa = offsetOf(m, a.name), ob = offsetOf(m, b.name);
        EXPECT_TRUE(oa + bytesOf(a.name) <= ob || oa >= ob + bytesOf(b.name))
            << a.name << " and " << b.name << " overlap in " << k.name;
      }
}

TEST(MemoryPlan, FirstFitKeptWhereBestFitIsNoSmaller) {
  // A chain: both assignments give two slots.
  LoopModule m = module({256, 256, 256, 256},
                        {{0}, {0, 1}, {1, 2}, {2, 3}, {3}});
  planMemory(m, RangeEnv());
  EXPECT_TRUE(m.arenaBytes.isConstValue(2048));
  EXPECT_EQ(offsetOf(m, "b0"), 0);
  EXPECT_EQ(offsetOf(m, "b2"), 0);
}

} // namespace
} // namespace aotc
