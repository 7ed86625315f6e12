// Updating, swapping and reading back a model's weights at run time
// (aotc_container_update_constants and friends, through the C++ runner and
// the C ABI): a container whose weights were updated gives the same outputs
// as a model compiled from an ONNX file holding those weights (packed
// weights are repacked); every bad update is an error that changes nothing;
// integers the compiler used as shape data are refused with the reason; and
// runs on four threads while another thread updates and swaps never see a
// mix of two weight sets.
#include "expect_refusal.h"
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <chrono>
#include <cmath>
#include <thread>

using namespace aotc::e2e;
using namespace aotc::e2e::twolayer;

namespace {

/// y = Reshape(Relu(x @ w1^T + b1) @ w2, [-1, 3]): Gemm (w1 packed by the
/// tiled build), MatMul, and a shape initializer.
std::string buildModel(const Weights &w) {
  ModelBuilder mb("constants");
  mb.input("x", onnx::TensorProto::FLOAT, {"N", kIn});
  mb.initializerF32("w1", {kHidden, kIn}, w.w1);
  mb.initializerF32("b1", {kHidden}, w.b1);
  mb.initializerF32("w2", {kHidden, kOut}, w.w2);
  mb.initializerI64("shape", {2}, {-1, kOut});
  auto &gemm = mb.node("Gemm", {"x", "w1", "b1"}, {"h"}, "fc1");
  ModelBuilder::attrInt(gemm, "transB", 1);
  mb.node("Relu", {"h"}, {"r"});
  mb.node("MatMul", {"r", "w2"}, {"m"});
  mb.node("Reshape", {"m", "shape"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {"N", kOut});
  return mb.bytes();
}

std::vector<float> runModel(const aotc::Model &m, int64_t n = 6) {
  return m.run({input(n)})[0].toVector<float>();
}

/// The outputs of a model compiled with \p w inside.
std::vector<float> compiledWith(const Weights &w, const std::string &args) {
  Compiled c = compileModel(buildModel(w), args);
  EXPECT_EQ(c.exitCode, 0) << c.output;
  return runModel(loadModel(c.soPath));
}

int statusOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const aotc::Error &e) {
    return e.status();
  }
  return AOTC_OK;
}

std::string messageOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const aotc::Error &e) {
    return e.what();
  }
  return "";
}

class Constants : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    a_ = makeWeights(0.5f);
    b_ = makeWeights(2.0f);
    Compiled c = compileModel(buildModel(a_));
    ASSERT_EQ(c.exitCode, 0) << c.output;
    updatablePath_ = c.soPath;
    Compiled p = compileModel(buildModel(a_), "--naive-kernels");
    ASSERT_EQ(p.exitCode, 0) << p.output;
    naivePath_ = p.soPath;
    refA_ = compiledWith(a_, "");
    refB_ = compiledWith(b_, "");
    ASSERT_NE(refA_, refB_);
  }
  static Weights a_, b_;
  /// w1 packed for the tiled Gemm (a fold the runtime redoes on update),
  /// and the naive kernels' build, which reads w1 as given.
  static std::string updatablePath_, naivePath_;
  static std::vector<float> refA_, refB_;
};
Weights Constants::a_, Constants::b_;
std::string Constants::updatablePath_, Constants::naivePath_;
std::vector<float> Constants::refA_, Constants::refB_;

TEST_F(Constants, UpdatedWeightsMatchAModelCompiledWithThem) {
  aotc::Model m = loadModel(updatablePath_);
  EXPECT_EQ(runModel(m), refA_);
  m.updateConstants(asMap(b_));
  EXPECT_EQ(runModel(m), refB_);
  // Partial: b1 alone changes only what b1 feeds.
  Weights mixed = b_;
  mixed.b1 = a_.b1;
  m.updateConstants({{"b1", aotc::HostTensor::fromVector({kHidden}, a_.b1)}});
  EXPECT_EQ(runModel(m), compiledWith(mixed, ""));
  // Extraction reads back what was set.
  aotc::Model::ConstantMap got = m.extractConstants();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got.at("w1").toVector<float>(), b_.w1);
  EXPECT_EQ(got.at("b1").toVector<float>(), a_.b1);
  EXPECT_EQ(got.at("w2").toVector<float>(), b_.w2);
  EXPECT_EQ(got.at("w2").shape(), (std::vector<int64_t>{kHidden, kOut}));
  // The run-time batch still binds: another size after the update.
  EXPECT_EQ(m.run({input(1)})[0].shape(), (std::vector<int64_t>{1, kOut}));
  EXPECT_EQ(m.run({input(0)})[0].shape(), (std::vector<int64_t>{0, kOut}));
}

