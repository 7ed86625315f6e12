/// \file
/// Tests of the in-process toolchain: clang compile, data objects, lld link,
/// and the .so they make together (loaded with dlopen).

#include "codegen/toolchain/clang_compile.h"
#include "codegen/toolchain/data_object.h"
#include "codegen/toolchain/lld_link.h"
#include "codegen/toolchain/toolchain_info.h"
#include "tests/toolchain/elf_reader.h"
#include "tests/toolchain/probe_source.h"

#include <aotc/model_desc.h>
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include <unistd.h>

#ifndef AOTC_LINK_PROBE_PATH
#error "AOTC_LINK_PROBE_PATH must name the aotc_toolchain_link_probe binary"
#endif
#ifndef AOTC_READELF_PATH
#define AOTC_READELF_PATH ""
#endif

namespace fs = std::filesystem;

namespace aotc::toolchain {
namespace {

using testing::buildProbeLibrary;
using testing::randomBytes;
using testing::readDynamic;
using testing::readFileBytes;
using testing::readObjectSymbols;
using testing::writeFile;

/// What a model .so may depend on (DESIGN.md section 3).
const std::set<std::string> kAllowedNeeded = {
    "libOpenCL.so.1", "libstdc++.so.6", "libm.so.6",
    "libgcc_s.so.1",  "libc.so.6",      "ld-linux-x86-64.so.2"};

class ToolchainTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "aotc_toolchain_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (void *handle : handles_)
      dlclose(handle);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  /// Writes \p bytes to dir/name and returns the path.
  std::string put(const std::string &name, const std::string &bytes) {
    std::string file = path(name);
    EXPECT_TRUE(writeFile(file, bytes).isOk());
    return file;
  }

  std::string compileOk(const std::string &source, const std::string &name,
                        const CompileOptions &opts = {}) {
    Expected<std::string> object = compileCxxToObject(source, name, opts);
    EXPECT_TRUE(object.isOk()) << object.status().message();
    return object.isOk() ? *object : std::string();
  }

  void *load(const std::string &so) {
    void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle, nullptr) << dlerror();
    if (handle)
      handles_.push_back(handle);
    return handle;
  }

  std::string dir_;
  std::vector<void *> handles_;
};

std::set<std::string> neededOf(const std::string &so) {
  testing::DynamicInfo info = readDynamic(readFileBytes(so));
  EXPECT_TRUE(info.valid) << so << " has no dynamic section";
  return std::set<std::string>(info.needed.begin(), info.needed.end());
}

/// DT_NEEDED as readelf -d prints it, when readelf was found at configure
/// time; a cross-check of the test's own ELF reader.
bool readelfNeeded(const std::string &so, std::set<std::string> &needed) {
  std::string readelf = AOTC_READELF_PATH;
  if (readelf.empty() || !fs::exists(readelf))
    return false;
  std::string command = "'" + readelf + "' -d '" + so + "'";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return false;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string text = line;
    if (text.find("(NEEDED)") == std::string::npos)
      continue;
    size_t open = text.find('[');
    size_t close = text.find(']', open);
    if (open != std::string::npos && close != std::string::npos)
      needed.insert(text.substr(open + 1, close - open - 1));
  }
  return pclose(pipe) == 0;
}

void expectOnlyAllowedNeeded(const std::set<std::string> &needed) {
  for (const std::string &lib : needed)
    EXPECT_TRUE(kAllowedNeeded.count(lib)) << "unexpected DT_NEEDED " << lib;
}

// ---------------------------------------------------------------------------
// The whole pipeline.

