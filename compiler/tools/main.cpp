/// \file
/// The aotc command-line tool.
#include "compiler/tools/commands.h"

#include <CLI/CLI.hpp>

#include <cstdio>

using namespace aotc;

namespace {

/// True (and says so) if a flag and its opposite were both given.
bool bothGiven(bool a, const char *aName, bool b, const char *bName) {
  if (a && b)
    std::fprintf(stderr, "aotc: error: give %s or %s, not both\n", aName,
                 bName);
  return a && b;
}

int runCli(int argc, char **argv) {
  CLI::App app{
      "aotc: ahead-of-time compiler from ONNX to OpenCL shared objects"};
  app.require_subcommand(1);

  CompileOptions copts;
  bool timePasses = false;
  std::vector<std::string> dimSpecs;
  auto *compile =
      app.add_subcommand("compile", "compile an ONNX model to a model .so");
  compile->add_option("model", copts.modelPath, "model.onnx or model.onnxtxt")
      ->required();
  compile->add_option("-o,--output", copts.outputPath,
                      "the model .so to write");
  compile->add_option("--dim", dimSpecs,
                      "symbol range NAME=MIN:MAX (or NAME=VALUE)");
  compile->add_option("--emit", copts.emit,
                      "print an artifact instead: "
                      "graph|lowered|loop|kernel-configs|cl|cpp");
  compile->add_flag("--time-passes", timePasses,
                    "print the time of each stage");
  compile->add_flag("--print-after-all", copts.printAfterAll,
                    "print the IR after each pass");
  compile->add_flag("--verify-each", copts.verifyEach,
                    "run the Loop IR verifier after every Loop IR pass");
  bool naiveKernels = false;
  compile->add_flag("--weights-file", copts.weightsFile,
                    "write the constants to OUTPUT.weights beside the .so, "
                    "which the runtime maps at load (automatic above 1 GiB)");
  compile->add_flag("--weightless", copts.weightless,
                    "leave the updatable weights out of the .so: the host "
                    "gives them with aotc_container_update_constants (or "
                    "aotc run --constants) before the first run");
  compile
      ->add_option("--prebuild", copts.prebuild,
                   "build the OpenCL program now for this machine's device "
                   "(cpu, gpu, gpu:N, a name substring; repeatable) and embed "
                   "the binary in the .so: a load on a device with the same "
                   "driver, name and (CPUs) instruction set compiles nothing")
      ->allow_extra_args(false);
  compile
      ->add_option("--program-binary", copts.programBinaries,
                   "KEY,BIN: embed a program binary built on another machine "
                   "by aotc-build-program --select DEVICE --source M.cl --out "
                   "BIN --key-out KEY from this compile's --emit=cl output "
                   "(checked; repeatable)")
      ->allow_extra_args(false);
  compile->add_flag("--naive-kernels", naiveKernels,
                    "one work-item per output element, no register tiling "
                    "(the reference the fast kernels are checked against)");
  bool noSizeVariants = false;
  compile->add_flag("--no-size-variants", noSizeVariants,
                    "one kernel per fused group, planned for the smallest "
                    "sizes; by default a kernel whose best configuration "
                    "differs at larger symbol values (a batch of 8) is also "
                    "built planned for those, and each run launches the one "
                    "planned for its sizes");
  bool noMergeMatMuls = false, noShareKernels = false, noSplitK = false,
       noChannelBlocks = false, noPadChannels = false, noPaddedStores = false,
       noInPlace = false, noChainKernels = false, noPersistentKernels = false,
       noSubsampleStrided = false, noRowPanels = false, rowPanelsAlways = false;
  bool narrowIndices = false, wideIndices = false;
  compile->add_flag("--narrow-indices", narrowIndices,
                    "compute a kernel's index math in 32 bits where its "
                    "index values provably fit for every symbol value in its "
                    "declared range (--dim); the default on GPU profiles");
  compile->add_flag("--wide-indices", wideIndices,
                    "compute every kernel's index math in 64 bits; the "
                    "default on CPU profiles");
  bool fuseAttention = false, noFuseAttention = false;
  compile->add_flag("--fuse-attention", fuseAttention,
                    "attention's MatMul, Softmax and MatMul (with the scale "
                    "and mask between them) as one kernel that never stores "
                    "the scores, on any profile (the default on GPU "
                    "profiles, where it is a work-group per block of query "
                    "rows; off on CPU profiles, whose kernel of one query "
                    "row per work-item is slower than the separate kernels)");
  compile->add_flag("--no-fuse-attention", noFuseAttention,
                    "keep attention's MatMul, Softmax and MatMul as separate "
                    "kernels on GPU profiles too");
  compile->add_flag("--no-merge-matmuls", noMergeMatMuls,
                    "keep sibling MatMuls of one activation (q, k, v) as "
                    "separate GEMMs instead of one over their concatenated "
                    "weights");
  compile->add_flag("--no-share-kernels", noShareKernels,
                    "print one OpenCL function per kernel, instead of one "
                    "for all kernels whose code is identical (a network's "
                    "repeated blocks), which the OpenCL compiler then "
                    "builds once");
  compile->add_flag("--no-split-k", noSplitK,
                    "GPU profiles: keep deep MatMuls (K >= 4 N, K >= 2048) "
                    "as one GEMM instead of S partial products over K/S "
                    "steps each and their sum");
  compile->add_flag("--no-channel-blocks", noChannelBlocks,
                    "CPU profiles: keep the activations around convolutions "
                    "in NCHW instead of channels in blocks of two vectors "
                    "([N, C/32, H, W, 32] with 16 lanes)");
  compile->add_flag("--no-padded-stores", noPaddedStores,
                    "CPU profiles: keep a convolution's padded input as a copy "
                    "of its own instead of storing the producing kernel's "
                    "output into the padded buffer");
  compile->add_flag("--no-in-place", noInPlace,
                    "CPU profiles: give every kernel output its own place in "
                    "the arena instead of storing it over an input the kernel "
                    "reads for the last time (where each work-item reads an "
                    "element only before it stores it)");
  compile->add_flag("--no-chain-kernels", noChainKernels,
                    "CPU profiles: keep consecutive contractions as separate "
                    "kernels instead of one where each work-item of the second "
                    "reads only what the same work-item of the first wrote (a "
                    "1 x 1 projection and the next 1 x 1 expansion)");
  compile->add_flag("--no-persistent-kernels", noPersistentKernels,
                    "CPU profiles: launch every kernel on its own instead of "
                    "consecutive kernels as one persistent kernel, whose "
                    "work-groups (one per compute unit) claim each kernel's "
                    "work-items and wait for the last one before the next "
                    "kernel (per-kernel times in `aotc run --profile` need "
                    "it)");
  bool winograd = false, noWinograd = false;
  compile->add_flag(
      "--winograd", winograd,
      "CPU profiles: stride-1 3 x 3 convolutions of 64 or more "
      "channels (the profile's winograd_min_channels where set: "
      "128 on zen5-avx512) as Winograd F(2x2, 3x3), 16 products per input "
      "channel and 2 x 2 outputs instead of 36; where a value "
      "of the transforms is not finite, the direct sum "
      "(rounding differs from the direct form's). The default "
      "does so except where a convolution's result leaves the "
      "channel blocks at once (a graph output, or read only "
      "through element-wise ops that end in graph outputs), "
      "which it runs direct; this flag rewrites those too");
  compile->add_flag("--no-winograd", noWinograd,
                    "CPU profiles: keep every convolution direct, rounded as "
                    "ONNX Runtime's and the naive kernels' are")
      ->excludes("--winograd");
  compile->add_flag("--no-subsample-strided", noSubsampleStrided,
                    "CPU profiles: run a 1 x 1 convolution of stride above 1 "
                    "over its input in place instead of at stride 1 over a "
                    "copy of the pixels it reads");
  compile->add_flag("--no-row-panels", noRowPanels,
                    "CPU profiles: read a large GEMM's activation (4 MiB or "
                    "more, 256 KiB or more when the model computes it) in "
                    "place instead of through a copy in panels of its "
                    "register tile's rows");
  compile
      ->add_flag("--row-panels-always", rowPanelsAlways,
                 "CPU profiles: read every GEMM's activation through "
                 "panels of its tile's rows where they apply, whatever "
                 "its size (for tests)")
      ->excludes("--no-row-panels");
  compile->add_flag("--no-pad-channels", noPadChannels,
                    "CPU profiles: keep convolution channel counts that the "
                    "channel block does not divide (24, 144) in NCHW instead "
                    "of padding them with zero channels to whole blocks");
  std::string vectorLanes, deviceProfile, kernelConfigsPath;
  compile->add_option("--vector-lanes", vectorLanes,
                      "shorthand for --device-profile: 8 (generic-avx2), 16 "
                      "(generic-avx512, AVX-512 under PoCL) or host (this "
                      "CPU's: zen5-avx512 on AMD Zen 5, generic-avx512 with "
                      "AVX-512F, else generic-avx2; with this CPU's "
                      "last-level cache size)")
      ->check(CLI::IsMember({"8", "16", "host"}));
  compile->add_option(
      "--device-profile", deviceProfile,
      "the target the kernels' configurations are chosen for: "
      "generic-avx2 (default), generic-avx512 (wider tiles over long "
      "reductions), zen5-avx512 (16 accumulator vectors), generic-gpu, a "
      "JSON file "
      "(from aotc devices --profile), or cl:DEVICE to query an OpenCL "
      "device (cpu, gpu, gpu:N, a name substring)");
  compile->add_option(
      "--kernel-configs", kernelConfigsPath,
      "JSON file of per-kernel template configurations that replace the "
      "heuristic's (the format --emit=kernel-configs prints)");
  compile->add_option("--wrapper-opt", copts.wrapperOptLevel,
                      "optimization level of the wrapper (0-3)");
  cli::PackageArgs pargs;
  compile->add_option("--package", pargs.path,
                      "also write an .aotpkg package (zip: manifest.json, "
                      "the .so, its weights stored for mapping); -o may be "
                      "left out");
  compile->add_flag("--package-sources", pargs.sources,
                    "with --package: add the OpenCL C kernels and the "
                    "wrapper C++ under sources/");
  compile->add_flag("--embed-weights", pargs.embedWeights,
                    "with --package: keep the weights inside the .so instead "
                    "of a side file (the whole .so is then copied to memory "
                    "at load)");

  cli::RunArgs rargs;
  std::vector<std::string> runDims;
  auto *run =
      app.add_subcommand("run", "run a model .so on random or given inputs");
  run->add_option("model", rargs.model, "the model .so or .aotpkg package")->required();
  run->add_option("--inputs", rargs.inputs,
                  "TensorProto .pb files, one per input");
  run->add_option("--device", rargs.device,
                  "cpu, gpu, gpu:N, or a name substring");
  run->add_option("--repeat", rargs.repeat, "number of timed runs");
  run->add_option("--dim", runDims,
                  "symbol value for random inputs NAME=VALUE");
  run->add_option("--seed", rargs.seed, "random seed");
  run->add_flag("--reserve", rargs.reserve,
                "before the first run, size the arena and ready the kernels "
                "for the run's symbol values (aotc_container_reserve), as a "
                "serving host does at load for its largest batch");
  run->add_option("--evict-mb", rargs.evictMb,
                  "write this many MB between timed runs (untimed), so that "
                  "each run starts with cold caches and sleeping device "
                  "threads, as in the interleaved benchmark suite")
      ->check(CLI::Range(0, 4096));
  run->add_option("--constants", rargs.constants,
                  "load the weights from this ONNX file (or folder of .pb "
                  "tensors) into the model before running "
                  "(aotc_container_update_constants)");
  run->add_option("--profile", rargs.profile,
                  "time every kernel and copy: write a Chrome trace to this "
                  "file and print a per-kernel table");
  run->add_flag("--peak", rargs.peak,
                "with --profile: measure the device's FMA and copy peak for "
                "the table");

  std::string inspectModel, inspectDevice;
  auto *inspect =
      app.add_subcommand("inspect", "describe a model .so or package");
  inspect->add_option("model", inspectModel, "the model .so or .aotpkg package")->required();
  inspect->add_option("--device", inspectDevice, "device to load it on");

  std::string devicesProfile;
  auto *devices =
      app.add_subcommand("devices", "list OpenCL platforms and devices");
  devices->add_option("--profile", devicesProfile,
                      "print a profile as JSON, for aotc compile "
                      "--device-profile: an OpenCL device's (cpu, gpu, gpu:N, "
                      "a name substring), a built-in one (generic-avx2, "
                      "generic-avx512, zen5-avx512, generic-gpu), host (what "
                      "--vector-lanes host compiles for), or a JSON file's "
                      "(checked and completed)");

  cli::TestArgs targs;
  auto *test = app.add_subcommand(
      "test", "compile and check ONNX backend-test case directories");
  test->add_option("cases", targs.cases, "case directories");
  test->add_option("--cases-from", targs.casesFrom,
                   "file listing case directories");
  test->add_option("--root", targs.root,
                   "directory that --cases-from entries are relative to");
  test->add_option("--device", targs.device, "device to run on");
  test->add_option("--rtol", targs.rtol, "relative tolerance");
  test->add_option("--atol", targs.atol, "absolute tolerance");
  test->add_flag("-v,--verbose", targs.verbose, "print passing cases too");
  test->add_flag("--naive-kernels", targs.naiveKernels,
                 "compile the cases as aotc compile --naive-kernels");
  test->add_flag("--fuse-attention", targs.fuseAttention,
                 "compile the cases as aotc compile --fuse-attention (by "
                 "default as aotc compile: fused on GPU profiles only)");
  test->add_flag("--narrow-indices", targs.narrowIndices,
                 "compile the cases as aotc compile --narrow-indices (by "
                 "default as aotc compile: 32-bit indices on GPU profiles "
                 "only)");
  test->add_flag("--no-winograd", targs.noWinograd,
                 "compile the cases as aotc compile --no-winograd");
  test->add_flag("--row-panels-always", targs.rowPanelsAlways,
                 "compile the cases as aotc compile --row-panels-always");
  test->add_option("--device-profile", targs.deviceProfile,
                   "compile the cases as aotc compile --device-profile");
  test->add_option("--kernel-configs", targs.kernelConfigs,
                   "compile the cases as aotc compile --kernel-configs");

  cli::BenchArgs bargs;
  auto *bench = app.add_subcommand(
      "bench", "compile, check against ONNX Runtime and time an ONNX model "
               "beside ONNX Runtime and IREE (bench/cpu/run.py)");
  bench->add_option("model", bargs.model, "the ONNX model")->required();
  bench->add_option("--batch", bargs.batches,
                    "batch sizes for the symbolic dims, e.g. 1,8");
  bench->add_option("--dim", bargs.dims,
                    "NAME=VALUE for a symbolic dim that is not the batch");
  bench->add_option("--systems", bargs.systems,
                    "comma list of aotc, ort, iree (default: all)");
  bench->add_option("--budget", bargs.budget,
                    "seconds of timed runs per system and batch");
  bench->add_option("--threads", bargs.threads,
                    "threads of every system (default 2)");

  CLI11_PARSE(app, argc, argv);

  auto parseDims = [](const std::vector<std::string> &specs,
                      std::map<std::string, Range> &out) {
    for (const std::string &s : specs) {
      std::string name;
      Range r;
      if (!cli::parseDimRange(s, name, r)) {
        std::fprintf(stderr,
                     "aotc: error: bad --dim '%s' (expected NAME=MIN:MAX)\n",
                     s.c_str());
        return false;
      }
      out[name] = r;
    }
    return true;
  };

  if (compile->parsed()) {
    copts.schedule.registerTiling = !naiveKernels;
    if (noSizeVariants)
      copts.schedule.sizeVariantAt = 0;
    copts.mergeMatMuls = !noMergeMatMuls;
    copts.shareKernels = !noShareKernels;
    if (bothGiven(fuseAttention, "--fuse-attention", noFuseAttention,
                  "--no-fuse-attention") ||
        bothGiven(narrowIndices, "--narrow-indices", wideIndices,
                  "--wide-indices"))
      return 2;
    copts.fuseAttention = fuseAttention     ? CompileOptions::Fuse::On
                          : noFuseAttention ? CompileOptions::Fuse::Off
                                            : CompileOptions::Fuse::Auto;
    copts.splitK = !noSplitK;
    copts.channelBlocks = !noChannelBlocks;
    copts.padChannels = !noPadChannels;
    copts.winograd = !noWinograd;
    copts.winogradAtOutputs = winograd;
    copts.subsampleStrided = !noSubsampleStrided;
    copts.rowPanels = !noRowPanels;
    copts.rowPanelsAlways = rowPanelsAlways;
    copts.indexBits = narrowIndices ? CompileOptions::IndexBits::Narrow
                      : wideIndices ? CompileOptions::IndexBits::Wide
                                    : CompileOptions::IndexBits::Auto;
    copts.schedule.paddedStores = !noPaddedStores;
    copts.schedule.inPlace = !noInPlace;
    copts.schedule.chainKernels = !noChainKernels;
    copts.schedule.persistentKernels = !noPersistentKernels;
    if (!vectorLanes.empty() && !deviceProfile.empty()) {
      std::fprintf(stderr, "aotc: error: give --vector-lanes or "
                           "--device-profile, not both\n");
      return 2;
    }
    if (deviceProfile.empty() && vectorLanes != "host")
      deviceProfile = vectorLanes == "16" ? "generic-avx512" : "generic-avx2";
    // --vector-lanes host: the host CPU's built-in profile, with its cache.
    auto profile = deviceProfile.empty()
                       ? Expected<DeviceProfile>(cli::hostCpuProfile())
                       : cli::resolveDeviceProfile(deviceProfile);
    if (!profile) {
      std::fprintf(stderr, "aotc: error: --device-profile: %s\n",
                   profile.status().message().c_str());
      return 2;
    }
    copts.schedule.profile = *profile;
    if (!kernelConfigsPath.empty()) {
      auto configs = cli::readKernelConfigs(kernelConfigsPath);
      if (!configs) {
        std::fprintf(stderr, "aotc: error: %s\n",
                     configs.status().message().c_str());
        return 2;
      }
      copts.schedule.kernelConfigs = *configs;
    }
    if (!parseDims(dimSpecs, copts.import.dimRanges))
      return 2;
    if ((pargs.sources || pargs.embedWeights) && pargs.path.empty()) {
      std::fprintf(stderr, "aotc: error: --package-sources and "
                           "--embed-weights need --package\n");
      return 2;
    }
    return cli::compileCommand(copts, timePasses, pargs);
  }
  if (run->parsed()) {
    std::map<std::string, Range> ranges;
    if (!parseDims(runDims, ranges))
      return 2;
    for (auto &[k, r] : ranges)
      rargs.dims[k] = r.min;
    return cli::runCommand(rargs);
  }
  if (inspect->parsed())
    return cli::inspectCommand(inspectModel, inspectDevice);
  if (devices->parsed())
    return cli::devicesCommand(devicesProfile);
  if (bench->parsed())
    return cli::benchCommand(bargs);
  if (test->parsed()) {
    if (targs.cases.empty() && targs.casesFrom.empty()) {
      std::fprintf(stderr, "aotc: error: no test cases given\n");
      return 1;
    }
    return cli::testCommand(targs);
  }
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  // Nothing a user gives aotc may end it with an uncaught exception.
  try {
    return runCli(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "aotc: error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "aotc: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "aotc: internal error: unknown exception\n");
  }
  return 1;
}
