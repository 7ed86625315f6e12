/// \file
/// The scheduler: from lowered TensorDefs to a LoopModule of kernels.
///
/// Three steps, one file each:
///  - fusion (fusion.cpp) decides which defs are materialized in buffers and
///    which are inlined into their consumers (pointwise chains, views), and
///    which reductions are fused with their single pointwise consumer;
///  - kernel building (kernel_builder.cpp) writes each materialized def as a
///    Loop IR kernel, inlining producers; a contraction's kernel is register
///    tiled (register_tile.cpp);
///  - memory planning (memory_plan.cpp) places intermediate buffers in one
///    arena, reusing space by liveness.
#pragma once

#include "compiler/lowering/lowering.h"
#include "compiler/schedule/device_profile.h"
#include "compiler/schedule/padded_stores.h"
#include "ir/bounds.h"
#include "ir/module.h"
#include "ir/visitor.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace aotc {

/// The number of blocks of \p b that cover \p a (a >= 0, b > 0): the
/// work-group templates' tile and staging counts.
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// What fusion decided for each def.
struct FusionPlan {
  enum class Decision { Leaf, Materialize, Inline, FuseIntoConsumer, Unused };
  std::vector<Decision> decisions;
  /// For a materialized pointwise def: the reduction computed in its kernel
  /// (its epilogue producer), or -1.
  std::vector<int> fusedReduction;
  /// For a materialized padded copy whose fused reduction computes the
  /// value it pads (padded_stores.h): the copy, which the kernel stores
  /// each element of the reduction into, shifted, with the border.
  std::vector<std::optional<PaddedCopy>> paddedStore;
  /// For a materialized pointwise def: the reductions computed row by row
  /// in its kernel (a row group: softmax's max and sum, a normalization's
  /// statistics), producers first; empty for none. Each has extent 1 along
  /// the def's row axes and the same extents elsewhere, and is read only by
  /// the def and the group's later reductions, at the row (its row axes at
  /// index 0).
  std::vector<std::vector<int>> rowReductions;
  /// For such a def, per output dimension: whether it is a row axis.
  std::vector<std::vector<bool>> rowAxes;
  /// Materialized defs in kernel order.
  std::vector<int> kernelOrder;
};

/// Adds copy defs where a graph output is a leaf or repeats another output,
/// so every output has its own materialized def.
void separateOutputs(LoweredGraph &lg);

/// What fusion may do besides the rules every kernel follows.
struct FusionOptions {
  /// Row groups (FusionPlan::rowReductions): on for CPU-style targets,
  /// where one work-item walks a row in vectors; off for the naive kernels
  /// (the oracle) and for GPUs, whose reductions want a work-group each.
  bool rowGroups = false;
  /// A row group whose rows are fewer than this (a static count) and whose
  /// rows are longer than kMaxSerialRow stays unfused (too little
  /// parallelism for one work-item per row).
  int64_t minRows = 1;
  /// A reduction whose value a padded copy pads stores into the copy
  /// (padded_stores.h; FusionPlan::paddedStore).
  bool paddedStores = false;
};

/// The longest row a row group with few rows walks serially.
constexpr int64_t kMaxSerialRow = 4096;

/// Decides materialization and fusion.
FusionPlan planFusion(const LoweredGraph &lg, const FusionOptions &opts = {});

/// Names kernels and buffers use for a def.
std::string bufferName(const LoweredGraph &lg, int def);

/// Expands every Access to an inlined def in \p e with that def's body.
Expr inlineProducers(const LoweredGraph &lg, const FusionPlan &plan,
                     const Expr &e);

