// Wrapper and kernels together: the emitted wrapper and a data object holding
// the emitted OpenCL source and the constants blob are built into a shared
// object with the host compiler; this test then plays the runtime. It reads
// the descriptor, builds the program from cl_source, uploads the blob, sizes
// the arena with arena_bytes() and the outputs with output_shapes(), and
// calls run(), whose aotc_rt_launch calls land in the OpenCL launcher below
// (exported from this executable). The outputs must match a reference.
#include "cl_test_util.h"
#include "codegen/opencl/cl_printer.h"
#include "codegen/opencl/identifiers.h"
#include "codegen/wrapper/wrapper_emitter.h"
#include "test_modules.h"

#include <aotc/model_desc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <random>

using namespace aotc;
using namespace aotc::test;

/// What the fake runtime binds before run(): the program and the buffers.
struct AotcRunCtx {
  const AotcModelDesc *desc = nullptr;
  cl_program program = nullptr;
  std::vector<cl_mem> inputs, outputs;
  cl_mem constants = nullptr, arena = nullptr;
  int launches = 0;
};

extern "C" int32_t aotc_rt_launch(AotcRunCtx *ctx, int32_t kernel,
                                  const AotcArg *args, int32_t nargs,
                                  int32_t dims, const uint64_t *global,
                                  const uint64_t *local) {
  std::vector<KernelArg> clArgs;
  for (int32_t a = 0; a < nargs; ++a) {
    const AotcArg &arg = args[a];
    switch (arg.kind) {
    case AOTC_ARG_INPUT:
      clArgs.push_back(
          {ctx->inputs.at(arg.index), static_cast<uint64_t>(arg.value), 0});
      break;
    case AOTC_ARG_OUTPUT:
      clArgs.push_back(
          {ctx->outputs.at(arg.index), static_cast<uint64_t>(arg.value), 0});
      break;
    case AOTC_ARG_CONSTANT:
      clArgs.push_back({ctx->constants, static_cast<uint64_t>(arg.value), 0});
      break;
    case AOTC_ARG_ARENA:
      clArgs.push_back({ctx->arena, static_cast<uint64_t>(arg.value), 0});
      break;
    case AOTC_ARG_I64:
      clArgs.push_back({nullptr, 0, arg.value});
      break;
    default:
      return 3;
    }
  }
  std::vector<size_t> g;
  for (int32_t d = 0; d < dims; ++d) // rounded up, as with a local size
    g.push_back((global[d] + 3) / 4 * 4);
  ++ctx->launches;
  if (local)
    return 4;
  return launch(ctx->program, ctx->desc->kernel_names[kernel], clArgs, g) ==
                 CL_SUCCESS
             ? 0
             : 5;
}

