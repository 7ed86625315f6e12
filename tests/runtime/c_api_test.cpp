/// \file
/// Tests of the C ABI (aotc_runtime.h) on the scale_shift fixture model, which
/// this test binary links directly:
///   x [batch, 4] f32, batch in [0, 64]; y = x * w + 1 with w = {0.5, -2, 3,
///   0.25}; arena = batch * 16 bytes.
#include "aotc/aotc_runtime.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <thread>

#include <dirent.h>
#include <sys/stat.h>

namespace aotc::test {
namespace {

const float kW[4] = {0.5f, -2.0f, 3.0f, 0.25f};

ContainerPtr create(const char *device = testDevice(), uint32_t instances = 1,
                    const char *cacheDir = sharedCacheDir()) {
  aotc_container_options_t options;
  aotc_container_options_init(&options);
  options.device = device;
  options.num_instances = instances;
  options.cache_dir = cacheDir;
  aotc_container_t *c = nullptr;
  aotc_status_t status = aotc_container_create(&options, &c);
  EXPECT_EQ(status, AOTC_OK) << aotc_last_error();
  return ContainerPtr(c);
}

aotc_tensor_t tensor(void *data, uint64_t nbytes, int32_t dtype,
                     std::vector<int64_t> shape) {
  aotc_tensor_t t;
  std::memset(&t, 0, sizeof(t));
  t.data = data;
  t.nbytes = nbytes;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    t.shape[i] = shape[i];
  return t;
}

std::vector<float> randomValues(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  std::vector<float> values(n);
  for (float &v : values)
    v = dist(rng);
  return values;
}

/// Runs scale_shift at \p batch with random inputs into a NaN-poisoned
/// output (with spare capacity) and checks every element and the shape.
void runAndCheck(aotc_container_t *c, int64_t batch, uint32_t seed) {
  SCOPED_TRACE("batch " + std::to_string(batch));
  const size_t n = static_cast<size_t>(batch) * 4;
  std::vector<float> x = randomValues(n, seed);
  std::vector<float> y(n + 8, std::nanf(""));
  aotc_tensor_t in =
      tensor(n ? x.data() : nullptr, n * 4, AOTC_DTYPE_FLOAT32, {batch, 4});
  aotc_tensor_t out = tensor(y.data(), n * 4, 0, {});
  ASSERT_EQ(aotc_container_run(c, &in, 1, &out, 1), AOTC_OK)
      << aotc_last_error();
  EXPECT_EQ(out.dtype, AOTC_DTYPE_FLOAT32);
  ASSERT_EQ(out.rank, 2);
  EXPECT_EQ(out.shape[0], batch);
  EXPECT_EQ(out.shape[1], 4);
  for (size_t i = 0; i < n; ++i) {
    float expected = x[i] * kW[i % 4] + 1.0f;
    ASSERT_FLOAT_EQ(y[i], expected) << "element " << i;
  }
  // Nothing written beyond the output.
  for (size_t i = n; i < y.size(); ++i)
    ASSERT_TRUE(std::isnan(y[i])) << "element " << i << " was overwritten";
}

/// One container for the tests that need a working model.
class ScaleShiftTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { container_ = create().release(); }
  static void TearDownTestSuite() {
    aotc_container_delete(container_);
    container_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(container_, nullptr); }

  /// Expects \p status and a last-error message containing each of \p parts,
  /// then proves the container still runs correctly.
  void expectError(aotc_status_t got, aotc_status_t want,
                   std::vector<std::string> parts) {
    EXPECT_EQ(got, want) << aotc_status_name(got) << ": " << aotc_last_error();
    std::string message = aotc_last_error();
    for (const std::string &part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "message '" << message << "' lacks '" << part << "'";
    runAndCheck(container_, 3, 99);
  }

  static aotc_container_t *container_;
};

aotc_container_t *ScaleShiftTest::container_ = nullptr;

TEST(Abi, VersionAndEnums) {
  EXPECT_EQ(aotc_abi_version(), static_cast<uint32_t>(AOTC_ABI_VERSION));
  EXPECT_EQ(aotc_dtype_size(AOTC_DTYPE_FLOAT32), 4u);
  EXPECT_EQ(aotc_dtype_size(AOTC_DTYPE_INT64), 8u);
  EXPECT_EQ(aotc_dtype_size(AOTC_DTYPE_BOOL), 1u);
  EXPECT_EQ(aotc_dtype_size(AOTC_DTYPE_FLOAT64), 8u);
  EXPECT_EQ(aotc_dtype_size(12345), 0u);
  EXPECT_STREQ(aotc_dtype_name(AOTC_DTYPE_INT32), "int32");
  EXPECT_STREQ(aotc_dtype_name(-1), "unknown");
  EXPECT_STREQ(aotc_status_name(AOTC_ERROR_BUFFER_TOO_SMALL),
               "AOTC_ERROR_BUFFER_TOO_SMALL");
  EXPECT_STREQ(aotc_status_name(static_cast<aotc_status_t>(99)),
               "AOTC_ERROR_UNKNOWN");
  aotc_container_options_t options;
  std::memset(&options, 0xff, sizeof(options));
  aotc_container_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(options));
  EXPECT_EQ(options.device, nullptr);
  EXPECT_EQ(options.num_instances, 1u);
  EXPECT_EQ(options.cache_dir, nullptr);
  aotc_container_options_init(nullptr); // Must not crash.
}

TEST(Container, CreateDeleteOnCpu) {
  ContainerPtr c = create(testDevice());
  ASSERT_NE(c, nullptr);
  const char *name = nullptr;
  ASSERT_EQ(aotc_container_device_name(c.get(), &name), AOTC_OK);
  EXPECT_NE(std::string(name).find(" / "), std::string::npos) << name;
  c.reset();
  aotc_container_delete(nullptr); // Ignored.
}

TEST(Container, BadOptions) {
  aotc_container_options_t options;
  aotc_container_options_init(&options);
  options.device = testDevice();
  options.num_instances = 0;
  aotc_container_t *c = reinterpret_cast<aotc_container_t *>(0x1);
  EXPECT_EQ(aotc_container_create(&options, &c), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(aotc_last_error()).find("num_instances"),
            std::string::npos);
  aotc_container_options_init(&options);
  options.struct_size = 4;
  EXPECT_EQ(aotc_container_create(&options, &c), AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotc_last_error()).find("struct_size"),
            std::string::npos);
}