/// Choices of the kernel builder.
struct ScheduleOptions {
  /// Register-tile contractions and pointwise rows (register_tile.cpp);
  /// off: one work-item per output element, the naive kernels that serve
  /// as an oracle for the tiled ones (`aotc compile --naive-kernels`).
  bool registerTiling = true;
  /// Padded stores with register tiling (padded_stores.h; `aotc compile
  /// --no-padded-stores` turns them off).
  bool paddedStores = true;
  /// On CPU profiles, a kernel's output stored over an input it reads for
  /// the last time where that is safe (ir/in_place.h; `aotc compile
  /// --no-in-place` turns it off).
  bool inPlace = true;
  /// On CPU profiles with register tiling, consecutive contractions whose
  /// work-items read only what the same work-item of the one before wrote
  /// run as one kernel (chain_kernels.h; `aotc compile --no-chain-kernels`
  /// turns it off).
  bool chainKernels = true;
  /// On CPU profiles, consecutive kernels launched as one persistent
  /// kernel whose work-groups claim each part's work-items and wait at its
  /// end (persistent_kernels.h; `aotc compile --no-persistent-kernels`
  /// turns it off). Never for a folding program (run once per update).
  bool persistentKernels = true;
  /// For persistent kernels: a class per kernel of the module, equal where
  /// two kernels' code is the same over other buffers (the driver gives
  /// codegen's canonical text: share_kernels.h), so that groups repeat
  /// with the network's blocks (persistentKernels). Empty: not aligned.
  std::function<std::vector<int>(const LoopModule &)> kernelClasses;
  /// The target, which the tile cost model counts vector instructions and
  /// registers of (`aotc compile --device-profile`, `--vector-lanes`).
  DeviceProfile profile;
  /// Per kernel name, a configuration that replaces the heuristic's
  /// (`aotc compile --kernel-configs`); a name that matches no kernel, or
  /// a configuration of another template or outside the kernel's rank, is
  /// an error.
  KernelConfigs kernelConfigs;
  /// Size variants: a kernel whose sizes depend on symbols (a batch) and
  /// whose heuristic configuration differs with those symbols planned at
  /// this value instead of 1 is built twice; the run launches the second
  /// (named with the suffix `_at<value>`) where the kernel's output holds
  /// at least the geometric mean of its element counts at 1 and at this
  /// value, the first below (Kernel::launchIf). 0: one kernel each
  /// (`aotc compile --no-size-variants`).
  int64_t sizeVariantAt = 8;
  /// The value the heuristics plan symbolic sizes at for the kernel being
  /// built (plannedExtent): 1, or sizeVariantAt for a size variant.
  int64_t planSymbolsAt = 1;
  /// The compile's proofs (ir/bounds.h), shared by the passes that ask the
  /// verifier and by the final verification; null: none kept.
  ProofCache *proofs = nullptr;
};

/// Builds the kernel that computes materialized def \p def (and its fused
/// reduction, if any).
/// Buffers must already be declared in \p m (their shapes become the
/// kernel's buffer shapes).
Expected<Kernel> buildKernel(const LoweredGraph &lg, const FusionPlan &plan,
                             int def, int kernelIndex, const LoopModule &m,
                             const ScheduleOptions &opts = {});

/// The kernels that compute materialized def \p def: buildKernel's, or,
/// where its sizes are symbolic and the heuristic's configuration with the
/// symbols planned at opts.sizeVariantAt differs, two size variants with
/// complementary launch conditions (size_variants.cpp).
Expected<std::vector<Kernel>> buildSizeVariants(const LoweredGraph &lg,
                                                const FusionPlan &plan,
                                                int def, int kernelIndex,
                                                const LoopModule &m,
                                                const ScheduleOptions &opts);

/// Stores the output element at \p idx from its value \p v (a nest's
/// finish).
using FinishFn =
    std::function<Stmt(const std::vector<Expr> &idx, const Expr &v)>;

/// A kernel before it is laid out: what one output element accumulates and
/// how it is finished, as builders that make fresh variables on every call
/// (so a tiled kernel can instantiate them per element). A pointwise kernel
/// has no term: finish(idx, Expr()) stores its element.
struct ReductionNest {
  std::vector<Expr> shape; ///< the output's extents
  DType accType = DType::Float32;
  Expr init;                       ///< the accumulator's initial value
  std::vector<Expr> reduceExtents; ///< the serial reduction loops
  bool contraction = false;        ///< operands are reread across outputs
  /// A float sum: accumulated in two levels when it may add more than
  /// kSumBlock terms (reductionLoops), so that a long sum does not stall
  /// once the accumulator dwarfs each term (float32 stops changing when a
  /// term is below half its ulp: 2^24 + 0.9 == 2^24).
  bool blockedSum = false;
  /// The finish may read its output index through a division where
  /// collapse_dims merges two dimensions that the term reads as one (a
  /// padded store: its element goes to a row of another length, once per
  /// element, while the reduction's loads stay contiguous).
  bool finishDivides = false;
  /// The term accumulated at output index \p idx, reduction index \p r.
  std::function<Expr(const std::vector<Expr> &idx, const std::vector<Expr> &r)>
      term;
  /// The accumulator's next value.
  std::function<Expr(const Expr &acc, const Expr &term)> combine;
  /// Stores the element at \p idx from its final accumulator \p acc.
  FinishFn finish;
};

