/// \file
/// `aotc run` and `aotc inspect`: load a model .so through the C++ runner.
#include "compiler/tools/commands.h"
#include "compiler/tools/device_peak.h"
#include "compiler/tools/profile_report.h"
#include "compiler/tools/tensor_io.h"

// The runtime's device selection and keys (runtime/src), linked through
// aotc_driver: what key this machine's device has.
#include "device.h"
#include "program_cache.h"

#include <aotc/package.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <thread>

namespace aotc::cli {

namespace {

aotc::ModelOptions modelOptions(const std::string &device) {
  aotc::ModelOptions o;
  if (!device.empty())
    o.device = device;
  return o;
}

std::string dimsText(const aotc::TensorInfo &t) {
  std::string s = "[";
  for (size_t i = 0; i < t.dimTexts.size(); ++i)
    s += (i ? ", " : "") + t.dimTexts[i];
  return s + "]";
}

/// --constants: every updatable weight of the model from \p path (all of
/// them: validate_full). A float initializer of the file that the model
/// cannot take (unknown, or compiled in) is an error, since running without
/// it would not be the file's model; integer ones the model compiled in
/// (shape data) stay as compiled, with a note.
int loadConstants(aotc::Model &model, const std::string &path) {
  auto weights = readInitializers(path);
  if (!weights) {
    std::fprintf(stderr, "aotc: error: --constants: %s\n",
                 weights.status().message().c_str());
    return 1;
  }
  std::set<std::string> updatable;
  try {
    for (const std::string &name : model.updatableConstantNames())
      updatable.insert(name);
  } catch (const aotc::Error &e) {
    std::fprintf(stderr, "aotc: error: --constants: %s\n", e.what());
    return 1;
  }
  aotc::Model::ConstantMap update;
  std::string kept;
  for (auto &[name, tensor] : *weights) {
    if (updatable.count(name)) {
      update.emplace(name, std::move(tensor));
      continue;
    }
    if (isFloatDtype(tensor.dtype())) {
      // Not updatable: the model's own error says why.
      try {
        model.updateConstants({{name, tensor}});
      } catch (const aotc::Error &e) {
        std::fprintf(stderr, "aotc: error: --constants %s: %s\n", path.c_str(),
                     e.what());
        return 1;
      }
    }
    kept += (kept.empty() ? "" : ", ") + name;
  }
  try {
    model.updateConstants(update, /*useInactive=*/false,
                          /*validateFull=*/true);
  } catch (const aotc::Error &e) {
    std::fprintf(stderr, "aotc: error: --constants %s: %s\n", path.c_str(),
                 e.what());
    return 1;
  }
  std::printf("constants: %zu updated from %s", update.size(), path.c_str());
  if (!kept.empty())
    std::printf("; kept as compiled (integer data): %s", kept.c_str());
  std::printf("\n");
  return 0;
}

/// A model .so or a package (by its first bytes).
aotc::Model loadAny(const std::string &path, const aotc::ModelOptions &o) {
  if (aotc::detail::looksLikePackage(path))
    return aotc::Model::loadPackage(path, o);
  return aotc::Model::load(path, o);
}

/// `aotc inspect` of a package: its manifest, before the model is loaded
/// (so that a package this host cannot load is still described).
void printManifest(const aotc::pkg::Package &p) {
  const aotc::pkg::Manifest &m = p.manifest();
  std::printf("package: %s\n", p.path().c_str());
  std::printf("  format version %d, written by aotc %s\n", m.formatVersion,
              m.aotcVersion.c_str());
  std::printf("  target: %s/%s, C ABI %u, model descriptor %u\n",
              m.arch.c_str(), m.os.c_str(), m.abiVersion, m.descVersion);
  std::string exts;
  for (const std::string &e : m.deviceExtensions)
    exts += (exts.empty() ? "" : ", ") + e;
  std::printf("  device: profile %s, extensions: %s\n",
              m.deviceProfileName.empty() ? "?" : m.deviceProfileName.c_str(),
              exts.empty() ? "none" : exts.c_str());
  std::printf("  model %s: %zu inputs, %zu outputs, %zu symbols, %lld "
              "constants (%llu bytes), weights: %s\n",
              m.modelName.c_str(), m.inputs.size(), m.outputs.size(),
              m.symbols.size(), (long long)m.numConstants,
              (unsigned long long)m.constantsBytes, m.weights.c_str());
  for (const aotc::pkg::SymbolSpec &s : m.symbols)
    std::printf("  symbol %s in [%lld, %lld]\n", s.name.c_str(),
                (long long)s.min, (long long)s.max);
  if (m.programBinaries.empty())
    std::printf("  program binaries: none (the first load on a device "
                "builds its program from OpenCL C)\n");
  for (const aotc::pkg::ProgramBinarySpec &b : m.programBinaries)
    std::printf("  program binary: %s\n", b.description.c_str());
  for (const aotc::pkg::ManifestEntry &e : m.entries) {
    const char *how = "";
    for (const aotc::pkg::ZipEntry &z : p.entries())
      if (z.name == e.name)
        how = z.method == 0 ? "stored" : "deflated";
    std::printf("  entry %s: %s, %llu bytes, %s, crc32 %08x\n", e.name.c_str(),
                e.role.c_str(), (unsigned long long)e.size, how, e.crc32);
  }
}

} // namespace

int runCommand(const RunArgs &args) {
  try {
    aotc::ModelOptions options = modelOptions(args.device);
    options.profile = !args.profile.empty();
    aotc::Model model = loadAny(args.model, options);
    if (!args.constants.empty() && loadConstants(model, args.constants) != 0)
      return 1;
    std::vector<aotc::TensorInfo> ins = model.inputs();
    std::vector<aotc::SymbolInfo> syms = model.symbols();
    for (const auto &[name, value] : args.dims) {
      bool known = false;
      std::string names;
      for (const aotc::SymbolInfo &s : syms) {
        known |= s.name == name;
        names += (names.empty() ? "" : ", ") + s.name;
      }
      if (!known) {
        std::fprintf(stderr,
                     "aotc: error: --dim %s: the model has no symbolic "
                     "dimension '%s' (it has: %s)\n",
                     name.c_str(), name.c_str(),
                     names.empty() ? "none" : names.c_str());
        return 1;
      }
    }
    // Each symbol's value for random inputs: --dim's, else its smallest
    // (at least 1).
    std::vector<int64_t> symbolValues;
    for (const aotc::SymbolInfo &s : syms) {
      auto it = args.dims.find(s.name);
      symbolValues.push_back(it != args.dims.end()
                                 ? it->second
                                 : std::max<int64_t>(1, s.min));
    }
    std::vector<aotc::HostTensor> inputs;
    if (!args.inputs.empty()) {
      if (args.inputs.size() != ins.size()) {
        std::fprintf(stderr,
                     "aotc: error: the model has %zu inputs, %zu files given\n",
                     ins.size(), args.inputs.size());
        return 1;
      }
      for (const std::string &f : args.inputs) {
        auto t = readTensorFile(f);
        if (!t) {
          std::fprintf(stderr, "aotc: error: %s\n",
                       t.status().message().c_str());
          return 1;
        }
        inputs.push_back(t.take());
      }
    } else {
      for (size_t i = 0; i < ins.size(); ++i) {
        std::vector<int64_t> shape;
        for (size_t d = 0; d < ins[i].dims.size(); ++d) {
          int32_t s = ins[i].dimSymbols[d];
          if (s < 0) {
            shape.push_back(ins[i].dims[d]);
            continue;
          }
          shape.push_back(symbolValues[s]);
        }
        inputs.push_back(randomTensor(ins[i].dtype, shape, args.seed + i));
      }
    }
    if (args.reserve) {
      // The sizes of the inputs run: given files set the symbols their
      // dims are (a symbol read from data is computed, its entry not read).
      for (size_t i = 0; i < ins.size() && !args.inputs.empty(); ++i)
        for (size_t d = 0; d < ins[i].dims.size(); ++d)
          if (int32_t s = ins[i].dimSymbols[d];
              s >= 0 && d < inputs[i].shape().size())
            symbolValues[s] = inputs[i].shape()[d];
      model.reserve(symbolValues);
    }
    std::printf("model %s on %s\n", model.name().c_str(),
                model.deviceName().c_str());
    for (size_t i = 0; i < inputs.size(); ++i)
      std::printf("input  %s: %s\n", ins[i].name.c_str(),
                  describeTensor(inputs[i]).c_str());
    // The outputs allocated (their pages zeroed) before the first timed run,
    // as a serving host allocates its buffers once: the first run's time
    // held their allocation (MobileNetV2's 14 x 14 depthwise convolution at
    // batch 8: 1.2-1.4 ms first against 0.26-0.39 steady, 0.9 ms of it the
    // 2.4 MB output's page faults). An output sized by a count the model
    // computes is sized by its run.
    std::vector<aotc::HostTensor> outputs;
    {
      std::vector<std::vector<int64_t>> shapes = model.outputShapes(inputs);
      std::vector<aotc::TensorInfo> infos = model.outputs();
      outputs.resize(shapes.size());
      for (size_t i = 0; i < shapes.size(); ++i)
        if (std::all_of(shapes[i].begin(), shapes[i].end(),
                        [](int64_t d) { return d >= 0; }))
          outputs[i].reset(infos[i].dtype, shapes[i]);
    }
    std::vector<double> times;
    std::vector<ProfiledRun> profiled;
    std::vector<uint8_t> evict(size_t(args.evictMb) << 20);
    for (int r = 0; r < std::max(1, args.repeat); ++r) {
      if (!evict.empty()) {
        // Another program's working set between two runs (the suite runs
        // ONNX Runtime there): every byte written, then a pause in which
        // the device's worker threads go to sleep.
        std::memset(evict.data(), r & 0xFF, evict.size());
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      auto start = std::chrono::steady_clock::now();
      // Into the same outputs every run, as a serving host would: their
      // memory is not allocated and faulted again inside the timed run
      // (on PoCL's CPU device the kernels write it in place).
      model.run(inputs, outputs);
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      if (options.profile)
        profiled.push_back(
            {static_cast<uint64_t>(
                 std::chrono::duration_cast<std::chrono::nanoseconds>(
                     start.time_since_epoch())
                     .count()),
             model.lastProfile()});
    }
    std::vector<aotc::TensorInfo> outs = model.outputs();
    for (size_t i = 0; i < outputs.size(); ++i)
      std::printf("output %s: %s\n", outs[i].name.c_str(),
                  describeTensor(outputs[i]).c_str());
    double first = times.front();
    std::sort(times.begin(), times.end());
    std::printf(
        "time: first %.3f ms, median %.3f ms, min %.3f ms over %zu runs\n",
        first, times[times.size() / 2], times.front(), times.size());
    if (options.profile) {
      ProfileNames names;
      names.kernels = model.kernelNames();
      names.summaries = model.kernelSummaries();
      for (const aotc::TensorInfo &t : ins)
        names.inputs.push_back(t.name);
      for (const aotc::TensorInfo &t : outs)
        names.outputs.push_back(t.name);
      DevicePeak peak;
      std::string error;
      if (args.peak && !measureDevicePeak(model.deviceName(), peak, error))
        std::fprintf(stderr, "aotc: warning: --peak: %s\n", error.c_str());
      printProfileTable(profiled, names, peak);
      if (!writeChromeTrace(args.profile, profiled, names, error)) {
        std::fprintf(stderr, "aotc: error: --profile: %s\n", error.c_str());
        return 1;
      }
      std::printf("trace: %s (open in https://ui.perfetto.dev or "
                  "chrome://tracing)\n",
                  args.profile.c_str());
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "aotc: error: %s\n", e.what());
    return 1;
  }
}

/// Where the .so embeds program binaries but the program did not come from
/// one: the lines of each binary's device key that this device's key
/// (runtime/src/program_cache.h, deviceKey) does not have, and its own.
static void explainUnusedBinaries(const aotc::Model &model,
                                  const std::string &device) {
  // One key per device: the parts of a program built in parts share it.
  size_t binaries = 0;
  std::vector<std::string> keys;
  for (const auto &[k, v] : model.metadata())
    if (k.rfind("aotc.prebuilt_key.", 0) == 0) {
      ++binaries;
      if (std::find(keys.begin(), keys.end(), v) == keys.end())
        keys.push_back(v);
    }
  if (keys.empty())
    return;
  rt::DeviceInfo info;
  if (rt::selectDevice(device.empty() ? nullptr : device.c_str(), info) !=
      AOTC_OK)
    return;
  auto lines = [](const std::string &text) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      out.push_back(text.substr(at, end - at));
      at = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
  };
  std::vector<std::string> mine = lines(rt::deviceKey(info));
  auto has = [](const std::vector<std::string> &v, const std::string &l) {
    return std::find(v.begin(), v.end(), l) != v.end();
  };
  std::printf("embedded program binaries: %zu (%zu device key%s), none for "
              "this device's key\n",
              binaries, keys.size(), keys.size() == 1 ? "" : "s");
  for (size_t i = 0; i < keys.size(); ++i) {
    std::vector<std::string> theirs = lines(keys[i]);
    std::printf("  key %zu differs:\n", i);
    for (const std::string &l : theirs)
      if (!has(mine, l))
        std::printf("    built for  %s\n", l.c_str());
    for (const std::string &l : mine)
      if (!has(theirs, l))
        std::printf("    this device %s\n", l.c_str());
  }
}

int inspectCommand(const std::string &path, const std::string &device) {
  try {
    if (aotc::detail::looksLikePackage(path))
      printManifest(aotc::pkg::Package::open(path));
    aotc::Model model = loadAny(path, modelOptions(device));
    std::printf("model: %s\ndevice: %s\n", model.name().c_str(),
                model.deviceName().c_str());
    int32_t source = model.programSource();
    std::printf("program: %s\n",
                source == AOTC_PROGRAM_EMBEDDED
                    ? "the binary embedded for this device (--prebuild)"
                : source == AOTC_PROGRAM_FROM_CACHE
                    ? "from the binary cache"
                    : "built from source at this load");
    if (source != AOTC_PROGRAM_EMBEDDED)
      explainUnusedBinaries(model, device);
    std::vector<aotc::SymbolInfo> syms = model.symbols();
    std::vector<int64_t> maxSyms;
    for (const auto &s : syms) {
      // A float value symbol (a Resize's scale given at run time) spans the
      // whole slot: its value is a double, checked to be finite.
      if (s.min == INT64_MIN && s.max == INT64_MAX)
        std::printf("symbol %s: a float value given at run time\n",
                    s.name.c_str());
      else
        std::printf("symbol %s in [%lld, %lld]\n", s.name.c_str(),
                    (long long)s.min, (long long)s.max);
      maxSyms.push_back(s.max);
    }
    for (const auto &t : model.inputs())
      std::printf("input %s: %s%s\n", t.name.c_str(), aotc::dtypeName(t.dtype),
                  dimsText(t).c_str());
    for (const auto &t : model.outputs())
      std::printf("output %s: %s%s\n", t.name.c_str(), aotc::dtypeName(t.dtype),
                  dimsText(t).c_str());
    uint64_t constBytes = 0;
    std::vector<aotc::ConstantInfo> consts = model.constants();
    // Initializers the ONNX graph lists as inputs: defaults a run may pass.
    for (const aotc::GraphInputInfo &g : model.graphInputs()) {
      if (g.kind == AOTC_GRAPH_INPUT_REQUIRED || g.index < 0 ||
          static_cast<size_t>(g.index) >= consts.size())
        continue;
      std::printf("default input %s: constant %s, %s\n", g.name.c_str(),
                  consts[g.index].name.c_str(),
                  g.kind == AOTC_GRAPH_INPUT_DEFAULT
                      ? "a run may replace it"
                      : "compiled in (decides sizes): a run may pass only its "
                        "value");
    }
    for (const auto &c : consts) {
      std::string shape;
      for (size_t i = 0; i < c.shape.size(); ++i)
        shape += (i ? "," : "") + std::to_string(c.shape[i]);
      std::printf("constant %s (onnx '%s'): %s[%s] %llu bytes, %s%s\n",
                  c.name.c_str(), c.onnxName.c_str(), aotc::dtypeName(c.dtype),
                  shape.c_str(), (unsigned long long)c.nbytes,
                  c.updatable ? "updatable" : "not updatable: ",
                  c.updatable ? "" : c.notUpdatableReason.c_str());
      constBytes += c.nbytes;
    }
    std::vector<std::string> kernels = model.kernelNames();
    std::vector<std::string> summaries = model.kernelSummaries();
    std::vector<std::pair<std::string, std::string>> metaList =
        model.metadata();
    std::map<std::string, std::string> meta(metaList.begin(), metaList.end());
    // Each kernel's template configuration (a .so from before they were
    // recorded has none).
    KernelConfigs configs;
    if (auto it = meta.find("aotc.kernel_configs"); it != meta.end()) {
      auto parsed = parseKernelConfigs(it->second);
      if (parsed)
        configs = *parsed;
    }
    // Kernels whose code is the same run one OpenCL function
    // (codegen/opencl/share_kernels.h).
    std::string functions;
    if (auto it = meta.find("aotc.num_kernel_functions");
        it != meta.end() && it->second != std::to_string(kernels.size()))
      functions = " (" + it->second + " OpenCL functions)";
    std::printf("kernels: %zu%s\n", kernels.size(), functions.c_str());
    for (size_t k = 0; k < kernels.size(); ++k)
      std::printf("  %s%s%s\n", kernels[k].c_str(),
                  summaries[k].empty() ? "" : ": ", summaries[k].c_str());
    if (!configs.empty()) {
      std::printf("kernel configs: %zu\n", configs.size());
      std::set<std::string> shown;
      for (size_t k = 0; k < kernels.size(); ++k)
        if (auto c = configs.find(kernels[k]); c != configs.end()) {
          std::printf("  %s: %s\n", kernels[k].c_str(),
                      kernelConfigJson(c->second).c_str());
          shown.insert(kernels[k]);
        }
      // The kernels that run chained inside another one
      // (compiler/schedule/chain_kernels.h) keep their own names.
      for (const auto &[name, c] : configs)
        if (!shown.count(name))
          std::printf("  %s (chained): %s\n", name.c_str(),
                      kernelConfigJson(c).c_str());
    }
    std::printf("constants: %zu (%llu bytes)\n", consts.size(),
                (unsigned long long)constBytes);
    // The largest values may break what the model requires of its sizes (a
    // squeezed dim is 1): say so rather than fail.
    try {
      std::printf("arena bytes at the largest symbol values: %llu\n",
                  (unsigned long long)model.arenaBytes(maxSyms));
    } catch (const aotc::Error &e) {
      std::printf("arena bytes at the largest symbol values: not valid sizes "
                  "(%s)\n",
                  e.what());
    }
    for (const auto &[k, v] : meta)
      if (k != "aotc.kernel_configs" && // shown per kernel above
          k.rfind("aotc.prebuilt_key.", 0) != 0) // keys: multi-line
        std::printf("metadata %s = %s\n", k.c_str(), v.c_str());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "aotc: error: %s\n", e.what());
    return 1;
  }
}

} // namespace aotc::cli
