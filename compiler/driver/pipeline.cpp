/// \file
/// The compile pipeline. Reads top to bottom as the list of stages.
#include "compiler/driver/pipeline.h"
#include "compiler/driver/prebuild.h"
#include "compiler/schedule/channel_blocks.h"
#include "compiler/schedule/inline_padding.h"
#include "compiler/schedule/padded_stores.h"
#include "compiler/passes/fold_batchnorm.h"
#include "compiler/passes/merge_matmuls.h"
#include "compiler/passes/split_k.h"
#include "compiler/passes/fold_program.h"
#include "compiler/passes/pack_weights.h"
#include "compiler/passes/pad_channels.h"
#include "compiler/passes/winograd.h"
#include "compiler/schedule/row_panels.h"

#include "codegen/opencl/cl_printer.h"
#include "codegen/opencl/share_kernels.h"
#include "codegen/toolchain/clang_compile.h"
#include "codegen/toolchain/data_object.h"
#include "codegen/toolchain/lld_link.h"
#include "codegen/wrapper/wrapper_emitter.h"
#include "compiler/frontend/read_file.h"
#include "compiler/lowering/lowering.h"
#include "compiler/passes/shape_inference.h"
#include "compiler/schedule/schedule.h"
#include "ir/verify.h"

#include "aotc_runtime_link.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace aotc {

namespace {

class StageTimer {
public:
  explicit StageTimer(std::vector<StageTime> &out) : out_(out) {}
  template <typename F> auto run(const std::string &stage, F &&f) {
    auto start = std::chrono::steady_clock::now();
    auto r = f();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    out_.push_back({stage, ms});
    return r;
  }

private:
  std::vector<StageTime> &out_;
};

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Expected<std::unique_ptr<Graph>> importModel(const CompileOptions &opts) {
  if (endsWith(opts.modelPath, ".onnxtxt")) {
    AOTC_ASSIGN_OR_RETURN(std::string text,
                          readRegularFile(opts.modelPath, kMaxProtobufBytes));
    return importOnnxText(text, opts.import);
  }
  return importOnnxFile(opts.modelPath, opts.import);
}

std::string baseName(const std::string &path) {
  size_t s = path.find_last_of('/');
  std::string b = s == std::string::npos ? path : path.substr(s + 1);
  size_t dot = b.find_last_of('.');
  return dot == std::string::npos ? b : b.substr(0, dot);
}

/// A private temporary directory removed on destruction.
class TempDir {
public:
  TempDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/aotc-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()))
      path_ = buf.data();
  }
  ~TempDir() {
    for (const std::string &f : files_)
      unlink(f.c_str());
    if (!path_.empty())
      rmdir(path_.c_str());
  }
  bool ok() const { return !path_.empty(); }
  Expected<std::string> write(const std::string &name,
                              const std::string &bytes) {
    std::string p = path_ + "/" + name;
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
      return makeError(p, ": cannot write temporary file");
    files_.push_back(p);
    return p;
  }

private:
  std::string path_;
  std::vector<std::string> files_;
};

/// The aotc_dtype_name spelling of \p t.
const char *abiDtypeName(DType t) {
  switch (t) {
  case DType::Float32:
    return "float32";
  case DType::UInt8:
    return "uint8";
  case DType::Int8:
    return "int8";
  case DType::UInt16:
    return "uint16";
  case DType::Int16:
    return "int16";
  case DType::UInt32:
    return "uint32";
  case DType::Int32:
    return "int32";
  case DType::Int64:
    return "int64";
  case DType::Bool:
    return "bool";
  case DType::Float64:
    return "float64";
  case DType::Float16:
    return "float16";
  case DType::BFloat16:
    return "bfloat16";
  }
  return "unknown";
}

