// Sizes are checked arithmetic: an input dimension whose sizes would overflow
// 64 bits somewhere in the model (here near 2^62) is refused with an error
// naming the size, the symbol and the input that bound it, instead of
// wrapping the arena to 0 bytes and letting the device run off its end.
#include "model_test_util.h"

#include <gtest/gtest.h>

using namespace aotc::e2e;

namespace {

TEST(SizeCheck, HugeSymbolValuesAreRefusedNotWrapped) {
  // y = Pad(x[n, 0]) -> [n, 4]: the input is empty whatever n is, the output
  // is not.
  ModelBuilder mb("pad");
  mb.input("x", onnx::TensorProto::FLOAT, {"n", 0});
  mb.initializerI64("pads", {4}, {0, 2, 0, 2});
  mb.node("Pad", {"x", "pads"}, {"y"}, "padder");
  mb.output("y", onnx::TensorProto::FLOAT, {"n", 4});
  Compiled c = compileModel(mb.bytes(), "--dim n=0:4611686018427387904");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);

  auto ok = m.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {3, 0})});
  EXPECT_EQ(ok[0].toVector<float>(), std::vector<float>(12, 0.0f));

  for (int64_t n : {int64_t{4611686018427387904}, int64_t{1} << 61}) {
    try {
      m.outputShapes({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {n, 0})});
      ADD_FAILURE() << "n = " << n << " was accepted";
    } catch (const aotc::Error &e) {
      std::string msg = e.what();
      EXPECT_EQ(e.status(), AOTC_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(msg.find("the size of output 'y' [n,4] overflows 64 bits"),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find("n = " + std::to_string(n) + " (input 'x' dim 0)"),
                std::string::npos)
          << msg;
    }
  }
  // The container still works.
  EXPECT_EQ(m.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {1, 0})})[0].numel(),
            4);
}

} // namespace
