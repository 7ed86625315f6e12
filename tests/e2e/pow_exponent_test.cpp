// Pow with a compile-time exponent of 1, 2 or 3 is multiplied out
// (lowerElementwise): the results equal x * x (* x) on every element, and
// an exponent the caller can replace (an initializer) is not specialized: an
// update of it changes the result.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace aotc::e2e;

namespace {

std::vector<float> randomValues(size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng);
  v[0] = -0.0f;
  v[1] = INFINITY;
  v[2] = -INFINITY;
  v[3] = NAN;
  v[4] = 3.0e38f; // overflows when squared
  return v;
}

/// y = Pow(x, c) with c from a Constant node holding \p exponent.
std::vector<float> powByConstantNode(float exponent,
                                     const std::vector<float> &x) {
  ModelBuilder mb("pow_const");
  mb.input("x", onnx::TensorProto::FLOAT, {static_cast<int64_t>(x.size())});
  onnx::NodeProto &c = mb.node("Constant", {}, {"c"});
  onnx::AttributeProto *a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_float_data(exponent);
  mb.node("Pow", {"x", "c"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {static_cast<int64_t>(x.size())});
  Compiled comp = compileModel(mb.bytes());
  EXPECT_EQ(comp.exitCode, 0) << comp.output;
  aotc::Model m = loadModel(comp.soPath);
  return m
      .run({aotc::HostTensor::fromVector({static_cast<int64_t>(x.size())}, x)})[0]
      .toVector<float>();
}

void expectSameFloats(const std::vector<float> &got,
                      const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    else
      EXPECT_EQ(got[i], want[i]) << "element " << i;
  }
}

TEST(PowExponent, SmallIntegerExponentsMultiplyOut) {
  std::vector<float> x = randomValues(1001);
  for (float e : {1.0f, 2.0f, 3.0f}) {
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      float v = x[i];
      for (int k = 1; k < static_cast<int>(e); ++k)
        v = v * x[i];
      want[i] = v;
    }
    SCOPED_TRACE(e);
    expectSameFloats(powByConstantNode(e, x), want);
  }
}

TEST(PowExponent, OtherExponentsStayPow) {
  std::vector<float> x = randomValues(257);
  std::vector<float> y = powByConstantNode(2.5f, x);
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 5; i < x.size(); ++i) {
    float want = std::pow(x[i], 2.5f);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(y[i])) << i;
    else
      EXPECT_NEAR(y[i], want, 1e-5f * std::fabs(want) + 1e-30f) << i;
  }
}

TEST(PowExponent, InitializerExponentFollowsUpdates) {
  ModelBuilder mb("pow_init");
  mb.input("x", onnx::TensorProto::FLOAT, {4});
  mb.initializerF32("e", {}, {2.0f});
  mb.node("Pow", {"x", "e"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {4});
  Compiled comp = compileModel(mb.bytes());
  ASSERT_EQ(comp.exitCode, 0) << comp.output;
  aotc::Model m = loadModel(comp.soPath);
  auto in = aotc::HostTensor::fromVector({4}, std::vector<float>{1, 2, -3, 0.5f});
  expectSameFloats(m.run({in})[0].toVector<float>(), {1, 4, 9, 0.25f});
  m.updateConstants({{"e", aotc::HostTensor::fromVector({}, std::vector<float>{3.0f})}});
  expectSameFloats(m.run({in})[0].toVector<float>(), {1, 8, -27, 0.125f});
}

} // namespace
