// DeviceProfile and KernelConfig JSON (compiler/schedule/device_profile.h):
// round trips, defaults for fields left out, and an error naming the field
// for every kind of bad input.
#include "compiler/schedule/device_profile.h"

#include <gtest/gtest.h>

namespace aotc {
namespace {

TEST(DeviceProfile, BuiltinsRoundTripThroughJson) {
  for (const char *name :
       {"generic-avx2", "generic-avx512", "zen5-avx512", "generic-gpu"}) {
    auto p = builtinDeviceProfile(name);
    ASSERT_TRUE(p) << p.status().message();
    EXPECT_EQ(p->name, name);
    auto back = parseDeviceProfile(deviceProfileJson(*p, true));
    ASSERT_TRUE(back) << back.status().message();
    EXPECT_EQ(back->name, p->name);
    EXPECT_EQ(back->family, p->family);
    EXPECT_EQ(back->vectorLanes, p->vectorLanes);
    EXPECT_EQ(back->vectorRegisters, p->vectorRegisters);
    EXPECT_EQ(back->accumulatorVectors, p->accumulatorVectors);
    EXPECT_EQ(back->convAccumulatorVectors, p->convAccumulatorVectors);
    EXPECT_EQ(back->longAccumulatorVectors, p->longAccumulatorVectors);
    EXPECT_EQ(back->tileColumns, p->tileColumns);
    EXPECT_EQ(back->cacheBytes, p->cacheBytes);
    EXPECT_EQ(back->rowPanels, p->rowPanels);
    EXPECT_EQ(back->winogradMinChannels, p->winogradMinChannels);
    EXPECT_EQ(back->shortConvAccumulatorVectors,
              p->shortConvAccumulatorVectors);
    EXPECT_EQ(p->cacheBytes, 0); // built-ins do not know the cache
  }
  // Zen 5 reads large GEMMs' A in place; the others through row panels.
  EXPECT_FALSE(builtinDeviceProfile("zen5-avx512")->rowPanels);
  EXPECT_TRUE(builtinDeviceProfile("generic-avx512")->rowPanels);
  EXPECT_TRUE(builtinDeviceProfile("generic-avx2")->rowPanels);
  // Zen 5 keeps 64-channel 3 x 3 convolutions direct; the others' 0 is 64.
  EXPECT_EQ(builtinDeviceProfile("zen5-avx512")->winogradMinChannels, 128);
  EXPECT_EQ(builtinDeviceProfile("generic-avx512")->winogradMinChannels, 0);
  EXPECT_EQ(builtinDeviceProfile("zen5-avx512")->shortConvAccumulatorVectors,
            8);
  EXPECT_EQ(builtinDeviceProfile("generic-avx512")->shortConvAccumulatorVectors,
            0);
  EXPECT_EQ(builtinDeviceProfile("generic-avx512")->accumulatorVectors, 0);
  EXPECT_EQ(builtinDeviceProfile("zen5-avx512")->accumulatorVectors, 16);
  EXPECT_EQ(builtinDeviceProfile("zen5-avx512")->convAccumulatorVectors, 28);
  EXPECT_EQ(builtinDeviceProfile("generic-avx512")->convAccumulatorVectors, 28);
  EXPECT_EQ(builtinDeviceProfile("generic-avx512")->longAccumulatorVectors, 24);
  EXPECT_EQ(builtinDeviceProfile("generic-avx512")->tileColumns, 64);
  EXPECT_EQ(builtinDeviceProfile("zen5-avx512")->longAccumulatorVectors, 0);
  EXPECT_EQ(builtinDeviceProfile("zen5-avx512")->tileColumns, 0);
  EXPECT_EQ(builtinDeviceProfile("generic-avx2")->tileColumns, 0);
  EXPECT_EQ(builtinDeviceProfile("zen5-avx512")->vectorLanes, 16);
  EXPECT_EQ(builtinDeviceProfile("generic-avx512")->vectorLanes, 16);
  EXPECT_EQ(builtinDeviceProfile("generic-gpu")->vectorLanes, 1);
  auto unknown = builtinDeviceProfile("avx3");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.status().message().find("avx3"), std::string::npos);
}

TEST(DeviceProfile, FieldsLeftOutKeepDefaults) {
  auto p = parseDeviceProfile(R"({"name": "my-cpu", "vector_lanes": 16,
                                  "compute_units": 64})");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ(p->cacheBytes, 0);
  EXPECT_EQ(p->name, "my-cpu");
  EXPECT_EQ(p->family, "cpu");
  EXPECT_EQ(p->vectorLanes, 16);
  EXPECT_EQ(p->vectorRegisters, 16);
  EXPECT_EQ(p->computeUnits, 64);
  EXPECT_TRUE(p->rowPanels);
}

TEST(DeviceProfile, RowPanelsRoundTrip) {
  auto p = parseDeviceProfile(R"({"vector_lanes": 16, "row_panels": false})");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_FALSE(p->rowPanels);
  auto back = parseDeviceProfile(deviceProfileJson(*p));
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_FALSE(back->rowPanels);
}

TEST(DeviceProfile, RowPanelsOnlyBelowA48KiBL1) {
  EXPECT_TRUE(rowPanelsForL1(32 << 10));  // Zen 3: the panels gained
  EXPECT_FALSE(rowPanelsForL1(48 << 10)); // Zen 5, the AVX-512 Xeon VM
  EXPECT_FALSE(rowPanelsForL1(64 << 10));
  EXPECT_TRUE(rowPanelsForL1(0)); // unknown: the profile's own choice
}

