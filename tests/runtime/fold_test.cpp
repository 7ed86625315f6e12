/// \file
/// The folding program in the runtime (fixtures/folded_model.cpp: y = x * w2
/// with w2 = 2 * w + 1 computed by the model's fold_w kernel): computed at
/// load, again on every update of w (active or inactive set), on
/// run_const_fold from user-managed memory changed in place, never given by
/// name, and consistent for runs on four threads while another thread
/// updates, folds and swaps (the test the ThreadSanitizer build runs).
#include "aotc/runner.hpp"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace aotc::test {
namespace {

Model loadFolded(uint32_t instances = 1) {
  ModelOptions options;
  options.device = testDevice();
  options.cacheDir = sharedCacheDir();
  options.numInstances = instances;
  return Model::load(AOTC_TEST_MODEL_FOLDED, options);
}

HostTensor input() {
  return HostTensor::fromVector({3, 4}, std::vector<float>{
                                            1, 2, 3, 4, -1, 0.5f, 2, 8, 0, 1,
                                            -3, 0.25f});
}

/// y = x * (2 * w + 1), computed on the host.
std::vector<float> expected(const std::vector<float> &w) {
  std::vector<float> x = input().toVector<float>(), y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = x[i] * (2.0f * w[i % 4] + 1.0f);
  return y;
}

std::vector<float> runOnce(const Model &m) {
  return m.run({input()})[0].toVector<float>();
}

Model::ConstantMap weights(const std::vector<float> &w) {
  return {{"w", HostTensor::fromVector({4}, w)}};
}

const std::vector<float> kCompiledIn = {0.5f, -2.0f, 3.0f, 0.25f};

TEST(FoldingProgram, RunsAtLoadAndOnEveryUpdate) {
  Model m = loadFolded();
  EXPECT_EQ(runOnce(m), expected(kCompiledIn));
  std::vector<float> a = {1, 2, 3, 4};
  m.updateConstants(weights(a));
  EXPECT_EQ(runOnce(m), expected(a));
  // The inactive set is folded on its update; runs see it after the swap.
  std::vector<float> b = {-1, 0.5f, 0, 7};
  m.updateConstants(weights(b), /*useInactive=*/true);
  EXPECT_EQ(runOnce(m), expected(a));
  m.runConstFold(true);
  m.swapConstantBuffer();
  EXPECT_EQ(runOnce(m), expected(b));
  // w is updatable; w2 is folded, not updatable, and says why.
  std::vector<ConstantInfo> infos = m.constants();
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].onnxName, "w");
  EXPECT_TRUE(infos[0].updatable);
  EXPECT_EQ(infos[1].name, "w2");
  EXPECT_TRUE(infos[1].folded);
  EXPECT_FALSE(infos[1].updatable);
  EXPECT_NE(infos[1].notUpdatableReason.find("folding program"),
            std::string::npos)
      << infos[1].notUpdatableReason;
}

TEST(FoldingProgram, RunConstFoldReadsUserManagedMemoryChangedInPlace) {
  if (std::string(testDevice()) != "cpu")
    GTEST_SKIP() << "a GPU driver may keep its own copy of user memory";
  Model m = loadFolded();
  Model::ConstantMap held = weights({1, 1, 1, 1});
  m.updateUserManagedConstants(held);
  EXPECT_EQ(runOnce(m), expected({1, 1, 1, 1}));
  float *w = held.at("w").data<float>();
  w[0] = 5;
  w[3] = -2;
  m.runConstFold();
  EXPECT_EQ(runOnce(m), expected({5, 1, 1, -2}));
}

TEST(FoldingProgram, ComputedConstantsCannotBeGiven) {
  Model m = loadFolded();
  try {
    m.updateConstants({{"w2", HostTensor::fromVector({4}, kCompiledIn)}});
    FAIL() << "w2 was accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), AOTC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("folding program"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(runOnce(m), expected(kCompiledIn)); // nothing changed
}

TEST(FoldingProgram, SwapsUnderTrafficNeverMix) {
  Model m = loadFolded(4);
  const std::vector<float> a = {1, 2, 3, 4}, b = {-4, 0.5f, 2, -1};
  const std::vector<float> refA = expected(a), refB = expected(b);
  m.updateConstants(weights(a));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> seenA{0}, seenB{0}, mixed{0}, swaps{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&] {
      std::vector<HostTensor> in = {input()}, out;
      while (!stop.load()) {
        m.run(in, out);
        std::vector<float> y = out[0].toVector<float>();
        if (y == refA)
          ++seenA;
        else if (y == refB)
          ++seenB;
        else
          ++mixed;
      }
    });
  std::thread updater([&] {
    bool toB = true;
    while (!stop.load()) {
      m.updateConstants(weights(toB ? b : a), /*useInactive=*/true);
      m.runConstFold(true);
      m.swapConstantBuffer();
      if (swaps % 3 == 0)
        m.updateConstants(weights(toB ? b : a));
      if (swaps % 5 == 0) {
        m.runConstFold();
        m.freeInactiveConstantBuffer();
      }
      toB = !toB;
      ++swaps;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop = true;
  for (std::thread &t : workers)
    t.join();
  updater.join();
  EXPECT_EQ(mixed.load(), 0);
  EXPECT_GT(seenA.load(), 0);
  EXPECT_GT(seenB.load(), 0);
  EXPECT_GT(swaps.load(), 10);
}

} // namespace
} // namespace aotc::test