TEST_F(Constants, InactiveSetTakesEffectOnlyAfterTheSwap) {
  aotc::Model m = loadModel(updatablePath_);
  EXPECT_EQ(statusOf([&] { m.swapConstantBuffer(); }), AOTC_ERROR_NOT_FOUND);
  EXPECT_EQ(statusOf([&] { m.extractConstants(true); }),
            AOTC_ERROR_NOT_FOUND);
  EXPECT_EQ(statusOf([&] { m.runConstFold(true); }), AOTC_ERROR_NOT_FOUND);
  m.updateConstants(asMap(b_), /*useInactive=*/true, /*validateFull=*/true);
  m.runConstFold(true);
  EXPECT_EQ(runModel(m), refA_);
  EXPECT_EQ(m.extractConstants(false).at("w1").toVector<float>(), a_.w1);
  EXPECT_EQ(m.extractConstants(true).at("w1").toVector<float>(), b_.w1);
  m.swapConstantBuffer();
  EXPECT_EQ(runModel(m), refB_);
  EXPECT_EQ(m.extractConstants(true).at("w2").toVector<float>(), a_.w2);
  m.swapConstantBuffer(); // back
  EXPECT_EQ(runModel(m), refA_);
  m.swapConstantBuffer();
  m.freeInactiveConstantBuffer();
  m.freeInactiveConstantBuffer(); // nothing left: still fine
  EXPECT_EQ(statusOf([&] { m.swapConstantBuffer(); }), AOTC_ERROR_NOT_FOUND);
  EXPECT_EQ(runModel(m), refB_);
  // A new inactive set starts from the active values (B): a partial update
  // then a swap changes only what was given.
  Weights mixed = b_;
  mixed.w2 = a_.w2;
  m.updateConstants(
      {{"w2", aotc::HostTensor::fromVector({kHidden, kOut}, a_.w2)}}, true);
  EXPECT_EQ(runModel(m), refB_);
  m.swapConstantBuffer();
  EXPECT_EQ(runModel(m), compiledWith(mixed, ""));
}

TEST_F(Constants, UserManagedWeightsAreRead) {
  aotc::Model m = loadModel(updatablePath_);
  aotc::Model::ConstantMap held = asMap(b_); // alive until after the runs
  m.updateUserManagedConstants(held);
  EXPECT_EQ(runModel(m), refB_);
  EXPECT_EQ(m.extractConstants().at("w1").toVector<float>(), b_.w1);
  m.updateConstants(asMap(a_)); // copies replace the caller's memory
  held.clear();
  EXPECT_EQ(runModel(m), refA_);
}

// Memory given by update_user_managed_constants and then changed in place
// is published by run_const_fold, packed copies included: w1 is read only
// packed (the tiled Gemm's panels), which hold no pointer to the caller's
// memory, so run_const_fold repacks it. (Before, it rewrote nothing
// without a folding program: the edited w1 was silently ignored and the
// outputs mixed new b1/w2 with the old w1 on CPU devices.)
TEST_F(Constants, UserManagedEditsInPlaceArePublishedByRunConstFold) {
  aotc::Model m = loadModel(updatablePath_);
  aotc::Model::ConstantMap held = asMap(a_); // alive until after the runs
  m.updateUserManagedConstants(held);
  EXPECT_EQ(runModel(m), refA_);
  auto overwrite = [&](const char *name, const std::vector<float> &v) {
    aotc::HostTensor &t = held.at(name);
    ASSERT_EQ(t.nbytes(), v.size() * sizeof(float));
    std::memcpy(t.raw(), v.data(), t.nbytes());
  };
  overwrite("w1", b_.w1);
  overwrite("b1", b_.b1);
  overwrite("w2", b_.w2);
  m.runConstFold();
  EXPECT_EQ(runModel(m), refB_);
  EXPECT_EQ(m.extractConstants().at("w1").toVector<float>(), b_.w1);
  // Into the inactive set too, then swapped in.
  m.updateUserManagedConstants(held, /*useInactive=*/true);
  overwrite("w1", a_.w1);
  overwrite("b1", a_.b1);
  overwrite("w2", a_.w2);
  m.runConstFold(/*useInactive=*/true);
  m.swapConstantBuffer();
  EXPECT_EQ(runModel(m), refA_);
}

