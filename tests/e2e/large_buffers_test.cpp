// Input and output buffers grow with the batch across sizes of megabytes
// (DeviceBuffer::ensure, container.cpp: capacity grows by half, never
// shrinks, the old buffer released): every element a run writes or reads
// is right after each growth, after a smaller run in a larger buffer, and
// at batch 0. The same for an arena in huge pages (AOTC_HUGE_PAGES=1,
// runtime/src/host_pages.h). Also run under ASan (scripts/ci_extra.sh).
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

using namespace aotc::e2e;

namespace {

TEST(LargeBuffers, GrowAcrossMegabytesAndStayCorrect) {
  // y = x * 2 + 1 over [n, 1024] floats: 4 KiB a row.
  ModelBuilder mb("large_buffers");
  mb.input("x", onnx::TensorProto::FLOAT, {"n", 1024});
  mb.initializerF32("two", {1}, {2.0f});
  mb.initializerF32("one", {1}, {1.0f});
  mb.node("Mul", {"x", "two"}, {"t"});
  mb.node("Add", {"t", "one"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {"n", 1024});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  // Small, 2 MiB, 12 MiB; back down (no shrink); up again past the
  // largest (a second release); empty; in between.
  for (int64_t n : {int64_t{1}, int64_t{513}, int64_t{3001}, int64_t{5},
                    int64_t{3001}, int64_t{4100}, int64_t{0}, int64_t{700}}) {
    std::vector<float> x(static_cast<size_t>(n) * 1024);
    for (float &v : x)
      v = dist(rng);
    std::vector<float> y =
        m.run({aotc::HostTensor::fromVector({n, 1024}, x)})[0]
            .toVector<float>();
    ASSERT_EQ(y.size(), x.size()) << "n = " << n;
    size_t wrong = 0;
    for (size_t i = 0; i < x.size(); ++i)
      wrong += y[i] != x[i] * 2.0f + 1.0f;
    EXPECT_EQ(wrong, 0u) << "n = " << n;
  }
}

/// y = (x @ w) @ w over [n, 256]: x @ w is materialized in the arena, 1 KiB
/// a row (3 MiB at n = 3001).
std::string twoMatMuls(std::vector<float> &w) {
  constexpr int64_t k = 256;
  w.resize(k * k);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(0.71f * static_cast<float>(i)) / 16.0f;
  ModelBuilder mb("arena_pages");
  mb.input("x", onnx::TensorProto::FLOAT, {"n", k});
  mb.initializerF32("w", {k, k}, w);
  mb.node("MatMul", {"x", "w"}, {"t"});
  mb.node("MatMul", {"t", "w"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {"n", k});
  return mb.bytes();
}

TEST(LargeBuffers, ArenaInHugePagesWhenAsked) {
  std::vector<float> w;
  Compiled c = compileModel(twoMatMuls(w));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  const std::vector<int64_t> sizes = {1, 3001, 5, 3001, 4100, 0, 700};
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> xs;
  for (int64_t n : sizes) {
    xs.emplace_back(static_cast<size_t>(n) * 256);
    for (float &v : xs.back())
      v = dist(rng);
  }
  // The same runs with the arena from PoCL's allocator and in huge pages:
  // the same kernels on the same data, so the same bits.
  std::vector<std::vector<float>> ys[2];
  for (int pages = 0; pages < 2; ++pages) {
    if (pages)
      setenv("AOTC_HUGE_PAGES", "1", 1);
    else
      unsetenv("AOTC_HUGE_PAGES");
    aotc::Model m = loadModel(c.soPath);
    for (size_t r = 0; r < sizes.size(); ++r)
      ys[pages].push_back(
          m.run({aotc::HostTensor::fromVector({sizes[r], 256}, xs[r])})[0]
              .toVector<float>());
  }
  unsetenv("AOTC_HUGE_PAGES");
  for (size_t r = 0; r < sizes.size(); ++r) {
    int64_t n = sizes[r];
    ASSERT_EQ(ys[0][r].size(), xs[r].size()) << "n = " << n;
    EXPECT_EQ(ys[1][r], ys[0][r]) << "n = " << n;
    // And right: a row of each run against the host, in double.
    if (n == 0)
      continue;
    int64_t row = n / 2;
    std::vector<double> t(256, 0.0);
    for (int j = 0; j < 256; ++j)
      for (int i = 0; i < 256; ++i)
        t[j] += static_cast<double>(xs[r][row * 256 + i]) * w[i * 256 + j];
    for (int j = 0; j < 256; ++j) {
      double y = 0.0;
      for (int i = 0; i < 256; ++i)
        y += t[i] * w[i * 256 + j];
      EXPECT_NEAR(ys[1][r][row * 256 + j], y, 1e-4 + 1e-4 * std::fabs(y))
          << "n = " << n << ", column " << j;
    }
  }
}

} // namespace