TEST(Container, BadDeviceListsDevices) {
  for (const char *device :
       {"no-such-device-xyz", "cpu:99", "gpu:99", "cpu:x"}) {
    SCOPED_TRACE(device);
    aotc_container_options_t options;
    aotc_container_options_init(&options);
    options.device = device;
    options.cache_dir = sharedCacheDir();
    aotc_container_t *c = nullptr;
    EXPECT_EQ(aotc_container_create(&options, &c), AOTC_ERROR_NOT_FOUND);
    EXPECT_EQ(c, nullptr);
    std::string message = aotc_last_error();
    EXPECT_NE(message.find(device), std::string::npos) << message;
    EXPECT_NE(message.find("available devices:"), std::string::npos) << message;
    EXPECT_TRUE(message.find("cpu:0  ") != std::string::npos ||
                message.find("gpu:0  ") != std::string::npos)
        << message;
  }
}

TEST(Container, DeviceStrings) {
  ContainerPtr first = create(testDevice());
  ASSERT_NE(first, nullptr);
  const char *full = nullptr;
  ASSERT_EQ(aotc_container_device_name(first.get(), &full), AOTC_OK);
  std::string fullName = full;
  // A case-changed substring of "platform / device" selects the same device.
  std::string part = fullName.substr(fullName.find(" / ") + 3, 6);
  for (char &ch : part)
    ch = static_cast<char>(std::isupper(static_cast<unsigned char>(ch))
                               ? std::tolower(static_cast<unsigned char>(ch))
                               : std::toupper(static_cast<unsigned char>(ch)));
  // The test device's kind in upper case, and its first index.
  std::string kind = std::string(testDevice()).substr(0, 3);
  std::string upper = kind == "gpu" ? "GPU" : "CPU";
  std::string indexed = kind + ":0";
  for (const char *device :
       {upper.c_str(), indexed.c_str(), "", part.c_str()}) {
    SCOPED_TRACE(device);
    ContainerPtr c = create(device);
    ASSERT_NE(c, nullptr);
    const char *name = nullptr;
    ASSERT_EQ(aotc_container_device_name(c.get(), &name), AOTC_OK);
    if (std::strcmp(device, "") != 0) { // "" prefers a GPU if there is one.
      EXPECT_EQ(fullName, name);
    }
    runAndCheck(c.get(), 2, 5);
  }
}

// A container created in another's context (aotc_container_create_in_context)
// uses that context, holds it after the first is deleted, and runs; a null
// context or a bad descriptor is refused and leaves nothing.
TEST(Container, CreatedInAGivenContext) {
  ContainerPtr first = create(testDevice());
  ASSERT_NE(first, nullptr);
  void *context = nullptr, *device = nullptr;
  ASSERT_EQ(aotc_container_opencl_handles(first.get(), &context, &device),
            AOTC_OK);
  aotc_container_options_t options;
  aotc_container_options_init(&options);
  options.device = testDevice();
  options.cache_dir = sharedCacheDir();
  aotc_container_t *raw = nullptr;
  ASSERT_EQ(aotc_container_create_in_context(&options, context, -1, 0, 0, &raw),
            AOTC_OK)
      << aotc_last_error();
  ContainerPtr second(raw);
  void *secondContext = nullptr, *secondDevice = nullptr;
  ASSERT_EQ(aotc_container_opencl_handles(second.get(), &secondContext,
                                          &secondDevice),
            AOTC_OK);
  EXPECT_EQ(secondContext, context);
  EXPECT_EQ(secondDevice, device);
  runAndCheck(first.get(), 2, 5);
  first.reset();
  runAndCheck(second.get(), 3, 7);
  runAndCheck(second.get(), 0, 8);

  raw = reinterpret_cast<aotc_container_t *>(0x1);
  EXPECT_EQ(aotc_container_create_in_context(&options, nullptr, -1, 0, 0, &raw),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(raw, nullptr);
  EXPECT_NE(std::string(aotc_last_error()).find("cl_context is null"),
            std::string::npos);
  raw = reinterpret_cast<aotc_container_t *>(0x1);
  EXPECT_EQ(aotc_container_create_in_context(&options, secondContext, -2, 0, 0,
                                             &raw),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(raw, nullptr);
  // A descriptor for a model whose weights are inside the .so.
  EXPECT_EQ(aotc_container_create_in_context(&options, secondContext, 0, 0, 16,
                                             &raw),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(raw, nullptr);
}

/// Sets an environment variable for one scope, restoring the old value.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

TEST(Container, EnvDeviceOverridesNullOnly) {
  ScopedEnv env("AOTC_DEVICE", "no-such-device-from-env");
  aotc_container_options_t options;
  aotc_container_options_init(&options);
  options.cache_dir = sharedCacheDir();
  aotc_container_t *c = nullptr;
  EXPECT_EQ(aotc_container_create(&options, &c), AOTC_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(aotc_last_error()).find("no-such-device-from-env"),
            std::string::npos);
  options.device = testDevice(); // An explicit device ignores the variable.
  EXPECT_EQ(aotc_container_create(&options, &c), AOTC_OK) << aotc_last_error();
  aotc_container_delete(c);
  ScopedEnv device("AOTC_DEVICE", testDevice());
  options.device = nullptr;
  c = nullptr;
  EXPECT_EQ(aotc_container_create(&options, &c), AOTC_OK) << aotc_last_error();
  aotc_container_delete(c);
}

TEST_F(ScaleShiftTest, RunsEveryBatchSize) {
  uint32_t seed = 1;
  for (int64_t batch : {1, 7, 64, 0, 2, 64})
    runAndCheck(container_, batch, seed++);
}

TEST_F(ScaleShiftTest, ZeroBatchWithNullData) {
  aotc_tensor_t in = tensor(nullptr, 0, AOTC_DTYPE_FLOAT32, {0, 4});
  aotc_tensor_t out = tensor(nullptr, 0, 0, {});
  ASSERT_EQ(aotc_container_run(container_, &in, 1, &out, 1), AOTC_OK)
      << aotc_last_error();
  EXPECT_EQ(out.rank, 2);
  EXPECT_EQ(out.shape[0], 0);
  EXPECT_EQ(out.shape[1], 4);
}

TEST_F(ScaleShiftTest, RepeatedRunsStayCorrect) {
  for (int i = 0; i < 50; ++i)
    runAndCheck(container_, 1 + (i * 7) % 64, 1000 + i);
}

TEST_F(ScaleShiftTest, WrongInputCount) {
  std::vector<float> x(8);
  aotc_tensor_t in[2] = {tensor(x.data(), 32, AOTC_DTYPE_FLOAT32, {2, 4}),
                         tensor(x.data(), 32, AOTC_DTYPE_FLOAT32, {2, 4})};
  std::vector<float> y(8);
  aotc_tensor_t out = tensor(y.data(), 32, 0, {});
  expectError(aotc_container_run(container_, in, 2, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT, {"takes 1 input", "got 2"});
  expectError(aotc_container_run(container_, in, 0, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT, {"takes 1 input", "got 0"});
  expectError(aotc_container_run(container_, in, 1, &out, 0),
              AOTC_ERROR_INVALID_ARGUMENT, {"1 output", "got 0"});
}

TEST_F(ScaleShiftTest, WrongDtype) {
  std::vector<int32_t> x(8);
  aotc_tensor_t in = tensor(x.data(), 32, AOTC_DTYPE_INT32, {2, 4});
  std::vector<float> y(8);
  aotc_tensor_t out = tensor(y.data(), 32, 0, {});
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT,
              {"input 'x'", "expected dtype float32, got int32"});
}

TEST_F(ScaleShiftTest, WrongRank) {
  std::vector<float> x(8);
  aotc_tensor_t in = tensor(x.data(), 32, AOTC_DTYPE_FLOAT32, {2, 4, 1});
  std::vector<float> y(8);
  aotc_tensor_t out = tensor(y.data(), 32, 0, {});
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT,
              {"input 'x'", "expected rank 2, got 3"});
}

TEST_F(ScaleShiftTest, WrongStaticDim) {
  std::vector<float> x(2 * 783);
  aotc_tensor_t in =
      tensor(x.data(), x.size() * 4, AOTC_DTYPE_FLOAT32, {2, 783});
  std::vector<float> y(8);
  aotc_tensor_t out = tensor(y.data(), 32, 0, {});
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT,
              {"input 'x' dim 1: expected 4, got 783"});
}

TEST_F(ScaleShiftTest, SymbolOutOfRangeOrNegative) {
  std::vector<float> x(65 * 4);
  std::vector<float> y(65 * 4);
  aotc_tensor_t in =
      tensor(x.data(), x.size() * 4, AOTC_DTYPE_FLOAT32, {65, 4});
  aotc_tensor_t out = tensor(y.data(), y.size() * 4, 0, {});
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT,
              {"input 'x' dim 0: batch = 65 is outside its range [0, 64]"});
  in.shape[0] = -1;
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT,
              {"input 'x' dim 0: negative size -1"});
}

