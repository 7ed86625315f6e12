/// \file
/// How the runtime reports faults of a model: an OpenCL build failure (with
/// its build log) and bad kernel launches from the wrapper. The process and
/// the container must stay usable.
#include "aotc/runner.hpp"
#include "test_util.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace aotc::test {
namespace {

ModelOptions cpuOptions(const std::string &cacheDir = sharedCacheDir()) {
  ModelOptions options;
  options.device = testDevice();
  options.cacheDir = cacheDir;
  return options;
}

TEST(Faults, BuildLogIsInTheMessage) {
  TempDir dir;
  try {
    Model::load(AOTC_TEST_MODEL_FAULTY_BUILD, cpuOptions(dir.path()));
    FAIL() << "a program with an undefined function built";
  } catch (const Error &e) {
    std::string message = e.what();
    EXPECT_EQ(e.status(), AOTC_ERROR_DEVICE_ERROR);
    EXPECT_NE(message.find("model 'faulty'"), std::string::npos) << message;
    EXPECT_NE(message.find("build log"), std::string::npos) << message;
    EXPECT_NE(message.find("this_function_does_not_exist"), std::string::npos)
        << message;
  }
  // Nothing was cached.
  struct stat st;
  std::string entries = capture("ls -A '" + dir.path() + "'");
  EXPECT_EQ(entries, "") << entries;
  EXPECT_EQ(stat(dir.path().c_str(), &st), 0);
}

TEST(Faults, MissingDeviceExtensionIsRefusedByName) {
  // The kernels enable an extension the device lacks: refused when the
  // container is created, naming the extension and the device, before any
  // OpenCL build.
  try {
    Model::load(AOTC_TEST_MODEL_FAULTY_EXTENSION, cpuOptions());
    FAIL() << "a model needing a missing extension loaded";
  } catch (const Error &e) {
    std::string message = e.what();
    EXPECT_EQ(e.status(), AOTC_ERROR_UNSUPPORTED) << message;
    EXPECT_NE(message.find("model 'faulty' needs the OpenCL extension "
                           "cl_aotc_no_such_extension, which device '"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("build log"), std::string::npos) << message;
  }
}

TEST(Faults, BadLaunchesAreReported) {
  Model model = Model::load(AOTC_TEST_MODEL_FAULTY_LAUNCH, cpuOptions());
  struct Case {
    int64_t n;
    aotc_status_t status;
    const char *text;
  } cases[] = {
      {1, AOTC_ERROR_INTERNAL,
       "kernel 'add_one' takes 5 OpenCL arguments, the wrapper passed 4"},
      {2, AOTC_ERROR_INTERNAL, "offset 1048576 is outside the arena buffer"},
      {3, AOTC_ERROR_INTERNAL, "launch of kernel 7 of 1"},
      {4, AOTC_ERROR_UNSUPPORTED, "kernel 'add_one': local size 1099511627776"},
  };
  for (const Case &cs : cases) {
    SCOPED_TRACE(cs.n);
    HostTensor x = HostTensor::fromVector<float>(
        {cs.n}, std::vector<float>(static_cast<size_t>(cs.n), 2.0f));
    try {
      model.run({x});
      FAIL() << "bad launch accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.status(), cs.status) << e.what();
      EXPECT_NE(std::string(e.what()).find(cs.text), std::string::npos)
          << e.what();
    }
    // The same container still runs a good launch.
    HostTensor good = HostTensor::fromVector<float>({5}, {1, 2, 3, 4, 5});
    std::vector<HostTensor> y = model.run({good});
    EXPECT_EQ(y[0].toVector<float>(), std::vector<float>({2, 3, 4, 5, 6}));
  }
}

} // namespace
} // namespace aotc::test