/// How a reduction is register tiled: tm x tn outputs per work-item along
/// output dimensions m and n (m = -1: a 1 x tn row). n = -1: not tiled.
struct RegisterTile {
  int m = -1, n = -1;
  int64_t tm = 1, tn = 1;
  /// Float lanes of the target's vectors (DeviceProfile::vectorLanes): a
  /// float sum, max or min (isFloatVectorCombine) whose term vectorizes
  /// along n accumulates in explicit vectors of up to this many lanes (0:
  /// scalar accumulators only).
  int vectorLanes = 0;
  /// Work-item order: the tiles along m innermost (CPU: neighbouring
  /// work-items on one core share the operand panel in its L2), or the
  /// output's dimension order, n innermost (GPU: a warp's neighbours read
  /// consecutive columns of the shared operand and store consecutive
  /// outputs, coalesced, while the other operand's element is the same
  /// for all of them).
  bool mInnermost = true;
  /// A work-group tile (GPU style, local_tile.cpp): groups of groupM x
  /// groupN work-items, each computing its tm x tn tile (tn in float4
  /// columns), stage blocks of bk reduction steps of both operands in
  /// local memory. 0: none (each work-item reads its operands itself).
  int64_t groupM = 0, groupN = 0, bk = 0;
  /// Slices of the group that split each staged block's steps (local_tile.cpp).
  int64_t splitK = 1;
  /// A work-group per output of a plain reduction, this many work-items
  /// (group_reduce.cpp; no register tile then). 0: none.
  int64_t groupReduce = 0;
  /// The work-group tile runs on the nest's GEMM view (gemmView): m's
  /// extent by every other output dimension merged into one column
  /// dimension; n then names the last of those (the view's columns run
  /// along it innermost).
  bool gemmView = false;
  /// Prefetch the operand rows of the M tile this many tiles ahead, at
  /// every reduction step (CPU tiles, register_tile.cpp). 0: none.
  int prefetch = 0;
  /// A CPU tile whose work-item walks all of output dimension rowLoop
  /// itself (-1: none; a static extent, not n; m: its tiles): the reduction's
  /// first rowBlock loops (1 or more, fewer than all) run outside, each of
  /// their steps a block that every row takes in turn, with its
  /// accumulators kept in a private array between blocks, and the rows
  /// prefetch the next block's operand that does not vary along them (a
  /// convolution's weight) in turns. So a weight slice larger than the L2
  /// is streamed from memory once per work-item, spread over all its rows,
  /// not once per row in a burst (register_tile.cpp, kRowLoopWeightBytes).
  int rowLoop = -1;
  int rowBlock = 0;
  /// A CPU tile whose work-items also prefetch, each its share, the weight
  /// slice of the work-items after those reading theirs (next_slice.h): a
  /// convolution's next output channel block, while its rows compute this
  /// one. A weight larger than the L2 then streams in while the tiles
  /// compute instead of in a burst at each slice's start.
  bool prefetchNext = false;
  /// A CPU tile's innermost reduction loop runs this many steps an
  /// iteration (its body repeated, unrollProblem): 1, 2, or the loop's
  /// whole static extent up to kMaxWholeUnroll (no loop left: a window's
  /// steps side by side, their shared loads merged).
  int unroll = 1;
  /// The device's last-level cache (DeviceProfile::cacheBytes; 0: 32 MB),
  /// which decides the row groups of a CPU tile (register_tile.cpp).
  int64_t cacheBytes = 0;
};

/// True if \p nest is a sum computed in float32 (its type float32, float16
/// or bfloat16): combine(acc, term) is acc + term.
bool isFloatSum(const ReductionNest &nest);
/// The static reduction extents of \p nest, or empty if one is symbolic.
std::vector<int64_t> staticExtents(const ReductionNest &nest);
/// Whether \p nest accumulates float vectors lane by lane: a float sum,
/// or a combine that is lane-wise over the accumulator and the term (max
/// and min with their NaN test).
bool isFloatVectorCombine(const ReductionNest &nest);
/// True if \p nest is a wrapping sum of a 32- or 64-bit integer type
/// (MatMulInteger's int32 products): combine(acc, term) is acc + term,
/// which accumulates in integer vectors lane by lane (aotc_add_i16).
bool isIntegerSum(const ReductionNest &nest);
/// isFloatVectorCombine or isIntegerSum: the accumulators a register tile
/// may keep in vectors.
bool isVectorCombine(const ReductionNest &nest);