TEST_F(ScaleShiftTest, InputBufferTooSmallOrNull) {
  std::vector<float> x(12);
  std::vector<float> y(12);
  aotc_tensor_t in = tensor(x.data(), 40, AOTC_DTYPE_FLOAT32, {3, 4});
  aotc_tensor_t out = tensor(y.data(), 48, 0, {});
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT,
              {"input 'x'", "holds 40 bytes", "[3,4]", "needs 48"});
  in = tensor(nullptr, 48, AOTC_DTYPE_FLOAT32, {3, 4});
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT, {"input 'x'", "data is null"});
}

TEST_F(ScaleShiftTest, OutputBufferTooSmall) {
  std::vector<float> x = randomValues(28, 3);
  std::vector<float> y(28, std::nanf(""));
  aotc_tensor_t in = tensor(x.data(), 112, AOTC_DTYPE_FLOAT32, {7, 4});
  aotc_tensor_t out = tensor(y.data(), 100, 0, {});
  expectError(aotc_container_run(container_, &in, 1, &out, 1),
              AOTC_ERROR_BUFFER_TOO_SMALL,
              {"output 'y'", "holds 100 bytes", "needs 112"});
  EXPECT_EQ(out.dtype, AOTC_DTYPE_FLOAT32);
  ASSERT_EQ(out.rank, 2);
  EXPECT_EQ(out.shape[0], 7);
  EXPECT_EQ(out.shape[1], 4);
  for (float v : y)
    EXPECT_TRUE(std::isnan(v)); // Nothing ran.
  // A size query: no buffer at all.
  aotc_tensor_t query = tensor(nullptr, 0, 0, {});
  EXPECT_EQ(aotc_container_run(container_, &in, 1, &query, 1),
            AOTC_ERROR_BUFFER_TOO_SMALL);
  EXPECT_EQ(query.rank, 2);
  EXPECT_EQ(query.shape[0], 7);
  // Capacity but no pointer is a caller bug.
  aotc_tensor_t bad = tensor(nullptr, 112, 0, {});
  expectError(aotc_container_run(container_, &in, 1, &bad, 1),
              AOTC_ERROR_INVALID_ARGUMENT, {"output 'y'", "data is null"});
}

TEST_F(ScaleShiftTest, OutputShapesWithoutRunning) {
  aotc_tensor_t in = tensor(nullptr, 0, AOTC_DTYPE_FLOAT32, {9, 4});
  aotc_tensor_t out = tensor(nullptr, 0, 0, {});
  ASSERT_EQ(aotc_container_output_shapes(container_, &in, 1, &out, 1), AOTC_OK)
      << aotc_last_error();
  EXPECT_EQ(out.dtype, AOTC_DTYPE_FLOAT32);
  EXPECT_EQ(out.rank, 2);
  EXPECT_EQ(out.shape[0], 9);
  EXPECT_EQ(out.shape[1], 4);
  in.shape[1] = 5;
  expectError(aotc_container_output_shapes(container_, &in, 1, &out, 1),
              AOTC_ERROR_INVALID_ARGUMENT, {"input 'x' dim 1"});
}