/// The model as a package manifest describes it.
ModelSummary summarize(const LoopModule &module, const CompileOptions &opts,
                       const std::string &weightsPath,
                       const std::string &clSource) {
  ModelSummary s;
  s.name = module.name;
  auto tensors = [](const std::vector<ModuleTensor> &list) {
    std::vector<ModelSummary::Tensor> out;
    for (const ModuleTensor &t : list) {
      ModelSummary::Tensor st{t.name, abiDtypeName(t.dtype), {}};
      for (const Expr &d : t.dims)
        st.dims.push_back(printExpr(d, PrintDialect::Text));
      out.push_back(std::move(st));
    }
    return out;
  };
  s.inputs = tensors(module.inputs);
  s.outputs = tensors(module.outputs);
  for (const Symbol &sym : module.symbols)
    s.symbols.push_back({sym.name, sym.range.min, sym.range.max});
  s.numConstants = module.constants.size();
  s.constantsBytes = module.constantsBytes;
  s.weightsPath = weightsPath;
  s.weights = !weightsPath.empty() ? "side-file"
              : opts.weightless    ? "weightless"
                                   : "embedded";
  s.deviceProfileJson = deviceProfileJson(opts.schedule.profile);
  s.deviceProfileName = opts.schedule.profile.name;
  // The extensions the kernels enable: the printer writes one pragma each.
  const std::string pragma = "#pragma OPENCL EXTENSION ";
  for (size_t at = clSource.find(pragma); at != std::string::npos;
       at = clSource.find(pragma, at + 1)) {
    size_t start = at + pragma.size();
    size_t end = clSource.find_first_of(" :\n", start);
    std::string ext = clSource.substr(
        start, end == std::string::npos ? std::string::npos : end - start);
    if (!ext.empty() &&
        std::find(s.extensions.begin(), s.extensions.end(), ext) ==
            s.extensions.end())
      s.extensions.push_back(ext);
  }
  return s;
}

} // namespace

Expected<std::string> findRuntimeArchive() {
  struct stat st;
  if (const char *env = std::getenv("AOTC_RUNTIME_ARCHIVE")) {
    if (stat(env, &st) == 0)
      return std::string(env);
    return makeError("AOTC_RUNTIME_ARCHIVE: no such file '", env, "'");
  }
  std::vector<std::string> candidates;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    std::string dir(exe);
    dir = dir.substr(0, dir.find_last_of('/'));
    candidates.push_back(dir + "/libaotc_model_runtime.a");
    candidates.push_back(dir + "/../lib/aotc/libaotc_model_runtime.a");
  }
  candidates.push_back(AOTC_MODEL_RUNTIME_ARCHIVE);
  for (const std::string &c : candidates)
    if (stat(c.c_str(), &st) == 0)
      return c;
  return makeError("cannot find the model runtime archive "
                   "libaotc_model_runtime.a (looked in ",
                   candidates.front(), " and ", candidates.back(),
                   "; set AOTC_RUNTIME_ARCHIVE)");
}