TEST_F(ToolchainTest, CompileDataLinkAndLoad) {
  std::vector<uint8_t> blob = randomBytes(100003, 1);
  std::string so = path("probe.so");
  Status status = buildProbeLibrary(dir_, blob, so);
  ASSERT_TRUE(status.isOk()) << status.message();

  void *handle = load(so);
  ASSERT_NE(handle, nullptr);
  auto probe = reinterpret_cast<int (*)(int)>(dlsym(handle, "aotc_probe"));
  auto blobPtr =
      reinterpret_cast<const uint8_t *(*)()>(dlsym(handle, "aotc_probe_blob"));
  auto emptyPtr =
      reinterpret_cast<const uint8_t *(*)()>(dlsym(handle, "aotc_probe_empty"));
  auto copy = reinterpret_cast<void (*)(uint8_t *, uint64_t)>(
      dlsym(handle, "aotc_probe_copy"));
  auto desc = reinterpret_cast<const AotcModelDesc *(*)()>(
      dlsym(handle, "aotc_model_desc"));
  ASSERT_TRUE(probe && blobPtr && emptyPtr && copy && desc);

  // 3 * x + AOTC_MODEL_DESC_VERSION + blob[0] + 42 (static constructor ran).
  EXPECT_EQ(probe(20), 3 * 20 + AOTC_MODEL_DESC_VERSION + blob[0] + 42);
  const uint8_t *data = blobPtr();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  EXPECT_TRUE(std::equal(blob.begin(), blob.end(), data));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(emptyPtr()) % 64, 0u);
  std::vector<uint8_t> copied(blob.size());
  copy(copied.data(), copied.size());
  EXPECT_EQ(copied, blob);
  EXPECT_EQ(desc()->desc_version, uint32_t(AOTC_MODEL_DESC_VERSION));
  EXPECT_EQ(desc()->constants_blob, data);

  // Hidden data symbols are not exported.
  EXPECT_EQ(dlsym(handle, "aotc_test_blob"), nullptr);
  EXPECT_EQ(dlsym(handle, "aotc_test_empty"), nullptr);

  testing::DynamicInfo dynamic = readDynamic(readFileBytes(so));
  EXPECT_EQ(dynamic.soname, "libprobe.so");
  std::set<std::string> needed = neededOf(so);
  expectOnlyAllowedNeeded(needed);
  // memcpy comes from libc; OpenCL and libstdc++ are unused (--as-needed).
  EXPECT_TRUE(needed.count("libc.so.6"));
  EXPECT_FALSE(needed.count("libOpenCL.so.1"));
  EXPECT_FALSE(needed.count("libstdc++.so.6"));
  std::set<std::string> fromReadelf;
  if (readelfNeeded(so, fromReadelf)) {
    EXPECT_EQ(fromReadelf, needed);
  }
}

TEST_F(ToolchainTest, UsedLibrariesAreRecorded) {
  // Calls into libOpenCL and libstdc++ (operator new/delete).
  const char *source = R"cpp(
#include <aotc/model_desc.h>
extern "C" int32_t clGetPlatformIDs(uint32_t, void **, uint32_t *);
void *operator new(decltype(sizeof(0)));
void operator delete(void *, decltype(sizeof(0))) noexcept;
extern "C" __attribute__((visibility("default"))) int aotc_count_platforms() {
  uint32_t count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != 0)
    return -1;
  return (int)count;
}
extern "C" __attribute__((visibility("default"))) int aotc_heap(int x) {
  int *p = new int(x);
  int y = *p + 1;
  delete p;
  return y;
}
)cpp";
  std::string object = compileOk(source, "uses_libs.cpp");
  LinkOptions link;
  link.inputs = {put("uses_libs.o", object)};
  link.output = path("uses_libs.so");
  Status status = linkSharedObject(link);
  ASSERT_TRUE(status.isOk()) << status.message();

  std::set<std::string> needed = neededOf(link.output);
  expectOnlyAllowedNeeded(needed);
  EXPECT_TRUE(needed.count("libOpenCL.so.1"));
  EXPECT_TRUE(needed.count("libstdc++.so.6"));
  EXPECT_EQ(readDynamic(readFileBytes(link.output)).soname, "uses_libs.so");

  void *handle = load(link.output);
  ASSERT_NE(handle, nullptr);
  auto heap = reinterpret_cast<int (*)(int)>(dlsym(handle, "aotc_heap"));
  ASSERT_NE(heap, nullptr);
  EXPECT_EQ(heap(41), 42);
}

