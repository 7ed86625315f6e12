/// \file
/// The small "model wrapper" the toolchain tests compile, link and load, and
/// helpers to build a probe .so from it. Shared by the gtest binary and the
/// child process that links with an empty PATH.
#pragma once

#include "codegen/toolchain/clang_compile.h"
#include "codegen/toolchain/data_object.h"
#include "codegen/toolchain/lld_link.h"

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace aotc::toolchain::testing {

/// Exports aotc_probe(x) = 3 * x + AOTC_MODEL_DESC_VERSION + blob[0] + 42,
/// where 42 is set by a static constructor (so crtbeginS/init_array work),
/// plus accessors for the two data symbols, a memcpy user (libc) and an
/// AotcModelDesc. The data symbols are hidden and must not be exported.
inline const char *probeWrapperSource() {
  return R"cpp(
#include <aotc/model_desc.h>

extern "C" {
extern const uint8_t aotc_test_blob[];
extern const uint8_t aotc_test_empty[];
}

namespace {
int initialized = 0;
struct Init {
  Init() { initialized = 42; }
};
Init init;

int scale(int x) { return 3 * x + AOTC_MODEL_DESC_VERSION; }

AotcModelDesc makeDesc() {
  AotcModelDesc desc = {};
  desc.desc_version = AOTC_MODEL_DESC_VERSION;
  desc.model_name = "probe";
  desc.constants_blob = aotc_test_blob;
  return desc;
}
const AotcModelDesc kDesc = makeDesc();
} // namespace

#define AOTC_EXPORT extern "C" __attribute__((visibility("default")))

AOTC_EXPORT int aotc_probe(int x) {
  return scale(x) + aotc_test_blob[0] + initialized;
}
AOTC_EXPORT const uint8_t *aotc_probe_blob() { return aotc_test_blob; }
AOTC_EXPORT const uint8_t *aotc_probe_empty() { return aotc_test_empty; }
AOTC_EXPORT void aotc_probe_copy(uint8_t *dst, uint64_t n) {
  __builtin_memcpy(dst, aotc_test_blob, n);
}
AOTC_EXPORT const AotcModelDesc *aotc_model_desc(void) { return &kDesc; }
)cpp";
}

/// Deterministic pseudo-random bytes.
inline std::vector<uint8_t> randomBytes(size_t size, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> bytes(size);
  for (uint8_t &b : bytes)
    b = static_cast<uint8_t>(gen());
  return bytes;
}

inline Status writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return makeError("cannot write '", path, "'");
  return Status::ok();
}

/// Builds \p dir/probe.so from probeWrapperSource() and a data object holding
/// \p blob (64-aligned, large section) and an empty symbol.
inline Status buildProbeLibrary(const std::string &dir,
                                const std::vector<uint8_t> &blob,
                                const std::string &soPath) {
  AOTC_ASSIGN_OR_RETURN(std::string wrapper,
                        compileCxxToObject(probeWrapperSource(), "probe.cpp"));
  std::vector<DataSymbol> symbols = {
      {"aotc_test_blob", blob.data(), blob.size(), 64, /*largeSection=*/true},
      {"aotc_test_empty", nullptr, 0, 64, /*largeSection=*/false}};
  AOTC_ASSIGN_OR_RETURN(std::string data, writeDataObject(symbols));
  AOTC_RETURN_IF_ERROR(writeFile(dir + "/probe.o", wrapper));
  AOTC_RETURN_IF_ERROR(writeFile(dir + "/probe_data.o", data));
  LinkOptions link;
  link.inputs = {dir + "/probe_data.o", dir + "/probe.o"};
  link.output = soPath;
  link.soname = "libprobe.so";
  return linkSharedObject(link);
}

} // namespace aotc::toolchain::testing