TEST_F(Constants, BadUpdatesChangeNothing) {
  aotc::Model m = loadModel(updatablePath_);
  auto expectRefused = [&](aotc::Model::ConstantMap update, int status,
                           const std::string &fragment, bool validateFull) {
    EXPECT_TRUE(refused([&] { m.updateConstants(update, false, validateFull); },
                        {fragment}, status));
    EXPECT_EQ(runModel(m), refA_) << fragment;
    EXPECT_EQ(m.extractConstants().at("w1").toVector<float>(), a_.w1);
  };
  aotc::Model::ConstantMap good = asMap(b_);
  auto with = [&](const std::string &name, aotc::HostTensor t) {
    aotc::Model::ConstantMap u = good;
    u[name] = std::move(t);
    return u;
  };
  expectRefused(with("nope", aotc::HostTensor(AOTC_DTYPE_FLOAT32, {1})),
                AOTC_ERROR_NOT_FOUND, "no updatable constant 'nope'", false);
  expectRefused(with("w1", aotc::HostTensor(AOTC_DTYPE_FLOAT32, {kIn, kHidden})),
                AOTC_ERROR_INVALID_ARGUMENT, "constant 'w1': got float32[5,24]",
                false);
  expectRefused(with("b1", aotc::HostTensor(AOTC_DTYPE_INT32, {kHidden})),
                AOTC_ERROR_INVALID_ARGUMENT, "constant 'b1': got int32[24]",
                false);
  expectRefused(with("shape", aotc::HostTensor::fromVector<int64_t>({2},
                                                                    {-1, 3})),
                AOTC_ERROR_INVALID_ARGUMENT,
                "initializer 'shape' cannot be updated: a small integer",
                false);
  aotc::Model::ConstantMap partial = good;
  partial.erase("w2");
  expectRefused(partial, AOTC_ERROR_INVALID_ARGUMENT,
                "validate_full: constant 'w2' is not given", true);

  // Through the C ABI: a name given twice, too few bytes, null data.
  void *so = dlopen(updatablePath_.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(so, nullptr);
  auto update = reinterpret_cast<aotc_container_update_constants_fn>(
      dlsym(so, "aotc_container_update_constants"));
  auto create = reinterpret_cast<aotc_container_create_fn>(
      dlsym(so, "aotc_container_create"));
  auto destroy = reinterpret_cast<aotc_container_delete_fn>(
      dlsym(so, "aotc_container_delete"));
  auto lastError =
      reinterpret_cast<aotc_last_error_fn>(dlsym(so, "aotc_last_error"));
  ASSERT_TRUE(update && create && destroy && lastError);
  aotc_container_options_t opts;
  reinterpret_cast<aotc_container_options_init_fn>(
      dlsym(so, "aotc_container_options_init"))(&opts);
  opts.device = "cpu";
  aotc_container_t *c = nullptr;
  ASSERT_EQ(create(&opts, &c), AOTC_OK) << lastError();
  std::vector<float> b1(kHidden, 1.0f);
  aotc_constant_entry_t e[2];
  std::memset(e, 0, sizeof(e));
  for (aotc_constant_entry_t &x : e) {
    x.name = "b1";
    x.tensor.data = b1.data();
    x.tensor.nbytes = b1.size() * sizeof(float);
    x.tensor.dtype = AOTC_DTYPE_FLOAT32;
    x.tensor.rank = 1;
    x.tensor.shape[0] = kHidden;
  }
  EXPECT_EQ(update(c, e, 2, 0, 0), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("'b1' is given twice"),
            std::string::npos)
      << lastError();
  e[0].tensor.nbytes = 8;
  EXPECT_EQ(update(c, e, 1, 0, 0), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("holds 8 bytes, its shape needs 96"),
            std::string::npos)
      << lastError();
  e[0].tensor.data = nullptr;
  EXPECT_EQ(update(c, e, 1, 0, 0), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(update(c, nullptr, 1, 0, 0), AOTC_ERROR_INVALID_ARGUMENT);
  e[0].name = nullptr;
  EXPECT_EQ(update(c, e, 1, 0, 0), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(update(nullptr, e, 1, 0, 0), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(update(c, nullptr, 0, 0, 0), AOTC_OK); // nothing to do
  destroy(c);
  dlclose(so);
}

TEST_F(Constants, PackedWeightsAreRepackedAndShapeDataRefused) {
  aotc::Model m = loadModel(updatablePath_);
  // w1 is read packed (as panels [24 / 8, 5, 8] for the tiled Gemm): the
  // packed copy is
  // not updatable itself, w1 is (the runtime repacks it); the shape
  // initializer is compiled into the code.
  bool sawPacked = false;
  for (const aotc::ConstantInfo &c : m.constants())
    if (c.notUpdatableReason.find("packed from initializer 'w1'") !=
        std::string::npos) {
      sawPacked = true;
      EXPECT_FALSE(c.updatable);
      EXPECT_TRUE(c.folded);
      EXPECT_EQ(c.shape, (std::vector<int64_t>{kHidden / 8, kIn, 8}));
    }
  EXPECT_TRUE(sawPacked);
  aotc::Model::ConstantMap got = m.extractConstants();
  EXPECT_EQ(got.size(), 3u);
  EXPECT_EQ(got.at("w1").toVector<float>(), a_.w1); // unpacked
  std::string why = messageOf([&] {
    m.updateConstants(
        {{"shape", aotc::HostTensor::fromVector<int64_t>({2}, {-1, 3})}});
  });
  EXPECT_NE(why.find("initializer 'shape' cannot be updated: a small "
                     "integer tensor"),
            std::string::npos)
      << why;
  // The naive build reads w1 directly: the same updates give its own
  // compiled-in references.
  aotc::Model naive = loadModel(naivePath_);
  for (const aotc::ConstantInfo &c : naive.constants())
    EXPECT_EQ(c.notUpdatableReason.find("packed"), std::string::npos);
  naive.updateConstants(asMap(b_), false, true);
  std::vector<float> want = compiledWith(b_, "--naive-kernels");
  EXPECT_EQ(runModel(naive), want);
  EXPECT_EQ(naive.extractConstants().at("w1").toVector<float>(), b_.w1);
}

TEST(ConstantsConv, PackedConvWeightsFollowUpdates) {
  // Conv weights are packed [co, ci, kh, kw] -> [ci, kh, kw, co].
  auto build = [](const std::vector<float> &w, const std::vector<float> &b) {
    ModelBuilder mb("conv_update");
    mb.input("x", onnx::TensorProto::FLOAT, {"N", 3, 6, 5});
    mb.initializerF32("w", {4, 3, 3, 2}, w);
    mb.initializerF32("b", {4}, b);
    auto &n = mb.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
    ModelBuilder::attrInts(n, "pads", {1, 0, 1, 1});
    mb.output("y", onnx::TensorProto::FLOAT, {"N", 4, 6, 5});
    return mb.bytes();
  };
  std::vector<float> w1(72), w2(72), b1(4), b2(4);
  for (size_t i = 0; i < w1.size(); ++i) {
    w1[i] = std::sin(0.3f * static_cast<float>(i));
    w2[i] = std::cos(0.7f * static_cast<float>(i) + 1.0f);
  }
  for (size_t i = 0; i < b1.size(); ++i) {
    b1[i] = 0.1f * static_cast<float>(i);
    b2[i] = -0.2f * static_cast<float>(i) + 0.5f;
  }
  Compiled c1 = compileModel(build(w1, b1));
  Compiled c2 = compileModel(build(w2, b2));
  ASSERT_EQ(c1.exitCode, 0) << c1.output;
  ASSERT_EQ(c2.exitCode, 0) << c2.output;
  std::vector<float> x(2 * 3 * 6 * 5);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(1.1f * static_cast<float>(i));
  auto in = aotc::HostTensor::fromVector({2, 3, 6, 5}, x);
  aotc::Model m = loadModel(c1.soPath);
  std::vector<float> want2 =
      loadModel(c2.soPath).run({in})[0].toVector<float>();
  m.updateConstants({{"w", aotc::HostTensor::fromVector({4, 3, 3, 2}, w2)},
                     {"b", aotc::HostTensor::fromVector({4}, b2)}},
                    /*useInactive=*/true, /*validateFull=*/true);
  m.swapConstantBuffer();
  EXPECT_EQ(m.run({in})[0].toVector<float>(), want2);
  EXPECT_EQ(m.extractConstants().at("w").toVector<float>(), w2);
  EXPECT_EQ(m.extractConstants(true).at("w").toVector<float>(), w1);
}

TEST(ConstantsClip, FloatBoundsAreCompiledInAndRefuseUpdates) {
  // y = Clip(x + w, lo, hi), lo and hi initializers: the kernel holds -0.5
  // and 0.75 as literals (no buffer for them), so the initializers are
  // frozen, and an update of one is refused with the reason; w still takes
  // updates.
  std::vector<float> w = {0.25f, -1.5f, 2.0f, 0.0f, -0.125f};
  ModelBuilder mb("clip_bounds");
  mb.input("x", onnx::TensorProto::FLOAT, {"N", 5});
  mb.initializerF32("w", {5}, w);
  mb.initializerF32("lo", {}, {-0.5f});
  mb.initializerF32("hi", {}, {0.75f});
  mb.node("Add", {"x", "w"}, {"s"}, "add");
  mb.node("Clip", {"s", "lo", "hi"}, {"y"}, "clip");
  mb.output("y", onnx::TensorProto::FLOAT, {"N", 5});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  // The kernel reads w alone: lo and hi have no buffer.
  std::set<std::string> names;
  for (const aotc::ConstantInfo &ci : m.constants()) {
    names.insert(ci.onnxName);
    if (ci.onnxName == "w") {
      EXPECT_TRUE(ci.updatable);
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"w"}));
  std::vector<float> x(3 * 5);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(1.7f * static_cast<float>(i)) * 2.0f;
  auto in = aotc::HostTensor::fromVector({3, 5}, x);
  auto expect = [&](const std::vector<float> &weights) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      y[i] = std::min(std::max(x[i] + weights[i % 5], -0.5f), 0.75f);
    return y;
  };
  std::vector<float> before = m.run({in})[0].toVector<float>();
  EXPECT_EQ(before, expect(w));
  std::string refused = messageOf([&] {
    m.updateConstants({{"lo", aotc::HostTensor::fromVector<float>({}, {0.0f})}});
  });
  EXPECT_NE(refused.find("initializer 'lo' cannot be updated: read at "
                         "compile time as the min of node 'clip' (Clip)"),
            std::string::npos)
      << refused;
  refused = messageOf([&] {
    m.updateConstants({{"hi", aotc::HostTensor::fromVector<float>({}, {9.0f})}});
  });
  EXPECT_NE(refused.find("initializer 'hi' cannot be updated: read at "
                         "compile time as the max of node 'clip' (Clip)"),
            std::string::npos)
      << refused;
  EXPECT_EQ(m.run({in})[0].toVector<float>(), before);
  std::vector<float> w2 = {-0.25f, 1.0f, 0.5f, -2.0f, 0.375f};
  m.updateConstants({{"w", aotc::HostTensor::fromVector<float>({5}, w2)}});
  EXPECT_EQ(m.run({in})[0].toVector<float>(), expect(w2));
}

TEST(ConstantsPadded, PaddedPanelsFollowUpdates) {
  // Output columns that the vector lanes do not divide (13 and 21 for 8
  // lanes, GPT-2's 50257-wide head in small) are packed as panels with a
  // zero-padded last one: [13, 7] @ MatMul -> [2, 7, 8]; a Gemm with
  // transB = 1 and a [21, 7] weight -> [3, 7, 8]. Updates repack them with
  // the padding, extraction drops it.
  auto build = [](const std::vector<float> &w, const std::vector<float> &v) {
    ModelBuilder mb("padded_panels");
    mb.input("x", onnx::TensorProto::FLOAT, {"N", 7});
    mb.initializerF32("w", {7, 13}, w);
    mb.initializerF32("v", {21, 7}, v);
    mb.node("MatMul", {"x", "w"}, {"y"});
    auto &g = mb.node("Gemm", {"x", "v"}, {"z"});
    ModelBuilder::attrInt(g, "transB", 1);
    mb.output("y", onnx::TensorProto::FLOAT, {"N", 13});
    mb.output("z", onnx::TensorProto::FLOAT, {"N", 21});
    return mb.bytes();
  };
  std::vector<float> w1(91), w2(91), v1(147), v2(147);
  for (size_t i = 0; i < w1.size(); ++i) {
    w1[i] = std::sin(0.3f * static_cast<float>(i));
    w2[i] = std::cos(0.7f * static_cast<float>(i) + 1.0f);
  }
  for (size_t i = 0; i < v1.size(); ++i) {
    v1[i] = std::cos(0.11f * static_cast<float>(i));
    v2[i] = std::sin(0.23f * static_cast<float>(i) - 2.0f);
  }
  Compiled c1 = compileModel(build(w1, v1));
  Compiled c2 = compileModel(build(w2, v2));
  Compiled naive = compileModel(build(w2, v2), "--naive-kernels");
  ASSERT_EQ(c1.exitCode, 0) << c1.output;
  ASSERT_EQ(c2.exitCode, 0) << c2.output;
  ASSERT_EQ(naive.exitCode, 0) << naive.output;
  std::vector<float> x(5 * 7);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(1.1f * static_cast<float>(i));
  auto in = aotc::HostTensor::fromVector({5, 7}, x);
  aotc::Model m = loadModel(c1.soPath);
  std::vector<std::vector<int64_t>> packedShapes;
  for (const aotc::ConstantInfo &c : m.constants())
    if (c.notUpdatableReason.find("packed from initializer") !=
        std::string::npos)
      packedShapes.push_back(c.shape);
  std::sort(packedShapes.begin(), packedShapes.end());
  EXPECT_EQ(packedShapes, (std::vector<std::vector<int64_t>>{{2, 7, 8},
                                                             {3, 7, 8}}));
  std::vector<aotc::HostTensor> want = loadModel(c2.soPath).run({in});
  std::vector<aotc::HostTensor> oracle = loadModel(naive.soPath).run({in});
  ASSERT_EQ(want.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    std::vector<float> a = want[k].toVector<float>(),
                       b = oracle[k].toVector<float>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], b[i], 1e-5f) << k << " " << i;
  }
  m.updateConstants({{"w", aotc::HostTensor::fromVector({7, 13}, w2)},
                     {"v", aotc::HostTensor::fromVector({21, 7}, v2)}},
                    /*useInactive=*/true, /*validateFull=*/true);
  m.swapConstantBuffer();
  std::vector<aotc::HostTensor> got = m.run({in});
  EXPECT_EQ(got[0].toVector<float>(), want[0].toVector<float>());
  EXPECT_EQ(got[1].toVector<float>(), want[1].toVector<float>());
  EXPECT_EQ(m.extractConstants().at("w").toVector<float>(), w2);
  EXPECT_EQ(m.extractConstants().at("v").toVector<float>(), v2);
  EXPECT_EQ(m.extractConstants(true).at("w").toVector<float>(), w1);
  EXPECT_EQ(m.extractConstants(true).at("v").toVector<float>(), v1);
}