TEST_F(ToolchainTest, LinkingWorksWithAnEmptyPath) {
  std::string probe = AOTC_LINK_PROBE_PATH;
  std::string childDir = path("child");
  fs::create_directories(childDir);
  std::vector<char *> argv = {probe.data(), childDir.data(), nullptr};
  std::string emptyPath = "PATH=";
  std::vector<char *> envp = {emptyPath.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, probe.c_str(), nullptr, nullptr, argv.data(),
                        envp.data()),
            0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 0) << "the probe failed; see its stderr";

  void *handle = load(childDir + "/probe.so");
  ASSERT_NE(handle, nullptr);
  auto probeFn = reinterpret_cast<int (*)(int)>(dlsym(handle, "aotc_probe"));
  ASSERT_NE(probeFn, nullptr);
  std::vector<uint8_t> blob = randomBytes(4099, 7);
  EXPECT_EQ(probeFn(1), 3 + AOTC_MODEL_DESC_VERSION + blob[0] + 42);
}

TEST_F(ToolchainTest, RepeatedLinksInOneProcess) {
  std::string object =
      compileOk("extern \"C\" __attribute__((visibility(\"default\"))) int "
                "aotc_value() { return AOTC_VALUE; }",
                "value.cpp", CompileOptions{2, {"AOTC_VALUE=7"}});
  std::string input = put("value.o", object);
  for (int i = 0; i < 4; ++i) {
    LinkOptions link;
    link.inputs = {input};
    link.output = path("value" + std::to_string(i) + ".so");
    Status status = linkSharedObject(link);
    ASSERT_TRUE(status.isOk()) << "link " << i << ": " << status.message();
    void *handle = load(link.output);
    ASSERT_NE(handle, nullptr);
    auto value = reinterpret_cast<int (*)()>(dlsym(handle, "aotc_value"));
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(value(), 7);
  }
}

// ---------------------------------------------------------------------------
// Compiling.

TEST_F(ToolchainTest, CompileErrorCarriesClangDiagnostics) {
  Expected<std::string> object =
      compileCxxToObject("#include <aotc/model_desc.h>\nint f() { return "
                         "undeclared_thing_xyz; }\n",
                         "broken_wrapper.cpp", {});
  ASSERT_FALSE(object.isOk());
  const std::string &message = object.status().message();
  EXPECT_NE(message.find("undeclared_thing_xyz"), std::string::npos) << message;
  EXPECT_NE(message.find("broken_wrapper.cpp:2:"), std::string::npos)
      << message;
  EXPECT_NE(message.find("error"), std::string::npos) << message;
  EXPECT_TRUE(std::islower(static_cast<unsigned char>(message[0]))) << message;

  // The process is unharmed: a valid compile still works.
  EXPECT_FALSE(compileOk("int g() { return 1; }", "ok.cpp").empty());
}

TEST_F(ToolchainTest, CompileIsHermetic) {
  Expected<std::string> object =
      compileCxxToObject("#include <stdio.h>\n", "includes_stdio.cpp", {});
  ASSERT_FALSE(object.isOk());
  EXPECT_NE(object.status().message().find("'stdio.h' file not found"),
            std::string::npos)
      << object.status().message();

  // Files on disk are invisible too, even by absolute path.
  std::string header = put("local.h", "int fromDisk() { return 1; }\n");
  object = compileCxxToObject("#include \"" + header + "\"\n", "abs.cpp", {});
  EXPECT_FALSE(object.isOk());
}