Expected<CompileResult> compileModel(const CompileOptions &opts) {
  CompileResult result;
  StageTimer timer(result.times);
  auto dumpGraph = [&](const char *pass, const Graph &g) {
    if (opts.printAfterAll)
      std::cerr << "// ----- graph after " << pass << " -----\n" << g.print();
  };

  // 1. Frontend: ONNX -> Graph IR (checker, ONNX and symbolic shape inference).
  auto imported = timer.run("import", [&] { return importModel(opts); });
  if (!imported)
    return imported.status();
  std::unique_ptr<Graph> graph = imported.take();
  dumpGraph("import", *graph);

  // 2. Graph passes.
  FoldProgram foldProgram;
  // The channel block of the activations around convolutions (0: NCHW
  // throughout), which the weight packing lays convolution weights out for.
  const int64_t convBlock =
      opts.channelBlocks && opts.schedule.registerTiling
          ? channelBlock(opts.schedule.profile)
          : 0;
  Status passes = timer.run("passes", [&]() -> Status {
    graph->removeDeadNodes();
    dumpGraph("dce", *graph);
    if (foldBatchNorms(*graph))
      dumpGraph("fold-batchnorm", *graph);
    // The naive kernels (the reference) read the weights as ONNX lays them
    // out; the tiled ones read them packed for their loads.
    if (opts.schedule.registerTiling) {
      // Sibling MatMuls of one activation as one (merge_matmuls.h); the
      // naive kernels (the reference) keep the graph's own.
      if (opts.mergeMatMuls && mergeSiblingMatMuls(*graph))
        dumpGraph("merge-matmuls", *graph);
      // Deep GEMMs as S partial products and their sum (split_k.h).
      if (opts.splitK && splitDeepMatMuls(*graph, opts.schedule.profile))
        dumpGraph("split-k", *graph);
      // Channel counts the block does not divide, padded to whole blocks
      // (pad_channels.h), before their weights are packed.
      if (convBlock > 0 && opts.padChannels && padChannels(*graph, convBlock))
        dumpGraph("pad-channels", *graph);
      // 3 x 3 convolutions as Winograd F(2x2, 3x3) where asked (winograd.h).
      if (opts.winograd &&
          rewriteWinograd(*graph, convBlock, opts.schedule.profile,
                          opts.winogradAtOutputs))
        dumpGraph("winograd", *graph);
      packWeights(*graph, opts.schedule.profile.vectorLanes, convBlock);
      dumpGraph("pack-weights", *graph);
    }
    // What reads weights alone moves to the folding program.
    AOTC_ASSIGN_OR_RETURN(foldProgram, extractFoldProgram(*graph));
    dumpGraph("extract-fold-program", *graph);
    AOTC_RETURN_IF_ERROR(graph->verify());
    if (foldProgram.graph)
      AOTC_RETURN_IF_ERROR(foldProgram.graph->verify().withContext(
          "the folding program"));
    return Status::ok();
  });
  AOTC_RETURN_IF_ERROR(passes);
  if (opts.emit == "graph") {
    result.emitted = graph->print();
    if (foldProgram.graph)
      result.emitted += "// ----- folding program -----\n" +
                        foldProgram.graph->print();
    return result;
  }

  // 3. Lowering: ops -> compute definitions.
  LowerOptions lowerOpts;
  lowerOpts.fuseAttention =
      opts.schedule.registerTiling &&
      (opts.fuseAttention == CompileOptions::Fuse::On ||
       (opts.fuseAttention == CompileOptions::Fuse::Auto &&
        opts.schedule.profile.family == "gpu"));
  lowerOpts.subsampleStridedPointwiseConvs =
      opts.subsampleStrided && opts.schedule.registerTiling &&
      opts.schedule.profile.family != "gpu";
  // Large GEMMs read their activation in panels of their tile's rows
  // (row_panels.h).
  if (opts.rowPanels && opts.schedule.registerTiling &&
      opts.schedule.profile.family != "gpu") {
    const DeviceProfile profile = opts.schedule.profile;
    const bool always = opts.rowPanelsAlways;
    lowerOpts.rowPanel = [profile, always](int64_t m, int64_t n, int64_t k,
                                           DType t, bool computed) {
      return gemmRowPanel(profile, m, n, k, t, computed, always);
    };
  }
  auto lowered = timer.run("lowering",
                           [&] { return lowerGraph(*graph, lowerOpts); });
  if (!lowered)
    return lowered.status();
  // Channel-blocked activations around convolutions on CPU-style targets
  // (channel_blocks.h); the folding program keeps its layouts.
  // Their padded copies read through the padding's selects where those
  // are the same for every lane (inline_padding.h).
  if (convBlock > 0) {
    timer.run("channel-blocks", [&] {
      return blockChannels(*lowered, convBlock);
    });
    timer.run("inline-padding", [&] { return inlinePaddedReads(*lowered); });
    // The other readers of a value with a padded copy read the copy, so
    // that the value's reduction can store into it (padded_stores.h).
    if (opts.schedule.paddedStores)
      timer.run("padded-stores", [&] {
        return readThroughPaddedCopies(*lowered);
      });
  }
  Expected<LoweredGraph> foldLowered = LoweredGraph();
  if (foldProgram.graph) {
    foldLowered = timer.run("lowering", [&] {
      return lowerGraph(*foldProgram.graph);
    });
    if (!foldLowered)
      return foldLowered.status().withContext("the folding program");
  }
  if (opts.emit == "lowered") {
    result.emitted = lowered->print();
    if (foldProgram.graph)
      result.emitted += "// ----- folding program -----\n" +
                        foldLowered->print();
    return result;
  }

  // 4. Scheduling: fusion, kernels, memory plan. The Loop IR verifier runs
  // after every Loop IR pass under --verify-each, and on the final module
  // always.
  // Every verifier call of this compile shares one cache of proofs
  // (ir/bounds.h): later passes ask again what earlier ones proved.
  ProofCache proofs;
  ScheduleOptions scheduleOpts = opts.schedule;
  scheduleOpts.proofs = &proofs;
  ClOptions codegenOptions;
  codegenOptions.narrowIndices =
      opts.indexBits == CompileOptions::IndexBits::Narrow ||
      (opts.indexBits == CompileOptions::IndexBits::Auto &&
       opts.schedule.profile.family == "gpu");
  // PoCL's erf is slow (cl_math.h); GPU drivers keep their own.
  codegenOptions.ownMath = opts.schedule.profile.family == "cpu";
  // x86 LLVM branches around each vector select on a scalar condition.
  codegenOptions.laneMaskSelects = opts.schedule.profile.family == "cpu";
  // Persistent groups cut where the kernels repeat, so that equal groups
  // share a function (share_kernels.h): the classes by the printed code.
  // Their keys are kept for shareKernels, which prints them again only
  // under --verify-each, to check that no kernel changed since.
  ShareKeys shareKeys;
  if (opts.shareKernels)
    scheduleOpts.kernelClasses = [&codegenOptions,
                                  &shareKeys](const LoopModule &m) {
      Expected<std::vector<int>> classes =
          kernelClasses(m, codegenOptions, &shareKeys);
      return classes.isOk() ? classes.take() : std::vector<int>();
    };
  const char *verifyEnv = std::getenv("AOTC_VERIFY_EACH");
  bool verifyEach =
      opts.verifyEach || (verifyEnv && std::string(verifyEnv) == "1");
  LoopPassHook afterPass = [&](const std::string &pass,
                               const LoopModule &m) -> Status {
    if (opts.printAfterAll)
      std::cerr << "// ----- loop IR after " << pass << " -----\n" << m.print();
    if (!verifyEach)
      return Status::ok();
    return verifyModule(m, &proofs)
        .withContext("Loop IR verifier after pass '" + pass + "'");
  };
  auto scheduled = timer.run("schedule", [&] {
    return scheduleGraph(*graph, lowered.take(), afterPass, scheduleOpts);
  });
  if (!scheduled)
    return scheduled.status();
  LoopModule module = scheduled.take();
  if (foldProgram.graph) {
    // Scheduled like the model (same device profile); configurations given
    // by kernel name are the model's.
    ScheduleOptions foldOpts = scheduleOpts;
    foldOpts.kernelConfigs.clear();
    foldOpts.persistentKernels = false; // run once per update
    auto fold = timer.run("schedule", [&] {
      return scheduleGraph(*foldProgram.graph, foldLowered.take(), afterPass,
                           foldOpts);
    });
    if (!fold)
      return fold.status().withContext("the folding program");
    AOTC_RETURN_IF_ERROR(
        attachFoldProgram(module, fold.take(), foldProgram.targets));
  }
  if (!verifyEach) {
    Status verified =
        timer.run("verify", [&] { return verifyModule(module, &proofs); });
    AOTC_RETURN_IF_ERROR(
        verified.withContext("Loop IR verifier after the last pass"));
  }
  module.metadata["source"] = baseName(opts.modelPath);
  // The target and every kernel's template configuration, for `aotc
  // inspect` and as the starting point of a --kernel-configs file.
  KernelConfigs configs;
  for (const Kernel &k : module.kernels) {
    if (k.chained.empty()) {
      AOTC_ASSIGN_OR_RETURN(configs[k.name], parseKernelConfig(k.config));
    }
    for (const auto &[name, config] : k.chained) {
      AOTC_ASSIGN_OR_RETURN(configs[name], parseKernelConfig(config));
    }
  }
  module.metadata["aotc.device_profile"] =
      deviceProfileJson(opts.schedule.profile);
  module.metadata["aotc.kernel_configs"] = kernelConfigsJson(configs, false);
  if (opts.emit == "kernel-configs") {
    result.emitted = kernelConfigsJson(configs, true) + "\n";
    return result;
  }
  result.numKernels = module.kernels.size();
  result.numLaunches = module.launches().size();
  result.numFoldKernels =
      module.foldProgram ? module.foldProgram->kernels.size() : 0;
  result.arenaBytes = printExpr(module.arenaBytes);
  result.constantsBytes = module.constantsBytes;
  if (opts.emit == "loop") {
    result.emitted = module.print();
    return result;
  }

  // The constants blob: in the .so (a weightless one: only the prefix before
  // the updatable constants), or in a side file the runtime maps.
  bool sideFile = !opts.weightless &&
                  (opts.weightsFile || module.constantsBytes > kSideFileThreshold);
  uint64_t stored =
      opts.weightless ? module.constantsStoredBytes : module.constantsBytes;
  // The blob's first \p limit bytes in order, in pieces: each constant at
  // its offset, zeros between. A side file is written from these pieces, so
  // the weights are not held a second time (they may be mapped external
  // data of several GB).
  auto forEachPiece = [&](uint64_t limit, auto &&emit) {
    std::vector<const ModuleConstant *> order;
    for (const ModuleConstant &c : module.constants)
      if (c.data.size() && c.offset < limit)
        order.push_back(&c);
    std::sort(order.begin(), order.end(),
              [](const ModuleConstant *a, const ModuleConstant *b) {
                return a->offset < b->offset;
              });
    static const char zeros[4096] = {};
    uint64_t at = 0;
    auto pad = [&](uint64_t to) {
      while (at < to) {
        uint64_t n = std::min<uint64_t>(sizeof(zeros), to - at);
        emit(zeros, n);
        at += n;
      }
    };
    for (const ModuleConstant *c : order) {
      pad(c->offset);
      emit(reinterpret_cast<const char *>(c->data.data()),
           static_cast<uint64_t>(c->data.size()));
      at += static_cast<uint64_t>(c->data.size());
    }
    pad(limit);
  };
  // FNV-1a over the size and bytes: ties the side file to this .so.
  uint64_t weightsId = 1469598103934665603ull;
  if (sideFile) {
    auto mix = [&](uint8_t b) { weightsId = (weightsId ^ b) * 1099511628211ull; };
    for (int k = 0; k < 8; ++k)
      mix(static_cast<uint8_t>(stored >> (8 * k)));
    forEachPiece(stored, [&](const char *p, uint64_t n) {
      for (uint64_t i = 0; i < n; ++i)
        mix(static_cast<uint8_t>(p[i]));
    });
  }
  // The side file's name, in the .so's folder.
  std::string weightsName;
  if (sideFile) {
    std::string out = opts.outputPath.empty() ? "model.so" : opts.outputPath;
    size_t slash = out.rfind('/');
    weightsName =
        (slash == std::string::npos ? out : out.substr(slash + 1)) + ".weights";
  }

  // 5. Code generation: OpenCL C and the C++ wrapper.
  std::string clSource, wrapper;
  Status gen = timer.run("codegen", [&]() -> Status {
    const ClOptions cl = codegenOptions;
    // emitOpenCL checks the functions shared (verifyKernelFunctions).
    if (opts.shareKernels)
      AOTC_RETURN_IF_ERROR(
          shareKernels(module, cl, &shareKeys, verifyEach).status());
    AOTC_ASSIGN_OR_RETURN(clSource, emitOpenCL(module, cl));
    return Status::ok();
  });
  AOTC_RETURN_IF_ERROR(gen);
  if (opts.emit == "cl") {
    result.emitted = clSource;
    return result;
  }
  const std::string clOptions = buildOptions(module);
  // The program built for the devices asked for, to embed (prebuild.h);
  // one binary per device key.
  std::vector<PrebuiltProgram> prebuilt;
  if ((!opts.prebuild.empty() || !opts.programBinaries.empty()) &&
      opts.emit.empty()) {
    Status built = timer.run("prebuild", [&]() -> Status {
      // A device's binaries (one program or its parts) once: a second
      // --prebuild or --program-binary for a device already there is
      // dropped.
      auto add = [&](std::vector<PrebuiltProgram> programs) {
        if (programs.empty())
          return;
        for (const PrebuiltProgram &q : prebuilt)
          if (q.deviceKey == programs.front().deviceKey)
            return;
        for (PrebuiltProgram &p : programs)
          prebuilt.push_back(std::move(p));
      };
      for (const std::string &pair : opts.programBinaries) {
        size_t comma = pair.find(',');
        if (comma == std::string::npos)
          return makeError("--program-binary ", pair,
                           ": expected KEY,BIN (the files of "
                           "aotc-build-program --key-out KEY --out BIN)");
        AOTC_ASSIGN_OR_RETURN(
            PrebuiltProgram p,
            readProgramBinary(pair.substr(0, comma), pair.substr(comma + 1),
                              clSource, clOptions));
        std::vector<PrebuiltProgram> one;
        one.push_back(std::move(p));
        add(std::move(one));
      }
      if (opts.prebuild.empty())
        return Status::ok();
      std::string builder = findProgramBuilderTool();
      const size_t jobs = prebuildJobs();
      for (const std::string &spec : opts.prebuild) {
        AOTC_ASSIGN_OR_RETURN(
            std::vector<PrebuiltProgram> programs,
            prebuildProgram(spec, clSource, clOptions, builder, jobs));
        add(std::move(programs));
      }
      return Status::ok();
    });
    AOTC_RETURN_IF_ERROR(built);
  }
  Status wrapped = timer.run("wrapper", [&]() -> Status {
    WrapperOptions wo;
    wo.clSourceSize = clSource.size();
    wo.clBuildOptions = clOptions;
    wo.weightless = opts.weightless;
    wo.weightsFile = weightsName;
    wo.weightsId = weightsId;
    std::string described;
    for (const PrebuiltProgram &p : prebuilt) {
      wo.programBinaries.push_back({p.deviceKey, p.binary.size()});
      result.prebuilt.push_back({describePrebuilt(p), p.deviceKey});
      described += (described.empty() ? "" : "; ") +
                   result.prebuilt.back().description;
    }
    if (!described.empty())
      module.metadata["aotc.prebuilt"] = described;
    // The keys themselves, for aotc inspect to say how a device that loads
    // none of them differs.
    for (size_t i = 0; i < prebuilt.size(); ++i)
      module.metadata["aotc.prebuilt_key." + std::to_string(i)] =
          prebuilt[i].deviceKey;
    AOTC_ASSIGN_OR_RETURN(wrapper, emitWrapper(module, wo));
    return Status::ok();
  });
  AOTC_RETURN_IF_ERROR(wrapped);
  if (opts.emit == "cpp") {
    result.emitted = wrapper;
    return result;
  }
  if (!opts.emit.empty())
    return makeError("unknown --emit kind '", opts.emit,
                     "' (expected graph, lowered, loop, cl or cpp)");
  if (opts.outputPath.empty())
    return makeError("no output file given (-o)");

  // 6. Toolchain: clang (wrapper), LLVM (constants + kernel source), lld.
  TempDir tmp;
  if (!tmp.ok())
    return makeError("cannot create a temporary directory");
  auto wrapperObj = timer.run("clang", [&] {
    toolchain::CompileOptions co;
    co.optLevel = opts.wrapperOptLevel;
    return toolchain::compileCxxToObject(wrapper, module.name + "_wrapper.cpp",
                                         co);
  });
  if (!wrapperObj)
    return wrapperObj.status().withContext("compiling the wrapper");
  if (sideFile) {
    // A page of header (magic, id, payload size), then the blob: the
    // runtime maps the file and its payload is page aligned.
    Status wrote = timer.run("weights file", [&]() -> Status {
      std::string path = opts.outputPath + ".weights";
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      std::string header(4096, '\0');
      std::memcpy(&header[0], "AOTCWGT1", 8);
      std::memcpy(&header[8], &weightsId, 8);
      std::memcpy(&header[16], &stored, 8);
      out.write(header.data(), static_cast<std::streamsize>(header.size()));
      forEachPiece(stored, [&](const char *p, uint64_t n) {
        out.write(p, static_cast<std::streamsize>(n));
      });
      out.close();
      if (!out)
        return makeError("cannot write the weights file '", path, "'");
      return Status::ok();
    });
    AOTC_RETURN_IF_ERROR(wrote);
  }
  auto dataObj = timer.run("constants", [&] {
    // The blob in the .so: built here, when it is written, not held through
    // code generation and the wrapper's compile.
    std::string blob;
    if (!sideFile) {
      blob.reserve(stored);
      forEachPiece(stored,
                   [&](const char *p, uint64_t n) { blob.append(p, n); });
    }
    std::string src = clSource;
    std::vector<toolchain::DataSymbol> syms = {
        // Page aligned: a CPU device reads the weights where the .so is
        // mapped (CL_MEM_USE_HOST_PTR needs the device's base alignment).
        {kConstantsBlobSymbol, blob.data(), blob.size(), 4096, true},
        {kKernelsSourceSymbol, src.c_str(), src.size() + 1, 16, false}};
    for (size_t i = 0; i < prebuilt.size(); ++i)
      syms.push_back({programBinarySymbol(i), prebuilt[i].binary.data(),
                      prebuilt[i].binary.size(), 16, false});
    return toolchain::writeDataObject(syms);
  });
  if (!dataObj)
    return dataObj.status().withContext("writing the constants object");
  AOTC_ASSIGN_OR_RETURN(std::string runtimeArchive, findRuntimeArchive());
  Status linked = timer.run("lld", [&]() -> Status {
    AOTC_ASSIGN_OR_RETURN(std::string wrapperPath,
                          tmp.write("wrapper.o", *wrapperObj));
    AOTC_ASSIGN_OR_RETURN(std::string dataPath,
                          tmp.write("constants.o", *dataObj));
    AOTC_ASSIGN_OR_RETURN(
        std::string mapPath,
        tmp.write("model.map", AOTC_MODEL_VERSION_SCRIPT_TEXT));
    toolchain::LinkOptions lo;
    lo.inputs = {wrapperPath, dataPath};
    lo.wholeArchives = {runtimeArchive};
#ifdef AOTC_SANITIZER_BUILD
    // The instrumented runtime needs the sanitizer runtime of the process
    // that loads the model (itself instrumented).
    lo.allowUndefined = true;
#endif
    // So does an instrumented runtime archive named by AOTC_RUNTIME_ARCHIVE
    // (scripts/ci_extra.sh tsan links compiled models against the
    // ThreadSanitizer build's) when AOTC_RUNTIME_SANITIZED=1 says so.
    if (const char *s = std::getenv("AOTC_RUNTIME_SANITIZED"))
      lo.allowUndefined |= std::string(s) == "1" &&
                           std::getenv("AOTC_RUNTIME_ARCHIVE") != nullptr;
    lo.output = opts.outputPath;
    lo.versionScript = mapPath;
    return toolchain::linkSharedObject(lo);
  });
  AOTC_RETURN_IF_ERROR(linked);
  result.summary =
      summarize(module, opts, sideFile ? opts.outputPath + ".weights" : "",
                clSource);
  if (opts.keepSources) {
    result.clSource = std::move(clSource);
    result.wrapperSource = std::move(wrapper);
  }
  return result;
}

} // namespace aotc