TEST(DeviceProfile, CacheSizeRoundTrips) {
  auto p = parseDeviceProfile(R"({"vector_lanes": 16, "cache_bytes": 503316480})");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ(p->cacheBytes, 503316480);
  auto back = parseDeviceProfile(deviceProfileJson(*p));
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->cacheBytes, 503316480);
}

TEST(DeviceProfile, BadInputNamesTheField) {
  struct Case {
    const char *json, *expect;
  } cases[] = {
      {"[1, 2]", "expected a JSON object"},
      {"{\"vector_lanes\": 8", "not JSON"},
      {"{\"vector_lane\": 8}", "unknown field 'vector_lane'"},
      {"{\"vector_lanes\": \"8\"}", "'vector_lanes' must be an integer"},
      {"{\"vector_lanes\": 12}", "'vector_lanes' is 12"},
      {"{\"vector_lanes\": 32}", "'vector_lanes' is 32"},
      {"{\"family\": \"fpga\"}", "'family' must be"},
      {"{\"compute_units\": -1}", "'compute_units' is -1"},
      {"{\"accumulator_vectors\": 65}", "'accumulator_vectors' is 65"},
      {"{\"conv_accumulator_vectors\": -2}",
       "'conv_accumulator_vectors' is -2"},
      {"{\"long_accumulator_vectors\": 65}",
       "'long_accumulator_vectors' is 65"},
      {"{\"tile_columns\": 48}", "'tile_columns' is 48"},
      {"{\"tile_columns\": 128}", "'tile_columns' is 128"},
      {"{\"cache_bytes\": -1}", "'cache_bytes' is -1"},
      {"{\"cache_bytes\": 33554432.5}", "'cache_bytes' must be an integer"},
  };
  for (const Case &c : cases) {
    auto p = parseDeviceProfile(c.json);
    ASSERT_FALSE(p) << c.json;
    EXPECT_NE(p.status().message().find(c.expect), std::string::npos)
        << c.json << ": " << p.status().message();
  }
}

TEST(KernelConfigs, RoundTrip) {
  KernelConfigs in;
  in["k0_y"] = KernelConfig{"contraction", 0, 1, 6, 16, 8};
  in["k1_z"] = KernelConfig{"pointwise", -1, 2, 1, 16, 0};
  in["k2_w"] = KernelConfig{"reduction", -1, -1, 1, 1, 0};
  auto out = parseKernelConfigs(kernelConfigsJson(in, true));
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->size(), 3u);
  const KernelConfig &c = out->at("k0_y");
  EXPECT_EQ(c.templ, "contraction");
  EXPECT_EQ(c.m, 0);
  EXPECT_EQ(c.n, 1);
  EXPECT_EQ(c.tm, 6);
  EXPECT_EQ(c.tn, 16);
  EXPECT_EQ(c.lanes, 8);
  EXPECT_EQ(out->at("k1_z").n, 2);
  EXPECT_EQ(out->at("k2_w").n, -1);
  auto one = parseKernelConfig(kernelConfigJson(in["k0_y"]));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->tn, 16);
  // An empty file section and a template left out are accepted.
  EXPECT_TRUE(parseKernelConfigs("{}"));
  auto noTemplate = parseKernelConfigs(R"({"kernels": {"k": {"n": 0, "tn": 4}}})");
  ASSERT_TRUE(noTemplate);
  EXPECT_EQ(noTemplate->at("k").templ, "");
}

TEST(KernelConfigs, BadInputNamesKernelAndField) {
  struct Case {
    const char *json, *expect;
  } cases[] = {
      {R"({"kernel": {}})", "unknown field 'kernel'"},
      {R"({"kernels": []})", "'kernels' must be an object"},
      {R"({"kernels": {"k3": 4}})", "kernel 'k3': expected an object"},
      {R"({"kernels": {"k3": {"tile": 4}}})", "kernel 'k3': unknown field 'tile'"},
      {R"({"kernels": {"k3": {"template": "gemm"}}})", "'template' must be"},
      {R"({"kernels": {"k3": {"n": 0, "tn": 0}}})", "'tn' is 0"},
      {R"({"kernels": {"k3": {"n": 0, "tn": 8, "lanes": 2}}})", "'lanes' is 2"},
      {R"({"kernels": {"k3": {"m": 1, "n": 1, "tm": 2, "tn": 8}}})",
       "'m' and 'n' are both dimension 1"},
      {R"({"kernels": {"k3": {"n": 1, "tm": 2, "tn": 8}}})",
       "'tm' is 2 without a dimension 'm'"},
      {R"({"kernels": {"k3": {"tn": 8}}})", "untiled kernel"},
      {R"({"kernels": {"k3": {"m": 0, "n": 1, "tm": 64, "tn": 64}}})",
       "more than 512"},
      {R"({"kernels": {"k3": {"n": 1.5}}})", "'n' must be an integer"},
  };
  for (const Case &c : cases) {
    auto p = parseKernelConfigs(c.json);
    ASSERT_FALSE(p) << c.json;
    EXPECT_NE(p.status().message().find(c.expect), std::string::npos)
        << c.json << ": " << p.status().message();
  }
}

} // namespace
} // namespace aotc
