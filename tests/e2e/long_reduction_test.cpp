// Long float sums accumulate in two levels (reductionLoops in
// compiler/schedule/register_tile.cpp): one float32 accumulator stops
// changing once each term is below half its ulp, so 2^24 + 1 == 2^24 and a
// sum of 20971520 ones used to give 16777216. Each case would give that
// without the blocking; the sums are exact with it (partials of 65536 ones,
// multiples of 65536 after).
#include "model_test_util.h"

#include <gtest/gtest.h>

using namespace aotc::e2e;

namespace {

float sumOfCopies(const std::vector<int64_t> &shape, float x) {
  ModelBuilder mb("long_sum");
  mb.input("x", onnx::TensorProto::FLOAT, {1});
  mb.initializerI64("shape", {static_cast<int64_t>(shape.size())}, shape);
  mb.node("Expand", {"x", "shape"}, {"e"});
  ModelBuilder::attrInt(mb.node("ReduceSum", {"e"}, {"y"}), "keepdims", 0);
  mb.output("y", onnx::TensorProto::FLOAT, {});
  Compiled c = compileModel(mb.bytes());
  EXPECT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  return m.run({aotc::HostTensor::fromVector({1}, std::vector<float>{x})})[0]
      .toVector<float>()[0];
}

TEST(LongReduction, OneLongAxisSumsExactly) {
  // The innermost loop alone is longer than a block: split into blocks.
  EXPECT_EQ(sumOfCopies({20971520}, 1.0f), 20971520.0f);
  // Not a multiple of the block: the last block is shorter.
  EXPECT_EQ(sumOfCopies({65536 * 323 + 2}, 1.0f), 21168130.0f);
}

TEST(LongReduction, NestedAxesSumExactly) {
  // 2048 x 10240: partial sums over the inner axis (10240 terms each).
  EXPECT_EQ(sumOfCopies({2048, 10240}, 1.0f), 20971520.0f);
  // Many short axes: partials over the innermost ones that fit a block.
  EXPECT_EQ(sumOfCopies({80, 64, 64, 64}, 1.0f), 20971520.0f);
}

TEST(LongReduction, TiledContractionWithALongK) {
  // [4, K] x [K, 8] of ones (broadcast views), K = 2^24 + 2^20: every
  // output is K. The register-tiled path.
  const int64_t k = 17825792;
  ModelBuilder mb("long_k");
  mb.input("a", onnx::TensorProto::FLOAT, {1});
  mb.initializerI64("sa", {2}, {4, k});
  mb.initializerI64("sb", {2}, {k, 8});
  mb.node("Expand", {"a", "sa"}, {"x"});
  mb.node("Expand", {"a", "sb"}, {"w"});
  mb.node("MatMul", {"x", "w"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {4, 8});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> y =
      m.run({aotc::HostTensor::fromVector({1}, std::vector<float>{1.0f})})[0]
          .toVector<float>();
  ASSERT_EQ(y.size(), 32u);
  for (float v : y)
    EXPECT_EQ(v, static_cast<float>(k));
}

} // namespace
