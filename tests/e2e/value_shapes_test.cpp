// Shapes given at run time through the C++ runner (and so under the
// sanitizers, which the Python check e2e.value_shapes cannot load): the
// runtime reads a Reshape's shape and a Slice's starts from the inputs' host
// data, one .so runs every value, and values that break ONNX's rules are
// errors naming the node.
#include "model_test_util.h"

#include <gtest/gtest.h>

using namespace aotc::e2e;

namespace {

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) - 3.5f;
  return v;
}

TEST(ValueShapes, ReshapeAndSliceReadTheirValuesAtRunTime) {
  // y = Slice(Reshape(x, shape), starts, [INT64_MAX], axes = [1])
  ModelBuilder mb("value_shapes");
  mb.input("x", onnx::TensorProto::FLOAT, {2, 6});
  mb.input("shape", onnx::TensorProto::INT64, {2});
  mb.input("starts", onnx::TensorProto::INT64, {1});
  mb.initializerI64("ends", {1}, {INT64_MAX});
  mb.initializerI64("axes", {1}, {1});
  mb.node("Reshape", {"x", "shape"}, {"r"}, "reshape_node");
  mb.node("Slice", {"r", "starts", "ends", "axes"}, {"y"}, "slice_node");
  mb.output("y", onnx::TensorProto::FLOAT, {Dim("a"), Dim("b")});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> x = iota(12);
  struct Case {
    std::vector<int64_t> shape;
    int64_t start;
    int64_t rows, cols;
  };
  for (const Case &k : {Case{{3, 4}, 1, 3, 4}, Case{{-1, 3}, -2, 4, 3},
                        Case{{0, -1}, 5, 2, 6}, Case{{12, 1}, 0, 12, 1},
                        Case{{1, 12}, 100, 1, 12}}) {
    auto out = m.run({aotc::HostTensor::fromVector({2, 6}, x),
                      aotc::HostTensor::fromVector<int64_t>({2}, k.shape),
                      aotc::HostTensor::fromVector<int64_t>({1}, {k.start})});
    ASSERT_EQ(out[0].shape().size(), 2u);
    int64_t s = k.start < 0 ? std::max<int64_t>(k.start + k.cols, 0)
                            : std::min(k.start, k.cols);
    EXPECT_EQ(out[0].shape()[0], k.rows);
    EXPECT_EQ(out[0].shape()[1], k.cols - s);
    std::vector<float> y = out[0].toVector<float>();
    for (int64_t i = 0; i < k.rows; ++i)
      for (int64_t j = s; j < k.cols; ++j)
        EXPECT_EQ(y[i * (k.cols - s) + (j - s)], x[i * k.cols + j])
            << k.shape[0] << "x" << k.shape[1] << " from " << k.start;
  }
  // Values ONNX forbids.
  for (const std::vector<int64_t> &bad :
       {std::vector<int64_t>{5, 2}, {-1, -1}, {-3, 4}, {0, 5}}) {
    try {
      m.run({aotc::HostTensor::fromVector({2, 6}, x),
             aotc::HostTensor::fromVector<int64_t>({2}, bad),
             aotc::HostTensor::fromVector<int64_t>({1}, {0})});
      ADD_FAILURE() << "shape " << bad[0] << "," << bad[1] << " accepted";
    } catch (const aotc::Error &e) {
      EXPECT_EQ(e.status(), AOTC_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("node 'reshape_node' (Reshape)"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ValueShapes, OutputShapesReadTheValues) {
  ModelBuilder mb("value_data");
  mb.input("x", onnx::TensorProto::FLOAT, {4});
  mb.input("reps", onnx::TensorProto::INT64, {1});
  mb.node("Tile", {"x", "reps"}, {"y"}, "tile_node");
  mb.output("y", onnx::TensorProto::FLOAT, {Dim("n")});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> x = iota(4);
  auto out = m.run({aotc::HostTensor::fromVector({4}, x),
                    aotc::HostTensor::fromVector<int64_t>({1}, {3})});
  EXPECT_EQ(out[0].numel(), 12);
  // Sizes without running: the values are read from the inputs' data.
  auto shapes = m.outputShapes({aotc::HostTensor::fromVector({4}, x),
                                aotc::HostTensor::fromVector<int64_t>({1}, {5})});
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0], std::vector<int64_t>{20});
  // Negative repeats: refused by the run, naming the node.
  try {
    m.run({aotc::HostTensor::fromVector({4}, x),
           aotc::HostTensor::fromVector<int64_t>({1}, {-1})});
    ADD_FAILURE() << "negative repeats accepted";
  } catch (const aotc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("node 'tile_node' (Tile)"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
