// Updating, swapping and reading back a model's weights at run time
// (aotc_container_update_constants and friends, through the C++ runner and
// the C ABI): a container whose weights were updated gives the same outputs
// as a model compiled from an ONNX file holding those weights; every bad
// update is an error that changes nothing; weights the compiler used (packed,
// shape data) are refused with the reason; and runs on four threads while
// another thread updates and swaps never see a mix of two weight sets.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <chrono>
#include <cmath>
#include <thread>

using namespace aotc::e2e;

namespace {

constexpr int64_t kIn = 5, kHidden = 7, kOut = 3;

struct Weights {
  std::vector<float> w1, b1, w2;
};

Weights makeWeights(float seed) {
  Weights w;
  for (int64_t i = 0; i < kHidden * kIn; ++i)
    w.w1.push_back(std::sin(seed + 0.37f * static_cast<float>(i)));
  for (int64_t i = 0; i < kHidden; ++i)
    w.b1.push_back(std::cos(seed * 1.7f + static_cast<float>(i)));
  for (int64_t i = 0; i < kHidden * kOut; ++i)
    w.w2.push_back(std::sin(seed * 2.3f - 0.61f * static_cast<float>(i)));
  return w;
}

/// y = Reshape(Relu(x @ w1^T + b1) @ w2, [-1, 3]): Gemm (w1 packed unless
/// --updatable-weights), MatMul, and a shape initializer.
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

aotc::HostTensor input(int64_t n) {
  std::vector<float> x(n * kIn);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.9f * static_cast<float>(i) + 0.3f) * 2.0f;
  return aotc::HostTensor::fromVector({n, kIn}, x);
}

aotc::Model::ConstantMap asMap(const Weights &w) {
  return {{"w1", aotc::HostTensor::fromVector({kHidden, kIn}, w.w1)},
          {"b1", aotc::HostTensor::fromVector({kHidden}, w.b1)},
          {"w2", aotc::HostTensor::fromVector({kHidden, kOut}, w.w2)}};
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
    Compiled c = compileModel(buildModel(a_), "--updatable-weights");
    ASSERT_EQ(c.exitCode, 0) << c.output;
    updatablePath_ = c.soPath;
    Compiled p = compileModel(buildModel(a_));
    ASSERT_EQ(p.exitCode, 0) << p.output;
    packedPath_ = p.soPath;
    refA_ = compiledWith(a_, "--updatable-weights");
    refB_ = compiledWith(b_, "--updatable-weights");
    ASSERT_NE(refA_, refB_);
  }
  static Weights a_, b_;
  static std::string updatablePath_, packedPath_;
  static std::vector<float> refA_, refB_;
};
Weights Constants::a_, Constants::b_;
std::string Constants::updatablePath_, Constants::packedPath_;
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
  EXPECT_EQ(runModel(m), compiledWith(mixed, "--updatable-weights"));
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
  EXPECT_EQ(runModel(m), compiledWith(mixed, "--updatable-weights"));
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

TEST_F(Constants, BadUpdatesChangeNothing) {
  aotc::Model m = loadModel(updatablePath_);
  auto expectRefused = [&](aotc::Model::ConstantMap update, int status,
                           const std::string &fragment, bool validateFull) {
    std::string what;
    int got = AOTC_OK;
    try {
      m.updateConstants(update, false, validateFull);
    } catch (const aotc::Error &e) {
      got = e.status();
      what = e.what();
    }
    EXPECT_EQ(got, status) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
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
                AOTC_ERROR_INVALID_ARGUMENT, "constant 'w1': got float32[5,7]",
                false);
  expectRefused(with("b1", aotc::HostTensor(AOTC_DTYPE_INT32, {kHidden})),
                AOTC_ERROR_INVALID_ARGUMENT, "constant 'b1': got int32[7]",
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
  EXPECT_NE(std::string(lastError()).find("holds 8 bytes, its shape needs 28"),
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

TEST_F(Constants, CompileTimeUsesAreRefusedWithTheReason) {
  aotc::Model m = loadModel(packedPath_);
  std::map<std::string, aotc::ConstantInfo> byOnnx;
  for (const aotc::ConstantInfo &c : m.constants())
    if (!c.onnxName.empty())
      byOnnx[c.onnxName] = c;
  // w1 was packed (transposed for the tiled Gemm) and is gone; the packed
  // copy is folded; b1 and w2 stay updatable.
  for (const aotc::ConstantInfo &c : m.constants())
    if (c.folded) {
      EXPECT_FALSE(c.updatable);
      EXPECT_NE(c.notUpdatableReason.find("folded"), std::string::npos);
    }
  ASSERT_TRUE(byOnnx.count("b1"));
  EXPECT_TRUE(byOnnx["b1"].updatable) << byOnnx["b1"].notUpdatableReason;
  std::string why = messageOf([&] {
    m.updateConstants(
        {{"w1", aotc::HostTensor::fromVector({kHidden, kIn}, b_.w1)}});
  });
  EXPECT_NE(why.find("initializer 'w1' cannot be updated: packed at compile "
                     "time into 'w1_packed'"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("--updatable-weights"), std::string::npos) << why;
  EXPECT_EQ(m.extractConstants().count("w1"), 0u);
  // What stays updatable still updates.
  Weights mixed = a_;
  mixed.b1 = b_.b1;
  mixed.w2 = b_.w2;
  m.updateConstants(
      {{"b1", aotc::HostTensor::fromVector({kHidden}, b_.b1)},
       {"w2", aotc::HostTensor::fromVector({kHidden, kOut}, b_.w2)}},
      false, /*validateFull=*/true);
  std::vector<float> want = compiledWith(mixed, "");
  std::vector<float> got = runModel(m);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5) << i;
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
  Compiled compiledB = compileModel(buildModel(b_), "--updatable-weights");
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
  // The packed model cannot take w1: an error, not a run with A's w1.
  auto [rcP, outP] = aotcCli("run '" + packedPath_ + "' --device cpu --dim "
                             "N=4 --constants '" + bFile + "'");
  EXPECT_EQ(rcP, 1) << outP;
  EXPECT_NE(outP.find("initializer 'w1' cannot be updated: packed"),
            std::string::npos)
      << outP;
}

TEST_F(Constants, SwapsUnderTrafficNeverMixWeights) {
  aotc::ModelOptions opts;
  opts.device = "cpu";
  opts.numInstances = 4;
  opts.cacheDir = std::getenv("AOTC_CACHE_DIR") ? std::getenv("AOTC_CACHE_DIR")
                                                : "";
  aotc::Model m = aotc::Model::load(updatablePath_, opts);
  aotc::Model::ConstantMap setA = asMap(a_), setB = asMap(b_);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> runs{0}, seenA{0}, seenB{0}, mixed{0}, swaps{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&] {
      std::vector<aotc::HostTensor> in = {input(6)}, out;
      while (!stop.load()) {
        m.run(in, out);
        std::vector<float> y = out[0].toVector<float>();
        if (y == refA_)
          ++seenA;
        else if (y == refB_)
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

} // namespace
