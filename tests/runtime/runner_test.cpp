/// \file
/// Tests of aotc/runner.hpp: two different models in one process, errors as
/// aotc::Error, introspection and output reuse.
#include "aotc/runner.hpp"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace aotc::test {
namespace {

ModelOptions cpuOptions() {
  ModelOptions options;
  options.device = testDevice();
  options.cacheDir = sharedCacheDir();
  return options;
}

HostTensor randomTensor(std::vector<int64_t> shape, uint32_t seed) {
  HostTensor t(AOTC_DTYPE_FLOAT32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float *p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = dist(rng);
  return t;
}

/// Checks dot3's outputs against a host computation.
void checkDot3(const HostTensor &a, const HostTensor &b,
               const std::vector<HostTensor> &outputs) {
  ASSERT_EQ(outputs.size(), 2u);
  const int64_t n = a.shape()[0];
  ASSERT_EQ(outputs[0].shape(), std::vector<int64_t>({n}));
  ASSERT_EQ(outputs[0].dtype(), AOTC_DTYPE_FLOAT32);
  ASSERT_EQ(outputs[1].shape(), std::vector<int64_t>());
  ASSERT_EQ(outputs[1].dtype(), AOTC_DTYPE_INT32);
  int32_t positive = 0;
  for (int64_t i = 0; i < n; ++i) {
    float expected = 0.5f;
    for (int j = 0; j < 3; ++j)
      expected += a.data<float>()[i * 3 + j] * b.data<float>()[i * 3 + j];
    float got = outputs[0].data<float>()[i];
    ASSERT_NEAR(got, expected, 1e-5f) << "dot[" << i << "]";
    positive += got > 0.0f ? 1 : 0;
  }
  EXPECT_EQ(outputs[1].data<int32_t>()[0], positive);
}

TEST(Runner, TwoModelsInOneProcess) {
  // scale_shift is also linked into this executable, so its aotc_* symbols
  // are in the global scope: dot3 must still bind to its own.
  Model a = Model::load(AOTC_TEST_MODEL_A, cpuOptions());
  Model b = Model::load(AOTC_TEST_MODEL_B, cpuOptions());
  EXPECT_EQ(a.name(), "scale_shift");
  EXPECT_EQ(b.name(), "dot3");

  HostTensor x = randomTensor({5, 4}, 1);
  std::vector<HostTensor> y = a.run({x});
  ASSERT_EQ(y.size(), 1u);
  ASSERT_EQ(y[0].shape(), std::vector<int64_t>({5, 4}));
  const float w[4] = {0.5f, -2.0f, 3.0f, 0.25f};
  for (int64_t i = 0; i < 20; ++i)
    ASSERT_FLOAT_EQ(y[0].data<float>()[i], x.data<float>()[i] * w[i % 4] + 1);

  for (int64_t n : {1, 3, 16, 17, 1000, 1024}) {
    SCOPED_TRACE("n " + std::to_string(n));
    HostTensor av = randomTensor({n, 3}, 10 + static_cast<uint32_t>(n));
    HostTensor bv = randomTensor({n, 3}, 20 + static_cast<uint32_t>(n));
    checkDot3(av, bv, b.run({av, bv}));
  }
}

TEST(Runner, ErrorsAreExceptionsWithStatus) {
  Model b = Model::load(AOTC_TEST_MODEL_B, cpuOptions());
  HostTensor a5 = randomTensor({5, 3}, 1);
  HostTensor b6 = randomTensor({6, 3}, 2);
  try {
    b.run({a5, b6});
    FAIL() << "mismatched symbol accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), AOTC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find(
                  "input 'b' dim 0: expected n = 5 (as bound by input 'a' dim "
                  "0), got 6"),
              std::string::npos)
        << e.what();
  }
  HostTensor a0 = randomTensor({0, 3}, 1);
  try {
    b.run({a0, a0});
    FAIL() << "n = 0 accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), AOTC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(
        std::string(e.what()).find("n = 0 is outside its range [1, 1024]"),
        std::string::npos)
        << e.what();
  }
  // Still usable.
  HostTensor b5 = randomTensor({5, 3}, 3);
  checkDot3(a5, b5, b.run({a5, b5}));

  try {
    Model::load("/nonexistent/model.so", cpuOptions());
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), AOTC_ERROR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.so"),
              std::string::npos);
  }
  try {
    Model::load("libm.so.6", cpuOptions());
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), AOTC_ERROR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("not an aotc model"),
              std::string::npos);
  }
  ModelOptions bad = cpuOptions();
  bad.device = "no-such-device";
  try {
    Model::load(AOTC_TEST_MODEL_B, bad);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), AOTC_ERROR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("available devices"),
              std::string::npos);
  }
}

