/// \file
/// Times the toolchain's three steps: compiling a ~300-line wrapper-like C++
/// file, writing 1 MB and 100 MB data objects, and linking a model .so.
///
/// Usage: aotc_toolchain_bench [REPEATS]

#include "codegen/toolchain/clang_compile.h"
#include "codegen/toolchain/data_object.h"
#include "codegen/toolchain/lld_link.h"
#include "tests/toolchain/probe_source.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <unistd.h>

namespace {

using namespace aotc;
using namespace aotc::toolchain;

/// A wrapper shaped like the generated one: descriptor tables and a run()
/// that launches \p kernels kernels with symbolic sizes.
std::string wrapperSource(int kernels) {
  std::ostringstream os;
  os << "#include <aotc/model_desc.h>\n\n"
        "extern \"C\" {\nextern const uint8_t aotc_constants[];\n}\n\n"
        "namespace {\n\n";
  os << "const AotcSymbolDesc kSymbols[] = {{\"batch\", 1, 64, 0, -1, -1}, "
        "{\"seq\", 1, 2048, 0, -1, -1}};\n";
  os << "const AotcDimDesc kInDims[] = {{0, 0, \"batch\"}, {0, 1, \"seq\"}, "
        "{768, -1, \"768\"}};\n";
  os << "const AotcTensorDesc kInputs[] = {{\"x\", AOTC_DT_FLOAT32, 3, "
        "kInDims}};\n";
  os << "const AotcTensorDesc kOutputs[] = {{\"y\", AOTC_DT_FLOAT32, 3, "
        "kInDims}};\n";
  os << "const int64_t kShape[] = {768, 768};\n";
  os << "const AotcConstantDesc kConstants[] = {\n";
  for (int i = 0; i < kernels; ++i)
    os << "  {\"c" << i << "\", \"onnx::c" << i
       << "\", AOTC_DT_FLOAT32, 2, kShape, " << i * 2359296ull
       << "ull, 2359296ull, 0},\n";
  os << "};\n";
  os << "const char *const kKernelNames[] = {\n";
  for (int i = 0; i < kernels; ++i)
    os << "  \"kernel_" << i << "\",\n";
  os << "};\n";
  os << "const char *const kMetadata[] = {\"producer\", \"aotc\"};\n\n";
  os << "int64_t arenaBytes(const int64_t *s) {\n"
        "  int64_t n = s[0] * s[1] * 768;\n"
        "  return (n * 4 + 63) / 64 * 64 * 3;\n}\n\n";
  os << "void outputShapes(const int64_t *s, int64_t *dims) {\n"
        "  dims[0] = s[0];\n  dims[1] = s[1];\n  dims[2] = 768;\n}\n\n";
  os << "int32_t run(AotcRunCtx *ctx, const int64_t *s) {\n"
        "  const int64_t batch = s[0];\n  const int64_t seq = s[1];\n"
        "  const int64_t rows = batch * seq;\n  int32_t err = 0;\n";
  for (int i = 0; i < kernels; ++i) {
    os << "  {\n";
    os << "    const AotcArg args[] = {{AOTC_ARG_ARENA, 0, " << (i % 3)
       << " * ((rows * 768 * 4 + 63) / 64 * 64)}, "
       << "{AOTC_ARG_CONSTANT, 0, " << i * 2359296ull << "ll}, "
       << "{AOTC_ARG_I64, 0, rows}};\n";
    os << "    const uint64_t global[] = {(uint64_t)((rows + 7) / 8), "
       << (96 + i % 4) << "};\n";
    os << "    if ((err = aotc_rt_launch(ctx, " << i
       << ", args, 3, 2, global, nullptr)) != 0)\n      return err;\n";
    os << "  }\n";
  }
  os << "  return err;\n}\n\n";
  os << "AotcModelDesc makeDesc() {\n  AotcModelDesc d = {};\n"
        "  d.desc_version = AOTC_MODEL_DESC_VERSION;\n"
        "  d.model_name = \"bench\";\n"
        "  d.num_kernels = "
     << kernels
     << ";\n  d.kernel_names = kKernelNames;\n"
        "  d.num_symbols = 2;\n  d.symbols = kSymbols;\n"
        "  d.num_inputs = 1;\n  d.inputs = kInputs;\n"
        "  d.num_outputs = 1;\n  d.outputs = kOutputs;\n"
        "  d.num_constants = "
     << kernels
     << ";\n  d.constants = kConstants;\n"
        "  d.constants_blob = aotc_constants;\n"
        "  d.num_metadata = 1;\n  d.metadata = kMetadata;\n"
        "  d.arena_bytes = arenaBytes;\n  d.output_shapes = outputShapes;\n"
        "  d.run = run;\n  return d;\n}\n\n"
        "const AotcModelDesc kDesc = makeDesc();\n\n} // namespace\n\n"
        "extern \"C\" __attribute__((visibility(\"default\"))) const "
        "AotcModelDesc *aotc_model_desc(void) { return &kDesc; }\n";
  return os.str();
}

/// Runs \p fn \p repeats times; returns the median in milliseconds.
double medianMs(int repeats, const std::function<void()> &fn) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    auto end = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void check(const Status &status) {
  if (!status.isOk()) {
    std::fprintf(stderr, "error: %s\n", status.message().c_str());
    std::exit(1);
  }
}

} // namespace

int main(int argc, char **argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("aotc_toolchain_bench_" + std::to_string(getpid())))
                        .string();
  std::filesystem::create_directories(dir);

  std::string source = wrapperSource(30);
  int lines = static_cast<int>(std::count(source.begin(), source.end(), '\n'));
  std::string object;
  auto compile = [&](int level) {
    Expected<std::string> result =
        compileCxxToObject(source, "bench_wrapper.cpp", {level, {}});
    check(result.status().isOk() ? Status::ok() : result.status());
    object = result.take();
  };
  auto start = std::chrono::steady_clock::now();
  compile(2);
  double firstMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  std::printf("compileCxxToObject, %d-line wrapper: first call %.1f ms\n",
              lines, firstMs);
  for (int level = 0; level <= 2; ++level)
    std::printf("compileCxxToObject, %d-line wrapper, -O%d: %.1f ms (median "
                "of %d)\n",
                lines, level, medianMs(repeats, [&] { compile(level); }),
                repeats);
  check(testing::writeFile(dir + "/wrapper.o", object));

  std::vector<uint8_t> blob = testing::randomBytes(100u << 20, 11);
  for (uint64_t size : {uint64_t(1) << 20, uint64_t(100) << 20}) {
    std::string data;
    double ms = medianMs(repeats, [&] {
      Expected<std::string> result = writeDataObject(
          {{"aotc_constants", blob.data(), size, 64, /*largeSection=*/true}});
      check(result.status().isOk() ? Status::ok() : result.status());
      data = result.take();
    });
    std::printf("writeDataObject, %llu MB: %.1f ms (median of %d)\n",
                static_cast<unsigned long long>(size >> 20), ms, repeats);
    check(testing::writeFile(dir + "/data" + std::to_string(size >> 20) + ".o",
                             data));
  }

  for (const char *dataName : {"data1.o", "data100.o"}) {
    LinkOptions link;
    link.inputs = {dir + "/" + dataName, dir + "/wrapper.o"};
    link.output = dir + "/model.so";
    link.allowUndefined = true; // aotc_rt_launch lives in the runtime library
    double ms = medianMs(repeats, [&] { check(linkSharedObject(link)); });
    std::printf("linkSharedObject, wrapper + %s: %.1f ms (median of %d)\n",
                dataName, ms, repeats);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