TEST_F(ToolchainTest, CompileFlags) {
  // Freestanding, no exceptions, no RTTI, C++17, AOTC_FREESTANDING.
  const char *source = R"cpp(
#include <aotc/model_desc.h>
#if !defined(AOTC_FREESTANDING) || __STDC_HOSTED__ != 0
#error "not freestanding"
#endif
#if defined(__cpp_exceptions) || defined(__cpp_rtti) || defined(__GXX_RTTI)
#error "exceptions or RTTI enabled"
#endif
#if __cplusplus != 201703L || !defined(__PIC__) || !defined(__OPTIMIZE__)
#error "wrong language or codegen options"
#endif
#if !defined(AOTC_FLAG) || AOTC_SIZE != 16
#error "defines not applied"
#endif
static_assert(sizeof(int64_t) == 8, "");
extern "C" int aotc_hidden_by_default() { return 1; }
)cpp";
  std::string object = compileOk(
      source, "flags.cpp", CompileOptions{2, {"AOTC_FLAG", "AOTC_SIZE=16"}});
  auto symbols = readObjectSymbols(object);
  ASSERT_TRUE(symbols.count("aotc_hidden_by_default"));
  EXPECT_EQ(symbols["aotc_hidden_by_default"].visibility, unsigned(STV_HIDDEN));

  Elf64_Ehdr header;
  ASSERT_TRUE(testing::isElf64(object, header));
  EXPECT_EQ(header.e_type, ET_REL);
  EXPECT_EQ(header.e_machine, EM_X86_64);

  for (int level = 0; level <= 3; ++level)
    EXPECT_FALSE(
        compileOk("int f(int x) { return x * 2; }", "o.cpp", {level, {}})
            .empty());
}

TEST_F(ToolchainTest, CompileRejectsBadOptions) {
  EXPECT_FALSE(compileCxxToObject("", "o.cpp", CompileOptions{4, {}}).isOk());
  Expected<std::string> object =
      compileCxxToObject("", "o.cpp", CompileOptions{2, {""}});
  ASSERT_FALSE(object.isOk());
  EXPECT_NE(object.status().message().find("define"), std::string::npos);
  EXPECT_FALSE(compileCxxToObject("", "", {}).isOk());
}

// ---------------------------------------------------------------------------
// Data objects.

TEST_F(ToolchainTest, DataObjectLayout) {
  std::vector<uint8_t> big = randomBytes(1000, 2);
  std::vector<uint8_t> small = randomBytes(5, 3);
  Expected<std::string> object =
      writeDataObject({{"aotc_big", big.data(), big.size(), 64, true},
                       {"aotc_small", small.data(), small.size(), 16, false},
                       {"aotc_none", nullptr, 0, 0, false}});
  ASSERT_TRUE(object.isOk()) << object.status().message();
  auto symbols = readObjectSymbols(*object);
  ASSERT_TRUE(symbols.count("aotc_big") && symbols.count("aotc_small") &&
              symbols.count("aotc_none"));

  const testing::ObjectSymbol &bigSym = symbols["aotc_big"];
  EXPECT_EQ(bigSym.section, ".lrodata.aotc");
  EXPECT_EQ(bigSym.sectionType, uint64_t(SHT_PROGBITS));
  EXPECT_EQ(bigSym.sectionFlags & (SHF_WRITE | SHF_EXECINSTR), 0u);
  EXPECT_GE(bigSym.sectionAlign, 64u);
  EXPECT_EQ(bigSym.value % 64, 0u);
  EXPECT_EQ(bigSym.size, big.size());
  EXPECT_EQ(bigSym.bind, unsigned(STB_GLOBAL));
  EXPECT_EQ(bigSym.visibility, unsigned(STV_HIDDEN));
  EXPECT_EQ(object->compare(bigSym.sectionFileOffset + bigSym.value, big.size(),
                            reinterpret_cast<const char *>(big.data()),
                            big.size()),
            0);

  const testing::ObjectSymbol &smallSym = symbols["aotc_small"];
  EXPECT_EQ(smallSym.section, ".rodata.aotc");
  EXPECT_EQ(smallSym.value % 16, 0u);
  EXPECT_EQ(object->compare(
                smallSym.sectionFileOffset + smallSym.value, small.size(),
                reinterpret_cast<const char *>(small.data()), small.size()),
            0);
  EXPECT_EQ(symbols["aotc_none"].size, 0u);

  // Deterministic.
  Expected<std::string> again =
      writeDataObject({{"aotc_big", big.data(), big.size(), 64, true},
                       {"aotc_small", small.data(), small.size(), 16, false},
                       {"aotc_none", nullptr, 0, 0, false}});
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(*again, *object);
}