/// The size a heuristic plans \p extent for: its value with every symbol
/// at \p symbolsAt (1: the smallest batch, so `128 * batch`, a merged
/// dimension (collapse_dims.h), plans for 128 rows, as the unmerged
/// [batch, 128] did; more for a kernel's size variant,
/// ScheduleOptions::sizeVariantAt); at least 1.
int64_t plannedExtent(const Expr &extent, int64_t symbolsAt = 1);
/// The smallest t with t * t >= a * b (a, b >= 1), without overflow: where
/// a size variant's launch condition splits (size_variants.cpp).
int64_t geometricMeanCeil(int64_t a, int64_t b);

/// The kernel-number prefix of a kernel name ("k9" of "k9__features_..."),
/// which chained and persistent kernels are named by.
std::string kernelNumber(const std::string &name);
/// The statement under the leading LetStmts of \p s (a nest's finish),
/// whose bindings are appended to \p lets (each value with the earlier ones
/// substituted).
Stmt stmtUnderLets(const Stmt &s, VarBindings &lets);
/// stmtUnderLets's statement where it is a store; null otherwise.
const Store *storeUnderLets(const Stmt &s, VarBindings &lets);
/// The finish of \p nest at the output indices \p at(col + lane), lanes 0
/// to \p width - 1, from the vector accumulator \p acc, as one vector store
/// (an epilogue of bias, GELU, residual as vector expressions) where the
/// store is contiguous along the lanes and its value vectorizes; else
/// undefined, and the caller finishes each lane alone.
Stmt vectorFinish(const ReductionNest &nest,
                  const std::function<std::vector<Expr>(const Expr &)> &at,
                  const Expr &col, const Expr &acc, int width,
                  const RangeEnv &ranges);
/// The same for any \p finish of values of \p type (a fused attention's
/// row).
Stmt vectorFinish(const FinishFn &finish, DType type,
                  const std::function<std::vector<Expr>(const Expr &)> &at,
                  const Expr &col, const Expr &acc, int width,
                  const RangeEnv &ranges);

/// The most terms one partial sum of a blocked float sum adds.
constexpr int64_t kSumBlock = 65536;

/// One output element at \p idx: accumulator, reduction loops, finish.
Stmt reductionElement(const ReductionNest &nest, const std::vector<Expr> &idx);
/// acc = combine(acc, term) (\p acc and \p term scalars or vectors of one
/// width), the term bound to a local first when the combiner reads it more
/// than once (a max compares it, tests it for NaN and picks it): computed
/// once, and the condition then holds no load, so the printer need not
/// guard it with && or || (which branch).
Stmt accumulate(const ReductionNest &nest, const Expr &acc, const Expr &term);
/// A row group's kernel (row_reduction.cpp): per row, each stage (a
/// reduction whose finish assigns its result) in order, then the row of
/// the output.
struct RowNest {
  std::vector<Expr> shape;  ///< the output's extents
  std::vector<bool> rowAxis; ///< per output dimension: walked per row
  /// The reductions, in order; stage k's finish assigns results[k] and the
  /// later stages and the store read it.
  std::vector<ReductionNest> stages;
  std::vector<Expr> results; ///< scalar locals, one per stage
  /// The output element at \p idx.
  std::function<Stmt(const std::vector<Expr> &idx)> store;
};

/// One reduction at output index \p row (row_reduction.cpp) with its
/// innermost loop as vectors of \p lanes: a vector accumulator over the
/// whole groups of lanes, a scalar one over the rest, then the lanes
/// combined (in a tree) into the scalar one, and \p stage's finish.
/// Undefined where that does not apply: a scalar stage, a short or
/// symbolic innermost extent, a term that does not vectorize, a sum (or
/// any combine but a lane-wise max or min, which stay exact in any order)
/// of more than kSumBlock or symbolic terms. With \p saveTo, each term is
/// also stored in that private array at its reduction index (a row
/// kernel's termReuse).
Stmt vectorStage(const ReductionNest &stage, const std::vector<Expr> &row,
                 int lanes, const RangeEnv &ranges,
                 const std::string &saveTo = "");

