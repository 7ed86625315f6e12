// Indices from data never leave a buffer: Gather checks each index where it
// is used. Negative indices count from the end as ONNX says; one outside
// [-size, size) fails the run with an error that names the node and the
// index, the host survives, and the container stays usable.
#include "expect_refusal.h"
#include "model_test_util.h"

#include <gtest/gtest.h>

using namespace aotc::e2e;

namespace {

/// Gather(w: f32[3, 4], idx: int64[n], axis) -> f32[...], as a compiled model.
aotc::Model gatherModel(int64_t axis, std::vector<Dim> dataDims = {3, 4}) {
  ModelBuilder mb("gather");
  mb.input("w", onnx::TensorProto::FLOAT, dataDims);
  mb.input("idx", onnx::TensorProto::INT64, {"n"});
  std::vector<Dim> outDims = dataDims;
  outDims[axis] = Dim("n");
  ModelBuilder::attrInt(mb.node("Gather", {"w", "idx"}, {"y"}, "pick"), "axis",
                        axis);
  mb.output("y", onnx::TensorProto::FLOAT, outDims);
  Compiled c = compileModel(mb.bytes());
  EXPECT_EQ(c.exitCode, 0) << c.output;
  return loadModel(c.soPath);
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) + 0.5f;
  return v;
}

TEST(IndexCheck, GatherWrapsNegativeIndices) {
  aotc::Model m = gatherModel(0);
  std::vector<float> w = iota(12);
  auto out =
      m.run({aotc::HostTensor::fromVector({3, 4}, w),
             aotc::HostTensor::fromVector<int64_t>({4}, {0, 2, -1, -3})});
  std::vector<float> y = out[0].toVector<float>();
  const int rows[4] = {0, 2, 2, 0};
  ASSERT_EQ(y.size(), 16u);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(y[i * 4 + j], w[rows[i] * 4 + j]) << i << "," << j;
}

TEST(IndexCheck, OutOfRangeIndexIsAnErrorNamingTheNode) {
  aotc::Model m = gatherModel(0);
  std::vector<float> w = iota(12);
  for (int64_t bad : {int64_t{7}, int64_t{3}, int64_t{-4}, int64_t{100000000},
                      INT64_MIN, INT64_MAX}) {
    EXPECT_TRUE(refused(
        [&] {
          m.run({aotc::HostTensor::fromVector({3, 4}, w),
                 aotc::HostTensor::fromVector<int64_t>({3}, {0, bad, 1})});
        },
        {"node 'pick' (Gather)",
         "index " + std::to_string(bad) + " is out of range",
         "axis 0 of size 3"},
        AOTC_ERROR_INVALID_ARGUMENT))
        << "index " << bad;
    // The container is still usable.
    auto out = m.run({aotc::HostTensor::fromVector({3, 4}, w),
                      aotc::HostTensor::fromVector<int64_t>({1}, {1})});
    EXPECT_EQ(out[0].toVector<float>(),
              (std::vector<float>{w[4], w[5], w[6], w[7]}));
  }
}

TEST(IndexCheck, InnerAxisAndEmptyAxis) {
  aotc::Model m = gatherModel(1);
  std::vector<float> w = iota(12);
  auto out = m.run({aotc::HostTensor::fromVector({3, 4}, w),
                    aotc::HostTensor::fromVector<int64_t>({2}, {3, -4})});
  EXPECT_EQ(out[0].toVector<float>(),
            (std::vector<float>{w[3], w[0], w[7], w[4], w[11], w[8]}));
  EXPECT_THROW(m.run({aotc::HostTensor::fromVector({3, 4}, w),
                      aotc::HostTensor::fromVector<int64_t>({1}, {4})}),
               aotc::Error);

  // A symbolic axis that may be empty: every index into it is an error, and
  // nothing is read from the empty buffer.
  aotc::Model e = gatherModel(0, {"rows", 4});
  EXPECT_THROW(e.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {0, 4}),
                      aotc::HostTensor::fromVector<int64_t>({2}, {0, 0})}),
               aotc::Error);
  auto none = e.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {0, 4}),
                     aotc::HostTensor(AOTC_DTYPE_INT64, {0})});
  EXPECT_EQ(none[0].shape(), (std::vector<int64_t>{0, 4}));
  auto two = e.run({aotc::HostTensor::fromVector({2, 4}, iota(8)),
                    aotc::HostTensor::fromVector<int64_t>({1}, {-2})});
  EXPECT_EQ(two[0].toVector<float>(),
            (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));
}

TEST(IndexCheck, Int32IndicesAndConstantIndices) {
  ModelBuilder mb("g32");
  mb.input("w", onnx::TensorProto::FLOAT, {3, 4});
  mb.input("idx", onnx::TensorProto::INT32, {2});
  mb.node("Gather", {"w", "idx"}, {"y"}, "g32");
  mb.output("y", onnx::TensorProto::FLOAT, {2, 4});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> w = iota(12);
  auto out = m.run({aotc::HostTensor::fromVector({3, 4}, w),
                    aotc::HostTensor::fromVector<int32_t>({2}, {-1, 1})});
  EXPECT_EQ(
      out[0].toVector<float>(),
      (std::vector<float>{w[8], w[9], w[10], w[11], w[4], w[5], w[6], w[7]}));
  EXPECT_THROW(
      m.run({aotc::HostTensor::fromVector({3, 4}, w),
             aotc::HostTensor::fromVector<int32_t>({2}, {INT32_MIN, 0})}),
      aotc::Error);

  // Indices in an initializer are checked the same way.
  ModelBuilder cb("gconst");
  cb.input("w", onnx::TensorProto::FLOAT, {3, 4});
  cb.initializerI64("idx", {2}, {2, 5});
  cb.node("Gather", {"w", "idx"}, {"y"}, "gc");
  cb.output("y", onnx::TensorProto::FLOAT, {2, 4});
  c = compileModel(cb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model k = loadModel(c.soPath);
  EXPECT_TRUE(refused(
      [&] {
        k.run({aotc::HostTensor::fromVector({3, 4}, w)});
      },
      {"index 5 is out of range"}))
      << "constant index 5";
}

} // namespace