TEST_F(ToolchainTest, DataObjectEmptyAndOnlyEmpty) {
  Expected<std::string> none = writeDataObject({});
  ASSERT_TRUE(none.isOk()) << none.status().message();
  Elf64_Ehdr header;
  EXPECT_TRUE(testing::isElf64(*none, header));
  Expected<std::string> empty =
      writeDataObject({{"aotc_empty", nullptr, 0, 64, true}});
  ASSERT_TRUE(empty.isOk()) << empty.status().message();
  EXPECT_TRUE(readObjectSymbols(*empty).count("aotc_empty"));
}

TEST_F(ToolchainTest, DataObjectRejectsBadSymbols) {
  uint8_t byte = 1;
  auto errorOf = [](const std::vector<DataSymbol> &symbols) {
    Expected<std::string> object = writeDataObject(symbols);
    return object.isOk() ? std::string() : object.status().message();
  };
  EXPECT_NE(errorOf({{"", &byte, 1, 1, false}}).find("C identifier"),
            std::string::npos);
  EXPECT_NE(errorOf({{"llvm.used", &byte, 1, 1, false}}).find("llvm.used"),
            std::string::npos);
  EXPECT_NE(errorOf({{"a", &byte, 1, 1, false}, {"a", &byte, 1, 1, false}})
                .find("twice"),
            std::string::npos);
  EXPECT_NE(errorOf({{"a", &byte, 1, 48, false}}).find("alignment"),
            std::string::npos);
  EXPECT_NE(errorOf({{"a", nullptr, 8, 8, false}}).find("no data"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// Link errors.

TEST_F(ToolchainTest, MissingLinkInputIsNamed) {
  LinkOptions link;
  link.inputs = {path("does_not_exist.o")};
  link.output = path("missing.so");
  Status status = linkSharedObject(link);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find(path("does_not_exist.o")), std::string::npos)
      << status.message();
  EXPECT_FALSE(fs::exists(link.output));
}

TEST_F(ToolchainTest, LldDiagnosticsAreCaptured) {
  // Not an object: lld reads it as a linker script and reports a syntax error.
  LinkOptions link;
  link.inputs = {put("garbage.o", "this is not an object file\n")};
  link.output = path("garbage.so");
  Status status = linkSharedObject(link);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("garbage.o"), std::string::npos)
      << status.message();

  // An undefined symbol fails at link time (-z defs), naming the symbol.
  std::string object =
      compileOk("extern \"C\" int aotc_missing_fn(); extern \"C\" "
                "__attribute__((visibility(\"default\"))) int f() { return "
                "aotc_missing_fn(); }",
                "undef.cpp");
  link.inputs = {put("undef.o", object)};
  link.output = path("undef.so");
  status = linkSharedObject(link);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("aotc_missing_fn"), std::string::npos)
      << status.message();
  link.allowUndefined = true;
  status = linkSharedObject(link);
  EXPECT_TRUE(status.isOk()) << status.message();
}

TEST_F(ToolchainTest, CorruptObjectDoesNotKillTheProcess) {
  // An object cut after its ELF header: its section header table lies past
  // the end of the file, which lld reports through fatal() (Process::Exit).
  // Crash recovery turns that into an error, and lld stays usable.
  std::string object = compileOk("int f() { return 1; }", "whole.cpp");
  ASSERT_GT(object.size(), 64u);
  LinkOptions link;
  link.inputs = {put("truncated.o", object.substr(0, 64))};
  for (int attempt = 0; attempt < 2; ++attempt) {
    link.output = path("truncated" + std::to_string(attempt) + ".so");
    Status status = linkSharedObject(link);
    ASSERT_FALSE(status.isOk());
    EXPECT_NE(status.message().find("truncated.o"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("past the end of the file"),
              std::string::npos)
        << status.message();
    EXPECT_FALSE(fs::exists(link.output));
  }

  // An object with the ELF magic but an invalid class: an ordinary error.
  std::string bytes = "\x7f"
                      "ELF";
  bytes += std::string(60, '\x07');
  link.inputs = {put("bad_class.o", bytes)};
  link.output = path("bad_class.so");
  Status status = linkSharedObject(link);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("bad_class.o"), std::string::npos)
      << status.message();

  // Linking still works afterwards, with no leftovers from the failed links.
  std::vector<uint8_t> blob = randomBytes(64, 5);
  status = buildProbeLibrary(dir_, blob, path("after_corrupt.so"));
  ASSERT_TRUE(status.isOk()) << status.message();
  void *handle = load(path("after_corrupt.so"));
  ASSERT_NE(handle, nullptr);
  auto probe = reinterpret_cast<int (*)(int)>(dlsym(handle, "aotc_probe"));
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe(0), AOTC_MODEL_DESC_VERSION + blob[0] + 42);
}