TEST(ConstantsWeightless, TakesItsWeightsBeforeTheFirstRun) {
  // A 256 x 192 weight (packed for the tiled Gemm), a bias, and a shape
  // initializer that stays in the .so.
  std::vector<float> w(256 * 192), b(256);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(0.01f * static_cast<float>(i));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = std::cos(0.3f * static_cast<float>(i));
  ModelBuilder mb("weightless");
  mb.input("x", onnx::TensorProto::FLOAT, {"N", 192});
  mb.initializerF32("w", {256, 192}, w);
  mb.initializerF32("b", {256}, b);
  mb.initializerI64("shape", {3}, {-1, 16, 16});
  auto &gemm = mb.node("Gemm", {"x", "w", "b"}, {"h"});
  ModelBuilder::attrInt(gemm, "transB", 1);
  mb.node("Reshape", {"h", "shape"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {"N", 16, 16});
  Compiled full = compileModel(mb.bytes());
  Compiled light = compileModel(mb.bytes(), "--weightless");
  ASSERT_EQ(full.exitCode, 0) << full.output;
  ASSERT_EQ(light.exitCode, 0) << light.output;
  EXPECT_GE(std::filesystem::file_size(full.soPath),
            std::filesystem::file_size(light.soPath) + w.size() * 4)
      << "the weightless .so still holds the weights";

  std::vector<float> x(3 * 192);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.7f * static_cast<float>(i));
  auto in = aotc::HostTensor::fromVector({3, 192}, x);
  std::vector<float> want = loadModel(full.soPath).run({in})[0].toVector<float>();

  aotc::Model m = loadModel(light.soPath);
  std::string why = messageOf([&] { m.run({in}); });
  EXPECT_NE(why.find("has no value: a weightless model takes its weights"),
            std::string::npos)
      << why;
  EXPECT_EQ(statusOf([&] { m.extractConstants(); }),
            AOTC_ERROR_INVALID_ARGUMENT);
  m.updateConstants({{"b", aotc::HostTensor::fromVector({256}, b)}});
  why = messageOf([&] { m.run({in}); });
  EXPECT_NE(why.find("weight 'w' has no value"), std::string::npos) << why;
  m.updateConstants({{"w", aotc::HostTensor::fromVector({256, 192}, w)}});
  EXPECT_EQ(m.run({in})[0].toVector<float>(), want);
  EXPECT_EQ(m.extractConstants().at("w").toVector<float>(), w);
}

