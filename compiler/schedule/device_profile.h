/// \file
/// What the scheduler's heuristics know of the target device, as data: a
/// DeviceProfile is queried from OpenCL (`aotc devices --profile`), read
/// from JSON for a device that is not present (`aotc compile
/// --device-profile FILE`), or one of the built-in profiles. It is recorded
/// in the .so (metadata `aotc.device_profile`) beside every kernel's
/// configuration.
///
/// A KernelConfig is what one kernel's template was instantiated with: the
/// template's name and its register tile. The scheduler picks it from the
/// profile (register_tile.cpp); `--kernel-configs FILE` overrides it per
/// kernel, the seam an autotuner uses. Both round-trip through JSON.
#pragma once

#include "ir/status.h"

#include <cstdint>
#include <map>
#include <string>

namespace aotc {

struct DeviceProfile {
  std::string name = "generic-avx2"; ///< a label (the OpenCL device name)
  std::string family = "cpu";        ///< cpu | gpu
  /// Float lanes of a vector register: 8 (AVX2, and AVX-512 where LLVM
  /// prefers 256-bit vectors), 16 (AVX-512 through PoCL), 4 (SSE/NEON),
  /// 1 (a GPU's scalar lanes: no explicit vectors, no panels).
  int64_t vectorLanes = 8;
  /// Vector registers: a tile's accumulators leave room for the operands
  /// (16 -> 12 accumulators, 32 -> 14; tile_choice.cpp).
  int64_t vectorRegisters = 16;
  /// The vector registers a register tile's accumulators may take; 0: from
  /// vectorRegisters (16 -> 12, 32 -> 14; tile_choice.cpp). Zen 5 runs
  /// 8 x 32 GEMM tiles (16 accumulators) faster than 6 x 32 (14 at most):
  /// BERT-base 62.9 -> 56.5 ms at batch 1 (docs/PERFORMANCE.md), where an
  /// AVX-512 Xeon ran 8 x 32 slower (2026-11-25; gemm_1024 7.6 against 7.4
  /// ms in stop 47) and takes 24 over long reductions instead (6 x 64).
  int64_t accumulatorVectors = 0;
  /// The accumulator budget of a tile whose rows are neighbouring pixels of
  /// a channel-blocked convolution (each row's input within two vectors of
  /// the next) over a long reduction; 0: accumulatorVectors. Zen 5 runs 3 x 3
  /// convolutions 3-9% faster in 14 x 32 tiles (28 accumulators) than in
  /// 8 x 32, where GEMM tiles of more than 16 are slower (tile_choice.cpp);
  /// an AVX-512 Xeon 9-22% faster than in 7 x 32 (stop 47).
  int64_t convAccumulatorVectors = 0;
  /// The accumulator budget of a tile whose rows are neighbouring pixels of
  /// a channel-blocked convolution over a short reduction (64 steps or
  /// fewer: a 1 x 1 convolution of up to 64 input channels); 0: the common
  /// budget. Zen 5 ran ResNet-50's 64 -> 256 expansions with their residual
  /// 16-29% faster in 4 x 32 tiles (8 accumulators) than in 8 x 32 at batch
  /// 8 (stop 81; tile_choice.cpp).
  int64_t shortConvAccumulatorVectors = 0;
  /// The accumulator budget of a tile over a long reduction (128 steps and
  /// more), where its stores and epilogue weigh little; 0: accumulatorVectors.
  /// An AVX-512 Xeon runs GEMMs in 6 x 64 tiles (24 accumulators) 8-15%
  /// faster than in 6 x 32, and ResNet-50's 1 x 1 convolutions of 128 to
  /// 1024 input channels in 12 x 32 tiles 6-16% faster than in 7 x 32, but
  /// those of 64 input channels 10-13% slower (docs/PERFORMANCE.md, stop 47).
  int64_t longAccumulatorVectors = 0;
  /// The most columns (elements along N) of a CPU register tile; 0: 32.
  /// An AVX-512 Xeon runs a 1024^3 GEMM 15% faster in 6 x 64 tiles (4
  /// vectors of B per step, 24 accumulators) than in 6 x 32 or 12 x 32
  /// (docs/PERFORMANCE.md, stop 47); 32 is 4 vectors of AVX2's 8 lanes.
  int64_t tileColumns = 0;
  /// The last-level cache of the device's CPU in bytes; 0: not known,
  /// taken as 32 MB (a Zen 5's L3). CPU register tiles go in row groups
  /// when the rows their M tiles read take more than half of it
  /// (register_tile.cpp, rowGroup): gemm_4096's A of 64 MB took 22% less
  /// in groups on a Zen 5 (32 MB) and 13% more on an AVX-512 Xeon with
  /// 480 MB (stop 48), where A stays in the cache anyway. `--vector-lanes
  /// host` and `aotc devices --profile cpu` read it from the host.
  int64_t cacheBytes = 0;
  /// A large GEMM's activation may be read through a copy in panels of its
  /// register tile's rows (row_panels.cpp, from 4 MiB of a graph input and
  /// 256 KiB of an activation the model computes). Measured on the Zen 3
  /// VM the copy made such GEMMs 4-12% faster (stops 78-79); on Zen 5,
  /// whose L1 holds a tile's 8 rows of A apart without conflicts (48 KiB,
  /// 12 ways, against 32 KiB and 8), it made every one of them the same or
  /// slower (gemm_1024 to gemm_4096 2-5%, BERT-base 5% at batch 1 and 9%
  /// at batch 8, GPT-2 4% at batch 8; stop 81), so zen5-avx512 reads A in
  /// place. An AVX-512 Xeon VM with the same L1 lost too (stop 91,
  /// ab_models, both orders: gemm_1024 3.6%, gemm_2048 6%, gemm_4096 13%,
  /// BERT-base 5% at batch 8 and 0.7% at batch 1, GPT-2 6% and 0.8%), so
  /// the host's profile takes panels only where its L1 data cache is below
  /// 48 KiB (rowPanelsForL1). `--row-panels-always` makes copies whatever
  /// this says.
  bool rowPanels = true;
  /// The fewest input and output channels of a 3 x 3 convolution rewritten
  /// as Winograd F(2x2, 3x3) (winograd.cpp); 0: 64. Zen 5 runs the 64-channel
  /// ones over 56 x 56 (ResNet's layer1) faster direct: their 64-step GEMMs
  /// ran at 240-390 GFLOP/s beside transforms of 1-2 ms each at batch 8,
  /// 6.5 ms for layer1.0's where ONNX Runtime's direct one took 3.3; without
  /// them ResNet-50 took 0.962 of the time at batch 8 and 0.973 at batch 1,
  /// ResNet-18 0.933 and 0.956 (stop 81). So zen5-avx512 starts at 128.
  int64_t winogradMinChannels = 0;
  int64_t computeUnits = 0;      ///< 0: not known
  int64_t localMemBytes = 0;     ///< 0: not known
  int64_t maxWorkGroupSize = 0;  ///< 0: not known
};

/// The lanes of the explicit vectors kernels use on \p p: its vector lanes
/// up to 16 (OpenCL's widest), or 0 below 4 (a GPU profile: none).
int explicitVectorLanes(const DeviceProfile &p);

/// The channel block of a rank-4 value of \p channels channels, where the
/// target's block is \p block (channel_blocks.h's channelBlock): \p block
/// where it divides them, else one vector (half of it, at least 8) where
/// that does, else 0 (the value keeps NCHW). The schedule's layouts, the
/// padding of channels to blocks and the weights packed for them all
/// follow it.
int64_t channelBlockFor(int64_t channels, int64_t block);

/// Whether a CPU whose L1 data cache holds \p l1DataBytes (one core's; 0:
/// unknown) reads large GEMM activations through row panels
/// (DeviceProfile::rowPanels): below 48 KiB (the Zen 3 VM's 32 KiB, where
/// they gained), or where unknown, yes; from 48 KiB (Zen 5's and the
/// AVX-512 Xeon VM's, where they lost), no.
bool rowPanelsForL1(int64_t l1DataBytes);

/// The built-in profiles: "generic-avx2" (8 lanes, 16 registers, the
/// default), "generic-avx512" (16 lanes, 32 registers; 24 accumulator
/// vectors over long reductions, 28 for convolutions, tiles up to 64
/// columns: measured on an AVX-512 Xeon), "zen5-avx512" (16 lanes, 32
/// registers, 16 accumulator vectors, 28 for convolutions, 8 for those of
/// short reductions, no row panels, Winograd from 128 channels: AMD Zen 5),
/// "generic-gpu" (1 lane). Error for another name.
Expected<DeviceProfile> builtinDeviceProfile(const std::string &name);

/// The profile as a JSON object (every field).
std::string deviceProfileJson(const DeviceProfile &p, bool pretty = false);
/// Reads a profile from JSON text. Fields left out keep the defaults of
/// generic-avx2; an unknown field, a wrong type or an out-of-range value is
/// an error naming it.
Expected<DeviceProfile> parseDeviceProfile(const std::string &json);

/// The longest innermost reduction loop a CPU tile runs unrolled whole
/// (RegisterTile::unroll, KernelConfig::unroll): a 7 x 7 window's row.
constexpr int kMaxWholeUnroll = 7;

/// The configuration of one kernel's template.
struct KernelConfig {
  /// The kernel family: pointwise (no reduction), reduction (no operand
  /// reread across outputs: pooling, ReduceSum), contraction (MatMul, Gemm,
  /// Conv) or row (a pointwise def with the reductions it reads per row:
  /// softmax, normalizations; only `lanes` applies, 0 for scalar loops) or
  /// attention (a fused MatMul -> Softmax -> MatMul: with `lanes`, a
  /// work-item per query row and the keys in blocks of lanes, attention.cpp;
  /// with `group_reduce`, a work-group of that many work-items, 8 per row
  /// and `tm` rows each, group_attention.cpp).
  std::string templ;
  /// The register tile: tm x tn outputs per work-item along output
  /// dimensions m and n; n = -1 is one element per work-item, m = -1 a
  /// 1 x tn row.
  int m = -1, n = -1;
  int64_t tm = 1, tn = 1;
  /// Lanes of the explicit vectors a float sum accumulates in (0: scalar).
  int lanes = 0;
  /// A work-group tile (contractions on GPUs, local_tile.cpp): groups of
  /// group_m x group_n work-items, each with its tm x tn tile, stage blocks
  /// of bk reduction steps of both operands in local memory. 0: none.
  int64_t groupM = 0, groupN = 0, bk = 0;
  /// Split K inside the group: split_k slices of group_m x group_n
  /// work-items each take bk of the split_k * bk staged steps and add their
  /// sums at the end. 1: none.
  int64_t splitK = 1;
  /// A work-group reduction (reduction kernels on GPUs, group_reduce.cpp):
  /// this many work-items per output, a power of 2. 0: none.
  int64_t groupReduce = 0;
  /// The work-group tile runs on the GEMM view of the kernel (gemm_view.cpp):
  /// output dimension m by all the others merged, n naming the last of
  /// them. Needs a work-group tile.
  bool gemmView = false;
  /// A CPU tile prefetches its operand rows this many M tiles ahead at
  /// every reduction step (RegisterTile::prefetch). 0: none.
  int prefetch = 0;
  /// A CPU tile's work-item walks output dimension row_loop itself, the
  /// reduction's first row_block loops outside the rows
  /// (RegisterTile::rowLoop). -1: none.
  int rowLoop = -1;
  int rowBlock = 0;
  /// A CPU tile's work-items prefetch the next weight slice in shares
  /// (RegisterTile::prefetchNext).
  bool prefetchNext = false;
  /// A CPU tile's innermost reduction loop takes this many steps an
  /// iteration (RegisterTile::unroll): 1 (none), 2, or the loop's whole
  /// extent up to kMaxWholeUnroll.
  int unroll = 1;
  /// Index math in 32 or 64 bits (codegen/opencl/index_width.h), whatever
  /// the compile's default; 32 must be provable. 0: the default.
  int indexBits = 0;
};

/// True if a work-group tile's group of \p groupM x \p groupN work-items
/// divides both of its operand blocks (groupM * tm x bk and bk x
/// groupN * tn): every work-item stages the same number of elements of
/// each (local_tile.cpp). A split_k multiplies the group and the blocks
/// alike, so it does not change the answer.
bool groupBlocksDivide(int64_t groupM, int64_t groupN, int64_t tm, int64_t tn,
                       int64_t bk);

/// The configurations of a module's kernels by kernel name, as JSON
/// (`{"kernels": {"k3_MatMul": {...}, ...}}`): what `aotc compile
/// --emit=kernel-configs` prints and `--kernel-configs` reads.
using KernelConfigs = std::map<std::string, KernelConfig>;
std::string kernelConfigsJson(const KernelConfigs &configs, bool pretty);
std::string kernelConfigJson(const KernelConfig &c);
Expected<KernelConfig> parseKernelConfig(const std::string &json);
/// Reads kernel configurations; "template" may be left out of an entry
/// (then any template is accepted). Errors name the kernel and field.
Expected<KernelConfigs> parseKernelConfigs(const std::string &json);

} // namespace aotc