TEST(Runner, FunctionsAnOlderSoLacksAreNamedErrors) {
  // Model's optional functions go through Library::need: a null one (a .so
  // built before it) is AOTC_ERROR_UNSUPPORTED naming the model and what
  // it cannot do; a present one is returned as it is.
  detail::Library lib;
  lib.path = "old_model.so";
  try {
    lib.need(lib.aotc_container_run_device, "cannot run on OpenCL buffers");
    FAIL() << "a null function accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), AOTC_ERROR_UNSUPPORTED);
    EXPECT_EQ(std::string(e.what()),
              "old_model.so: this model .so cannot run on OpenCL buffers "
              "(built by an older aotc)");
  }
  std::shared_ptr<detail::Library> real =
      detail::openLibrary(AOTC_TEST_MODEL_B);
  EXPECT_EQ(real->need(real->aotc_container_run_device, "cannot"),
            real->aotc_container_run_device);
}

TEST(Runner, Introspection) {
  Model b = Model::load(AOTC_TEST_MODEL_B, cpuOptions());
  EXPECT_FALSE(b.deviceName().empty());
  EXPECT_EQ(b.numInstances(), 1u);
  std::vector<TensorInfo> inputs = b.inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].name, "b");
  EXPECT_EQ(inputs[1].dims, std::vector<int64_t>({-1, 3}));
  EXPECT_EQ(inputs[1].dimTexts, std::vector<std::string>({"n", "3"}));
  EXPECT_EQ(inputs[1].dimSymbols, std::vector<int32_t>({0, -1}));
  std::vector<TensorInfo> outputs = b.outputs();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[1].name, "npos");
  EXPECT_EQ(outputs[1].dtype, AOTC_DTYPE_INT32);
  EXPECT_TRUE(outputs[1].dims.empty());
  std::vector<ConstantInfo> constants = b.constants();
  ASSERT_EQ(constants.size(), 2u);
  EXPECT_EQ(constants[0].name, "pad");
  EXPECT_TRUE(constants[0].folded);
  EXPECT_EQ(constants[1].name, "bias");
  EXPECT_EQ(constants[1].onnxName, "model.bias");
  EXPECT_EQ(constants[1].shape, std::vector<int64_t>({1}));
  EXPECT_EQ(constants[1].nbytes, 4u);
  EXPECT_FALSE(constants[1].folded);
  std::vector<SymbolInfo> symbols = b.symbols();
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols[0].name, "n");
  EXPECT_EQ(symbols[0].min, 1);
  EXPECT_EQ(symbols[0].max, 1024);
  EXPECT_EQ(b.kernelNames(),
            std::vector<std::string>({"dot3", "count_positive"}));
  EXPECT_EQ(b.metadata("producer"), std::optional<std::string>("dot3 fixture"));
  EXPECT_EQ(b.metadata("missing"), std::nullopt);
  EXPECT_EQ(b.metadata().size(), 1u);
  EXPECT_EQ(b.arenaBytes({100}), 0u);
  EXPECT_THROW(b.arenaBytes({0}), Error);
  b.reserve({100}); // no arena: a run of zeros at n = 100
  EXPECT_THROW(b.reserve({0}), Error);
  EXPECT_THROW(b.reserve({1, 2}), Error);
  EXPECT_EQ(b.outputShapes({HostTensor(AOTC_DTYPE_FLOAT32, {7, 3}),
                            HostTensor(AOTC_DTYPE_FLOAT32, {7, 3})}),
            (std::vector<std::vector<int64_t>>{{7}, {}}));
}

TEST(Runner, ReusesOutputsAndMoves) {
  Model b = Model::load(AOTC_TEST_MODEL_B, cpuOptions());
  std::vector<HostTensor> outputs;
  HostTensor a = randomTensor({40, 3}, 5);
  HostTensor c = randomTensor({40, 3}, 6);
  b.run({a, c}, outputs);
  const void *storage = outputs[0].raw();
  b.run({c, a}, outputs);
  EXPECT_EQ(outputs[0].raw(), storage); // Same shape: storage reused.
  checkDot3(c, a, outputs);

  Model moved = std::move(b);
  EXPECT_EQ(moved.name(), "dot3");
  EXPECT_THROW(b.name(), Error); // NOLINT(bugprone-use-after-move)
  checkDot3(a, c, moved.run({a, c}));
}

TEST(Runner, HostTensorChecksTypes) {
  HostTensor t = HostTensor::fromVector<int32_t>({2}, {1, 2});
  EXPECT_EQ(t.dtype(), AOTC_DTYPE_INT32);
  EXPECT_EQ(t.toVector<int32_t>(), std::vector<int32_t>({1, 2}));
  EXPECT_THROW(t.data<float>(), Error);
  EXPECT_THROW(HostTensor::fromVector<float>({3}, {1.0f}), Error);
  HostTensor flags = HostTensor::fromVector<bool>({3}, {true, false, true});
  EXPECT_EQ(flags.toVector<uint8_t>(), std::vector<uint8_t>({1, 0, 1}));
}

} // namespace
} // namespace aotc::test
