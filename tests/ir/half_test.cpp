// ir/half.h against the compiler's own _Float16 conversions (IEEE binary16,
// round to nearest even), an independent implementation. GCC has _Float16 on
// x86-64 (the project's compiler); clang before 15 does not, and there the
// tests say they were skipped.
#include "ir/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace aotc {
namespace {

#ifdef __FLT16_MAX__
uint16_t bitsOf(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

_Float16 fromBits(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return h;
}

void expectSameHalf(float f) {
  uint16_t got = floatToHalf(f), want = bitsOf(static_cast<_Float16>(f));
  if (std::isnan(f)) {
    EXPECT_TRUE(std::isnan(halfToFloat(got))) << f;
    return;
  }
  EXPECT_EQ(got, want) << "x = " << f;
}

TEST(Half, EveryHalfReadsBackAsTheCompilerReadsIt) {
  for (uint32_t b = 0; b < 65536; ++b) {
    float want = static_cast<float>(fromBits(static_cast<uint16_t>(b)));
    float got = halfToFloat(static_cast<uint16_t>(b));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << b;
      continue;
    }
    ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << "bits " << b;
    // and converts back to itself
    EXPECT_EQ(floatToHalf(got), b) << "bits " << b;
  }
}

TEST(Half, MidpointsAndTheirNeighboursRoundLikeTheCompiler) {
  for (uint32_t b = 0; b < 0x7c00; ++b) { // positive finite halves
    float lo = halfToFloat(static_cast<uint16_t>(b));
    float hi = halfToFloat(static_cast<uint16_t>(b + 1));
    float mid = (lo + hi) / 2; // exact in float
    for (float f :
         {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      expectSameHalf(f);
      expectSameHalf(-f);
    }
  }
}

TEST(Half, LimitsAndRandomFloats) {
  for (float f :
       {0.0f, -0.0f, 65504.0f, 65519.0f, 65519.996f, 65520.0f, 65536.0f, 1e5f,
        3.4e38f, 5.9604645e-8f, 2.9802322e-8f, 4.4703484e-8f, 1.4901161e-8f,
        6.1035156e-5f, 1e-30f, INFINITY, -INFINITY, NAN})
    expectSameHalf(f), expectSameHalf(-f);
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    expectSameHalf(f);
  }
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 1.0f / 4096)), 1.0f);
}
#else
TEST(Half, NeedsACompilerWithFloat16) {
  GTEST_SKIP() << "this compiler has no _Float16 to check ir/half.h against";
}
#endif

} // namespace
} // namespace aotc