namespace {

namespace fs = std::filesystem;

int runCmd(const std::string &cmd, std::string &output) {
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    output.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The C++ of the data object: the blob and the NUL-terminated source under
/// the names the wrapper expects, and an exported accessor for the hidden
/// aotc_model_desc.
std::string dataObject(const LoopModule &m, const std::string &cl) {
  std::string s = "#include <aotc/model_desc.h>\n";
  std::vector<uint8_t> blob(m.constantsBytes, 0);
  for (const ModuleConstant &c : m.constants)
    std::copy(c.data.data(), c.data.data() + c.data.size(),
              blob.begin() + c.offset);
  s += std::string("extern \"C\" __attribute__((visibility(\"hidden\"))) "
                   "alignas(64) const uint8_t ") +
       kConstantsBlobSymbol + "[" + std::to_string(blob.size() + 1) + "] = {";
  for (uint8_t b : blob)
    s += std::to_string(b) + ",";
  s += "0};\n";
  s += std::string("extern \"C\" __attribute__((visibility(\"hidden\"))) "
                   "const char ") +
       kKernelsSourceSymbol + "[] = " + cStringLiteral(cl) + ";\n";
  s += "extern \"C\" __attribute__((visibility(\"default\"))) const "
       "AotcModelDesc *test_model_desc(void) { return aotc_model_desc(); }\n";
  return s;
}

/// Builds the model .so of \p m and returns its descriptor (null on failure,
/// with a test failure recorded).
const AotcModelDesc *buildModel(const LoopModule &m) {
  Expected<std::string> cl = emitOpenCL(m);
  EXPECT_TRUE(cl.isOk()) << cl.status().message();
  if (!cl)
    return nullptr;
  WrapperOptions opts;
  opts.clSourceSize = cl->size();
  opts.clBuildOptions = buildOptions(m);
  Expected<std::string> cpp = emitWrapper(m, opts);
  EXPECT_TRUE(cpp.isOk()) << cpp.status().message();
  if (!cpp)
    return nullptr;
  fs::path dir = fs::path(AOTC_TEST_TMP) / ("end_to_end." + m.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "wrapper.cpp") << *cpp;
  std::ofstream(dir / "data.cpp") << dataObject(m, *cl);
  std::string inc = std::string(" -I '") + AOTC_TEST_RUNTIME_INCLUDE + "'";
  std::string cxx = AOTC_TEST_CXX;
  std::string d = "'" + dir.string() + "/";
  std::string log;
  int rc = runCmd(cxx +
                      " -std=c++17 -ffreestanding -nostdinc "
                      "-DAOTC_FREESTANDING -fno-exceptions -fno-rtti "
                      "-fvisibility=hidden -fPIC -O1" +
                      inc + " -c " + d + "wrapper.cpp' -o " + d + "wrapper.o'",
                  log);
  rc = rc ? rc
          : runCmd(cxx + " -std=c++17 -fPIC -fvisibility=hidden" + inc +
                       " -c " + d + "data.cpp' -o " + d + "data.o'",
                   log);
  rc = rc ? rc
          : runCmd(cxx + " -shared " + d + "wrapper.o' " + d + "data.o' -o " +
                       d + "model.so'",
                   log);
  EXPECT_EQ(rc, 0) << log;
  if (rc)
    return nullptr;
  void *h = dlopen((dir / "model.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(h, nullptr) << dlerror();
  if (!h)
    return nullptr;
  // Hidden inside the .so, as the runtime linked beside it would see it.
  EXPECT_EQ(dlsym(h, "aotc_model_desc"), nullptr);
  EXPECT_EQ(dlsym(h, kConstantsBlobSymbol), nullptr);
  using Fn = const AotcModelDesc *(*)();
  auto fn = reinterpret_cast<Fn>(dlsym(h, "test_model_desc"));
  EXPECT_NE(fn, nullptr);
  return fn ? fn() : nullptr; // the .so stays loaded for the process
}

int64_t dtypeBytes(int32_t dt) {
  switch (dt) {
  case AOTC_DT_FLOAT64:
  case AOTC_DT_INT64:
    return 8;
  case AOTC_DT_FLOAT32:
  case AOTC_DT_INT32:
    return 4;
  default:
    return 1;
  }
}

/// Runs the model like the runtime would and returns the outputs' bytes.
std::vector<std::vector<uint8_t>>
runModel(const AotcModelDesc *desc, const std::vector<int64_t> &symbols,
         const std::vector<std::vector<uint8_t>> &inputs) {
  AotcRunCtx ctx;
  ctx.desc = desc;
  std::string log;
  std::string src(desc->cl_source, desc->cl_source_size);
  EXPECT_EQ(std::strlen(desc->cl_source), desc->cl_source_size);
  ctx.program = buildProgram(src, desc->cl_build_options, log);
  EXPECT_NE(ctx.program, nullptr) << log;
  if (!ctx.program)
    return {};
  for (const auto &in : inputs)
    ctx.inputs.push_back(makeBuffer(in.size(), in.data()));
  ctx.constants =
      makeBuffer(desc->constants_blob_size,
                 desc->constants_blob_size ? desc->constants_blob : nullptr);
  ctx.arena =
      makeBuffer(static_cast<size_t>(desc->arena_bytes(symbols.data())));
  size_t numDims = 0;
  for (int32_t i = 0; i < desc->num_outputs; ++i)
    numDims += desc->outputs[i].rank;
  std::vector<int64_t> dims(numDims);
  desc->output_shapes(symbols.data(), dims.data());
  std::vector<size_t> sizes;
  size_t at = 0;
  for (int32_t i = 0; i < desc->num_outputs; ++i) {
    int64_t n = dtypeBytes(desc->outputs[i].dtype);
    for (int32_t k = 0; k < desc->outputs[i].rank; ++k)
      n *= dims[at++];
    sizes.push_back(static_cast<size_t>(n));
    ctx.outputs.push_back(makeBuffer(sizes.back()));
  }
  EXPECT_EQ(desc->run(&ctx, symbols.data()), 0);
  EXPECT_EQ(ctx.launches, desc->num_kernels);
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.emplace_back(sizes[i]);
    readBuffer(ctx.outputs[i], 0, sizes[i], out.back().data());
  }
  for (cl_mem mem : ctx.inputs)
    clReleaseMemObject(mem);
  for (cl_mem mem : ctx.outputs)
    clReleaseMemObject(mem);
  clReleaseMemObject(ctx.constants);
  clReleaseMemObject(ctx.arena);
  clReleaseProgram(ctx.program);
  return out;
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

std::vector<uint8_t> bytesOf(const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  if (!b.empty())
    std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> floatsOf(const std::vector<uint8_t> &b) {
  std::vector<float> v(b.size() / sizeof(float));
  if (!v.empty())
    std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
  return v;
}

TEST(EndToEnd, ConstantsAndArenaModel) {
  const AotcModelDesc *desc = buildModel(constArenaModule());
  ASSERT_NE(desc, nullptr);
  for (int64_t batch : {int64_t(7), int64_t(32), int64_t(1)}) {
    SCOPED_TRACE("batch = " + std::to_string(batch));
    std::vector<float> x = randomFloats(batch * 8, 11);
    auto out = runModel(desc, {batch}, {bytesOf(x)});
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> y = floatsOf(out[0]);
    ASSERT_EQ(y.size(), static_cast<size_t>(batch));
    std::vector<float> w = constArenaWeights(), b = constArenaBias();
    for (int64_t r = 0; r < batch; ++r) {
      float acc = 0;
      for (int k = 0; k < 8; ++k)
        acc += x[r * 8 + k] * w[k] + b[k];
      EXPECT_NEAR(y[r], std::fmax(acc, 0.0f), 1e-5 * (1 + std::fabs(acc))) << r;
    }
  }
}

TEST(EndToEnd, PointwiseModel) {
  const AotcModelDesc *desc = buildModel(pointwiseModule());
  ASSERT_NE(desc, nullptr);
  const int64_t batch = 5;
  std::vector<float> x = randomFloats(batch * 16, 12);
  auto out = runModel(desc, {batch}, {bytesOf(x)});
  ASSERT_EQ(out.size(), 2u);
  std::vector<float> y = floatsOf(out[0]);
  ASSERT_EQ(y.size(), x.size());
  ASSERT_EQ(out[1].size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float want = x[i] > 0 ? x[i] * 2.0f + 1.0f : std::exp(x[i]) - 1.0f;
    EXPECT_NEAR(y[i], want, 1e-5 * (1 + std::fabs(want))) << i;
    EXPECT_EQ(out[1][i], x[i] > 0.5f ? 1 : 0) << i;
  }
}

} // namespace