TEST_F(ScaleShiftTest, NullPointers) {
  aotc_container_t *c = container_;
  const char *text = nullptr;
  size_t count = 0;
  int32_t flag = 0;
  uint64_t bytes = 0;
  int64_t sym = 1;
  aotc_tensor_info_t tinfo;
  aotc_constant_info_t cinfo;
  aotc_symbol_info_t sinfo;
  aotc_tensor_t out = tensor(nullptr, 0, 0, {});
  const auto bad = AOTC_ERROR_INVALID_ARGUMENT;

  EXPECT_EQ(aotc_container_create(nullptr, nullptr), bad);
  EXPECT_NE(std::string(aotc_last_error()).find("out_container is null"),
            std::string::npos)
      << aotc_last_error();
  EXPECT_EQ(aotc_container_run(nullptr, nullptr, 0, nullptr, 0), bad);
  EXPECT_NE(std::string(aotc_last_error()).find("container is null"),
            std::string::npos);
  EXPECT_EQ(aotc_container_run(c, nullptr, 1, &out, 1), bad);
  EXPECT_NE(std::string(aotc_last_error()).find("inputs is null"),
            std::string::npos);
  aotc_tensor_t in = tensor(nullptr, 0, AOTC_DTYPE_FLOAT32, {0, 4});
  EXPECT_EQ(aotc_container_run(c, &in, 1, nullptr, 1), bad);
  EXPECT_NE(std::string(aotc_last_error()).find("outputs is null"),
            std::string::npos);
  EXPECT_EQ(aotc_container_output_shapes(nullptr, &in, 1, &out, 1), bad);
  EXPECT_EQ(aotc_container_output_shapes(c, nullptr, 1, &out, 1), bad);
  EXPECT_EQ(aotc_container_program_source(nullptr, &flag), bad);
  EXPECT_EQ(aotc_container_program_source(c, nullptr), bad);
  EXPECT_EQ(aotc_container_model_name(nullptr, &text), bad);
  EXPECT_EQ(aotc_container_model_name(c, nullptr), bad);
  EXPECT_EQ(aotc_container_device_name(nullptr, &text), bad);
  EXPECT_EQ(aotc_container_device_name(c, nullptr), bad);
  for (auto fn : {aotc_container_num_instances, aotc_container_num_inputs,
                  aotc_container_num_outputs, aotc_container_num_constants,
                  aotc_container_num_symbols, aotc_container_num_kernels,
                  aotc_container_num_metadata}) {
    EXPECT_EQ(fn(nullptr, &count), bad);
    EXPECT_EQ(fn(c, nullptr), bad);
  }
  EXPECT_EQ(aotc_container_input_info(nullptr, 0, &tinfo), bad);
  EXPECT_EQ(aotc_container_input_info(c, 0, nullptr), bad);
  EXPECT_EQ(aotc_container_output_info(nullptr, 0, &tinfo), bad);
  EXPECT_EQ(aotc_container_output_info(c, 0, nullptr), bad);
  EXPECT_EQ(aotc_container_constant_info(nullptr, 0, &cinfo), bad);
  EXPECT_EQ(aotc_container_constant_info(c, 0, nullptr), bad);
  EXPECT_EQ(aotc_container_symbol_info(nullptr, 0, &sinfo), bad);
  EXPECT_EQ(aotc_container_symbol_info(c, 0, nullptr), bad);
  EXPECT_EQ(aotc_container_kernel_name(nullptr, 0, &text), bad);
  EXPECT_EQ(aotc_container_kernel_name(c, 0, nullptr), bad);
  EXPECT_EQ(aotc_container_metadata(nullptr, 0, &text, &text), bad);
  EXPECT_EQ(aotc_container_metadata(c, 0, nullptr, &text), bad);
  EXPECT_EQ(aotc_container_metadata(c, 0, &text, nullptr), bad);
  EXPECT_EQ(aotc_container_metadata_lookup(nullptr, "opset", &text), bad);
  EXPECT_EQ(aotc_container_metadata_lookup(c, nullptr, &text), bad);
  EXPECT_EQ(aotc_container_metadata_lookup(c, "opset", nullptr), bad);
  EXPECT_EQ(aotc_container_arena_bytes(nullptr, &sym, 1, &bytes), bad);
  EXPECT_EQ(aotc_container_arena_bytes(c, nullptr, 1, &bytes), bad);
  EXPECT_EQ(aotc_container_arena_bytes(c, &sym, 1, nullptr), bad);
  EXPECT_EQ(aotc_container_reserve(nullptr, &sym, 1), bad);
  EXPECT_EQ(aotc_container_reserve(c, nullptr, 1), bad);
  // The constants calls: each names what is null and changes nothing.
  aotc_constant_entry_t entry = {"scale", out};
  EXPECT_EQ(aotc_container_update_constants(nullptr, &entry, 1, 0, 0), bad);
  EXPECT_EQ(aotc_container_update_constants(c, nullptr, 1, 0, 0), bad);
  EXPECT_NE(std::string(aotc_last_error()).find("entries is null"),
            std::string::npos)
      << aotc_last_error();
  EXPECT_EQ(aotc_container_update_user_managed_constants(nullptr, &entry, 1,
                                                         0, 0),
            bad);
  EXPECT_EQ(aotc_container_update_user_managed_constants(c, nullptr, 1, 0, 0),
            bad);
  EXPECT_EQ(aotc_container_run_const_fold(nullptr, 0), bad);
  EXPECT_EQ(aotc_container_swap_constant_buffer(nullptr), bad);
  EXPECT_EQ(aotc_container_free_inactive_constant_buffer(nullptr), bad);
  EXPECT_EQ(aotc_container_extract_constants(nullptr, 0, nullptr, 0, &count),
            bad);
  EXPECT_EQ(aotc_container_extract_constants(c, 0, nullptr, 0, nullptr), bad);
  EXPECT_EQ(aotc_container_extract_constants(c, 0, nullptr, 1, &count), bad);
  EXPECT_NE(std::string(aotc_last_error()).find("out is null with capacity 1"),
            std::string::npos)
      << aotc_last_error();
  EXPECT_EQ(aotc_container_constant_updatable(nullptr, 0, &flag, &text), bad);
  EXPECT_EQ(aotc_container_constant_updatable(c, 0, nullptr, &text), bad);
  EXPECT_EQ(aotc_container_constant_updatable(c, 99, &flag, &text), bad);
  // Without an inactive set: run_const_fold and swap are NOT_FOUND, free
  // has nothing to do.
  EXPECT_EQ(aotc_container_run_const_fold(c, 1), AOTC_ERROR_NOT_FOUND);
  EXPECT_EQ(aotc_container_swap_constant_buffer(c), AOTC_ERROR_NOT_FOUND);
  EXPECT_EQ(aotc_container_free_inactive_constant_buffer(c), AOTC_OK);
  EXPECT_EQ(aotc_container_extract_constants(c, 1, nullptr, 0, &count),
            AOTC_ERROR_NOT_FOUND);
  runAndCheck(c, 5, 17); // Unharmed.
}