namespace {

TEST(IndexCheck, GatherNDRowsWrapAndOutOfRangeIsAnError) {
  // GatherND(w: f32[3, 4, 2], idx: int64[n, 2]) -> f32[n, 2]: each row of
  // idx picks w[i, j, :]; negative entries count from the end.
  ModelBuilder mb("gathernd");
  mb.input("w", onnx::TensorProto::FLOAT, {3, 4, 2});
  mb.input("idx", onnx::TensorProto::INT64, {"n", 2});
  mb.node("GatherND", {"w", "idx"}, {"y"}, "pick_nd");
  mb.output("y", onnx::TensorProto::FLOAT, {"n", 2});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> w = iota(24);
  auto out = m.run({aotc::HostTensor::fromVector({3, 4, 2}, w),
                    aotc::HostTensor::fromVector<int64_t>(
                        {3, 2}, {0, 0, 2, 3, -1, -4})});
  std::vector<float> y = out[0].toVector<float>();
  const int rows[3][2] = {{0, 0}, {2, 3}, {2, 0}};
  ASSERT_EQ(y.size(), 6u);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 2; ++k)
      EXPECT_EQ(y[r * 2 + k], w[(rows[r][0] * 4 + rows[r][1]) * 2 + k])
          << r << "," << k;
  for (int64_t bad : {int64_t{4}, int64_t{-5}, INT64_MIN}) {
    EXPECT_TRUE(refused(
        [&] {
          m.run({aotc::HostTensor::fromVector({3, 4, 2}, w),
                 aotc::HostTensor::fromVector<int64_t>({1, 2}, {1, bad})});
        },
        {"node 'pick_nd' (GatherND)",
         "index " + std::to_string(bad) +
             " is out of range for data dim 1 of size 4"}))
        << "index " << bad;
  }
}

TEST(IndexCheck, GatherElementsOverSymbolicDimsChecksThemAtRunTime) {
  // GatherElements(w: f32[n, m], idx: int64[p, q], axis 0) -> f32[p, q]:
  // out[i, j] = w[idx[i, j], j], so q may not exceed m. With symbolic dims
  // that cannot be proven at compile time (it was refused, fuzz seed
  // 54051): the run checks it, naming the node, and reads nothing outside
  // w where it holds.
  ModelBuilder mb("gather_elements");
  mb.input("w", onnx::TensorProto::FLOAT, {"n", "m"});
  mb.input("idx", onnx::TensorProto::INT64, {"p", "q"});
  ModelBuilder::attrInt(
      mb.node("GatherElements", {"w", "idx"}, {"y"}, "pick_el"), "axis", 0);
  mb.output("y", onnx::TensorProto::FLOAT, {"p", "q"});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  std::vector<float> w = iota(12); // 3 x 4
  // q = 3 of m = 4, q = m, and p above n (the axis: any count of rows).
  for (int64_t q : {3, 4}) {
    const int64_t p = 5;
    std::vector<int64_t> idx(p * q);
    for (int64_t i = 0; i < p * q; ++i)
      idx[i] = (i * 7) % 6 - 3; // -3..2, negatives from the end
    auto out = m.run({aotc::HostTensor::fromVector({3, 4}, w),
                      aotc::HostTensor::fromVector<int64_t>({p, q}, idx)});
    std::vector<float> y = out[0].toVector<float>();
    ASSERT_EQ(y.size(), static_cast<size_t>(p * q));
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < q; ++j) {
        int64_t r = idx[i * q + j] < 0 ? idx[i * q + j] + 3 : idx[i * q + j];
        EXPECT_EQ(y[i * q + j], w[r * 4 + j]) << q << ": " << i << "," << j;
      }
  }
  EXPECT_TRUE(refused(
      [&] {
        m.run({aotc::HostTensor::fromVector({3, 4}, w),
               aotc::HostTensor::fromVector<int64_t>({1, 5}, {0, 1, 2, 0, 1})});
      },
      {"node 'pick_el' (GatherElements): dim 1 of",
       "must not exceed the data's"}))
      << "indices wider than the data";
  // An index out of range along the axis is still an error, and the
  // container stays usable.
  EXPECT_THROW(m.run({aotc::HostTensor::fromVector({3, 4}, w),
                      aotc::HostTensor::fromVector<int64_t>({1, 2}, {0, 3})}),
               aotc::Error);
  auto out = m.run({aotc::HostTensor::fromVector({3, 4}, w),
                    aotc::HostTensor::fromVector<int64_t>({1, 2}, {2, -1})});
  EXPECT_EQ(out[0].toVector<float>(), (std::vector<float>{w[8], w[9]}));
}

} // namespace
