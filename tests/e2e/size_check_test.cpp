// Sizes are checked arithmetic: an input dimension whose sizes would overflow
// 64 bits somewhere in the model (here near 2^62) is refused with an error
// naming the size, the symbol and the input that bound it, instead of
// wrapping the arena to 0 bytes and letting the device run off its end.
#include "expect_refusal.h"
#include "model_test_util.h"

#include <gtest/gtest.h>

using namespace aotc::e2e;

namespace {

TEST(SizeCheck, HugeSymbolValuesAreRefusedNotWrapped) {
  // y = Pad(x[n, 0]) -> [n, 4]: the input is empty whatever n is, the output
  // is not.
  ModelBuilder mb("pad");
  mb.input("x", onnx::TensorProto::FLOAT, {"n", 0});
  mb.initializerI64("pads", {4}, {0, 2, 0, 2});
  mb.node("Pad", {"x", "pads"}, {"y"}, "padder");
  mb.output("y", onnx::TensorProto::FLOAT, {"n", 4});
  Compiled c = compileModel(mb.bytes(), "--dim n=0:4611686018427387904");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);

  auto ok = m.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {3, 0})});
  EXPECT_EQ(ok[0].toVector<float>(), std::vector<float>(12, 0.0f));

  for (int64_t n : {int64_t{4611686018427387904}, int64_t{1} << 61}) {
    EXPECT_TRUE(refused(
        [&] {
          m.outputShapes({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {n, 0})});
        },
        {"the size of output 'y' [n,4] overflows 64 bits",
         "n = " + std::to_string(n) + " (input 'x' dim 0)"},
        AOTC_ERROR_INVALID_ARGUMENT))
        << "n = " << n;
  }
  // The container still works.
  EXPECT_EQ(m.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {1, 0})})[0].numel(),
            4);
}

} // namespace

namespace {

/// The sum of x[n] and y[4] broadcast, and MatMul(a[s, 2, 3], b[5, 3, 2]).
TEST(SizeCheck, SymbolicDimBroadcastAgainstAConstantAtRunTime) {
  // A symbolic dim against a constant c >= 2 may be c or 1 at run time
  // (it was compiled for c only, and a run with 1 was refused: fuzz seeds
  // 70253, 80059); any other size is refused naming the node.
  ModelBuilder mb("bcast");
  mb.input("x", onnx::TensorProto::FLOAT, {"n"});
  mb.input("y", onnx::TensorProto::FLOAT, {4});
  mb.input("a", onnx::TensorProto::FLOAT, {"s", 2, 3});
  mb.input("b", onnx::TensorProto::FLOAT, {5, 3, 2});
  mb.node("Add", {"x", "y"}, {"z"}, "adder");
  mb.node("MatMul", {"a", "b"}, {"p"}, "mm");
  mb.output("z", onnx::TensorProto::FLOAT, {4});
  mb.output("p", onnx::TensorProto::FLOAT, {5, 2, 2});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  const std::vector<float> y = {10, 20, 30, 40};
  std::vector<float> b(30);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 0.25f * static_cast<float>(i) - 3;
  for (int64_t n : {4, 1}) {
    for (int64_t s : {5, 1}) {
      std::vector<float> x(n), a(s * 6);
      for (int64_t i = 0; i < n; ++i)
        x[i] = 1.5f + static_cast<float>(i);
      for (int64_t i = 0; i < s * 6; ++i)
        a[i] = 0.5f * static_cast<float>(i) - 1;
      auto out = m.run({aotc::HostTensor::fromVector({n}, x),
                        aotc::HostTensor::fromVector({4}, y),
                        aotc::HostTensor::fromVector({s, 2, 3}, a),
                        aotc::HostTensor::fromVector({5, 3, 2}, b)});
      std::vector<float> z = out[0].toVector<float>();
      ASSERT_EQ(z.size(), 4u);
      for (int64_t i = 0; i < 4; ++i)
        EXPECT_EQ(z[i], x[n == 1 ? 0 : i] + y[i]) << n << ": " << i;
      std::vector<float> p = out[1].toVector<float>();
      ASSERT_EQ(p.size(), 20u);
      for (int64_t q = 0; q < 5; ++q)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            float want = 0;
            for (int64_t k = 0; k < 3; ++k)
              want += a[(s == 1 ? 0 : q) * 6 + i * 3 + k] *
                      b[q * 6 + k * 2 + j];
            EXPECT_FLOAT_EQ(p[(q * 2 + i) * 2 + j], want)
                << s << ": " << q << "," << i << "," << j;
          }
    }
  }
  for (int64_t n : {3, 0, 5}) {
    EXPECT_TRUE(refused(
        [&] {
          m.run({aotc::HostTensor::fromVector({n}, std::vector<float>(n, 1.0f)),
                 aotc::HostTensor::fromVector({4}, y),
                 aotc::HostTensor::fromVector({1, 2, 3}, std::vector<float>(6)),
                 aotc::HostTensor::fromVector({5, 3, 2}, b)});
        },
        {"node 'adder' (Add): cannot broadcast shapes [n] "
         "and [4]: dim n must equal 4 or 1"}))
        << "x of " << n << " elements";
  }
}

