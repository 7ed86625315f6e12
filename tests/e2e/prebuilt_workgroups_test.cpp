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

aotc::Model smallModel() {
  ModelBuilder mb("prebuilt_wg");
  mb.input("x", onnx::TensorProto::FLOAT, {37});
  mb.node("Relu", {"x"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {37});
  Compiled comp = compileModel(mb.bytes());
  EXPECT_EQ(comp.exitCode, 0) << comp.output;
  return loadModel(comp.soPath);
}

bool onPocl(const aotc::Model &m) {
  return m.deviceName().find("Portable Computing Language") !=
         std::string::npos;
}

TEST(PrebuiltWorkGroups, PoclRunsTheWorkGroupFunctionsBuiltWithTheProgram) {
  unsetenv("POCL_WORK_GROUP_SPECIALIZATION");
  aotc::Model m = smallModel();
  if (!onPocl(m))
    GTEST_SKIP() << "not PoCL: " << m.deviceName();
  const char *v = std::getenv("POCL_WORK_GROUP_SPECIALIZATION");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v), "0");
  // And the kernels still run, from the work-group functions built at load.
  std::vector<float> x(37);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) - 18.5f;
  std::vector<float> y =
      m.run({aotc::HostTensor::fromVector({37}, x)})[0].toVector<float>();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f) << i;
}

TEST(PrebuiltWorkGroups, AValueTheHostSetIsKept) {
  setenv("POCL_WORK_GROUP_SPECIALIZATION", "1", 1);
  aotc::Model m = smallModel();
  const char *v = std::getenv("POCL_WORK_GROUP_SPECIALIZATION");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v), "1");
}

} // namespace