TEST_F(ScaleShiftTest, Introspection) {
  aotc_container_t *c = container_;
  size_t n = 0;
  ASSERT_EQ(aotc_container_num_inputs(c, &n), AOTC_OK);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(aotc_container_num_outputs(c, &n), AOTC_OK);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(aotc_container_num_constants(c, &n), AOTC_OK);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(aotc_container_num_symbols(c, &n), AOTC_OK);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(aotc_container_num_kernels(c, &n), AOTC_OK);
  EXPECT_EQ(n, 2u);
  ASSERT_EQ(aotc_container_num_metadata(c, &n), AOTC_OK);
  EXPECT_EQ(n, 2u);
  ASSERT_EQ(aotc_container_num_instances(c, &n), AOTC_OK);
  EXPECT_EQ(n, 1u);

  const char *text = nullptr;
  ASSERT_EQ(aotc_container_model_name(c, &text), AOTC_OK);
  EXPECT_STREQ(text, "scale_shift");

  aotc_tensor_info_t info;
  ASSERT_EQ(aotc_container_input_info(c, 0, &info), AOTC_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, AOTC_DTYPE_FLOAT32);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[0], -1);
  EXPECT_EQ(info.dims[1], 4);
  EXPECT_EQ(info.dim_symbols[0], 0);
  EXPECT_EQ(info.dim_symbols[1], -1);
  EXPECT_STREQ(info.dim_texts[0], "batch");
  EXPECT_STREQ(info.dim_texts[1], "4");
  ASSERT_EQ(aotc_container_output_info(c, 0, &info), AOTC_OK);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[0], -1);
  EXPECT_STREQ(info.dim_texts[0], "batch");
  EXPECT_EQ(aotc_container_input_info(c, 1, &info),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotc_last_error()).find("input index 1"),
            std::string::npos);
  EXPECT_EQ(aotc_container_output_info(c, 7, &info),
            AOTC_ERROR_INVALID_ARGUMENT);

  aotc_constant_info_t constant;
  ASSERT_EQ(aotc_container_constant_info(c, 0, &constant), AOTC_OK);
  EXPECT_STREQ(constant.name, "w");
  EXPECT_STREQ(constant.onnx_name, "onnx::Mul_w");
  EXPECT_EQ(constant.dtype, AOTC_DTYPE_FLOAT32);
  ASSERT_EQ(constant.rank, 1);
  EXPECT_EQ(constant.shape[0], 4);
  EXPECT_EQ(constant.nbytes, 16u);
  EXPECT_EQ(constant.folded, 0);
  EXPECT_EQ(aotc_container_constant_info(c, 1, &constant),
            AOTC_ERROR_INVALID_ARGUMENT);

  aotc_symbol_info_t symbol;
  ASSERT_EQ(aotc_container_symbol_info(c, 0, &symbol), AOTC_OK);
  EXPECT_STREQ(symbol.name, "batch");
  EXPECT_EQ(symbol.min, 0);
  EXPECT_EQ(symbol.max, 64);
  EXPECT_EQ(aotc_container_symbol_info(c, 1, &symbol),
            AOTC_ERROR_INVALID_ARGUMENT);

  ASSERT_EQ(aotc_container_kernel_name(c, 0, &text), AOTC_OK);
  EXPECT_STREQ(text, "scale_mul");
  ASSERT_EQ(aotc_container_kernel_name(c, 1, &text), AOTC_OK);
  EXPECT_STREQ(text, "add_one");
  EXPECT_EQ(aotc_container_kernel_name(c, 2, &text),
            AOTC_ERROR_INVALID_ARGUMENT);

  const char *key = nullptr;
  const char *value = nullptr;
  ASSERT_EQ(aotc_container_metadata(c, 1, &key, &value), AOTC_OK);
  EXPECT_STREQ(key, "opset");
  EXPECT_STREQ(value, "17");
  ASSERT_EQ(aotc_container_metadata_lookup(c, "producer", &value), AOTC_OK);
  EXPECT_STREQ(value, "aotc test fixture");
  EXPECT_EQ(aotc_container_metadata_lookup(c, "nope", &value),
            AOTC_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(aotc_last_error()).find("'nope'"), std::string::npos);
  EXPECT_EQ(aotc_container_metadata(c, 2, &key, &value),
            AOTC_ERROR_INVALID_ARGUMENT);

  uint64_t bytes = 0;
  int64_t batch = 7;
  ASSERT_EQ(aotc_container_arena_bytes(c, &batch, 1, &bytes), AOTC_OK);
  EXPECT_EQ(bytes, 112u);
  batch = 0;
  ASSERT_EQ(aotc_container_arena_bytes(c, &batch, 1, &bytes), AOTC_OK);
  EXPECT_EQ(bytes, 0u);
  batch = 65;
  EXPECT_EQ(aotc_container_arena_bytes(c, &batch, 1, &bytes),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotc_last_error()).find("batch"), std::string::npos);
  EXPECT_EQ(aotc_container_arena_bytes(c, &batch, 2, &bytes),
            AOTC_ERROR_INVALID_ARGUMENT);
}