/// The kernel body of \p nest: one work-item per row; the stages'
/// innermost loops and the row's stores as vectors of \p lanes where they
/// vectorize (0: scalar). \p vectorized (if given) tells whether any did.
/// With \p privates, a stage term that the output computes again (softmax's
/// exponentials) is kept in a private array of the row (`row_vals`, added
/// to \p privates) instead of computed twice.
Stmt rowKernel(const RowNest &nest, int lanes, const RangeEnv &env,
               bool *vectorized = nullptr,
               std::vector<KernelBuffer> *privates = nullptr);

/// A fused attention's kernel before it is laid out (attention.cpp,
/// TensorDef::attention): out[.., q, e] = sum over keys j of
/// softmax_j(scoreFinish(sum over d of score(q, j, d))) * value(j, e).
struct AttentionNest {
  std::vector<Expr> shape; ///< the output's extents [.., queries, E], E static
  DType type = DType::Float32;
  Expr keys, depth; ///< the extents of j and d
  /// The score's product term at output index \p at (its last component
  /// unused), key \p key and depth \p d.
  std::function<Expr(const std::vector<Expr> &at, const Expr &key,
                     const Expr &d)>
      score;
  /// The score from its sum \p dot (scale, mask).
  std::function<Expr(const std::vector<Expr> &at, const Expr &key,
                     const Expr &dot)>
      scoreFinish;
  /// The value at output index \p at (its last component the column) and
  /// key \p key.
  std::function<Expr(const std::vector<Expr> &at, const Expr &key)> value;
  /// Stores the element at \p at from its value \p v.
  FinishFn finish;
};

/// The kernel body of \p nest: one work-item per query row, keeping its
/// running maximum, sum and value row (in vectors of up to 16 lanes); the
/// keys in blocks of \p keyLanes (a vector of scores; 0 or 1: one at a
/// time, and the block form falls back to that where a score or value does
/// not vectorize). \p vectorized (if given) tells whether blocks were used.
Stmt attentionKernel(const AttentionNest &nest, int keyLanes,
                     const RangeEnv &env, bool *vectorized = nullptr);
/// The keys per block the heuristic picks for \p target.
int attentionKeyLanes(const DeviceProfile &target);

/// The tile for \p nest on \p target (tile_choice.cpp), planned with
/// the symbols of its sizes at \p symbolsAt (plannedExtent); n = -1 when
/// tiling does not pay.
RegisterTile chooseRegisterTile(const ReductionNest &nest,
                                const DeviceProfile &target,
                                int64_t symbolsAt = 1);
/// Whether chooseRegisterTile's answer for \p target may depend on the
/// value symbolic sizes are planned at (the GPU family's work-group tiles
/// and reductions count work-groups per compute unit; the CPU tiles plan a
/// symbolic batch of rows at a fixed size, chooseRegisterTile).
bool tilesDependOnPlannedSizes(const DeviceProfile &target);
/// Columns of a reduction computed element by element beside its tiles
/// (column_interior.h): \p nest's columns [0, lo) and [hi, extent) along
/// its innermost dimension, where the tiled nest covers [lo, hi).
struct BorderColumns {
  const ReductionNest *nest = nullptr;
  int64_t lo = 0, hi = 0, extent = 0;
};

/// Why \p t's row loop (RegisterTile::rowLoop) cannot run \p nest, or
/// empty: it needs a float sum of static steps (at most kSumBlock) over a
/// CPU register tile, a static extent along rowLoop (not n; m only where
/// tm divides it: its tiles are then the rows), and rowBlock from 1 to the
/// reduction loops less one.
std::string rowLoopProblem(const ReductionNest &nest, const RegisterTile &t);

/// Why \p t cannot run \p nest's innermost reduction loop t.unroll steps
/// an iteration (empty: it can): a register tile along m and n without
/// work-groups or a row loop, over a static innermost extent that t.unroll
/// divides at least twice or equals (a whole unroll, at most
/// kMaxWholeUnroll), whose sum is not split in blocks.
std::string unrollProblem(const ReductionNest &nest, const RegisterTile &t);

/// Why \p t's work-items, in a CPU's order (a last-level cache of
/// \p cacheBytes), cannot prefetch their next weight slice
/// (RegisterTile::prefetchNext, next_slice.h), or empty: it needs a tile
/// along m and n without row groups, a row loop or a work-group tile, and
/// a dimension the weight reads with two or more static work-items inside
/// it that the weight does not read, and at least as many steps in the
/// reduction loops outside the innermost (the work-items' turns).
std::string nextSliceProblem(const ReductionNest &nest, const RegisterTile &t,
                             int64_t cacheBytes);

