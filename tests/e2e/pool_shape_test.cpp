// Window ops follow ONNX's output-size rules (ceil_mode drops windows that
// would start in the right padding), and what shape inference cannot prove
// about symbolic dims (a squeezed dim is 1, a window fits, a reshape keeps
// the element count) is checked before each run, with an error naming the
// node.
#include "expect_refusal.h"
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace aotc::e2e;

namespace {

/// Reference 2-D pooling of x[h, w] (one channel) with ONNX's rules.
std::vector<float> pool2d(const std::vector<float> &x, int64_t h, int64_t w,
                          int64_t k, int64_t s, int64_t pad, bool ceilMode,
                          bool isMax, bool includePad, int64_t &oh,
                          int64_t &ow) {
  auto outSize = [&](int64_t in) {
    int64_t span = in + 2 * pad - k;
    int64_t o = ceilMode ? (span + s - 1) / s + 1 : span / s + 1;
    if (ceilMode && (o - 1) * s >= in + pad)
      --o; // the last window would start in the right padding
    return o;
  };
  oh = outSize(h);
  ow = outSize(w);
  std::vector<float> y;
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      float best = -INFINITY, sum = 0;
      int64_t count = 0;
      for (int64_t a = 0; a < k; ++a)
        for (int64_t b = 0; b < k; ++b) {
          int64_t r = i * s - pad + a, c = j * s - pad + b;
          bool inside = r >= 0 && r < h && c >= 0 && c < w;
          if (inside) {
            best = std::max(best, x[r * w + c]);
            sum += x[r * w + c];
          }
          // count_include_pad: every tap of the kernel, even past the padded
          // input where ceil_mode adds a window (ONNX's test data, ORT).
          if (inside || includePad)
            ++count;
        }
      y.push_back(isMax ? best : sum / count);
    }
  return y;
}

TEST(PoolShape, CeilModeDropsWindowsStartingInThePadding) {
  // The reported case: 3x3 input, kernel 2, stride 2, pads 1: 2x2, not 3x3
  // with -inf; and a sweep of sizes, strides and pads.
  struct Case {
    int64_t h, w, k, s, pad;
  };
  const Case cases[] = {{3, 3, 2, 2, 1}, {5, 4, 3, 2, 1}, {7, 7, 3, 3, 2},
                        {4, 6, 2, 3, 1}, {1, 1, 1, 2, 0}, {6, 5, 4, 2, 3},
                        // the last windows reach past the input, no padding
                        {7, 5, 3, 3, 0}};
  for (const Case &cs : cases)
    for (bool isMax : {true, false})
      for (bool ceilMode : {true, false})
        for (bool includePad : {false, true}) {
          if (isMax && includePad)
            continue;
          int64_t oh, ow;
          std::vector<float> x(cs.h * cs.w);
          for (size_t i = 0; i < x.size(); ++i)
            x[i] = std::sin(static_cast<float>(i) * 1.7f) * 3.0f;
          std::vector<float> want = pool2d(x, cs.h, cs.w, cs.k, cs.s, cs.pad,
                                           ceilMode, isMax, includePad, oh, ow);
          ModelBuilder mb("pool");
          mb.input("x", onnx::TensorProto::FLOAT, {1, 1, cs.h, cs.w});
          auto &node =
              mb.node(isMax ? "MaxPool" : "AveragePool", {"x"}, {"y"}, "pool");
          ModelBuilder::attrInts(node, "kernel_shape", {cs.k, cs.k});
          ModelBuilder::attrInts(node, "strides", {cs.s, cs.s});
          ModelBuilder::attrInts(node, "pads",
                                 {cs.pad, cs.pad, cs.pad, cs.pad});
          ModelBuilder::attrInt(node, "ceil_mode", ceilMode);
          if (!isMax)
            ModelBuilder::attrInt(node, "count_include_pad", includePad);
          // Dim params: ONNX's shape inference (1.12 and 1.20.1) does not
          // drop windows starting in the padding and would disagree with a
          // declared size.
          mb.output("y", onnx::TensorProto::FLOAT, {1, 1, "oh", "ow"});
          std::string what =
              std::string(isMax ? "MaxPool" : "AveragePool") + " " +
              std::to_string(cs.h) + "x" + std::to_string(cs.w) + " k" +
              std::to_string(cs.k) + " s" + std::to_string(cs.s) + " p" +
              std::to_string(cs.pad) + (ceilMode ? " ceil" : "") +
              (includePad ? " include_pad" : "");
          Compiled c = compileModel(mb.bytes());
          if (cs.pad >= cs.k) { // windows entirely in the padding
            EXPECT_EQ(c.exitCode, 1) << what << ": " << c.output;
            EXPECT_NE(c.output.find("node 'pool'"), std::string::npos);
            continue;
          }
          ASSERT_EQ(c.exitCode, 0) << what << ": " << c.output;
          aotc::Model m = loadModel(c.soPath);
          auto out =
              m.run({aotc::HostTensor::fromVector({1, 1, cs.h, cs.w}, x)});
          ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{1, 1, oh, ow}))
              << what;
          std::vector<float> got = out[0].toVector<float>();
          for (size_t i = 0; i < want.size(); ++i)
            EXPECT_NEAR(got[i], want[i], 1e-5) << what << " element " << i;
        }
}

