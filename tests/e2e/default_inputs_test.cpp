// Initializers that the ONNX graph also lists as inputs are defaults (ONNX IR
// >= 4): a run may pass only the required inputs (the defaults apply), or
// one tensor per graph input in the graph's order, replacing each default
// for that run only. A default compiled into the code (shape data) can only
// be passed with its own value; anything else is an error, never a silently
// ignored value.
#include "expect_refusal.h"
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <random>

using namespace aotc::e2e;

namespace {

using aotc::HostTensor;

const std::vector<float> kW = {0.5f, -2.0f, 3.25f};
const std::vector<float> kB = {1.0f, 10.0f, 100.0f};

/// y = Reshape(x * w + b, shape), wcopy = Identity(w); graph inputs in
/// order: w (default), x, shape (default, shape data), unused (default read
/// by nothing). b is an initializer not listed as an input.
aotc::Model defaultsModel() {
  ModelBuilder mb("defaults");
  mb.initializerF32("w", {3}, kW);
  mb.initializerF32("b", {3}, kB);
  mb.initializerI64("shape", {2}, {3, 2});
  mb.initializerF32("unused", {2}, {7.0f, 8.0f});
  mb.input("w", onnx::TensorProto::FLOAT, {3});
  mb.input("x", onnx::TensorProto::FLOAT, {2, 3});
  mb.input("shape", onnx::TensorProto::INT64, {2});
  mb.input("unused", onnx::TensorProto::FLOAT, {2});
  mb.node("Mul", {"x", "w"}, {"xw"});
  mb.node("Add", {"xw", "b"}, {"sum"});
  mb.node("Reshape", {"sum", "shape"}, {"y"});
  mb.node("Identity", {"w"}, {"wcopy"});
  mb.output("y", onnx::TensorProto::FLOAT, {3, 2});
  mb.output("wcopy", onnx::TensorProto::FLOAT, {3});
  Compiled c = compileModel(mb.bytes());
  EXPECT_EQ(c.exitCode, 0) << c.output;
  return loadModel(c.soPath);
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float &f : v)
    f = dist(rng);
  return v;
}

void expectModel(const std::vector<HostTensor> &out,
                 const std::vector<float> &x, const std::vector<float> &w) {
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 2}));
  std::vector<float> y = out[0].toVector<float>();
  ASSERT_EQ(y.size(), 6u);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(y[i], x[i] * w[i % 3] + kB[i % 3]) << i; // may fuse
  EXPECT_EQ(out[1].toVector<float>(), w);
}

TEST(DefaultInputs, GraphInputsListDefaultsInOnnxOrder) {
  aotc::Model m = defaultsModel();
  EXPECT_EQ(m.numInputs(), 1u);
  std::vector<aotc::GraphInputInfo> g = m.graphInputs();
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].name, "w");
  EXPECT_EQ(g[0].kind, AOTC_GRAPH_INPUT_DEFAULT);
  EXPECT_EQ(g[1].name, "x");
  EXPECT_EQ(g[1].kind, AOTC_GRAPH_INPUT_REQUIRED);
  EXPECT_EQ(g[1].index, 0);
  EXPECT_EQ(g[2].name, "shape");
  EXPECT_EQ(g[2].kind, AOTC_GRAPH_INPUT_FIXED);
  EXPECT_EQ(g[3].name, "unused");
  EXPECT_EQ(g[3].kind, AOTC_GRAPH_INPUT_DEFAULT);
  // A default's dtype and shape are its constant's.
  std::vector<aotc::ConstantInfo> constants = m.constants();
  ASSERT_LT(static_cast<size_t>(g[0].index), constants.size());
  EXPECT_EQ(constants[g[0].index].onnxName, "w");
  EXPECT_EQ(constants[g[0].index].shape, (std::vector<int64_t>{3}));
  ASSERT_LT(static_cast<size_t>(g[3].index), constants.size());
  EXPECT_EQ(constants[g[3].index].onnxName, "unused");
}

TEST(DefaultInputs, RequiredInputsAloneUseTheDefaults) {
  aotc::Model m = defaultsModel();
  std::vector<float> x = randomFloats(6, 1);
  expectModel(m.run({HostTensor::fromVector({2, 3}, x)}), x, kW);
}

TEST(DefaultInputs, ARunReplacesADefaultForThatRunOnly) {
  aotc::Model m = defaultsModel();
  std::vector<float> x = randomFloats(6, 2);
  for (unsigned seed = 3; seed < 6; ++seed) {
    std::vector<float> w = randomFloats(3, seed);
    expectModel(m.run({HostTensor::fromVector({3}, w),
                       HostTensor::fromVector({2, 3}, x),
                       HostTensor::fromVector<int64_t>({2}, {3, 2}),
                       HostTensor::fromVector({2}, randomFloats(2, seed))}),
                x, w);
    // The next run without it reads the default again.
    expectModel(m.run({HostTensor::fromVector({2, 3}, x)}), x, kW);
  }
}

TEST(DefaultInputs, ACompiledInDefaultOnlyTakesItsOwnValue) {
  aotc::Model m = defaultsModel();
  std::vector<float> x = randomFloats(6, 7);
  EXPECT_TRUE(refused(
      [&] {
        m.run({HostTensor::fromVector({3}, kW),
               HostTensor::fromVector({2, 3}, x),
               HostTensor::fromVector<int64_t>({2}, {2, 3}),
               HostTensor::fromVector({2}, randomFloats(2, 8))});
      },
      {"input 'shape'"}, AOTC_ERROR_UNSUPPORTED))
      << "a different shape value";
}

TEST(DefaultInputs, WrongDefaultsAndCountsAreErrors) {
  aotc::Model m = defaultsModel();
  std::vector<float> x = randomFloats(6, 9);
  auto expectError = [&](const std::vector<HostTensor> &in,
                         const std::string &needle) {
    EXPECT_TRUE(
        refused([&] { m.run(in); }, {needle}, AOTC_ERROR_INVALID_ARGUMENT))
        << "accepted; expected an error with '" << needle << "'";
  };
  HostTensor shape = HostTensor::fromVector<int64_t>({2}, {3, 2});
  HostTensor unused = HostTensor::fromVector({2}, randomFloats(2, 10));
  // A default's shape and dtype are fixed.
  expectError({HostTensor::fromVector({4}, randomFloats(4, 11)),
               HostTensor::fromVector({2, 3}, x), shape, unused},
              "input 'w' (a default): expected float32 [3]");
  expectError({HostTensor::fromVector<int64_t>({3}, {1, 2, 3}),
               HostTensor::fromVector({2, 3}, x), shape, unused},
              "input 'w' (a default)");
  // Neither the required count nor the graph's.
  expectError({HostTensor::fromVector({3}, kW),
               HostTensor::fromVector({2, 3}, x)},
              "takes 1 input(s), or 4 with the defaults");
  // The model still runs after the errors.
  expectModel(m.run({HostTensor::fromVector({2, 3}, x)}), x, kW);
}

} // namespace