/// The kernel body (Parallel loops over tiles included) of \p nest tiled by
/// \p t; partial tiles run reductionElement per element. With \p border
/// (t.m = -1, t.n the innermost dimension), the work-item of the first
/// tile of each row also computes the border columns. A tile with a row
/// loop (RegisterTile::rowLoop) adds its private array to \p privates,
/// which must then be given.
Stmt registerTiledNest(const ReductionNest &nest, const RegisterTile &t,
                       const BorderColumns *border = nullptr,
                       std::vector<KernelBuffer> *privates = nullptr);

/// The work-group tile for \p nest on the GPU-family \p target with the
/// register tile's dimensions \p m and \p n (local_tile.cpp): groupM = 0
/// when none applies or pays (then the caller keeps its own tile).
/// \p windows admits a reduction of several loops (a convolution's window)
/// where a staged block runs along one of them at one position of the
/// others; the caller takes it for a GEMM view only.
RegisterTile chooseGroupTile(const ReductionNest &nest, int m, int n,
                             const DeviceProfile &target,
                             bool windows = false, int64_t symbolsAt = 1);
/// \p nest viewed as the GEMM [shape[m], product of the other extents]
/// (gemm_view.cpp): its term and finish read the view's column unflattened
/// into the other output dimensions, in order.
ReductionNest gemmView(const ReductionNest &nest, int m);
/// The output dimension a GEMM view's columns run along innermost: the
/// last of \p rank dimensions other than \p m (RegisterTile::n then).
inline int gemmViewColumn(int rank, int m) {
  return m == rank - 1 ? rank - 2 : rank - 1;
}
/// A kernel body that runs in fixed work-groups with local arrays.
struct GroupTiledKernel {
  Stmt body;
  std::vector<KernelBuffer> locals;
  int64_t workGroupSize = 0;
};
/// True if every load of \p e that reads \p var steps by one element with
/// it, and one does (local_tile.cpp): the order in which a work-group's
/// consecutive work-items stage an operand.
bool contiguousAlong(const Expr &e, const Expr &var);
/// The work-group attention kernel of \p nest (group_attention.cpp, the
/// GPU style): a group of \p groupSize work-items, 8 per row, each with
/// \p rowsPerItem (1-4) query rows, takes groupSize / 8 * rowsPerItem query
/// rows; it stages each block of 32 keys' operand and value rows in local
/// memory, computes the block's scores into local memory and updates every
/// row's online softmax and its columns of the value sum. An error where
/// the depth or the value width is symbolic or above 256, where its local
/// arrays exceed \p target's local memory (32 KiB where not known), or
/// where a factor of the score or the value reads both the query row and
/// the key.
Expected<GroupTiledKernel> groupAttentionKernel(const AttentionNest &nest,
                                                int64_t groupSize,
                                                int64_t rowsPerItem,
                                                const DeviceProfile &target,
                                                const RangeEnv &env);
/// The heuristic's work-group attention kernel for \p nest on \p target,
/// planned with its symbols at \p symbolsAt: the group size (0 for the
/// per-row kernel: CPU profiles, a symbolic or deep depth, local arrays
/// that do not fit) and the rows per work-item.
struct AttentionGroup {
  int64_t size = 0, rowsPerItem = 1;
};
AttentionGroup chooseAttentionGroup(const AttentionNest &nest,
                                    const DeviceProfile &target,
                                    int64_t symbolsAt = 1);
/// The kernel of \p nest tiled by \p t's work-group tile (on the nest's
/// GEMM view where t.gemmView, m and n naming the nest's dimensions); an
/// error naming what does not fit (the term is not a float product of one
/// operand per tiled dimension, a reduction extent is symbolic, the group
/// does not divide the operand blocks).
Expected<GroupTiledKernel> groupTiledNest(const ReductionNest &nest,
                                          const RegisterTile &t);

/// The reduction loop indices at flat index \p k (row-major over
/// \p extents): the last is k mod its extent, the first k divided by the
/// others' product (group_reduce.cpp; the work-group templates walk a
/// reduction of several loops as one).
std::vector<Expr> unflattenIndex(const Expr &k,
                                 const std::vector<Expr> &extents);
