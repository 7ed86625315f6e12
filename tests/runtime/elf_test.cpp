/// \file
/// Checks the fixture model .so files the way the compiler's output must
/// look: no dependencies beyond OpenCL and the C/C++ system libraries, and
/// only aotc_* symbols exported.
#include "test_util.h"

#include <gtest/gtest.h>

#include <set>

namespace aotc::test {
namespace {

const char *const kModels[] = {AOTC_TEST_MODEL_A, AOTC_TEST_MODEL_B};

TEST(Elf, DependsOnlyOnOpenClAndSystemLibraries) {
  std::set<std::string> allowed = {"libOpenCL.so.1",  "libstdc++.so.6",
                                   "libm.so.6",       "libgcc_s.so.1",
                                   "libc.so.6",       "ld-linux-x86-64.so.2",
                                   "libpthread.so.0", "libdl.so.2"};
  for (const char *model : kModels) {
    SCOPED_TRACE(model);
    int exitCode = -1;
    std::string output =
        capture(std::string("readelf -d '") + model + "'", &exitCode);
    ASSERT_EQ(exitCode, 0) << output;
    std::set<std::string> needed;
    for (const std::string &line : lines(output)) {
      if (line.find("(NEEDED)") == std::string::npos)
        continue;
      size_t open = line.find('[');
      size_t close = line.find(']', open);
      ASSERT_NE(open, std::string::npos) << line;
      needed.insert(line.substr(open + 1, close - open - 1));
    }
    EXPECT_EQ(needed.count("libOpenCL.so.1"), 1u);
    for (const std::string &lib : needed) {
      bool sanitizer =
          AOTC_TEST_SANITIZED && (lib.find("asan") != std::string::npos ||
                                  lib.find("ubsan") != std::string::npos ||
                                  lib.find("tsan") != std::string::npos);
      EXPECT_TRUE(allowed.count(lib) || sanitizer)
          << "unexpected dependency " << lib;
    }
  }
}

TEST(Elf, ExportsOnlyTheCAbi) {
  for (const char *model : kModels) {
    SCOPED_TRACE(model);
    int exitCode = -1;
    std::string output = capture(
        std::string("nm -D --defined-only --format=posix '") + model + "'",
        &exitCode);
    ASSERT_EQ(exitCode, 0) << output;
    std::set<std::string> symbols;
    for (const std::string &line : lines(output)) {
      std::string name = line.substr(0, line.find(' '));
      if (!name.empty())
        symbols.insert(name);
    }
    for (const std::string &name : symbols)
      EXPECT_EQ(name.rfind("aotc_", 0), 0u) << "exported: " << name;
    EXPECT_EQ(symbols.count("aotc_container_run"), 1u);
    EXPECT_EQ(symbols.count("aotc_abi_version"), 1u);
    EXPECT_EQ(symbols.count("aotc_last_error"), 1u);
    EXPECT_EQ(symbols.count("aotc_container_arena_bytes"), 1u);
    EXPECT_EQ(symbols.count("aotc_container_reserve"), 1u);
    EXPECT_EQ(symbols.count("aotc_rt_launch"), 0u)
        << "the wrapper-runtime contract must stay hidden";
  }
}

} // namespace
} // namespace aotc::test
