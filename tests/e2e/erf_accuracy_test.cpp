// Erf on float32 as the device computes it, against double-precision erf:
// aotc's own aotc_erf on CPU profiles (codegen/opencl/cl_math.h) and the
// driver's builtin under a GPU profile (run here on PoCL too). Every float
// of a dense grid over [-6, 6] (a vector body and a scalar tail), values
// spread geometrically down to the subnormals, and the special values.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace aotc::e2e;

namespace {

std::vector<float> inputs() {
  std::vector<float> x;
  // Every 97th float bit pattern from 0 to 6 (about 11 million patterns, so
  // about 112,000 values), each with both signs.
  uint32_t six;
  float s = 6.0f;
  std::memcpy(&six, &s, 4);
  for (uint32_t b = 0; b <= six; b += 97 * 101) {
    float v;
    std::memcpy(&v, &b, 4);
    x.push_back(v);
    x.push_back(-v);
  }
  // Around the branch points (0.921875, 4) and where erf rounds to 1.
  for (float c : {0.921875f, 4.0f, 3.9f, 0.5f, 1.0f, 2.0f})
    for (int k = -40; k <= 40; ++k) {
      float v = c;
      for (int i = 0; i < std::abs(k); ++i)
        v = std::nextafter(v, k < 0 ? 0.0f : 10.0f);
      x.push_back(v);
      x.push_back(-v);
    }
  for (float v = 1e-3f; v > 1e-44f; v *= 0.37f) {
    x.push_back(v);
    x.push_back(-v);
  }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 6.5f, -7.0f, 100.0f,
                  -3.4e38f, 3.4e38f, std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min()})
    x.push_back(v);
  x.push_back(0.25f); // an odd count: the last vector is partial
  return x;
}

/// The spacing of floats at the float nearest \p r (the smaller of the two
/// sides, so that a value just below 1 is measured in ulps below 1).
double ulpAt(double r) {
  float v = std::fabs(static_cast<float>(r));
  if (v == 0.0f)
    return std::numeric_limits<float>::denorm_min();
  float up = std::nextafter(v, INFINITY), down = std::nextafter(v, 0.0f);
  return std::min<double>(up - v, v - down);
}

/// The largest error of the device's Erf over inputs(), in ulps, compiled
/// with \p flags; every special value checked exactly.
double maxUlps(const std::string &flags) {
  std::vector<float> x = inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  ModelBuilder mb("erf_accuracy");
  mb.input("x", onnx::TensorProto::FLOAT, {n});
  mb.node("Erf", {"x"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {n});
  Compiled comp = compileModel(mb.bytes(), flags);
  EXPECT_EQ(comp.exitCode, 0) << comp.output;
  if (comp.exitCode != 0)
    return INFINITY;
  aotc::Model m = loadModel(comp.soPath);
  std::vector<float> y =
      m.run({aotc::HostTensor::fromVector({n}, x)})[0].toVector<float>();
  EXPECT_EQ(y.size(), x.size());
  double worst = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    SCOPED_TRACE("x = " + std::to_string(x[i]));
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    if (std::isinf(x[i]) || std::fabs(x[i]) >= 4.0f) {
      EXPECT_EQ(y[i], x[i] > 0 ? 1.0f : -1.0f);
      continue;
    }
    if (x[i] == 0.0f) {
      EXPECT_EQ(y[i], 0.0f);
      EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i]));
      continue;
    }
    const double want = std::erf(static_cast<double>(x[i]));
    // Below FLT_MIN a device may flush (OpenCL 1.2 makes single-precision
    // subnormals optional); where it does not, the result is checked.
    if (std::fabs(x[i]) < std::numeric_limits<float>::min() && y[i] == 0.0f)
      continue;
    EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i]));
    worst = std::max(worst, std::fabs(y[i] - want) / ulpAt(want));
  }
  return worst;
}

// aotc_erf measured 1.04 ulp at most (cl_math.h); 16 lanes, then 8. That
// these builds print aotc_erf and the GPU one the builtin is the lit test
// own_erf.
TEST(ErfAccuracy, OwnErfOnAvx512Profiles) {
  EXPECT_LE(maxUlps("--device-profile zen5-avx512"), 2.0);
}

TEST(ErfAccuracy, OwnErfOnAvx2Profiles) {
  EXPECT_LE(maxUlps("--device-profile generic-avx2"), 2.0);
}

TEST(ErfAccuracy, BuiltinErfOnGpuProfiles) {
  EXPECT_LE(maxUlps("--device-profile generic-gpu"), 2.0);
}

} // namespace
