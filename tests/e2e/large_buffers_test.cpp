// Input and output buffers grow with the batch across sizes of megabytes
// (DeviceBuffer::ensure, container.cpp: capacity grows by half, never
// shrinks, the old buffer released): every element a run writes or reads
// is right after each growth, after a smaller run in a larger buffer, and
// at batch 0. Also run under ASan (scripts/ci_extra.sh).
#include "model_test_util.h"

#include <gtest/gtest.h>

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

} // namespace