TEST_F(Constants, WeightsFileIsMappedAndChecked) {
  Compiled c = compileModel(buildModel(a_), "--weights-file");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  std::string weights = c.soPath + ".weights";
  ASSERT_TRUE(std::filesystem::exists(weights));
  {
    aotc::Model m = loadModel(c.soPath);
    EXPECT_EQ(runModel(m), refA_);
    m.updateConstants(asMap(b_));
    EXPECT_EQ(runModel(m), refB_);
    EXPECT_EQ(m.extractConstants().at("w1").toVector<float>(), b_.w1);
  }
  auto loadError = [&](const std::string &so) {
    try {
      loadModel(so);
    } catch (const aotc::Error &e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  // Another compile's weights file (B's weights) in its place.
  Compiled other = compileModel(buildModel(b_), "--weights-file");
  ASSERT_EQ(other.exitCode, 0) << other.output;
  std::filesystem::copy_file(weights, weights + ".keep");
  std::filesystem::copy_file(other.soPath + ".weights", weights,
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_NE(loadError(c.soPath).find("belongs to another compile"),
            std::string::npos)
      << loadError(c.soPath);
  // Truncated.
  std::filesystem::copy_file(weights + ".keep", weights,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(weights,
                               std::filesystem::file_size(weights) - 64);
  EXPECT_NE(loadError(c.soPath).find("header says"), std::string::npos)
      << loadError(c.soPath);
  // Missing, and a directory in its place.
  std::filesystem::remove(weights);
  std::string missing = loadError(c.soPath);
  EXPECT_NE(missing.find("cannot open its weights file"), std::string::npos)
      << missing;
  EXPECT_NE(missing.find(weights), std::string::npos) << missing;
  std::filesystem::create_directory(weights);
  EXPECT_NE(loadError(c.soPath).find("is not an aotc weights file"),
            std::string::npos)
      << loadError(c.soPath);
  std::filesystem::remove(weights);
  std::filesystem::rename(weights + ".keep", weights);
  EXPECT_EQ(runModel(loadModel(c.soPath)), refA_);
}

/// Runs the aotc CLI with \p args; returns its exit code and output.
std::pair<int, std::string> aotcCli(const std::string &args) {
  std::string cmd = std::string(AOTC_BIN) + " " + args + " 2>&1";
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return {-1, "cannot run " + cmd};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
    out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// The "output ..." lines of `aotc run`.
std::string outputLines(const std::string &text) {
  std::string lines;
  size_t at = 0;
  while ((at = text.find("output ", at)) != std::string::npos) {
    size_t end = text.find('\n', at);
    lines += text.substr(at, end - at) + "\n";
    at = end;
  }
  return lines;
}

TEST_F(Constants, RunLoadsWeightsFromAnotherOnnxFile) {
  std::string dir = std::filesystem::path(updatablePath_).parent_path();
  std::string bFile = dir + "/weights_b.onnx";
  {
    std::string bytes = buildModel(b_);
    std::ofstream(bFile, std::ios::binary).write(bytes.data(), bytes.size());
  }
  Compiled compiledB = compileModel(buildModel(b_), "");
  ASSERT_EQ(compiledB.exitCode, 0) << compiledB.output;
  auto [rcB, outB] = aotcCli("run '" + compiledB.soPath +
                             "' --device cpu --dim N=4 --seed 7");
  ASSERT_EQ(rcB, 0) << outB;
  auto [rc, out] = aotcCli("run '" + updatablePath_ + "' --device cpu --dim "
                           "N=4 --seed 7 --constants '" + bFile + "'");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("constants: 3 updated from"), std::string::npos) << out;
  EXPECT_NE(out.find("kept as compiled (integer data): shape"),
            std::string::npos)
      << out;
  EXPECT_FALSE(outputLines(out).empty()) << out;
  EXPECT_EQ(outputLines(out), outputLines(outB));
  // A file whose float initializer the model does not have is an error,
  // not a run without it.
  std::string extraFile = dir + "/weights_extra.onnx";
  {
    onnx::ModelProto extra;
    extra.ParseFromString(buildModel(b_));
    onnx::TensorProto *t = extra.mutable_graph()->add_initializer();
    t->set_name("unused_weight");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(1);
    t->add_float_data(1.0f);
    std::string bytes;
    extra.SerializeToString(&bytes);
    std::ofstream(extraFile, std::ios::binary).write(bytes.data(),
                                                     bytes.size());
  }
  auto [rcX, outX] = aotcCli("run '" + updatablePath_ + "' --device cpu --dim "
                             "N=4 --constants '" + extraFile + "'");
  EXPECT_EQ(rcX, 1) << outX;
  EXPECT_NE(outX.find("no updatable constant 'unused_weight'"),
            std::string::npos)
      << outX;
}

/// Four threads run \p path while another updates the inactive set, folds,
/// swaps (and updates the active set, frees the inactive one) for two
/// seconds: every output is one of the two references, never a mix.
void swapUnderTraffic(const std::string &path,
                      const aotc::Model::ConstantMap &setA,
                      const aotc::Model::ConstantMap &setB,
                      const std::vector<float> &refA,
                      const std::vector<float> &refB,
                      const aotc::HostTensor &x) {
  aotc::ModelOptions opts;
  opts.device = "cpu";
  opts.numInstances = 4;
  opts.cacheDir = std::getenv("AOTC_CACHE_DIR") ? std::getenv("AOTC_CACHE_DIR")
                                                : "";
  aotc::Model m = aotc::Model::load(path, opts);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> runs{0}, seenA{0}, seenB{0}, mixed{0}, swaps{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&] {
      std::vector<aotc::HostTensor> in = {x}, out;
      while (!stop.load()) {
        m.run(in, out);
        std::vector<float> y = out[0].toVector<float>();
        if (y == refA)
          ++seenA;
        else if (y == refB)
          ++seenB;
        else
          ++mixed;
        ++runs;
      }
    });
  std::thread updater([&] {
    bool toB = true;
    while (!stop.load()) {
      m.updateConstants(toB ? setB : setA, /*useInactive=*/true,
                        /*validateFull=*/true);
      m.runConstFold(true);
      m.swapConstantBuffer();
      // Updates of the active set and frees go on beside the runs too.
      if (swaps % 3 == 0)
        m.updateConstants(toB ? setB : setA);
      if (swaps % 5 == 0)
        m.freeInactiveConstantBuffer();
      toB = !toB;
      ++swaps;
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  stop = true;
  for (std::thread &t : workers)
    t.join();
  updater.join();
  EXPECT_EQ(mixed.load(), 0);
  EXPECT_GT(seenA.load(), 0);
  EXPECT_GT(seenB.load(), 0);
  EXPECT_GT(swaps.load(), 10);
  std::printf("%lld runs (%lld A, %lld B), %lld swaps, %lld mixed\n",
              static_cast<long long>(runs.load()),
              static_cast<long long>(seenA.load()),
              static_cast<long long>(seenB.load()),
              static_cast<long long>(swaps.load()),
              static_cast<long long>(mixed.load()));
}

TEST_F(Constants, SwapsUnderTrafficNeverMixWeights) {
  swapUnderTraffic(updatablePath_, asMap(a_), asMap(b_), refA_, refB_,
                   input(6));
}

/// Conv 1x1 (5 -> 24) -> BatchNormalization -> Relu -> Conv 1x1 (24 -> 16):
/// the normalization is folded into the first Conv by the folding program,
/// which every update (and fold) of the inactive or active set runs.
std::string buildBatchNormModel(const std::map<std::string,
                                               std::vector<float>> &w) {
  ModelBuilder mb("bn_swap");
  mb.input("x", onnx::TensorProto::FLOAT, {"N", 5, 3, 3});
  mb.initializerF32("w1", {24, 5, 1, 1}, w.at("w1"));
  for (const char *p : {"gamma", "beta", "mean", "var"})
    mb.initializerF32(p, {24}, w.at(p));
  mb.initializerF32("w2", {16, 24, 1, 1}, w.at("w2"));
  mb.node("Conv", {"x", "w1"}, {"c"});
  mb.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"n"});
  mb.node("Relu", {"n"}, {"r"});
  mb.node("Conv", {"r", "w2"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {"N", 16, 3, 3});
  return mb.bytes();
}

std::map<std::string, std::vector<float>> batchNormWeights(float seed) {
  std::map<std::string, std::vector<float>> w;
  auto fill = [&](const char *name, size_t n, float lo) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
      v[i] = lo + std::fabs(std::sin(seed * 1.3f + 0.7f * static_cast<float>(i)));
    w[name] = v;
  };
  fill("w1", 24 * 5, -0.5f);
  fill("gamma", 24, 0.5f);
  fill("beta", 24, -0.5f);
  fill("mean", 24, -0.5f);
  fill("var", 24, 0.25f);
  fill("w2", 16 * 24, -0.5f);
  return w;
}

TEST(ConstantsFolded, SwapsUnderTrafficWithAFoldingProgram) {
  auto a = batchNormWeights(0.5f), b = batchNormWeights(2.0f);
  Compiled c = compileModel(buildBatchNormModel(a));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  std::vector<float> x(6 * 5 * 9);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.9f * static_cast<float>(i) + 0.3f) * 2.0f;
  aotc::HostTensor in = aotc::HostTensor::fromVector({6, 5, 3, 3}, x);
  auto reference = [&](const std::map<std::string, std::vector<float>> &w) {
    Compiled r = compileModel(buildBatchNormModel(w));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return loadModel(r.soPath).run({in})[0].toVector<float>();
  };
  std::vector<float> refA = reference(a), refB = reference(b);
  ASSERT_NE(refA, refB);
  auto asConstants = [](const std::map<std::string, std::vector<float>> &w) {
    aotc::Model::ConstantMap m;
    for (const auto &[name, v] : w) {
      std::vector<int64_t> dims = {static_cast<int64_t>(v.size())};
      if (name == "w1")
        dims = {24, 5, 1, 1};
      else if (name == "w2")
        dims = {16, 24, 1, 1};
      m.emplace(name, aotc::HostTensor::fromVector(dims, v));
    }
    return m;
  };
  swapUnderTraffic(c.soPath, asConstants(a), asConstants(b), refA, refB, in);
}

} // namespace