// aotc_container_reserve sizes and writes every instance's arena for a
// batch: the runs at that batch, below it and (growing it) above it give
// their results; a batch outside the range or a wrong count of values is
// refused by name, as aotc_container_arena_bytes refuses it.
TEST(CApi, ReserveSizesEveryInstancesArena) {
  ContainerPtr c = create(testDevice(), 2);
  ASSERT_TRUE(c);
  int64_t batch = 7;
  ASSERT_EQ(aotc_container_reserve(c.get(), &batch, 1), AOTC_OK)
      << aotc_last_error();
  runAndCheck(c.get(), 7, 11);
  runAndCheck(c.get(), 3, 12);
  runAndCheck(c.get(), 0, 13);
  runAndCheck(c.get(), 9, 14);
  batch = 0;
  EXPECT_EQ(aotc_container_reserve(c.get(), &batch, 1), AOTC_OK);
  batch = 65;
  EXPECT_EQ(aotc_container_reserve(c.get(), &batch, 1),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotc_last_error()).find("batch"), std::string::npos);
  batch = 7;
  EXPECT_EQ(aotc_container_reserve(c.get(), &batch, 2),
            AOTC_ERROR_INVALID_ARGUMENT);
  runAndCheck(c.get(), 7, 15);
}

TEST(Profile, RecordsEveryKernelAndCopyOfTheLastRun) {
  ContainerPtr c = create(testDevice(), 2);
  ASSERT_TRUE(c);
  size_t n = 99;
  EXPECT_EQ(aotc_container_last_profile(c.get(), nullptr, 0, &n),
            AOTC_ERROR_INVALID_ARGUMENT); // off until turned on
  runAndCheck(c.get(), 2, 3);
  ASSERT_EQ(aotc_container_set_profiling(c.get(), 1), AOTC_OK)
      << aotc_last_error();
  ASSERT_EQ(aotc_container_set_profiling(c.get(), 1), AOTC_OK); // no change
  ASSERT_EQ(aotc_container_last_profile(c.get(), nullptr, 0, &n), AOTC_OK);
  EXPECT_EQ(n, 0u) << "no run yet";
  for (int64_t batch : {5, 3}) {
    runAndCheck(c.get(), batch, 7);
    ASSERT_EQ(aotc_container_last_profile(c.get(), nullptr, 0, &n), AOTC_OK)
        << aotc_last_error();
    // run, enqueue, copy in x, the two kernels, copy out y.
    ASSERT_EQ(n, 6u);
    std::vector<aotc_profile_record_t> r(n + 2);
    size_t got = 0;
    ASSERT_EQ(aotc_container_last_profile(c.get(), r.data(), r.size(), &got),
              AOTC_OK);
    ASSERT_EQ(got, 6u);
    const double b = static_cast<double>(batch);
    EXPECT_EQ(r[0].kind, AOTC_PROFILE_RUN);
    EXPECT_EQ(r[1].kind, AOTC_PROFILE_ENQUEUE);
    EXPECT_EQ(r[2].kind, AOTC_PROFILE_COPY_IN);
    EXPECT_EQ(r[2].index, 0);
    EXPECT_EQ(r[2].bytes, 16 * b);
    EXPECT_EQ(r[3].kind, AOTC_PROFILE_KERNEL);
    EXPECT_EQ(r[3].index, 0);
    EXPECT_EQ(r[3].flops, 4 * b); // the fixture's kernel_costs
    EXPECT_EQ(r[3].bytes, 32 * b + 16);
    EXPECT_EQ(r[4].kind, AOTC_PROFILE_KERNEL);
    EXPECT_EQ(r[4].index, 1);
    EXPECT_EQ(r[4].flops, 4 * b);
    EXPECT_EQ(r[5].kind, AOTC_PROFILE_COPY_OUT);
    EXPECT_EQ(r[5].index, 0);
    EXPECT_EQ(r[5].bytes, 16 * b);
    // Every span lies inside the run; device commands run in order. Device
    // times are mapped onto the host clock, which is exact only to the
    // mapping's error: a loaded machine (ctest -j2) showed more than the
    // 1 us once allowed, so the slack is 50 us (a reordering would be off
    // by a whole command). The mapping's offset itself can be off by the
    // host's scheduling delay when the mapping was sampled: 3 ms on this
    // 2-core machine under a parallel build, so spans may end up to 20 ms
    // past the run (a unit error, us for ns, would be off by 1000x).
    for (size_t i = 0; i < got; ++i) {
      EXPECT_LE(r[i].start_ns, r[i].end_ns) << "record " << i;
      EXPECT_LE(r[i].end_ns, r[0].end_ns + 20000000) << "record " << i;
    }
    EXPECT_GT(r[0].end_ns, 0u);
    for (size_t i = 3; i < got; ++i)
      EXPECT_GE(r[i].start_ns + 50000, r[i - 1].end_ns) << "record " << i;
  }
  // A capacity smaller than the record count: partial copy, full count.
  aotc_profile_record_t one;
  ASSERT_EQ(aotc_container_last_profile(c.get(), &one, 1, &n), AOTC_OK);
  EXPECT_EQ(n, 6u);
  EXPECT_EQ(one.kind, AOTC_PROFILE_RUN);
  const char *summary = nullptr;
  ASSERT_EQ(aotc_container_kernel_summary(c.get(), 1, &summary), AOTC_OK);
  EXPECT_STREQ(summary, "Add -> f32[batch,4]");
  EXPECT_EQ(aotc_container_kernel_summary(c.get(), 2, &summary),
            AOTC_ERROR_INVALID_ARGUMENT);
  // Off again: runs stay correct, records are gone.
  ASSERT_EQ(aotc_container_set_profiling(c.get(), 0), AOTC_OK);
  runAndCheck(c.get(), 4, 5);
  EXPECT_EQ(aotc_container_last_profile(c.get(), nullptr, 0, &n),
            AOTC_ERROR_INVALID_ARGUMENT);
}

