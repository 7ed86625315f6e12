// Wrapper emission: the emitted C++ compiles freestanding with the host
// compilers, and linked with a fake runtime (fake_runtime_main.cpp) its
// descriptor tables, arena_bytes(), output_shapes() and launch sequence are
// exactly what the module says. Also the text-level promises (one include,
// sanitized symbols, weightless) and the errors for inconsistent modules.
#include "codegen/opencl/cl_printer.h"
#include "codegen/wrapper/wrapper_emitter.h"
#include "test_modules.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace aotc;
using namespace aotc::test;

namespace {

namespace fs = std::filesystem;

struct Emitted {
  std::string cl;
  std::string cpp;
};

Emitted emitBoth(const LoopModule &m, bool weightless = false) {
  Expected<std::string> cl = emitOpenCL(m);
  EXPECT_TRUE(cl.isOk()) << cl.status().message();
  if (!cl)
    return {};
  WrapperOptions opts;
  opts.clSourceSize = cl->size();
  opts.clBuildOptions = buildOptions(m);
  opts.weightless = weightless;
  Expected<std::string> cpp = emitWrapper(m, opts);
  EXPECT_TRUE(cpp.isOk()) << cpp.status().message();
  return {*cl, cpp ? *cpp : std::string()};
}

std::string wrapperError(const LoopModule &m) {
  Expected<std::string> cpp = emitWrapper(m, WrapperOptions{});
  EXPECT_FALSE(cpp.isOk()) << *cpp;
  return cpp ? std::string() : cpp.status().message();
}

struct CmdResult {
  int rc = -1;
  std::string output;
};

CmdResult runCmd(const std::string &cmd) {
  CmdResult r;
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    r.output.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string quote(const std::string &s) { return "'" + s + "'"; }

/// A fresh scratch directory for the current test.
fs::path scratch() {
  const testing::TestInfo *t =
      testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(AOTC_TEST_TMP) /
                 (std::string(t->test_suite_name()) + "." + t->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path writeFile(const fs::path &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// The flags the toolchain compiles the wrapper with, plus warnings as
/// errors: the generated code must be warning-free.
std::string wrapperFlags() {
  return std::string(" -std=c++17 -ffreestanding -nostdinc -DAOTC_FREESTANDING"
                     " -fno-exceptions -fno-rtti -fvisibility=hidden -fPIC"
                     " -Wall -Wextra -Werror -I ") +
         quote(AOTC_TEST_RUNTIME_INCLUDE);
}

/// Builds the wrapper with the fake runtime and runs it with \p args.
CmdResult runWithFakeRuntime(const std::string &cpp, const std::string &args) {
  fs::path dir = scratch();
  fs::path src = writeFile(dir / "wrapper.cpp", cpp);
  fs::path obj = dir / "wrapper.o", exe = dir / "fake_runtime";
  CmdResult c = runCmd(std::string(AOTC_TEST_CXX) + wrapperFlags() +
                       " -O1 -c " + quote(src) + " -o " + quote(obj));
  EXPECT_EQ(c.rc, 0) << c.output << "\n" << cpp;
  if (c.rc != 0)
    return c;
  // Plain constant tables: nothing runs at load time.
  CmdResult sections = runCmd("readelf -SW " + quote(obj));
  EXPECT_EQ(sections.rc, 0) << sections.output;
  EXPECT_EQ(sections.output.find("init_array"), std::string::npos)
      << sections.output;
  EXPECT_EQ(sections.output.find(".ctors"), std::string::npos)
      << sections.output;
  c = runCmd(std::string(AOTC_TEST_CXX) + " -std=c++17 -I " +
             quote(AOTC_TEST_RUNTIME_INCLUDE) + " " +
             quote(AOTC_TEST_FAKE_RUNTIME) + " " + quote(obj) + " -o " +
             quote(exe));
  EXPECT_EQ(c.rc, 0) << c.output;
  if (c.rc != 0)
    return c;
  return runCmd(quote(exe) + " " + args);
}

std::string header(const std::string &name, const Emitted &e) {
  return "desc_version 16\nmodel_name " + name + "\ncl_source fake " +
         std::to_string(e.cl.size()) + "\ncl_build_options -cl-std=CL1.2\n";
}

TEST(Wrapper, TextPromises) {
  for (const std::string &name : moduleNames()) {
    LoopModule m;
    ASSERT_TRUE(moduleByName(name, m));
    std::string cpp = emitBoth(m).cpp;
    // Exactly one include, the contract header.
    size_t inc = cpp.find("#include");
    EXPECT_EQ(cpp.substr(inc, 29), "#include <aotc/model_desc.h>\n");
    EXPECT_EQ(cpp.find("#include", inc + 1), std::string::npos) << name;
    EXPECT_EQ(cpp.find("template"), std::string::npos) << name;
    EXPECT_NE(
        cpp.find("static inline int64_t aotc_min(int64_t a, int64_t b) {"),
        std::string::npos);
    EXPECT_NE(cpp.find("extern \"C\" __attribute__((visibility(\"hidden\"))) "
                       "const AotcModelDesc *\naotc_model_desc(void) {"),
              std::string::npos);
    EXPECT_NE(
        cpp.find(std::string("const char ") + kKernelsSourceSymbol + "[];"),
        std::string::npos);
    EXPECT_NE(
        cpp.find(std::string("const uint8_t ") + kConstantsBlobSymbol + "[];"),
        std::string::npos);
    EXPECT_EQ(cpp, emitBoth(m).cpp) << "not deterministic";
  }
  std::string red = emitBoth(reductionModule()).cpp;
  EXPECT_NE(red.find("  const int64_t s_seq_len = s[0];\n"), std::string::npos)
      << red;
  EXPECT_NE(red.find("{AOTC_ARG_I64, 0, s_seq_len},  // seq.len\n"),
            std::string::npos);
  EXPECT_NE(red.find("  // Kernel 0: row_stats\n"), std::string::npos);
  std::string ca = emitBoth(constArenaModule()).cpp;
  EXPECT_NE(ca.find("static int64_t arena_bytes(const int64_t *s) {\n"
                    "  const int64_t s_batch = s[0];\n"
                    "  return ((aotc_fdiv(((s_batch * 32) + 255), 256) * 256) + "
                    "(aotc_fdiv(((s_batch * 4) + 255), 256) * 256));\n}\n"),
            std::string::npos)
      << ca;
}

TEST(Wrapper, WeightlessDoesNotReferenceTheBlob) {
  std::string cpp = emitBoth(constArenaModule(), true).cpp;
  EXPECT_EQ(cpp.find(kConstantsBlobSymbol), std::string::npos) << cpp;
  EXPECT_NE(
      cpp.find("    nullptr, 128,  // constants_blob, constants_blob_size\n"),
      std::string::npos)
      << cpp;
}

TEST(Wrapper, ProgramBinariesTable) {
  LoopModule m = pointwiseModule();
  WrapperOptions opts;
  opts.clSourceSize = 10;
  opts.programBinaries = {{"platform: P\ndevice: \"D\"\n", 1234},
                          {"platform: Q\n", 7}};
  Expected<std::string> cpp = emitWrapper(m, opts);
  ASSERT_TRUE(cpp.isOk()) << cpp.status().message();
  for (const char *decl : {"aotc_program_binary_0[];", "aotc_program_binary_1[];"})
    EXPECT_NE(cpp->find(std::string("const uint8_t ") + decl), std::string::npos)
        << *cpp;
  EXPECT_NE(cpp->find("static const AotcProgramBinaryDesc kProgramBinaries[2] = {\n"
                      "    {\"platform: P\\012device: \\\"D\\\"\\012\", "
                      "aotc_program_binary_0, 1234"),
            std::string::npos)
      << *cpp;
  EXPECT_NE(cpp->find("    2, kProgramBinaries,  // program_binaries\n"),
            std::string::npos)
      << *cpp;
  // Without binaries: no table, no symbol.
  std::string plain = emitBoth(m).cpp;
  EXPECT_EQ(plain.find("aotc_program_binary_"), std::string::npos);
  EXPECT_NE(plain.find("    0, nullptr,  // program_binaries\n"),
            std::string::npos);
}

TEST(Wrapper, CompilesFreestanding) {
  std::vector<std::string> compilers = {AOTC_TEST_CXX};
  for (const char *c : {"/usr/bin/clang++-14", "/usr/bin/clang++"})
    if (fs::exists(c)) {
      compilers.push_back(c);
      break;
    }
  fs::path dir = scratch();
  for (const std::string &name : moduleNames()) {
    LoopModule m;
    ASSERT_TRUE(moduleByName(name, m));
    for (bool weightless : {false, true}) {
      std::string cpp = emitBoth(m, weightless).cpp;
      fs::path src = writeFile(
          dir / (name + (weightless ? "_weightless" : "") + ".cpp"), cpp);
      for (const std::string &cxx : compilers) {
        CmdResult r =
            runCmd(cxx + wrapperFlags() + " -fsyntax-only " + quote(src));
        EXPECT_EQ(r.rc, 0) << cxx << " on " << name << ":\n"
                           << r.output << "\n"
                           << cpp;
      }
    }
  }
}

TEST(Wrapper, FakeRuntimePointwise) {
  Emitted e = emitBoth(pointwiseModule());
  CmdResult r = runWithFakeRuntime(e.cpp, "7");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output,
            header("pointwise", e) +
                "kernel 0 pointwise_0 function pointwise_0\n"
                "symbol 0 batch 1 64\n"
                "input 0 x dtype=1 rank=2 dims=[0/0/batch,16/-1/16]\n"
                "output 0 y dtype=1 rank=1 dims=[-1/-1/(batch * 16)]\n"
                "output 1 mask dtype=9 rank=2 dims=[0/0/batch,16/-1/16]\n"
                "constants_blob fake 0\n"
                "metadata aotc.num_kernel_functions=1\n"
                "metadata aotc.num_kernels=1\n"
                "metadata aotc.version=0.1.0\n"
                "check_symbols -1 of 3\n"
                "arena_bytes 0\n"
                "output_shapes 112 7 16 -7\n"
                "launch 0 ctx=1234 dims=2 global=16,7 local=null "
                "args=1:0:0,2:0:0,2:1:0,5:0:7\n"
                "run 0\n");
}

TEST(Wrapper, FakeRuntimeReduction) {
  Emitted e = emitBoth(reductionModule());
  CmdResult r = runWithFakeRuntime(e.cpp, "5");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output, header("reduction", e) +
                          "kernel 0 row_stats function row_stats\n"
                          "symbol 0 seq.len 1 128\n"
                          "input 0 x dtype=1 rank=2 dims=[4/-1/4,0/0/seq.len]\n"
                          "output 0 mean dtype=1 rank=1 dims=[4/-1/4]\n"
                          "output 1 max dtype=1 rank=1 dims=[4/-1/4]\n"
                          "output 2 any_neg dtype=9 rank=1 dims=[4/-1/4]\n"
                          "constants_blob fake 0\n"
                          "metadata aotc.num_kernel_functions=1\n"
                          "metadata aotc.num_kernels=1\n"
                          "metadata aotc.version=0.1.0\n"
                          "check_symbols -1 of 0\n"
                          "arena_bytes 0\n"
                          "output_shapes 4 4 4 -7\n"
                          "launch 0 ctx=1234 dims=1 global=4 local=null "
                          "args=1:0:0,2:0:0,2:1:0,2:2:0,5:0:5\n"
                          "run 0\n");
}

std::string constArenaTables(const Emitted &e, const char *blob) {
  return header("const_arena", e) +
         "kernel 0 scale_shift function scale_shift\n"
         "kernel 1 row_sum function row_sum\n"
         "kernel 2 relu_out function relu_out\n"
         "symbol 0 batch 1 32\n"
         "input 0 x dtype=1 rank=2 dims=[0/0/batch,8/-1/8]\n"
         "output 0 y dtype=1 rank=1 dims=[0/0/batch]\n"
         "constant 0 fc.weight onnx=fc.weight dtype=1 shape=[8] offset=0 "
         "nbytes=32 folded=0\n"
         "constant 1 fc.bias onnx= dtype=1 shape=[8] offset=64 nbytes=32 "
         "folded=1\n"
         "constants_blob " +
         blob +
         " 128\n"
         "metadata aotc.num_kernel_functions=3\n"
         "metadata aotc.num_kernels=3\n"
         "metadata aotc.version=0.1.0\n"
         "metadata producer=aotc codegen tests\n";
}

TEST(Wrapper, FakeRuntimeConstantsAndArena) {
  Emitted e = emitBoth(constArenaModule());
  CmdResult r = runWithFakeRuntime(e.cpp, "7");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output, constArenaTables(e, "fake") +
                          "check_symbols -1 of 7\n"
                          "arena_bytes 512\n"
                          "output_shapes 7 -7\n"
                          "launch 0 ctx=1234 dims=1 global=56 local=null "
                          "args=1:0:0,3:0:0,3:1:64,4:0:0,5:0:7\n"
                          "launch 1 ctx=1234 dims=1 global=7 local=null "
                          "args=4:0:0,4:0:256,5:0:7\n"
                          "launch 2 ctx=1234 dims=1 global=7 local=null "
                          "args=4:0:256,2:0:0,5:0:7\n"
                          "run 0\n");
}

TEST(Wrapper, FakeRuntimeOtherBatchAndWeightless) {
  Emitted e = emitBoth(constArenaModule(), true);
  CmdResult r = runWithFakeRuntime(e.cpp, "32");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output, constArenaTables(e, "null") +
                          "check_symbols -1 of 7\n"
                          "arena_bytes 1280\n"
                          "output_shapes 32 -7\n"
                          "launch 0 ctx=1234 dims=1 global=256 local=null "
                          "args=1:0:0,3:0:0,3:1:64,4:0:0,5:0:32\n"
                          "launch 1 ctx=1234 dims=1 global=32 local=null "
                          "args=4:0:0,4:0:1024,5:0:32\n"
                          "launch 2 ctx=1234 dims=1 global=32 local=null "
                          "args=4:0:1024,2:0:0,5:0:32\n"
                          "run 0\n");
}

TEST(Wrapper, CheckSymbolsCatchesSizesThatOverflow) {
  // batch = 2^60: batch floats of y fit in 2^62 bytes, but t's batch * 8
  // floats need 2^65. The check fails before anything is evaluated with the
  // value.
  Emitted e = emitBoth(constArenaModule());
  CmdResult r = runWithFakeRuntime(e.cpp, "1152921504606846976");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("check_symbols 1 of 7\ncheck failed: the size of "
                          "intermediate buffer 't' [batch,8] overflows 64 "
                          "bits\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("arena_bytes"), std::string::npos) << r.output;
  // batch = 2^61: y needs 2^63 bytes, one more than int64 holds.
  r = runWithFakeRuntime(e.cpp, "2305843009213693952");
  EXPECT_NE(r.output.find("check_symbols 0 of 7\ncheck failed: the size of "
                          "output 'y' [batch] overflows 64 bits"),
            std::string::npos)
      << r.output;
}

TEST(Wrapper, FakeRuntimeStopsAtTheFirstLaunchError) {
  Emitted e = emitBoth(constArenaModule());
  CmdResult r = runWithFakeRuntime(e.cpp, "7 --fail-at=1");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("launch 1 ctx=1234"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("launch 2 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nrun 42\n"), std::string::npos) << r.output;
}

TEST(Wrapper, RejectsInconsistentModules) {
  LoopModule m = constArenaModule();
  m.kernels[1].buffers.push_back({"ghost", DType::Float32, false, {1}});
  std::string e = wrapperError(m);
  EXPECT_NE(e.find("kernel 'row_sum': buffer 'ghost' is not declared"),
            std::string::npos)
      << e;

  m = constArenaModule();
  m.buffers[3].arenaOffset = Var::make("i") * 4;
  e = wrapperError(m);
  EXPECT_NE(e.find("arena offset of buffer 't' depends on 'i', which is not "
                   "a symbol"),
            std::string::npos)
      << e;

  m = constArenaModule();
  m.inputs[0].dims[0] = Var::make("batch") * 2;
  e = wrapperError(m);
  EXPECT_NE(e.find("input 'x' dim 0 is '(batch * 2)', which is neither"),
            std::string::npos)
      << e;

  m = constArenaModule();
  m.symbols.push_back({"batch", {1, 2}, Var::make("batch")});
  EXPECT_NE(wrapperError(m).find("symbol 'batch' is declared twice"),
            std::string::npos);
  m = constArenaModule();
  m.symbols.push_back({"other", {1, 2}, m.symbols[0].var});
  EXPECT_NE(wrapperError(m).find("symbol 'other' is declared twice"),
            std::string::npos);

  m = constArenaModule();
  m.constants[1].offset = 96;
  e = wrapperError(m);
  EXPECT_NE(e.find("constant 'fc.bias' at offset 96"), std::string::npos) << e;

  m = constArenaModule();
  m.kernels[2].symbols = {Var::make("seq")};
  e = wrapperError(m);
  EXPECT_NE(e.find("kernel 'relu_out': symbol 'seq' is not declared"),
            std::string::npos)
      << e;

  m = constArenaModule();
  m.buffers[5].index = 3;
  e = wrapperError(m);
  EXPECT_NE(e.find("buffer 'y' is output 3 of 1"), std::string::npos) << e;

  m = constArenaModule();
  m.outputs[0].dims = {Var::make("k")};
  e = wrapperError(m);
  EXPECT_NE(e.find("output 'y' dim 0 depends on 'k'"), std::string::npos) << e;
}

TEST(Wrapper, GlobalSizeSeesOuterLets) {
  // parallel<0> i < n2 where `let n2 = batch * 2` sits outside the loop.
  LoopModule m = pointwiseModule();
  Expr batch = m.symbols[0].var, i = Var::make("i"), n2 = Var::make("n2");
  m.kernels[0].body = LetStmt::make(
      n2, batch * 2,
      For::make(i, 0, n2, ForKind::Parallel, 0,
                Store::make("y", {i}, Load::make(DType::Float32, "x", {i}))));
  Emitted e = emitBoth(m);
  EXPECT_NE(e.cpp.find("const uint64_t global[1] = {(uint64_t)((s_batch * "
                       "2))};"),
            std::string::npos)
      << e.cpp;
  EXPECT_NE(e.cl.find("const long n2 = (s_batch * 2);\n"
                      "  const long gid0 = get_global_id(0);\n"
                      "  if (gid0 >= n2) return;\n"
                      "  const long i = gid0;\n"),
            std::string::npos)
      << e.cl;
}

} // namespace
