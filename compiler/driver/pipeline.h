/// \file
/// The compile pipeline, top to bottom: import, graph passes, lowering,
/// scheduling, code generation, in-process clang and lld. Every stage is
/// timed (--time-passes) and every IR can be dumped (--emit).
#pragma once

#include "compiler/frontend/onnx_import.h"
#include "compiler/schedule/schedule.h"
#include "ir/module.h"
#include "ir/status.h"

#include <string>
#include <vector>

namespace aotc {

struct CompileOptions {
  std::string modelPath;  ///< .onnx (binary) or .onnxtxt (ONNX textual syntax)
  std::string outputPath; ///< the model .so; may be empty with --emit
  ImportOptions import;
  /// Stop after producing this artifact and return its text:
  /// graph | lowered | loop | cl | cpp. Empty: build the .so.
  std::string emit;
  bool printAfterAll = false; ///< print the IR after every pass
  /// Run the Loop IR verifier after every Loop IR pass (always after the
  /// last one). Also on when the environment sets AOTC_VERIFY_EACH=1.
  bool verifyEach = false;
  /// Kernel builder choices (`--naive-kernels` turns register tiling off).
  ScheduleOptions schedule;
  /// With register tiling: sibling MatMuls of one activation as one GEMM
  /// (merge_matmuls.h; `--no-merge-matmuls` turns it off).
  bool mergeMatMuls = true;
  /// With register tiling on a GPU profile: deep MatMuls split along K
  /// across work-groups (split_k.h; `--no-split-k` turns it off).
  bool splitK = true;
  /// With register tiling on a CPU profile: the activations around
  /// convolutions stored with their channels in blocks of two vectors
  /// (channel_blocks.h; `--no-channel-blocks` turns it off).
  bool channelBlocks = true;
  /// With channel blocks: convolution channels padded to whole blocks
  /// where that costs at most a third more (pad_channels.h;
  /// `--no-pad-channels` turns it off).
  bool padChannels = true;
  /// With channel blocks: stride-1 3 x 3 convolutions as Winograd F(2x2,
  /// 3x3) (winograd.h), with the direct sum where a transformed value is
  /// not finite; `--no-winograd` keeps them direct (rounded as the direct
  /// form is).
  bool winograd = true;
  /// Winograd also for a convolution whose result leaves the channel
  /// blocks at once (winograd.h, rewriteWinograd's \p atOutputs):
  /// `--winograd`; by default such a convolution stays direct.
  bool winogradAtOutputs = false;
  /// With register tiling on a CPU profile: a 1 x 1 convolution of stride
  /// above 1 (a ResNet downsampling) runs at stride 1 over a copy of the
  /// pixels it reads (LowerOptions::subsampleStridedPointwiseConvs);
  /// `--no-subsample-strided` reads them in place.
  bool subsampleStrided = true;
  /// With register tiling on a CPU profile: a large GEMM's activation read
  /// through a copy in panels of its tile's rows (row_panels.h);
  /// `--no-row-panels` reads it in place.
  bool rowPanels = true;
  /// Row panels for every GEMM that may take them, whatever its size
  /// (`--row-panels-always`: for tests; the fuzzer's graphs are small).
  bool rowPanelsAlways = false;
  /// Kernels whose OpenCL code is identical share one function of the
  /// program (codegen/opencl/share_kernels.h; `--no-share-kernels` prints
  /// one per kernel).
  bool shareKernels = true;
  /// Index math in int in the kernels where the declared symbol ranges
  /// prove that it fits (codegen/opencl/index_width.h). Auto: on GPU
  /// profiles; off on CPU profiles, where x86-64 addresses are 64-bit and
  /// every int index is sign-extended into one (MobileNetV2's kernels took
  /// 7% longer, its depthwise ones up to 30%, under PoCL on the 2-core VM).
  /// `aotc compile --narrow-indices` / `--wide-indices` force it.
  enum class IndexBits { Auto, Narrow, Wide };
  IndexBits indexBits = IndexBits::Auto;
  /// With register tiling: MatMul -> scale/mask -> Softmax -> MatMul as one
  /// attention kernel that never stores the scores (lower_attention.cpp).
  /// Auto: on GPU profiles (a work-group per block of query rows,
  /// group_attention.cpp: on the H200 BERT's attention took 0.012 against
  /// 0.018 ms a layer at batch 1, 0.026 against 0.038 at batch 8), off on
  /// CPU profiles (a work-item per row, attention.cpp: 1.17 against 0.34 ms
  /// per BERT layer on the 2-core VM). `aotc compile --fuse-attention` /
  /// `--no-fuse-attention` force it.
  enum class Fuse { Auto, On, Off };
  Fuse fuseAttention = Fuse::Auto;
  int wrapperOptLevel = 1;
  /// Leave the updatable weights out of the .so: the host gives them with
  /// aotc_container_update_constants before the first run.
  bool weightless = false;
  /// Write the constants to OUTPUT.weights beside the .so, which the runtime
  /// maps at load (always when they pass kSideFileThreshold).
  bool weightsFile = false;
  /// Return the OpenCL C and wrapper C++ with the .so (for a package's
  /// sources/).
  bool keepSources = false;
  /// OpenCL devices of this machine (cpu, gpu:N, a name substring) to build
  /// the program for now and embed in the .so (aotc compile --prebuild,
  /// prebuild.h): a load on such a device then compiles nothing.
  std::vector<std::string> prebuild;
  /// Program binaries built elsewhere to embed, each "KEY,BIN": the files
  /// aotc-build-program --key-out KEY --out BIN wrote from this compile's
  /// OpenCL C (aotc compile --program-binary).
  std::vector<std::string> programBinaries;
};

/// Constants above this size go to a side file (a .so over 2 GiB needs a
/// different code model, and mapping the file avoids a copy).
constexpr uint64_t kSideFileThreshold = uint64_t{1} << 30;

struct StageTime {
  std::string stage;
  double ms;
};

/// What a package's manifest says of the compiled model (aotc compile
/// --package), in plain types.
struct ModelSummary {
  struct Tensor {
    std::string name;
    std::string dtype;             ///< aotc_dtype_name spelling: "float32"
    std::vector<std::string> dims; ///< "4", "batch"
  };
  struct Symbol {
    std::string name;
    int64_t min = 0;
    int64_t max = 0;
  };
  std::string name;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::vector<Symbol> symbols;
  size_t numConstants = 0;
  uint64_t constantsBytes = 0;
  std::string weights;     ///< side-file, embedded or weightless
  std::string weightsPath; ///< the side file, if any
  std::string deviceProfileJson;
  std::string deviceProfileName;
  std::vector<std::string> extensions; ///< OpenCL extensions the kernels use
};

struct CompileResult {
  std::string emitted; ///< the --emit artifact
  std::vector<StageTime> times;
  size_t numKernels = 0;
  /// Kernels of the folding program (run at load and on weight updates).
  size_t numFoldKernels = 0;
  /// Launches of a run: numKernels less the kernels persistent kernels
  /// run as one (compiler/schedule/persistent_kernels.h).
  size_t numLaunches = 0;
  std::string arenaBytes; ///< symbolic arena size
  uint64_t constantsBytes = 0;
  /// With CompileOptions::keepSources: the kernels and the wrapper.
  std::string clSource;
  std::string wrapperSource;
  /// Filled when the .so was built.
  ModelSummary summary;
  /// The program binaries the .so embeds (--prebuild, --program-binary):
  /// each described ("DEVICE NAME, driver VERSION: N bytes", a part's
  /// number) with the device key it was built for
  /// (runtime/src/program_cache.h).
  struct Prebuilt {
    std::string description;
    std::string deviceKey;
  };
  std::vector<Prebuilt> prebuilt;
};

/// Compiles a model. Every failure names the file, node or stage.
Expected<CompileResult> compileModel(const CompileOptions &opts);

/// Where the model runtime archive linked into every .so lives: env
/// AOTC_RUNTIME_ARCHIVE, beside the aotc executable, ../lib/aotc, or the
/// build tree.
Expected<std::string> findRuntimeArchive();

} // namespace aotc