TEST(ShapeChecks, SqueezedSymbolicDimMustBeOne) {
  ModelBuilder mb("sq");
  mb.input("x", onnx::TensorProto::FLOAT, {"n", 3});
  mb.initializerI64("axes", {1}, {0});
  mb.node("Squeeze", {"x", "axes"}, {"y"}, "squeezer");
  mb.output("y", onnx::TensorProto::FLOAT, {3});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  auto out = m.run(
      {aotc::HostTensor::fromVector({1, 3}, std::vector<float>{1, 2, 3})});
  EXPECT_EQ(out[0].toVector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_TRUE(refused(
      [&] {
        m.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {2, 3})});
      },
      {"node 'squeezer' (Squeeze): dim 0 of input 0 ('x') "
       "(n) must be 1 to be squeezed",
       "n = 2 (input 'x' dim 0)"}))
      << "a squeezed dim of 2";
}

TEST(ShapeChecks, WindowMustFitASymbolicInput) {
  ModelBuilder mb("conv");
  mb.input("x", onnx::TensorProto::FLOAT, {1, 1, "h", 4});
  mb.initializerF32("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  mb.node("Conv", {"x", "w"}, {"y"}, "conv");
  mb.output("y", onnx::TensorProto::FLOAT, {1, 1, "oh", 2});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  auto out = m.run({aotc::HostTensor::fromVector(
      {1, 1, 3, 4}, std::vector<float>(12, 1.0f))});
  EXPECT_EQ(out[0].toVector<float>(), (std::vector<float>{9, 9}));
  EXPECT_TRUE(refused(
      [&] {
        m.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {1, 1, 2, 4})});
      },
      {"node 'conv' (Conv): spatial dim 0"}))
      << "a 2-row input to a 3x3 window";
}

TEST(ShapeChecks, ReshapeKeepsTheElementCount) {
  // Reshape x[n, 6] to [m, 4] with m from y's shape: only sizes with
  // 6n == 4m are valid.
  ModelBuilder mb("rs");
  mb.input("x", onnx::TensorProto::FLOAT, {"n", 6});
  mb.input("y", onnx::TensorProto::FLOAT, {"m"});
  mb.node("Shape", {"y"}, {"ys"});
  mb.initializerI64("four", {1}, {4});
  ModelBuilder::attrInt(mb.node("Concat", {"ys", "four"}, {"shape"}), "axis",
                        0);
  mb.node("Reshape", {"x", "shape"}, {"z"}, "reshaper");
  mb.output("z", onnx::TensorProto::FLOAT, {"m", 4});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i);
  auto out = m.run({aotc::HostTensor::fromVector({2, 6}, x),
                    aotc::HostTensor(AOTC_DTYPE_FLOAT32, {3})});
  EXPECT_EQ(out[0].toVector<float>(), x);
  EXPECT_THROW(m.run({aotc::HostTensor::fromVector({2, 6}, x),
                      aotc::HostTensor(AOTC_DTYPE_FLOAT32, {4})}),
               aotc::Error);
}

TEST(ShapeChecks, RankZeroInputsAndOutputs) {
  // A float scalar in and out (the runner's default output tensor is one),
  // and the empty shape of a scalar reduced to 0.
  ModelBuilder mb("scalar");
  mb.input("x", onnx::TensorProto::FLOAT, {});
  mb.node("Relu", {"x"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {});
  mb.node("Shape", {"x"}, {"s"});
  ModelBuilder::attrInt(mb.node("ReduceSum", {"s"}, {"z"}), "keepdims", 0);
  mb.output("z", onnx::TensorProto::INT64, {});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  for (float x : {-2.5f, 3.0f}) {
    auto out = m.run({aotc::HostTensor::fromVector({}, std::vector<float>{x})});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].rank(), 0);
    EXPECT_EQ(out[0].toVector<float>(), std::vector<float>{std::max(x, 0.0f)});
    EXPECT_EQ(out[1].toVector<int64_t>(), std::vector<int64_t>{0});
  }
}

} // namespace
