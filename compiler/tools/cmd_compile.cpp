/// \file
/// `aotc compile`: ONNX model to model .so (or an --emit artifact).
#include "compiler/tools/commands.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace aotc::cli {

std::optional<std::string> readTextFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Expected<KernelConfigs> readKernelConfigs(const std::string &path) {
  std::optional<std::string> text = readTextFile(path);
  if (!text)
    return makeError("cannot read --kernel-configs '", path, "'");
  auto configs = parseKernelConfigs(*text);
  if (!configs)
    return makeError("'", path, "': ", configs.status().message());
  return configs;
}

bool parseDimRange(const std::string &s, std::string &name, Range &r) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    return false;
  name = s.substr(0, eq);
  std::string v = s.substr(eq + 1);
  try {
    size_t colon = v.find(':');
    if (colon == std::string::npos) {
      r.min = r.max = std::stoll(v);
    } else {
      r.min = std::stoll(v.substr(0, colon));
      r.max = std::stoll(v.substr(colon + 1));
    }
  } catch (...) {
    return false;
  }
  return r.min >= 0 && r.min <= r.max;
}

int compileCommand(const CompileOptions &opts, bool timePasses) {
  auto result = compileModel(opts);
  if (!result) {
    std::fprintf(stderr, "aotc: error: %s\n",
                 result.status().message().c_str());
    return 1;
  }
  if (!opts.emit.empty())
    std::cout << result->emitted;
  else
    std::fprintf(stderr,
                 "aotc: wrote %s (%zu kernels, arena %s bytes, %llu bytes of "
                 "constants)\n",
                 opts.outputPath.c_str(), result->numKernels,
                 result->arenaBytes.c_str(),
                 (unsigned long long)result->constantsBytes);
  if (timePasses) {
    double total = 0;
    std::fprintf(stderr, "===- aotc compile time -===\n");
    for (const StageTime &t : result->times) {
      std::fprintf(stderr, "  %-10s %9.2f ms\n", t.stage.c_str(), t.ms);
      total += t.ms;
    }
    std::fprintf(stderr, "  %-10s %9.2f ms\n", "total", total);
  }
  return 0;
}

} // namespace aotc::cli