TEST_F(ToolchainTest, UnwritableOutputIsAnError) {
  std::string object = compileOk("int f() { return 1; }", "f.cpp");
  LinkOptions link;
  link.inputs = {put("f.o", object)};
  link.output = path("no_such_dir/f.so");
  Status status = linkSharedObject(link);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("no_such_dir"), std::string::npos)
      << status.message();
}

TEST_F(ToolchainTest, FailuresPrintNothing) {
  Expected<std::string> good =
      compileCxxToObject("int f() { return 1; }", "q.cpp", {});
  ASSERT_TRUE(good.isOk());
  // Point stdout and stderr at a file while compiling and linking fails.
  std::string capture = path("captured.txt");
  std::fflush(stdout);
  std::fflush(stderr);
  int savedOut = dup(1);
  int savedErr = dup(2);
  FILE *file = std::fopen(capture.c_str(), "w");
  ASSERT_NE(file, nullptr);
  dup2(fileno(file), 1);
  dup2(fileno(file), 2);

  Expected<std::string> object =
      compileCxxToObject("int f() { return nope; }", "quiet.cpp", {});
  LinkOptions link;
  link.inputs = {put("truncated_quiet.o", good->substr(0, 64))};
  link.output = path("quiet.so");
  Status fatal = linkSharedObject(link);
  link.inputs = {put("script_quiet.o", "garbage\n")};
  Status error = linkSharedObject(link);

  std::fflush(stdout);
  std::fflush(stderr);
  dup2(savedOut, 1);
  dup2(savedErr, 2);
  close(savedOut);
  close(savedErr);
  std::fclose(file);
  EXPECT_FALSE(object.isOk());
  EXPECT_FALSE(fatal.isOk());
  EXPECT_FALSE(error.isOk());
  EXPECT_EQ(readFileBytes(capture), "");
}

TEST_F(ToolchainTest, ConcurrentCompilesAndLinks) {
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i) {
        std::string name = "t" + std::to_string(t) + "_" + std::to_string(i);
        Expected<std::string> object = compileCxxToObject(
            "extern \"C\" __attribute__((visibility(\"default\"))) int "
            "aotc_id() { return ID; }",
            name + ".cpp", {1, {"ID=" + std::to_string(t * 10 + i)}});
        if (!object.isOk()) {
          failures[t] = object.status().message();
          return;
        }
        LinkOptions link;
        link.inputs = {path(name + ".o")};
        if (!writeFile(link.inputs[0], *object).isOk()) {
          failures[t] = "cannot write " + link.inputs[0];
          return;
        }
        link.output = path(name + ".so");
        Status status = linkSharedObject(link);
        if (!status.isOk()) {
          failures[t] = status.message();
          return;
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(failures[t], "") << "thread " << t;
    for (int i = 0; i < 3; ++i) {
      void *handle =
          load(path("t" + std::to_string(t) + "_" + std::to_string(i) + ".so"));
      ASSERT_NE(handle, nullptr);
      auto id = reinterpret_cast<int (*)()>(dlsym(handle, "aotc_id"));
      ASSERT_NE(id, nullptr);
      EXPECT_EQ(id(), t * 10 + i);
    }
  }
}