/// Number of terms of a reduction over \p extents, or -1 if one is
/// symbolic (group_reduce.cpp).
int64_t staticTerms(const std::vector<Expr> &extents);
/// The work-items per output of a work-group reduction of \p nest on
/// \p target (group_reduce.cpp): GPU families, long reductions of few
/// outputs; 0 when the serial loop (or a register tile) stays.
int64_t chooseGroupReduce(const ReductionNest &nest,
                          const DeviceProfile &target, int64_t symbolsAt = 1);
/// The kernel of \p nest with a work-group of \p size work-items per output
/// that add every size-th term and combine their results in a tree in
/// local memory; an error naming what does not fit.
Expected<GroupTiledKernel> groupReductionNest(const ReductionNest &nest,
                                              int64_t size);

/// The work-items per row of a GPU row kernel for \p nest on \p target
/// (group_reduce.cpp): GPU families, every stage a static reduction of a
/// type the tree combines and static row extents; 0 when the one
/// work-item per row of rowKernel stays.
int64_t groupRowSize(const RowNest &nest, const DeviceProfile &target);
/// A row group's kernel with a work-group of \p size work-items per row:
/// each stage's terms added by every work-item in turn and combined in a
/// tree in local memory, its result finished by every work-item, then the
/// row stored by all of them, consecutive work-items at consecutive
/// elements; an error naming what does not fit.
Expected<GroupTiledKernel> groupRowKernel(const RowNest &nest, int64_t size);

/// Turns every FiniteOrSum of \p m's kernels into a test of its value and,
/// where a lane is not finite, loops that compute its sum
/// (expand_fallbacks.cpp); returns how many statements it expanded.
int expandFallbacks(LoopModule &m);

/// Reads a load that is an arm of a select before its statement where the
/// verifier proves it in bounds there (speculate_loads.cpp); returns how
/// many.
int speculateSelectLoads(LoopModule &m, ProofCache *proofs = nullptr);

/// Adds a run-time check to every load and store of \p m whose index the
/// Loop IR verifier cannot prove inside its buffer; returns how many.
int guardUnprovenAccesses(LoopModule &m, ProofCache *proofs = nullptr);

/// Binds a subexpression that a stored value holds more than once (an
/// inlined producer read twice) by a LetStmt before the store, where it may
/// be evaluated ahead (bind_common.cpp); returns how many lets.
int bindCommonSubexpressions(LoopModule &m);

/// Assigns arena offsets to the Arena buffers of \p m by liveness over
/// m.kernels and sets m.arenaBytes; with \p inPlace (CPU profiles), a
/// kernel's output may take the place of an input it reads for the last
/// time where the kernel stores in place (in_place.h).
void planMemory(LoopModule &m, const RangeEnv &env, bool inPlace);

/// Sets every kernel's flops and bytes estimates (kernel_cost.cpp).
void estimateKernelCosts(LoopModule &m, const RangeEnv &env);

/// Called after each Loop IR pass of the scheduler with the pass's name and
/// the module so far; an error stops scheduling (the verifier hooks in here
/// under --verify-each).
using LoopPassHook =
    std::function<Status(const std::string &pass, const LoopModule &m)>;

/// Gives every constant of \p m its offset in the blob: compiled-in ones
/// first, then the updatable ones (a weightless .so stores only the
/// prefix), none for the ones the folding program computes; sets
/// constantsBytes and constantsStoredBytes.
void layoutConstants(LoopModule &m);

/// Makes \p fold, the scheduled folding program (fold_program.h), the
/// folding program of \p m: its kernels are renamed fold_*, its constants
/// become \p m's (an initializer \p m already holds is the same constant;
/// the others are added), output k writes \p m's computed constant made
/// from the graph value \p targets[k]; then lays the constants out again. An error if a target
/// is not a computed constant of \p m or a shape disagrees.
Status attachFoldProgram(LoopModule &m, LoopModule fold,
                         const std::vector<std::string> &targets);

/// The whole scheduler: fusion, then the Loop IR passes build-kernels
/// (simplified kernels, unprovable accesses guarded) and plan-memory, then
/// the kernels' cost estimates.
Expected<LoopModule> scheduleGraph(const Graph &g, LoweredGraph lg,
                                   const LoopPassHook &afterPass = {},
                                   const ScheduleOptions &opts = {});

} // namespace aotc
