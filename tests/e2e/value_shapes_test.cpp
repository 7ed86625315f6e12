// Shapes given at run time through the C++ runner (and so under the
// sanitizers, which the Python check e2e.value_shapes cannot load): the
// runtime reads a Reshape's shape and a Slice's starts from the inputs' host
// data, one .so runs every value, and values that break ONNX's rules are
// errors naming the node.
#include "expect_refusal.h"
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
    EXPECT_TRUE(refused(
        [&] {
          m.run({aotc::HostTensor::fromVector({2, 6}, x),
                 aotc::HostTensor::fromVector<int64_t>({2}, bad),
                 aotc::HostTensor::fromVector<int64_t>({1}, {0})});
        },
        {"node 'reshape_node' (Reshape)"}, AOTC_ERROR_INVALID_ARGUMENT))
        << "shape " << bad[0] << "," << bad[1];
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
  EXPECT_TRUE(refused(
      [&] {
        m.run({aotc::HostTensor::fromVector({4}, x),
               aotc::HostTensor::fromVector<int64_t>({1}, {-1})});
      },
      {"node 'tile_node' (Tile)"}))
      << "negative repeats";
}

TEST(ValueShapes, BranchingSizesAreComputedOncePerRun) {
  // Two Reshapes by one shape input: each dim of the result is the value,
  // the input's dim for 0 or the remainder for -1. The compiler gives each
  // such dim one derived symbol (computed by the wrapper per run), shared
  // by both results, so the Add needs no run-time broadcast check and the
  // kernels index by plain sizes.
  ModelBuilder mb("derived_sizes");
  mb.input("x", onnx::TensorProto::FLOAT, {2, 6});
  mb.input("z", onnx::TensorProto::FLOAT, {2, 6});
  mb.input("shape", onnx::TensorProto::INT64, {3});
  mb.node("Reshape", {"x", "shape"}, {"rx"}, "reshape_x");
  mb.node("Reshape", {"z", "shape"}, {"rz"}, "reshape_z");
  mb.node("Add", {"rx", "rz"}, {"y"}, "add");
  mb.output("y", onnx::TensorProto::FLOAT, {Dim("a"), Dim("b"), Dim("c")});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<aotc::SymbolInfo> syms = m.symbols();
  ASSERT_EQ(syms.size(), 6u); // shape[0..2] and rx's three dims
  EXPECT_EQ(syms[3].name, "rx_d0");
  EXPECT_EQ(syms[5].name, "rx_d2");
  EXPECT_EQ(syms[3].min, 0);
  std::vector<float> x = iota(12), z(12);
  for (size_t i = 0; i < z.size(); ++i)
    z[i] = 0.25f * static_cast<float>(i * i);
  struct Case {
    std::vector<int64_t> shape, dims;
  };
  for (const Case &k : {Case{{-1, 2, 3}, {2, 2, 3}}, Case{{4, 0, -1}, {}},
                        Case{{12, 1, 1}, {12, 1, 1}}, Case{{1, -1, 4}, {1, 3, 4}},
                        Case{{3, 0, 2}, {}}}) {
    // {3, 0, 2} copies the input's 6 (36 elements) and {4, 0, -1} leaves
    // 0 for -1: the run refuses both, naming the Reshape.
    bool valid = k.shape != std::vector<int64_t>{3, 0, 2} &&
                 k.shape != std::vector<int64_t>{4, 0, -1};
    try {
      auto out = m.run({aotc::HostTensor::fromVector({2, 6}, x),
                        aotc::HostTensor::fromVector({2, 6}, z),
                        aotc::HostTensor::fromVector<int64_t>({3}, k.shape)});
      ASSERT_TRUE(valid) << "shape " << k.shape[0] << "," << k.shape[1]
                         << "," << k.shape[2] << " accepted";
      EXPECT_EQ(out[0].shape(), k.dims);
      std::vector<float> y = out[0].toVector<float>();
      ASSERT_EQ(y.size(), 12u);
      for (size_t i = 0; i < 12; ++i)
        EXPECT_EQ(y[i], x[i] + z[i]) << i;
    } catch (const aotc::Error &e) {
      EXPECT_FALSE(valid) << e.what();
      EXPECT_EQ(e.status(), AOTC_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("(Reshape)"), std::string::npos)
          << e.what();
    }
  }
  // The arena query takes the bound symbols; the derived entries are
  // computed, not read (-7 would be outside their range).
  EXPECT_NO_THROW(m.arenaBytes({-1, 2, 3, -7, -7, -7}));
  EXPECT_THROW(m.arenaBytes({5, 5, 5, 0, 0, 0}), aotc::Error);
}

