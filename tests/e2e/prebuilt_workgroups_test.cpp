// On PoCL's CPU device a container asks PoCL to run the work-group functions
// it builds with the program (POCL_WORK_GROUP_SPECIALIZATION=0), so that no
// kernel is compiled on its first launch (aotc_container_create's promise);
// a value the host set is kept. Each test runs in its own process (ctest
// runs every discovered test alone), so the runtime's once-per-process
// setting starts fresh in each.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace aotc::e2e;

namespace {

TEST(PrebuiltWorkGroups, PoclRunsTheWorkGroupFunctionsBuiltWithTheProgram) {
  unsetenv("POCL_WORK_GROUP_SPECIALIZATION");
  aotc::Model m = loadSmallRelu("prebuilt_wg");
  if (!onPocl(m))
    GTEST_SKIP() << "not PoCL: " << m.deviceName();
  const char *v = std::getenv("POCL_WORK_GROUP_SPECIALIZATION");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v), "0");
  // And the kernels still run, from the work-group functions built at load.
  expectSmallRelu(m);
}

TEST(PrebuiltWorkGroups, AValueTheHostSetIsKept) {
  setenv("POCL_WORK_GROUP_SPECIALIZATION", "1", 1);
  aotc::Model m = loadSmallRelu("prebuilt_wg");
  const char *v = std::getenv("POCL_WORK_GROUP_SPECIALIZATION");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v), "1");
}

} // namespace