TEST(Profile, TogglingUnderTrafficKeepsEveryRunCorrect) {
  // Four threads run while another turns profiling on and off: the toggle
  // waits for runs in flight and holds new ones, so every run is correct.
  // Each runner makes at least 40 runs and goes on until the toggles have
  // started (a runner scheduled ahead of this thread could otherwise finish
  // all its runs before the first toggle, as it did on a loaded machine).
  ContainerPtr c = create(testDevice(), 2);
  ASSERT_TRUE(c);
  std::atomic<int> finished{0}, toggles{0};
  std::vector<std::thread> runners;
  for (int t = 0; t < 4; ++t)
    runners.emplace_back([&, t] {
      for (int i = 0; i < 40 || toggles.load() < 4; ++i)
        runAndCheck(c.get(), 1 + (t * 13 + i) % 64, 100 * t + i);
      ++finished;
    });
  while (finished.load() < 4) {
    ASSERT_EQ(aotc_container_set_profiling(c.get(), toggles % 2 == 0), AOTC_OK)
        << aotc_last_error();
    ++toggles;
  }
  for (std::thread &t : runners)
    t.join();
  EXPECT_GT(toggles.load(), 1);
}

TEST_F(ScaleShiftTest, ProfileNeedsProfilingOn) {
  size_t n = 0;
  EXPECT_EQ(aotc_container_last_profile(container_, nullptr, 0, &n),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotc_last_error()).find("profiling is off"),
            std::string::npos);
  EXPECT_EQ(aotc_container_set_profiling(nullptr, 1),
            AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(aotc_container_last_profile(container_, nullptr, 1, &n),
            AOTC_ERROR_INVALID_ARGUMENT); // capacity without a buffer
  EXPECT_EQ(aotc_container_last_profile(container_, nullptr, 0, nullptr),
            AOTC_ERROR_INVALID_ARGUMENT);
}

TEST(Concurrency, FourThreadsOnTwoInstances) {
  ContainerPtr c = create(testDevice(), 2);
  ASSERT_NE(c, nullptr);
  size_t instances = 0;
  ASSERT_EQ(aotc_container_num_instances(c.get(), &instances), AOTC_OK);
  EXPECT_EQ(instances, 2u);
  std::atomic<int> failures{0};
  std::atomic<int> runs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        int64_t batch = 1 + (t * 17 + i * 5) % 64;
        size_t n = static_cast<size_t>(batch) * 4;
        std::vector<float> x =
            randomValues(n, static_cast<uint32_t>(t * 1000 + i));
        std::vector<float> y(n, std::nanf(""));
        aotc_tensor_t in =
            tensor(x.data(), n * 4, AOTC_DTYPE_FLOAT32, {batch, 4});
        aotc_tensor_t out = tensor(y.data(), n * 4, 0, {});
        if (aotc_container_run(c.get(), &in, 1, &out, 1) != AOTC_OK ||
            out.shape[0] != batch) {
          ++failures;
          continue;
        }
        for (size_t k = 0; k < n; ++k) {
          if (std::fabs(y[k] - (x[k] * kW[k % 4] + 1.0f)) > 1e-5f) {
            ++failures;
            break;
          }
        }
        ++runs;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(runs.load(), 160);
}

TEST(Errors, LastErrorIsPerThread) {
  size_t n = 0;
  ASSERT_EQ(aotc_container_num_inputs(nullptr, &n),
            AOTC_ERROR_INVALID_ARGUMENT);
  std::string mainMessage = aotc_last_error();
  EXPECT_NE(mainMessage.find("aotc_container_num_inputs"), std::string::npos);
  std::string otherBefore, otherAfter;
  std::thread other([&] {
    otherBefore = aotc_last_error();
    aotc_container_num_outputs(nullptr, &n);
    otherAfter = aotc_last_error();
  });
  other.join();
  EXPECT_EQ(otherBefore, "");
  EXPECT_NE(otherAfter.find("aotc_container_num_outputs"), std::string::npos);
  EXPECT_EQ(mainMessage, aotc_last_error());
}

//===----------------------------------------------------------------------===//
// Program binary cache
//===----------------------------------------------------------------------===//

std::vector<std::string> cacheFiles(const std::string &dir) {
  std::vector<std::string> files;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 6 && name.substr(name.size() - 6) == ".clbin")
        files.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  return files;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

bool fromCache(aotc_container_t *c) {
  int32_t flag = -1;
  EXPECT_EQ(aotc_container_program_source(c, &flag), AOTC_OK);
  return flag == 1;
}

TEST(ProgramCache, SecondLoadCompilesNothing) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string cache = dir.path() + "/nested/cache";
  ContainerPtr first = create(testDevice(), 1, cache.c_str());
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(fromCache(first.get()));
  std::vector<std::string> files = cacheFiles(cache);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("scale_shift-"), std::string::npos) << files[0];

  ContainerPtr second = create(testDevice(), 1, cache.c_str());
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(fromCache(second.get()));
  runAndCheck(second.get(), 9, 4);
  EXPECT_EQ(cacheFiles(cache).size(), 1u);
}

/// The key text of a program-cache entry ("aotc program cache v2" up to and
/// including the "address bits" line and, for a CPU device, the "host isa"
/// line after it); empty if absent.
std::string cacheKeyText(const std::string &entry) {
  size_t begin = entry.find("aotc program cache v2\n");
  size_t bits = entry.find("\naddress bits: ", begin);
  if (begin == std::string::npos || bits == std::string::npos)
    return "";
  size_t end = entry.find('\n', bits + 1);
  if (end != std::string::npos && entry.compare(end, 11, "\nhost isa: ") == 0)
    end = entry.find('\n', end + 1);
  return entry.substr(begin, end == std::string::npos ? end : end - begin);
}