TEST(ValueShapes, PadsGivenAtRunTime) {
  // y = Pad(x, pads, mode = reflect): pads read per run; a reflect pad as
  // large as its dim (which ONNX's reference repeats the reflection for,
  // and ONNX Runtime answers differently) is refused naming the node.
  ModelBuilder mb("pads_at_run_time");
  mb.input("x", onnx::TensorProto::FLOAT, {3, 5});
  mb.input("pads", onnx::TensorProto::INT64, {4});
  ModelBuilder::attrString(mb.node("Pad", {"x", "pads"}, {"y"}, "pad_node"),
                           "mode", "reflect");
  mb.output("y", onnx::TensorProto::FLOAT, {Dim("a"), Dim("b")});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> x = iota(15);
  auto reflect = [](int64_t i, int64_t d) {
    if (i < 0)
      return -i;
    return i >= d ? 2 * (d - 1) - i : i;
  };
  for (const std::vector<int64_t> &p :
       {std::vector<int64_t>{0, 0, 0, 0}, {1, 2, 2, 4}, {2, 0, 0, 3},
        {-1, 1, 0, -2}}) {
    auto out = m.run({aotc::HostTensor::fromVector({3, 5}, x),
                      aotc::HostTensor::fromVector<int64_t>({4}, p)});
    int64_t rows = 3 + p[0] + p[2], cols = 5 + p[1] + p[3];
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{rows, cols}));
    std::vector<float> y = out[0].toVector<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        EXPECT_EQ(y[i * cols + j], x[reflect(i - p[0], 3) * 5 +
                                     reflect(j - p[1], 5)])
            << i << "," << j << " with pads " << p[0] << "," << p[1] << ","
            << p[2] << "," << p[3];
  }
  for (const std::vector<int64_t> &bad :
       {std::vector<int64_t>{3, 0, 0, 0}, {0, 0, 0, 5}, {0, 9, 0, 0},
        // 4 mirrored about what cropping 3 of 5 keeps: ONNX crops first
        // (aotc read the cropped-away column here before this stop).
        {0, 4, 0, -3}, {-2, 0, 2, 0}}) {
    EXPECT_TRUE(refused(
        [&] {
          m.run({aotc::HostTensor::fromVector({3, 5}, x),
                 aotc::HostTensor::fromVector<int64_t>({4}, bad)});
        },
        {"node 'pad_node' (Pad): reflect pads"}, AOTC_ERROR_INVALID_ARGUMENT))
        << "pads " << bad[0] << "," << bad[1] << "," << bad[2] << "," << bad[3];
  }
}

TEST(ValueShapes, WrapPadsRepeatWhatCroppingKeeps) {
  // Pad mode wrap (opset 19) as ONNX's reference (numpy.pad) defines it:
  // negative pads crop first, then the kept part repeats as often as the
  // pads need (ONNX Runtime 1.20 answers 0 where a pad exceeds it).
  ModelBuilder mb("wrap_pads", 19);
  mb.input("x", onnx::TensorProto::FLOAT, {2, 6});
  mb.input("pads", onnx::TensorProto::INT64, {4});
  ModelBuilder::attrString(mb.node("Pad", {"x", "pads"}, {"y"}, "pad_node"),
                           "mode", "wrap");
  mb.output("y", onnx::TensorProto::FLOAT, {Dim("a"), Dim("b")});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> x = iota(12);
  auto wrap = [](int64_t i, int64_t d, int64_t b, int64_t e) {
    int64_t s = std::max<int64_t>(-b, 0);
    int64_t len = d - s - std::max<int64_t>(-e, 0);
    int64_t q = (i - std::max<int64_t>(b, 0)) % len;
    return s + (q < 0 ? q + len : q);
  };
  for (const std::vector<int64_t> &p :
       {std::vector<int64_t>{0, 4, 0, -3}, {3, 13, 1, 0}, {1, -2, 0, 9},
        {-1, 0, 0, 0}}) {
    auto out = m.run({aotc::HostTensor::fromVector({2, 6}, x),
                      aotc::HostTensor::fromVector<int64_t>({4}, p)});
    int64_t rows = 2 + p[0] + p[2], cols = 6 + p[1] + p[3];
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{rows, cols}));
    std::vector<float> y = out[0].toVector<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        EXPECT_EQ(y[i * cols + j],
                  x[wrap(i, 2, p[0], p[2]) * 6 + wrap(j, 6, p[1], p[3])])
            << i << "," << j << " with pads " << p[0] << "," << p[1] << ","
            << p[2] << "," << p[3];
  }
  // Cropping everything of a dim leaves nothing to repeat.
  EXPECT_TRUE(refused(
      [&] {
        m.run({aotc::HostTensor::fromVector({2, 6}, x),
               aotc::HostTensor::fromVector<int64_t>({4}, {0, -6, 0, 2})});
      },
      {"nothing is left to pad from"}))
      << "wrap of an emptied dim";
}

} // namespace