TEST(SizeCheck, TwoSymbolicDimsBroadcastEitherWayAtRunTime) {
  // Two symbolic dims of which either may be 1 at run time were compiled
  // for equal dims only, and a run where one was 1 was refused (fuzz seeds
  // 13157, 8220239, and one in about 3,000 graphs before). Now the result
  // dim is the other where one is 1, derived per run; Add, Expand and
  // MatMul's batch dims each read their operands at min(i, dim - 1).
  ModelBuilder mb("bcast2");
  mb.input("x", onnx::TensorProto::FLOAT, {"n"});
  mb.input("y", onnx::TensorProto::FLOAT, {"m"});
  mb.input("a", onnx::TensorProto::FLOAT, {"s", 2, 3});
  mb.input("b", onnx::TensorProto::FLOAT, {"t", 3, 2});
  mb.node("Add", {"x", "y"}, {"z"}, "adder");
  mb.node("Shape", {"y"}, {"ys"});
  mb.node("Expand", {"x", "ys"}, {"e"}, "expander");
  mb.node("MatMul", {"a", "b"}, {"p"}, "mm");
  mb.output("z", onnx::TensorProto::FLOAT, {"k"});
  mb.output("e", onnx::TensorProto::FLOAT, {"k2"});
  mb.output("p", onnx::TensorProto::FLOAT, {"u", 2, 2});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  auto values = [](int64_t count, float base) {
    std::vector<float> v(count);
    for (int64_t i = 0; i < count; ++i)
      v[i] = base + 0.75f * static_cast<float>(i);
    return v;
  };
  const std::pair<int64_t, int64_t> sizes[] = {{4, 4}, {1, 4}, {4, 1}, {1, 1},
                                               {0, 0}, {0, 1}, {1, 0}, {7, 7}};
  for (auto [n, mm] : sizes) {
    for (auto [s, t] : {std::pair<int64_t, int64_t>{3, 3}, {1, 3}, {3, 1}}) {
      std::vector<float> x = values(n, 1.5f), y = values(mm, -4.0f);
      std::vector<float> a = values(s * 6, -1.0f), b = values(t * 6, 0.25f);
      auto out = m.run({aotc::HostTensor::fromVector({n}, x),
                        aotc::HostTensor::fromVector({mm}, y),
                        aotc::HostTensor::fromVector({s, 2, 3}, a),
                        aotc::HostTensor::fromVector({t, 3, 2}, b)});
      const int64_t k = n == 1 ? mm : n;
      std::vector<float> z = out[0].toVector<float>();
      ASSERT_EQ(z.size(), static_cast<size_t>(k)) << n << " " << mm;
      for (int64_t i = 0; i < k; ++i)
        EXPECT_EQ(z[i], x[n == 1 ? 0 : i] + y[mm == 1 ? 0 : i])
            << n << " " << mm << ": " << i;
      const int64_t k2 = mm == 1 ? n : mm;
      std::vector<float> e = out[1].toVector<float>();
      ASSERT_EQ(e.size(), static_cast<size_t>(k2)) << n << " " << mm;
      for (int64_t i = 0; i < k2; ++i)
        EXPECT_EQ(e[i], x[n == 1 ? 0 : i]) << n << " " << mm << ": " << i;
      const int64_t u = s == 1 ? t : s;
      std::vector<float> p = out[2].toVector<float>();
      ASSERT_EQ(p.size(), static_cast<size_t>(u * 4)) << s << " " << t;
      for (int64_t q = 0; q < u; ++q)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            float want = 0;
            for (int64_t r = 0; r < 3; ++r)
              want += a[(s == 1 ? 0 : q) * 6 + i * 3 + r] *
                      b[(t == 1 ? 0 : q) * 6 + r * 2 + j];
            EXPECT_FLOAT_EQ(p[(q * 2 + i) * 2 + j], want)
                << s << " " << t << ": " << q << "," << i << "," << j;
          }
    }
  }
  // Neither equal nor 1: refused, naming the node and both dims.
  for (auto [n, mm] : {std::pair<int64_t, int64_t>{3, 4}, {0, 2}, {2, 0}}) {
    EXPECT_TRUE(refused(
        [&] {
          m.run(
              {aotc::HostTensor::fromVector({n}, std::vector<float>(n, 1.0f)),
               aotc::HostTensor::fromVector({mm}, std::vector<float>(mm, 1.0f)),
               aotc::HostTensor::fromVector({1, 2, 3}, std::vector<float>(6)),
               aotc::HostTensor::fromVector({1, 3, 2}, std::vector<float>(6))});
        },
        {"node 'adder' (Add): cannot broadcast shapes [n] "
         "and [m]: dim n and m must be equal or one of them 1"}))
        << n << " against " << mm;
  }
}

TEST(SizeCheck, DepthToSpaceOverSymbolicChannelsChecksThemAtRunTime) {
  // Symbolic channels were refused at compile time (fuzz, stops 54-55);
  // now C / b^2 is the output's channel count, and a run whose C b^2 does
  // not divide is refused naming the node. SpaceToDepth's C b^2 needs no
  // check. The values are checked element by element in
  // tests/fuzz/regressions/{depth_to_space,space_to_depth}_symbolic_channels.
  ModelBuilder mb("d2s");
  mb.input("x", onnx::TensorProto::FLOAT, {1, "c", 1, 1});
  ModelBuilder::attrInt(mb.node("DepthToSpace", {"x"}, {"y"}, "d2s"),
                        "blocksize", 2);
  mb.output("y", onnx::TensorProto::FLOAT, {1, "q", 2, 2});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  auto out = m.run({aotc::HostTensor::fromVector({1, 8, 1, 1}, x)});
  // DCR: out[0, k, i, j] = x[0, (2 i + j) * 2 + k].
  EXPECT_EQ(out[0].toVector<float>(),
            (std::vector<float>{1, 3, 5, 7, 2, 4, 6, 8}));
  for (int64_t ch : {6, 1}) {
    EXPECT_TRUE(refused(
        [&] {
          m.run({aotc::HostTensor::fromVector({1, ch, 1, 1},
                                              std::vector<float>(ch, 1.0f))});
        },
        {"node 'd2s' (DepthToSpace): the channels of input 0 "
         "('x') (c) must be divisible by blocksize^2 = 4"}))
        << ch << " channels";
  }
}

} // namespace