TEST(ProgramCache, CpuKeyNamesTheHostIsa) {
  TempDir dir;
  ContainerPtr c = create(testDevice(), 1, dir.path().c_str());
  ASSERT_NE(c, nullptr);
  std::vector<std::string> files = cacheFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  std::string key = cacheKeyText(readAll(files[0]));
  ASSERT_FALSE(key.empty());
  size_t isa = key.find("\nhost isa: ");
  if (std::string(testDevice()).rfind("cpu", 0) != 0) {
    EXPECT_EQ(isa, std::string::npos) << key; // a GPU's binary is not host code
    return;
  }
  ASSERT_NE(isa, std::string::npos) << key;
  std::string line = key.substr(isa + 11) + " ";
#if defined(__x86_64__)
  const std::pair<const char *, bool> features[] = {
      {"avx2", __builtin_cpu_supports("avx2")},
      {"fma", __builtin_cpu_supports("fma")},
      {"avx512f", __builtin_cpu_supports("avx512f")},
      {"avx512bw", __builtin_cpu_supports("avx512bw")}};
  for (const auto &[f, has] : features)
    EXPECT_EQ(line.find(std::string(f) + " ") != std::string::npos, has)
        << f << " in '" << line << "'";
#endif
}

TEST(ProgramCache, CorruptOrMismatchingEntryIsRebuilt) {
  TempDir dir;
  ContainerPtr first = create(testDevice(), 1, dir.path().c_str());
  ASSERT_NE(first, nullptr);
  std::vector<std::string> files = cacheFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string path = files[0];
  const std::string good = readAll(path);
  ASSERT_GT(good.size(), 100u);

  size_t keyAt = good.find("driver version: ");
  ASSERT_NE(keyAt, std::string::npos);
  std::string flippedBinary = good;
  flippedBinary[flippedBinary.size() - 10] ^= 0x5a;
  std::string otherKey = good;
  otherKey[keyAt] = 'D';
  struct Case {
    const char *what;
    std::string bytes;
  } cases[] = {
      {"garbage", "this is not a program binary"},
      {"truncated", good.substr(0, good.size() / 2)},
      {"flipped binary byte", flippedBinary},
      {"other key", otherKey},
      {"empty", ""},
  };
  for (const Case &cs : cases) {
    SCOPED_TRACE(cs.what);
    writeAll(path, cs.bytes);
    ContainerPtr c = create(testDevice(), 1, dir.path().c_str());
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(fromCache(c.get()));
    runAndCheck(c.get(), 6, 8);
    // The entry was rewritten for the same key and loads again. (Not
    // byte-equal to the first entry: a driver may return a different binary
    // for the same source, as PoCL does once its own kernel cache has grown.)
    const std::string now = readAll(path);
    EXPECT_NE(now, cs.bytes);
    EXPECT_EQ(cacheKeyText(now), cacheKeyText(good));
    ContainerPtr again = create(testDevice(), 1, dir.path().c_str());
    ASSERT_NE(again, nullptr);
    EXPECT_TRUE(fromCache(again.get()));
  }
  EXPECT_EQ(cacheFiles(dir.path()).size(), 1u); // No stray temp files.
}

TEST(ProgramCache, UnwritableDirectoryIsNotAnError) {
  TempDir dir;
  std::string file = dir.path() + "/a-file";
  writeAll(file, "x");
  std::string cache = file + "/cache"; // Below a regular file: uncreatable.
  ContainerPtr c = create(testDevice(), 1, cache.c_str());
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(fromCache(c.get()));
  runAndCheck(c.get(), 4, 2);
}

TEST(ProgramCache, EnvironmentSelectsDirectory) {
  TempDir dir;
  ScopedEnv env("AOTC_CACHE_DIR", dir.path().c_str());
  ContainerPtr c = create(testDevice(), 1, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(cacheFiles(dir.path()).size(), 1u);
  ContainerPtr again = create(testDevice(), 1, "");
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(fromCache(again.get()));
}

TEST(ProgramCache, UntrustedEntriesAreNeverRunAndNeverBlock) {
  TempDir dir;
  ContainerPtr first = create(testDevice(), 1, dir.path().c_str());
  ASSERT_NE(first, nullptr);
  std::vector<std::string> files = cacheFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string path = files[0];
  const std::string good = readAll(path);
  struct stat st;
  ASSERT_EQ(::stat(dir.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "the cache directory is private";
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << "entries are private";

  // A FIFO where the entry should be: no hang, built from source, replaced.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  {
    ContainerPtr c = create(testDevice(), 1, dir.path().c_str());
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(fromCache(c.get()));
    runAndCheck(c.get(), 3, 2);
  }
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));

  // A symlink to a valid entry elsewhere is not followed.
  std::string elsewhere = dir.path() + "-elsewhere";
  writeAll(elsewhere, good);
  ::chmod(elsewhere.c_str(), 0600);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), path.c_str()), 0);
  {
    ContainerPtr c = create(testDevice(), 1, dir.path().c_str());
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(fromCache(c.get()));
  }
  ::unlink(elsewhere.c_str());

  // A valid entry that someone else can write (or, when the tests run as
  // root, that another user owns) could have been forged: rebuilt, not run.
  writeAll(path, good);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  {
    ContainerPtr c = create(testDevice(), 1, dir.path().c_str());
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(fromCache(c.get()));
  }
  if (::geteuid() == 0) {
    writeAll(path, good);
    ::chmod(path.c_str(), 0600);
    ASSERT_EQ(::chown(path.c_str(), 12345, 12345), 0);
    ContainerPtr c = create(testDevice(), 1, dir.path().c_str());
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(fromCache(c.get()));
  }

  // A directory with loose permissions is made private again; one owned by
  // another user is not used.
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  {
    ContainerPtr c = create(testDevice(), 1, dir.path().c_str());
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(::stat(dir.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  if (::geteuid() == 0) {
    std::string theirs = dir.path() + "/theirs";
    ASSERT_EQ(::mkdir(theirs.c_str(), 0700), 0);
    ASSERT_EQ(::chown(theirs.c_str(), 12345, 12345), 0);
    ContainerPtr c = create(testDevice(), 1, theirs.c_str());
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(fromCache(c.get()));
    EXPECT_TRUE(cacheFiles(theirs).empty());
    ::rmdir(theirs.c_str());
  }
}

} // namespace
} // namespace aotc::test