TEST(ToolchainInfoTest, SystemLinkFilesExist) {
  Expected<SystemLinkFiles> files = findSystemLinkFiles();
  ASSERT_TRUE(files.isOk()) << files.status().message();
  for (const std::string *file :
       {&files->crti, &files->crtbeginS, &files->crtendS, &files->crtn,
        &files->libStdCxx, &files->libM, &files->libC, &files->libGccS,
        &files->libGcc, &files->libOpenCL}) {
    EXPECT_TRUE(fs::path(*file).is_absolute()) << *file;
    EXPECT_TRUE(fs::exists(*file)) << *file;
  }
  EXPECT_FALSE(files->librarySearchDirs.empty());
}

TEST_F(ToolchainTest, SystemLinkFilesFallBackToStandardLocations) {
  Expected<SystemLinkFiles> standard = findSystemLinkFiles();
  ASSERT_TRUE(standard.isOk()) << standard.status().message();

  // Build-time paths that no longer exist: the standard Debian places win.
  SystemLinkFiles gone;
  for (std::string *file :
       {&gone.crti, &gone.crtbeginS, &gone.crtendS, &gone.crtn, &gone.libStdCxx,
        &gone.libM, &gone.libC, &gone.libGccS, &gone.libGcc, &gone.libOpenCL})
    *file = path("gone/file");
  Expected<SystemLinkFiles> probed = findSystemLinkFiles(
      gone, "/usr/lib/gcc/x86_64-linux-gnu",
      {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"});
  ASSERT_TRUE(probed.isOk()) << probed.status().message();
  for (const std::string *file :
       {&probed->crti, &probed->crtbeginS, &probed->crtendS, &probed->crtn,
        &probed->libStdCxx, &probed->libM, &probed->libC, &probed->libGccS,
        &probed->libGcc, &probed->libOpenCL})
    EXPECT_TRUE(fs::exists(*file)) << *file;
  EXPECT_EQ(fs::path(probed->crtbeginS).filename(), "crtbeginS.o");
  EXPECT_EQ(fs::path(probed->libOpenCL).filename(), "libOpenCL.so");
}

TEST_F(ToolchainTest, SystemLinkFilesNewestGccAndRuntimeNames) {
  // A fake tree: GCC 9 and 12, and only the runtime names of the libraries.
  std::string sys = path("sys");
  for (const char *dir : {"gcc/9", "gcc/12", "sys"})
    fs::create_directories(path(dir));
  for (const char *gcc : {"gcc/9", "gcc/12"})
    for (const char *name : {"crtbeginS.o", "crtendS.o", "libgcc.a",
                             "libstdc++.so", "libgcc_s.so"})
      put(std::string(gcc) + "/" + name, "");
  for (const char *name :
       {"crti.o", "crtn.o", "libm.so.6", "libc.so.6", "libOpenCL.so.1"})
    put(std::string("sys/") + name, "");
  Expected<SystemLinkFiles> files = findSystemLinkFiles({}, path("gcc"), {sys});
  ASSERT_TRUE(files.isOk()) << files.status().message();
  EXPECT_EQ(files->crtbeginS, path("gcc/12/crtbeginS.o"));
  EXPECT_EQ(files->libGcc, path("gcc/12/libgcc.a"));
  EXPECT_EQ(files->libC, sys + "/libc.so.6");
  EXPECT_EQ(files->libOpenCL, sys + "/libOpenCL.so.1");
  EXPECT_NE(std::find(files->librarySearchDirs.begin(),
                      files->librarySearchDirs.end(), path("gcc/12")),
            files->librarySearchDirs.end());

  // Remove one file: the error names it and where it was looked for.
  fs::remove(sys + "/libOpenCL.so.1");
  files = findSystemLinkFiles({}, path("gcc"), {sys});
  ASSERT_FALSE(files.isOk());
  const std::string &message = files.status().message();
  EXPECT_NE(message.find("cannot find 'libOpenCL.so'"), std::string::npos)
      << message;
  EXPECT_NE(message.find(sys), std::string::npos) << message;

  // Nothing at all: the first missing file is named.
  files = findSystemLinkFiles({}, path("nothing"), {path("nothing")});
  ASSERT_FALSE(files.isOk());
  EXPECT_NE(files.status().message().find("crti.o"), std::string::npos)
      << files.status().message();
}

} // namespace
} // namespace aotc::toolchain
