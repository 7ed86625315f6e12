/// \file
/// `aotc compile`: ONNX model to model .so (or an --emit artifact).
#include "compiler/tools/commands.h"

#include <aotc/package.hpp>

#include <stdlib.h>

#include <filesystem>

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

int compileCommand(CompileOptions opts, bool timePasses,
                   const PackageArgs &package) {
  // A package: the .so (and its weights side file) go to -o, or to a
  // temporary folder that is removed after packing.
  std::string tmpDir;
  struct RemoveTmp {
    std::string &dir;
    ~RemoveTmp() {
      if (!dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      }
    }
  } removeTmp{tmpDir};
  if (!package.path.empty()) {
    if (!opts.emit.empty()) {
      std::fprintf(stderr, "aotc: error: --package and --emit exclude each "
                           "other\n");
      return 2;
    }
    if (package.embedWeights && opts.weightsFile) {
      std::fprintf(stderr, "aotc: error: --embed-weights and --weights-file "
                           "exclude each other\n");
      return 2;
    }
    // In a package the weights are a side file the loader maps from the
    // package, unless asked to stay in the .so (or left out).
    if (!opts.weightless && !package.embedWeights)
      opts.weightsFile = true;
    opts.keepSources = package.sources;
    if (opts.outputPath.empty()) {
      std::string pattern =
          (std::filesystem::temp_directory_path() / "aotc-pkg-XXXXXX")
              .string();
      if (!mkdtemp(pattern.data())) {
        std::fprintf(stderr, "aotc: error: cannot create a temporary "
                             "directory\n");
        return 1;
      }
      tmpDir = pattern;
      std::string stem = std::filesystem::path(package.path).stem().string();
      opts.outputPath = tmpDir + "/" + (stem.empty() ? "model" : stem) + ".so";
    }
  }
  auto result = compileModel(opts);
  if (!result) {
    std::fprintf(stderr, "aotc: error: %s\n",
                 result.status().message().c_str());
    return 1;
  }
  if (!opts.emit.empty())
    std::cout << result->emitted;
  else if (tmpDir.empty()) {
    std::string folding =
        result->numFoldKernels
            ? ", " + std::to_string(result->numFoldKernels) +
                  " more in the folding program run at load"
            : "";
    std::string launches = result->numLaunches != result->numKernels
                               ? " in " + std::to_string(result->numLaunches) +
                                     " launch" +
                                     (result->numLaunches == 1 ? "" : "es")
                               : "";
    std::fprintf(stderr,
                 "aotc: wrote %s (%zu kernels%s%s, arena %s bytes, %llu bytes "
                 "of constants)\n",
                 opts.outputPath.c_str(), result->numKernels, launches.c_str(),
                 folding.c_str(), result->arenaBytes.c_str(),
                 (unsigned long long)result->constantsBytes);
  }
  // Also for a package, whose .so is written to a temporary folder first.
  if (opts.emit.empty())
    for (const CompileResult::Prebuilt &p : result->prebuilt)
      std::fprintf(stderr, "aotc: embedded the program built for %s\n",
                   p.description.c_str());
  if (!package.path.empty()) {
    pkg::WriteRequest request;
    request.soPath = opts.outputPath;
    request.outputPath = package.path;
    const ModelSummary &sum = result->summary;
    request.weightsPath = sum.weightsPath;
    pkg::Manifest &m = request.model;
    m.modelName = sum.name;
    auto tensors = [](const std::vector<ModelSummary::Tensor> &list) {
      std::vector<pkg::TensorSpec> out;
      for (const ModelSummary::Tensor &t : list)
        out.push_back({t.name, t.dtype, t.dims});
      return out;
    };
    m.inputs = tensors(sum.inputs);
    m.outputs = tensors(sum.outputs);
    for (const ModelSummary::Symbol &sym : sum.symbols)
      m.symbols.push_back({sym.name, sym.min, sym.max});
    m.numConstants = static_cast<int64_t>(sum.numConstants);
    m.constantsBytes = sum.constantsBytes;
    m.weights = sum.weights;
    m.deviceProfile = sum.deviceProfileJson;
    m.deviceProfileName = sum.deviceProfileName;
    m.deviceExtensions = sum.extensions;
    for (const CompileResult::Prebuilt &p : result->prebuilt)
      m.programBinaries.push_back({p.description, p.deviceKey});
    if (package.sources) {
      request.sources.emplace_back("kernels.cl", result->clSource);
      request.sources.emplace_back("wrapper.cpp", result->wrapperSource);
    }
    try {
      pkg::Manifest m = pkg::writePackage(request);
      std::fprintf(stderr,
                   "aotc: wrote package %s (%zu entries, weights: %s, %zu "
                   "kernels)\n",
                   package.path.c_str(), m.entries.size() + 1,
                   m.weights.c_str(), result->numKernels);
    } catch (const aotc::Error &e) {
      std::fprintf(stderr, "aotc: error: --package: %s\n", e.what());
      return 1;
    }
  }
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
