/// \file
/// The register tile heuristic (chooseRegisterTile, schedule.h): for a
/// reduction nest on a device profile, the output dimensions M and N and
/// the tile's rows and columns, by a cost model of one reduction step (its
/// FMAs and loads, two a cycle, each accumulator chain waiting for its
/// FMA), the accumulator budget of the profile's vector registers, and the
/// rows left past the last whole tile; then the CPU extras that ride on a
/// tile (prefetch of the next tile's rows, a row loop, the next weight
/// slice, two reduction steps an iteration). GPU profiles take a work-group
/// tile (local_tile.cpp) where one applies. register_tile.cpp builds the
/// tiled nest from the answer.
/// symbolic) runs the naive nest for each of its elements that exist.
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/row_interior.h"
#include "compiler/schedule/next_slice.h"
#include "compiler/schedule/row_loop.h"
#include "compiler/schedule/tile_loops.h"
#include "compiler/schedule/vectorize.h"

#include "ir/status.h"
#include "ir/visitor.h"

#include <algorithm>
#include <map>
#include <set>

namespace aotc {

namespace {

/// One load of a reduction's term: which tiled output dimensions its index
/// reads, and whether consecutive N indices are consecutive addresses:
/// everywhere (contiguous), or within aligned groups of the vector lanes
/// (panel: a weight packed as panels of that many columns,
/// compiler/passes/pack_weights.h).
struct Operand {
  bool m = false, n = false, contiguous = false, panel = false;
  /// Read per row, not along N, the rows' elements within two vectors of
  /// each other: the row is the second-innermost index, the innermost one
  /// spans at most 2 x lanes elements (a channel-blocked convolution's
  /// neighbouring pixels, [n, C/B, h, w, B]; not a GEMM's rows, K apart).
  bool adjacentRows = false;
  /// Of adjacent rows: how far apart two neighbouring rows' elements are
  /// along their (second-innermost) index, where constant (a strided
  /// convolution's 2), else 0.
  int64_t rowStep = 0;
  /// Of adjacent rows: the load has 4 or more indices and its innermost
  /// spans one or two vectors, as a channel-blocked activation [n, C/B, h,
  /// w, B] does (channel_blocks.h; a GEMM's A over few columns has 2 or 3).
  bool channelBlockRows = false;
  /// A panel's columns: the lanes, or twice them (a convolution weight
  /// packed for channel blocks of two vectors, channel_blocks.h).
  int64_t panelWidth = 0;
};

/// The loads of \p e, classified against output dimensions \p m and \p n
/// (m = -1: none) of the index variables \p idx, for vectors of \p lanes.
std::vector<Operand> classifyLoads(const Expr &e, const std::vector<Expr> &idx,
                                   int m, int n, int64_t lanes,
                                   const RangeEnv &ranges) {
  struct V : IRVisitor {
    std::vector<Operand> loads;
    const Var *mv = nullptr, *nv = nullptr;
    Expr mvar, nvar;
    int64_t lanes = 8;
    const RangeEnv *ranges = nullptr;
    void visitLoad(const Load *op) override {
      Operand o;
      for (const Expr &i : op->indices) {
        o.m |= mv && usesVar(i, mv);
        o.n |= usesVar(i, nv);
      }
      if (o.n) {
        o.contiguous = stepsByOne(op->indices, nvar, RangeEnv());
        for (int64_t width : {lanes, 2 * lanes}) {
          if (o.contiguous || o.panel || lanes <= 1)
            break;
          // N = width * q + lane, the lane below its last value.
          Expr q = Var::make("q"), lane = Var::make("lane");
          RangeEnv env = *ranges;
          const Range *nr = ranges->find(nvar.as<Var>());
          env.set(q, Range{0, nr ? nr->max / width : INT64_MAX / (4 * width)});
          env.set(lane, Range{0, width - 2});
          VarBindings split{{nvar, q * Expr(width) + lane}};
          std::vector<Expr> at;
          for (const Expr &i : op->indices)
            at.push_back(substitute(i, split));
          o.panel = stepsByOne(at, lane, env);
          o.panelWidth = o.panel ? width : 0;
        }
      }
      if (o.m && !o.n && op->indices.size() >= 2) {
        const Expr &last = op->indices.back();
        std::optional<Range> span = boundsOf(last, *ranges);
        const Expr &row = op->indices[op->indices.size() - 2];
        o.adjacentRows = usesVar(row, mv) && !usesVar(last, mv) && span &&
                         span->max - span->min < 2 * lanes;
        if (o.adjacentRows) {
          const int64_t width = span->max - span->min + 1;
          o.channelBlockRows = op->indices.size() >= 4 && lanes >= 4 &&
                               (width == lanes || width == 2 * lanes);
          Expr next = substitute(row, VarBindings{{mvar, mvar + Expr(1)}});
          int64_t step = 0;
          if (simplify(next - row).isConst(step) && step > 0)
            o.rowStep = step;
        }
      }
      loads.push_back(o);
      IRVisitor::visitLoad(op);
    }
  } v;
  v.mv = m >= 0 ? idx[m].as<Var>() : nullptr;
  if (m >= 0)
    v.mvar = idx[m];
  v.nv = idx[n].as<Var>();
  v.nvar = idx[n];
  v.lanes = lanes;
  v.ranges = &ranges;
  v.visit(e);
  return v.loads;
}

/// The accumulator budget of a tile in vector registers: the profile's
/// where it gives one (zen5-avx512: 16), else 12 of AVX2's 16, which left
/// room for the operands in the measurements behind docs/PERFORMANCE.md;
/// with AVX-512's 32, 14 (a 7 x 7 map's 7 rows x 32 channels: 132 GFLOP/s
/// against 97 with 7 x 16; more than 14 was slower for GEMMs on an
/// AVX-512 Xeon).
int64_t accumulatorVectors(const DeviceProfile &target) {
  if (target.accumulatorVectors > 0)
    return target.accumulatorVectors;
  return target.vectorRegisters >= 32 ? 14 : 12;
}

/// Pixels per work-item of a vectorized max or min pool over a channel
/// block (chooseTile's plain reductions).
constexpr int64_t kPoolRowPixels = 4;

/// The reduction steps from which a tile over adjacent rows takes the
/// profile's convolution budget: a 3 x 3 convolution of 64 channels. On
/// Zen 5 (docs/PERFORMANCE.md, stop 46), 14 x 32 tiles against 8 x 32 in
/// ResNet-50: its 3 x 3 convolutions (576 steps and more) and its 1 x 1
/// ones of 1024 and 2048 input channels 1-7% faster; 1 x 1 ones of up to
/// 512 (whose stores and residual reads weigh more beside their FMAs) 1-12%
/// slower, those of 64 input channels up to 46%. A strided convolution
/// (rows two pixels apart) takes it at any length: ResNet-50's layer2
/// downsampling, 256 -> 512 channels of stride 2, 5.1-5.2 -> 4.3 ms at
/// batch 8.
constexpr int64_t kConvBudgetMinSteps = 576;

/// The reduction steps from which a tile takes the profile's long budget
/// (longAccumulatorVectors): ResNet-50's 1 x 1 convolutions of 128 input
/// channels and more ran faster in 24 accumulators than in 14 on an AVX-512
/// Xeon, those of 64 (the 64 -> 256 expansions with their residual, whose
/// epilogue weighs more beside 64 steps) 10-13% slower.
constexpr int64_t kLongBudgetMinSteps = 128;

/// The reduction steps up to which a tile over adjacent rows (not strided)
/// takes the profile's short convolution budget (shortConvAccumulatorVectors):
/// a 1 x 1 convolution of up to 64 input channels. On Zen 5 (stop 81,
/// kernel_profile.py, 3 alternated rounds, --kernel-configs) ResNet-50's
/// 64 -> 256 expansions with their residual took 3.7-3.9 ms a pair in 4 x
/// 32 tiles against 4.4-5.5 in 8 x 32 at batch 8 (0.50-0.56 against 0.59
/// at batch 1), its 64 -> 64 and 64 -> 256 without a residual 3-7% less.
constexpr int64_t kShortConvBudgetMaxSteps = 64;

/// The accumulator budget of a tile over \p steps reduction steps (0:
/// symbolic) whose operands read per row are \p loads: the profile's
/// convolution budget where those all read adjacent rows (a channel-blocked
/// convolution's pixels) over kConvBudgetMinSteps or more, or the rows are
/// strided; its short convolution budget where they read adjacent rows, not
/// strided, over kShortConvBudgetMaxSteps or fewer, of a convolution over
/// channel blocks (its rows' operand [n, C/B, pixels..., B] with B one or
/// two vectors, channel_blocks.h; a GEMM over few columns of A reads adjacent
/// rows too, and was not measured); its long budget over
/// kLongBudgetMinSteps or more where the tile
/// stores along the innermost dimension (\p innerN; ResNet-50's stem into
/// NCHW, its N the output channels a plane apart, took 1.07 ms in 12 x 32
/// tiles against 0.92 in 7 x 32 on an AVX-512 Xeon); else
/// accumulatorVectors.
int64_t tileBudget(const DeviceProfile &target,
                   const std::vector<Operand> &loads, int64_t steps,
                   bool innerN) {
  bool perRow = false, adjacent = true, strided = true, blocked = false;
  for (const Operand &o : loads)
    if (o.m && !o.n) {
      perRow = true;
      adjacent &= o.adjacentRows;
      strided &= o.rowStep >= 2;
      blocked |= o.channelBlockRows;
    }
  int64_t budget = accumulatorVectors(target);
  if (innerN && (steps == 0 || steps >= kLongBudgetMinSteps))
    budget = std::max(budget, target.longAccumulatorVectors);
  if (perRow && adjacent && (steps >= kConvBudgetMinSteps || strided))
    budget = std::max(budget, target.convAccumulatorVectors);
  else if (perRow && adjacent && !strided && blocked && steps > 0 &&
           steps <= kShortConvBudgetMaxSteps &&
           target.shortConvAccumulatorVectors > 0)
    budget = std::min(budget, target.shortConvAccumulatorVectors);
  return budget;
}
/// Cycles of each reduction step that do not depend on the tile: loop
/// control and address arithmetic (a convolution's step has three loops).
constexpr double kStepOverhead = 3;

/// Vector instructions per row of \p cols elements, as measured through
/// PoCL's LLVM: a power-of-two row of 8 or more runs as 8-lane vectors, a
/// shorter one as vectors of its binary digits (7 = 4 + 2 + 1), and any
/// other (24, 14) is left scalar (3-5x slower than a row of 16), except a
/// whole number of the profile's explicit vectors (48 = 3 x 16), which the
/// printer emits as that many vector operations.
int64_t vectorOps(int64_t cols, int64_t lanes) {
  if (cols < 8)
    return __builtin_popcountll(static_cast<unsigned long long>(cols));
  if ((cols & (cols - 1)) == 0)
    return std::max<int64_t>(1, cols / lanes);
  if (lanes >= 8 && cols % lanes == 0)
    return cols / lanes;
  return cols;
}

/// The loads of one reduction step of a \p tm x \p tn tile: a vector per
/// vector of a contiguous or panel row, an element per element of another
/// row, a broadcast per row of an operand shared along N.
double stepReads(const std::vector<Operand> &loads, int64_t tm, int64_t tn,
                 int64_t lanes) {
  int64_t vectors = vectorOps(tn, lanes);
  double reads = 0;
  for (const Operand &o : loads) {
    double row = o.n ? (o.contiguous || o.panel ? vectors : 2.0 * tn) : 1.0;
    reads += o.m ? tm * row : row;
  }
  return reads;
}

/// Estimated cycles of one reduction step of a \p tm x \p tn tile: FMAs and
/// loads issue two a cycle, every accumulator chain waits for its FMA
/// (latency 4), plus the step's overhead.
double stepCycles(const std::vector<Operand> &loads, int64_t tm, int64_t tn,
                  int64_t lanes) {
  double fmas = static_cast<double>(tm * vectorOps(tn, lanes));
  return std::max({fmas / 2, stepReads(loads, tm, tn, lanes) / 2, 4.0}) +
         kStepOverhead;
}

/// Estimated cycles per output element and reduction step of the tiles of
/// \p tm x \p cols elements along an M of \p extentM: whole tiles, then
/// the rows left over as one narrower tile (a static M) or, where M is
/// symbolic and planned at \p extentM
/// (\p plannedM), as 1 x cols tiles, which is how registerTiledNest
/// computes the rows past a symbolic M's last whole tile (each row then
/// streams the operand shared along M once more: the MLP's 6 x 64 tiles
/// at a batch of 8 read each weight three times).
double perOutput(const std::vector<Operand> &loads, int64_t extentM,
                 int64_t tm, int64_t cols, int64_t lanes, bool plannedM) {
  auto per = [&](int64_t rows) {
    return stepCycles(loads, rows, cols, lanes) /
           static_cast<double>(rows * cols);
  };
  if (extentM % tm == 0)
    return per(tm);
  double whole = static_cast<double>(extentM - extentM % tm) /
                 static_cast<double>(extentM);
  return whole * per(tm) + (1 - whole) * per(plannedM ? 1 : extentM % tm);
}

/// Whether tiles of \p t rows over \p extent leave a last tile of exactly
/// half of one (14 over 49).
bool halfLastTile(int64_t extent, int64_t t) {
  return t % 2 == 0 && extent > t && extent % t == t / 2;
}

/// The fraction of an extent's elements that lie in whole tiles of \p t
/// (1 for a symbolic extent: assumed large).
double wholeFraction(const Expr &extent, int64_t t) {
  int64_t e;
  if (!extent.isConst(e) || e == 0)
    return 1.0;
  return static_cast<double>(e - e % t) / static_cast<double>(e);
}



/// The tile of a GPU contraction whose operands split into one shared
/// along M and one shared along N (a GEMM, a convolution's channels by its
/// pixels). Work-items go in dimension order, N innermost
/// (RegisterTile::mInnermost false), so a warp's neighbours read
/// consecutive float4s of the operand that varies along N (coalesced) and
/// the same element of the other (one broadcast load): 4 columns per
/// work-item, as one float4 where that operand is contiguous along N, and
/// the most rows of 8, 4 or 2 that leave at least kGpuMinWorkItems
/// work-items to fill the device (counting a symbolic extent as 1). Swept
/// on an H200 (bench/gpu/sweep_configs.py, 2026-11-26): 4096^3 7.1 ms with
/// 8 x 4 rows against 67.6 ms for the CPU model's 1 x 8 (19.4 against
/// 2.0 TFLOP/s), 1024^3 0.21 against 1.09 ms with 4 x 4.
RegisterTile gpuTile(const ReductionNest &nest, int m, int n, bool vectorN) {
  constexpr int64_t kGpuMinWorkItems = 16384;
  RegisterTile t;
  t.n = n;
  t.tn = 4;
  int64_t e;
  if (nest.shape[n].isConst(e) && e < 4)
    t.tn = e;
  t.vectorLanes = vectorN && t.tn == 4 ? 4 : 0;
  int64_t outputs = 1;
  for (const Expr &d : nest.shape)
    outputs *= d.isConst(e) ? std::max<int64_t>(e, 1) : 1;
  int64_t extentM = 0;
  const bool staticM = nest.shape[m].isConst(extentM);
  for (int64_t tm : {8, 4, 2}) {
    if ((staticM && tm > extentM) || outputs / (tm * t.tn) < kGpuMinWorkItems)
      continue;
    t.m = m;
    t.tm = tm;
    break;
  }
  return t;
}

/// The shortest reduction and the fewest rows (planned) of a CPU tile that
/// prefetches its next tile's rows (chooseRegisterTile).
constexpr int64_t kPrefetchMinSteps = 128;
constexpr int64_t kPrefetchMinRows = 196;

/// The rows of the map that a tile's M walks, for the prefetch threshold:
/// M's planned extent times the static extents of the output dimensions
/// before it that the rows' operand reads and no operand along N (a
/// weight) reads. A channel-blocked 3 x 3 convolution's M is its width,
/// and its height counts too ([n, C/B, h, w, B]: 28 x 28 rows, not 28);
/// its output channel blocks (read by the weight) and a symbolic batch do
/// not. ResNet-50's 3 x 3 convolutions of stride 2 at batch 8
/// (kernel_profile.py, both orders): layer2.0's over 28 x 28 6.7-6.8 ->
/// 6.0 ms with prefetches, layer3.0's over 14 x 14 6.2 -> 5.9; layer4.0's
/// over 7 x 7 (below the threshold, given them) 7.0 -> 6.9 in one order,
/// 7.0 -> 7.5 in the other.
int64_t mapRows(const ReductionNest &nest, int m, int n,
                const std::vector<Expr> &idx, const std::vector<Expr> &r,
                int64_t symbolsAt) {
  int64_t rows = plannedExtent(nest.shape[m], symbolsAt);
  struct V : IRVisitor {
    std::vector<std::vector<const Var *>> loads;
    void visitLoad(const Load *op) override {
      loads.push_back({});
      for (const Expr &i : op->indices)
        for (const Expr &x : freeVars(i))
          loads.back().push_back(x.as<Var>());
      IRVisitor::visitLoad(op);
    }
  } v;
  v.visit(nest.term(idx, r));
  auto reads = [](const std::vector<const Var *> &vars, const Expr &x) {
    return std::find(vars.begin(), vars.end(), x.as<Var>()) != vars.end();
  };
  for (int d = 0; d < m; ++d) {
    int64_t e = 0;
    if (d == n || !nest.shape[d].isConst(e) || e <= 1)
      continue;
    bool byRows = false, byColumns = false;
    for (const auto &vars : v.loads) {
      if (!reads(vars, idx[d]))
        continue;
      byRows |= reads(vars, idx[m]) && !reads(vars, idx[n]);
      byColumns |= reads(vars, idx[n]);
    }
    if (byRows && !byColumns)
      rows *= e;
  }
  return rows;
}

/// A CPU tile plans a symbolic M of at most kMaxPlannedRows rows a batch
/// (its symbols at 1) at a batch of kPlannedBatch; a larger one as a large
/// extent.
constexpr int64_t kMaxPlannedRows = 16;
constexpr int64_t kPlannedBatch = 8;

/// Expression nodes (a shared one once: the code computes it once) beyond
/// which a pointwise element is not unrolled into a row.
constexpr size_t kMaxRowElement = 300;

void chooseNextSlice(const ReductionNest &nest, RegisterTile &t,
                     const DeviceProfile &target);

/// Whether pointwise \p nest's element value, with its index \p back
/// places from the end (1: the innermost) taken as the lane, is a vector of
/// \p lanes elements (vectorizeLanes).
bool vectorsAlong(const ReductionNest &nest, int back, int64_t lanes) {
  const int rank = static_cast<int>(nest.shape.size());
  if (lanes < 4 || rank < back)
    return false;
  std::vector<Expr> at;
  for (int k = 0; k < rank; ++k)
    at.push_back(Var::make("i" + std::to_string(k)));
  RangeEnv ranges;
  setStaticRanges(ranges, at, nest.shape);
  Expr lane = Var::make("lane");
  ranges.set(lane, Range{0, lanes - 1});
  at[rank - back] = lane;
  VarBindings lets;
  const Stmt element = nest.finish(at, Expr());
  const Store *st = storeUnderLets(element, lets);
  // (A bool stores element by element: vectorStore takes values only.)
  return st && lets.empty() && st->value.type() != DType::Bool &&
         vectorizeLanes(st->value, lane, static_cast<int>(lanes), ranges)
             .defined();
}

/// Whether pointwise \p nest's element stores, along its innermost index,
/// a vector of \p lanes elements: a row of them is then row / lanes copies
/// of its code.
bool rowOfVectors(const ReductionNest &nest, int64_t lanes) {
  return vectorsAlong(nest, 1, lanes);
}

/// Whether pointwise \p nest's value, where its element stores along its
/// innermost index do not vectorize (rowOfVectors), reads vectors of
/// \p lanes along the index before it: a transposing copy, such as a
/// GEMM's row-panel copy ([panels, K, rows] from A[M, K]: each stored
/// element reads a row of A, the rows `K` apart), whose tile of several of
/// those indices reads each row contiguously and stores one contiguous
/// block.
bool columnOfVectors(const ReductionNest &nest, int64_t lanes) {
  return vectorsAlong(nest, 2, lanes);
}

/// The most expression nodes (an element's distinct nodes times its
/// copies) of a pointwise tile of several rows (pointwiseRows).
constexpr size_t kMaxPointwiseTileNodes = 4096;

/// The most rows of a pointwise tile (pointwiseRows).
constexpr int64_t kMaxPointwiseRows = 16;

/// How a pointwise element reads its tile's row index and column index
/// (pointwiseRows).
struct RowIndexUse {
  /// It divides (floordiv, mod or /) an expression of the row index.
  bool dividesRow = false;
  /// It selects by a condition on the column index (a padded copy's
  /// `inside ? x[clamped] : pad` along the row).
  bool selectsOnColumn = false;
};

RowIndexUse rowIndexUse(const Expr &e, const Var *row, const Var *column) {
  struct U : IRVisitor {
    const Var *row = nullptr, *column = nullptr;
    RowIndexUse use;
    void visitBinary(const Binary *op) override {
      if ((op->op == BinOp::FloorDiv || op->op == BinOp::Mod ||
           op->op == BinOp::Div) &&
          usesVar(op->a, row))
        use.dividesRow = true;
      IRVisitor::visitBinary(op);
    }
    void visitSelect(const Select *op) override {
      if (usesVar(op->cond, column))
        use.selectsOnColumn = true;
      IRVisitor::visitSelect(op);
    }
  } u;
  u.row = row;
  u.column = column;
  u.visit(e);
  return u.use;
}

/// Rows of a CPU pointwise tile \p t whose row is its nest's whole
/// innermost extent, a channel block of at most two vectors
/// (chooseRegisterTile): up to kMaxPointwiseRows of the dimension before it
/// (a divisor of its static extent), where
///  - the row is vectors of the element (rowOfVectors), or the element
///    reads vectors along the tile's rows (columnOfVectors: a transposing
///    copy, each row read contiguously by the tile's copies, which LLVM
///    turns into vector loads and shuffles; gemm_2048's row-panel copy of
///    A, [256, 2048, 8] from A[2048, 2048] one element a work-item, took
///    2.07 ms in the model and 0.94 in tiles of 16 x 8, kernel_profile.py,
///    5 rounds, stop 80),
///  - \p st's value reads that dimension's index \p row without dividing it
///    (the rows' addresses a constant apart),
///  - it is not a padded copy along the row (a select on \p column: its
///    border and interior columns are split instead, column_interior.h),
///  - and the tile's copies of the value stay within
///    kMaxPointwiseTileNodes.
/// One pixel per work-item paid the index arithmetic (a division per
/// dimension) and PoCL's work-item loop for two vector stores: ResNet-18's
/// Winograd input transforms ([16 N, C / 32, 14, 14, 32], four loads and
/// three FMAs an element) took 0.11 ms at batch 1, 0.075 in rows of 14
/// (kernel_profile.py, 5 rounds). The output transforms, which read tile
/// x / 2, gained 5-10% in rows of 7 and took ResNet-50's schedule phase
/// from 0.68 to 0.95 s.
void pointwiseRows(const ReductionNest &nest, RegisterTile &t,
                   const Store *st, const Var *row, const Var *column) {
  const int rank = static_cast<int>(nest.shape.size());
  int64_t e = 0;
  if (!st || !nest.shape[rank - 2].isConst(e) || e < 2 ||
      (!rowOfVectors(nest, t.vectorLanes) &&
       !columnOfVectors(nest, t.vectorLanes)))
    return;
  const RowIndexUse use = rowIndexUse(st->value, row, column);
  if (use.dividesRow || use.selectsOnColumn)
    return;
  const int64_t vectors = vectorOps(t.tn, t.vectorLanes);
  for (int64_t tm = std::min(e, kMaxPointwiseRows); tm >= 2; --tm) {
    if (e % tm != 0)
      continue;
    if (distinctNodesMoreThan(st->value,
                              kMaxPointwiseTileNodes / (tm * vectors)))
      continue;
    t.m = rank - 2;
    t.tm = tm;
    return;
  }
}

/// The vector registers a CPU tile that runs two reduction steps an
/// iteration leaves beyond its accumulators, its operand's vectors and its
/// broadcast element (chooseUnroll): 1, so a 3 x 3 convolution's 14 x 32
/// tiles (31 registers) unroll. Stop 53 kept them (3 spare) for one
/// that took 4.92 -> 5.16 ms unrolled; stop 91 measured the opposite on
/// the same Intel VM (kernel_profile.py, both orders, ResNet-50 at batch
/// 8): its 3 x 3s of stride 2 with their row prefetches 6.0-6.2 -> 5.7-5.9
/// ms, layer4.0's 1 x 1 of stride 2 over 14 x 32 tiles 5.9 -> 5.5-5.7,
/// layer4's 7 x 7 1 x 1s 1-2% less, layer3's 14 x 32 1 x 1s alike;
/// ResNet-18's layer3.0 3 x 3 2.9-3.1 -> 2.8.
constexpr int64_t kUnrollSpareRegisters = 1;

/// The fewest accumulator vectors of a tile that chooseUnroll unrolls: the
/// smallest measured (MobileNetV2's 12 x 16 tiles; ResNet-50's 7 x 32,
/// 14, ran 5-7% faster).
constexpr int64_t kUnrollMinAccumulators = 12;

/// The fewest vector registers of a target whose tiles chooseUnroll
/// unrolls: AVX-512's 32, where it was measured (a 16-register target's
/// tile of 12 accumulators, its operand and broadcast leave one free, and
/// was not).
constexpr int64_t kUnrollMinRegisters = 32;

/// Whether an operand of \p nest's term that a tile reads in vectors along
/// output dimension \p n slides along output dimension \p m with the
/// innermost reduction step: one of its indices uses both \p m and that
/// step (a depthwise convolution's input, a window row over the pixels that
/// a tile's rows are, read a vector of channels at a time). Not an operand
/// the tile broadcasts (a dense convolution's input pixels, shared by its
/// output channels).
bool vectorWindowAlongRows(const ReductionNest &nest, int m, int n) {
  const TermReads reads = termReads(nest);
  const Var *row = reads.idx[m].as<Var>(), *step = reads.r.back().as<Var>();
  for (size_t l = 0; l < reads.indices.size(); ++l)
    if (reads.uses[l][n])
      for (const Expr &i : reads.indices[l])
        if (usesVar(i, row) && usesVar(i, step))
          return true;
  return false;
}

/// Sets \p t.unroll to the innermost reduction loop's whole extent (2 to
/// kMaxWholeUnroll) where an operand's window slides along the tile's rows
/// with that loop (vectorWindowAlongRows): a depthwise convolution's 3 taps
/// of a row over 7 pixels. Unrolled, the step that reads pixel p + 1 at tap k
/// and the one that reads pixel p at tap k + 1 load the same vector, which
/// LLVM then loads once: 9 loads of each vector column a row instead of
/// 21. Returns whether it did. Measured on the Intel VM (stop 88,
/// ab_models, both orders): MobileNetV2's depthwise convolutions (all 17)
/// so took the model 3% less at batch 1 and 4% less at batch 8; the
/// 144-channel 56 x 56 one 1.52 -> 1.25 ms at batch 8.
bool chooseWholeUnroll(const ReductionNest &nest, RegisterTile &t) {
  int64_t e = 0;
  if (t.m < 0 || t.n < 0 || t.tm < 2 || !nest.term ||
      nest.reduceExtents.empty() || !nest.reduceExtents.back().isConst(e) ||
      e < 2 || e > kMaxWholeUnroll || !vectorWindowAlongRows(nest, t.m, t.n))
    return false;
  RegisterTile u = t;
  u.unroll = static_cast<int>(e);
  if (!unrollProblem(nest, u).empty())
    return false;
  t.unroll = u.unroll;
  return true;
}

/// Sets \p t.unroll to 2 for a CPU contraction tile whose accumulators,
/// operand vectors and broadcast element leave kUnrollSpareRegisters of the
/// target's vector registers free (unrollProblem permitting). Each step of
/// such a tile is two dozen FMAs, a dozen loads and broadcasts and the
/// loop's own counters, compares and address updates, near the 4 (fused)
/// instructions a cycle an AVX-512 core issues; two steps an iteration pay
/// the loop's part once (stop 53, clbench, minimum of 360 launches on an
/// AVX-512 Xeon): ResNet-50's 128 -> 128 1 x 1 convolution over 28 x 28
/// at batch 8 in 12 x 32 tiles (27 registers) 2.50-2.54 -> 2.37-2.39 ms,
/// BERT's 128 x 768 x 3072 GEMM in 6 x 64 tiles (29) 1.81 -> 1.76; and
/// 14 x 32 tiles (31; kUnrollSpareRegisters).
void chooseUnroll(const ReductionNest &nest, RegisterTile &t,
                  const DeviceProfile &target) {
  if (target.family == "gpu" || !nest.contraction || t.vectorLanes < 8)
    return;
  if (chooseWholeUnroll(nest, t))
    return;
  const int64_t vectors = vectorOps(t.tn, t.vectorLanes);
  if (target.vectorRegisters < kUnrollMinRegisters ||
      t.tm * vectors < kUnrollMinAccumulators ||
      t.tm * vectors + vectors + 1 >
          target.vectorRegisters - kUnrollSpareRegisters)
    return;
  RegisterTile u = t;
  u.unroll = 2;
  if (unrollProblem(nest, u).empty())
    t.unroll = 2;
}


/// The whole weight beyond which a CPU tile's work-items prefetch the next
/// weight slice in shares (RegisterTile::prefetchNext): more than half a
/// core's L2, so that it is read from L3 or memory on every run.
constexpr int64_t kNextSliceWeightBytes = int64_t{1} << 20;

/// Sets \p t.prefetchNext where the weight (tileWeightBytes) exceeds
/// kNextSliceWeightBytes, the tile has no row loop (which prefetches its
/// own next block) and its work-items on \p target, a CPU, have a next
/// slice (nextSliceProblem).
void chooseNextSlice(const ReductionNest &nest, RegisterTile &t,
                     const DeviceProfile &target) {
  if (target.family == "gpu" || !isFloatSum(nest) ||
      tileWeightBytes(nest, t) <= kNextSliceWeightBytes)
    return;
  t.prefetchNext = nextSliceProblem(nest, t, target.cacheBytes).empty();
}

} // namespace

RegisterTile chooseRegisterTile(const ReductionNest &nest,
                                const DeviceProfile &target,
                                int64_t symbolsAt) {
  const int64_t lanes = std::max<int64_t>(target.vectorLanes, 1);
  RegisterTile t;
  t.vectorLanes = explicitVectorLanes(target);
  int rank = static_cast<int>(nest.shape.size());
  if (!nest.term) {
    // A pointwise kernel: a row of up to 16 innermost elements per
    // work-item, so the index arithmetic (a division per dimension) is paid
    // once per row and the stores are contiguous, which LLVM vectorizes.
    // A static extent's last row is the remainder (58 = 3 x 16 + 10).
    if (rank < 1)
      return t;
    // A large element (a Resize blending 16 neighbours that it gathers)
    // stays one per work-item: a row would be 16 unrolled copies of it
    // (PoCL took seconds to compile those), for index arithmetic that is
    // small beside it.
    std::vector<Expr> at;
    for (int k = 0; k < rank; ++k)
      at.push_back(Var::make("i" + std::to_string(k)));
    VarBindings lets;
    Stmt element = nest.finish(at, Expr());
    const Store *st = storeUnderLets(element, lets);
    const bool large = st && distinctNodesMoreThan(st->value, kMaxRowElement);
    // Unless the row is vectors of the element (a Winograd output
    // transform's nine loads along channel lanes): then it is one copy
    // per vector, not per element.
    if (large && !rowOfVectors(nest, t.vectorLanes))
      return t;
    // A static innermost extent of up to two vectors is one row: a
    // channel-blocked padded copy ([n, C/32, H+2, W+2, 32]) stored half a
    // pixel per work-item, its index arithmetic and PoCL's work-item loop
    // costing more than the copy (MobileNetV2's 18 padded copies 1.1-1.6
    // -> 1.0 ms). Longer rows stay 16 (32 made BERT's slower).
    int64_t tn = 16, e;
    if (nest.shape[rank - 1].isConst(e) && (e < tn || e <= 2 * lanes))
      tn = e;
    if (tn < 4 || (large && tn % t.vectorLanes != 0))
      return t;
    t.n = rank - 1;
    t.tn = tn;
    if (target.family != "gpu" && !large && rank >= 2 &&
        nest.shape[rank - 1].isConstValue(tn))
      pointwiseRows(nest, t, st, at[rank - 2].as<Var>(),
                    at[rank - 1].as<Var>());
    return t;
  }
  if (rank < 1 || nest.reduceExtents.empty())
    return t;
  std::vector<Expr> idx, r;
  for (int k = 0; k < rank; ++k)
    idx.push_back(Var::make("i" + std::to_string(k)));
  for (size_t k = 0; k < nest.reduceExtents.size(); ++k)
    r.push_back(Var::make("r" + std::to_string(k)));
  // The static extents' ranges: a panel's index simplifies only with them.
  RangeEnv ranges;
  setStaticRanges(ranges, idx, nest.shape);
  setStaticRanges(ranges, r, nest.reduceExtents);
  if (!nest.contraction) {
    if (int64_t size = chooseGroupReduce(nest, target, symbolsAt); size > 0) {
      t.groupReduce = size;
      return t;
    }
    // A plain reduction (pooling, ReduceSum) has no operand to share
    // between outputs, but a row of innermost outputs pays the reduction
    // loop's control and index arithmetic once, and its independent
    // accumulators run side by side.
    // A max or min (a pool) whose term vectorizes along the innermost
    // outputs takes two vectors of them: ResNet's stem MaxPool over
    // [N, C/32, H, W, 32] ran 25k work-items of one float8 each (PoCL's
    // per-work-item cost dominated: 0.44-0.49 ms per run), a whole block of
    // 32 per work-item 0.17-0.26 ms; a second pixel per work-item gained
    // nothing more. So does a sum: MobileNetV2's GlobalAveragePool over
    // [N, 40, 7, 7, 32] (channel_blocks.cpp) 0.015 -> 0.011 ms at batch 1
    // and 0.065 -> 0.053 at batch 8 against 8 columns (stop 53).
    int64_t e, tn = 8;
    bool vectorRow = false;
    if (t.vectorLanes >= 4 && isFloatVectorCombine(nest)) {
      // The term at lane along the innermost outputs (contiguous or
      // stride-2 loads).
      Expr lane = Var::make("lane");
      std::vector<Expr> at = idx;
      at[rank - 1] = lane;
      vectorRow = vectorizeLanes(nest.term(at, r), lane, t.vectorLanes, ranges)
                      .defined();
      if (vectorRow)
        tn = 2 * t.vectorLanes;
    }
    bool staticInner = nest.shape[rank - 1].isConst(e);
    bool wholeBlock = vectorRow && staticInner && e == tn;
    if (staticInner && e < tn)
      tn = e;
    if (tn >= 4) {
      t.n = rank - 1;
      t.tn = tn;
    }
    // Such a pool over a channel block ([.., H, W, 32]) takes 4 pixels of
    // a row per work-item: ResNet's stem MaxPool (3 x 3 of stride 2 over
    // 112 x 112) 0.118-0.123 -> 0.077-0.079 ms at batch 1, 1.32 -> 0.87-0.92
    // at batch 8, where ONNX Runtime takes 0.069 and 0.78 (docs/
    // PERFORMANCE.md, stop 46; 2 pixels 1.51-1.59, 7 1.06-1.14 at batch 8).
    int64_t width = 0;
    if (wholeBlock && rank >= 3 && nest.shape[rank - 2].isConst(width) &&
        width >= 2 * kPoolRowPixels) {
      t.m = rank - 2;
      t.tm = kPoolRowPixels;
    }
    return t;
  }
  Expr term = nest.term(idx, r);
  // Cycles per output of storing it, spread over the reduction's steps: a
  // tile whose N is not the innermost dimension stores element by element.
  double steps = 1;
  for (const Expr &e : nest.reduceExtents) {
    int64_t v;
    steps *= e.isConst(v) ? static_cast<double>(std::max<int64_t>(v, 1)) : 64.0;
  }
  // The best tile (its estimated cycles per output, loads per output,
  // whether it is beyond the common budget, whether its last tile along a
  // static M is half of one), and the best of those whose last is not.
  struct Pick {
    bool set = false;
    double cost = 0, reads = 0;
    bool beyond = false, halfLast = false;
    int m = -1, n = -1;
    int64_t tm = 1, tn = 1;
    void apply(RegisterTile &r) const {
      r.m = m;
      r.n = n;
      r.tm = tm;
      r.tn = tn;
    }
  } best, whole;
  // N: the innermost dimension first (contiguous stores), then any other
  // along which an operand is contiguous (a convolution's output channels
  // read a packed weight, compiler/passes/pack_weights.h).
  for (int n = rank - 1; n >= 0; --n) {
    // M: an output dimension some operand does not depend on (that operand
    // is shared by the tile's rows) while every operand that depends on it
    // is shared along N; the innermost such dimension.
    // Without one, the innermost dimension that some operand does not
    // depend on, its other operands loaded per row (a depthwise
    // convolution's rows: the weight is shared, each row reads its own
    // input): the rows share nothing else, but a work-item of one row of a
    // short map (14 or 7 columns, 9 steps) does too little to pay for its
    // indices, loop and stores (MobileNetV2's 14x14 and 7x7 depthwise
    // convolutions: 1.28 -> 0.56 ms per run with 4 rows of 14).
    int m = -1, unshared = -1;
    for (int d = rank - 1; d >= 0 && m < 0; --d) {
      if (d == n)
        continue;
      bool shared = false, separable = true;
      for (const Operand &o : classifyLoads(term, idx, d, n, lanes, ranges)) {
        shared |= !o.m;
        separable &= !(o.m && o.n);
      }
      if (shared && separable)
        m = d;
      else if (shared && unshared < 0)
        unshared = d;
    }
    if (m < 0 && target.family != "gpu")
      m = unshared;
    std::vector<Operand> loads = classifyLoads(term, idx, m, n, lanes, ranges);
    bool sharedAlongN = false, contiguousAlongN = false, panels = false;
    int64_t panelWidth = lanes; // the widest panel along N
    for (const Operand &o : loads) {
      sharedAlongN |= !o.n;
      contiguousAlongN |= o.n && (o.contiguous || o.panel);
      panels |= o.n && o.panel;
      if (o.n && o.panel)
        panelWidth = std::max(panelWidth, o.panelWidth);
    }
    if (!sharedAlongN && m < 0)
      continue;
    if (n != rank - 1 && !contiguousAlongN)
      continue;
    if (target.family == "gpu" && m >= 0) {
      if (RegisterTile g = chooseGroupTile(nest, m, n, target, false, symbolsAt);
          g.groupM > 0)
        return g;
      // A convolution (a window, a strided or padded map that its
      // dimensions cannot merge along): the work-group tile of its GEMM
      // view, whose columns are every pixel of every image
      // (gemm_view.cpp). On the H200 it beat the register tile on every
      // layer of ResNet-18 and -50 whose window stages without divisions
      // (chooseGroupTile), at batch 1 and 8: the 7 x 7 maps' 3 x 3 layers
      // 0.69 -> 0.23 ms, the 56 x 56 ones 0.105 -> 0.023 ms (batch 1).
      if (rank > 2 && n == gemmViewColumn(rank, m))
        if (RegisterTile g = chooseGroupTile(gemmView(nest, m), 0, 1, target,
                                             /*windows=*/true, symbolsAt);
            g.groupM > 0) {
          g.m = m;
          g.n = n;
          g.gemmView = true;
          return g;
        }
      return gpuTile(nest, m, n, contiguousAlongN && !panels);
    }
    double store = n == rank - 1 ? 0.0 : 1.0 / steps;
    // Along M an even number of rows (LLVM's SLP vectorizer left 3-row
    // tiles scalar), along N whole vectors: rows of 8, 16 or 32, or the
    // whole extent below 8.
    std::vector<int64_t> tms{1};
    int64_t extentM = 0;
    bool staticM = m >= 0 && nest.shape[m].isConst(extentM);
    // A symbolic M of a few rows a batch (an MLP's GEMM, whose rows are
    // the batch) is planned at a batch of kPlannedBatch: the rows of a
    // last tile that the run does not fill are computed one by one, each
    // streaming the whole operand shared along M again (the MLP's 6-row
    // tile read each weight three times at a batch of 8; a 4-row tile
    // reads it twice, the second time from L2). A larger symbolic M
    // (BERT's 128 x batch tokens) is planned at its symbols' value, whose
    // rows past the last whole tile are computed one by one just as well:
    // 128 tokens in 6-row tiles left 2 rows so, and the tile of 6 x 16
    // tied with one of 4 x 24 (each 12 FMAs a step) that divides 128.
    // BERT-base's 1,024 x 768 x 3072 GEMM with its GELU took 4.05 ms in
    // 4 x 24 tiles against 4.5 in 6 x 16 at a batch of 1
    // (kernel_profile.py, alternated).
    const bool plannedM = m >= 0 && !staticM;
    if (plannedM) {
      const int64_t rows = plannedExtent(nest.shape[m], symbolsAt);
      extentM = rows <= kMaxPlannedRows
                    ? plannedExtent(nest.shape[m],
                                    std::max<int64_t>(symbolsAt, kPlannedBatch))
                    : rows;
    }
    // An operand packed in panels along M (a convolution weight packed for
    // its output channels, read by a tile whose rows are those channels) is
    // indexed by row / width and row % width. Those divisions do not depend
    // on the reduction step (LLVM hoists them), so any tile height fits a
    // panel: 6-row tiles that straddle panels beat 4-row ones that divide
    // them (ResNet-50's NCHW 1x1 convolution, 256 -> 64 over 56 x 56, 1.87-
    // 2.48 -> 1.75-1.88 ms with 6 output channels by 32 pixels instead of
    // 7 pixels by 32 channels; MobileNetV2's 24 -> 144 expansions 0.23-0.25
    // -> 0.21-0.22 ms each; alternated rounds). 16 rows exceed the
    // accumulator budget with any vector column.
    bool panelsAlongM = false;
    if (m >= 0 && lanes > 1)
      for (const Operand &o : classifyLoads(term, idx, -1, m, lanes, ranges))
        panelsAlongM |= o.n && o.panel;
    // (Along M, extentM is the static or the planned extent.)
    if (m >= 0)
      for (int64_t tm : {2, 4, 6, 8, 12})
        if (tm <= extentM)
          tms.push_back(tm);
    if (m >= 0 && extentM > 1 && extentM < 12 &&
        std::find(tms.begin(), tms.end(), extentM) == tms.end())
      tms.push_back(extentM); // one tile of all 7 rows of a 7 x 7 map
    // Rows that divide a static M leave no narrower last tile: 7 for the
    // 14- and 28-wide maps of a channel-blocked convolution (its tile
    // vectorizes along N, so an odd row count costs nothing), where 6
    // left a tile of 2 rows of 14 (a seventh of the work at a third of
    // the speed).
    // Where the convolution budget holds more, 14 too (the 14-, 28-, 56-
    // and 112-wide maps in 28 accumulators), a whole row of 14 included:
    // ResNet-18's 14 x 14 3 x 3 convolutions 0.82-0.83 ms in 14 x 32 tiles
    // against 0.86-0.92 in 7 or 8 x 32 on an AVX-512 Xeon (stop 47).
    const int64_t budget =
        tileBudget(target, loads, staticSteps(nest), n == rank - 1);
    const bool wide = budget > accumulatorVectors(target);
    // In that budget also a tile whose last one is exactly half of it: 14
    // rows over a 7 x 7 map's 49 (three tiles and one of 7), see below.
    if (staticM && !panelsAlongM && contiguousAlongN)
      for (int64_t tm = 5; tm <= 15; tm += wide ? 1 : 2)
        if ((extentM % tm == 0 || (wide && halfLastTile(extentM, tm))) &&
            (extentM > tm || wide) &&
            std::find(tms.begin(), tms.end(), tm) == tms.end())
          tms.push_back(tm);
    std::vector<int64_t> tns;
    int64_t extentN;
    bool staticN = nest.shape[n].isConst(extentN);
    if (staticN && extentN < 8)
      tns.push_back(extentN);
    // A whole short row (14 = 8 + 4 + 2 columns) in one tile.
    if (staticN && extentN > 8 && extentN < 32 && !panels &&
        (extentN & (extentN - 1)) != 0)
      tns.push_back(extentN);
    // Wider tiles (the profile's tile_columns) only along the innermost
    // output dimension, whose stores are contiguous: ResNet-50's stem into
    // NCHW (N its output channels, a plane apart) took 1.55 ms in 6 x 64
    // tiles against 0.92 in 7 x 32 on an AVX-512 Xeon (stop 47).
    const int64_t maxColumns =
        n == rank - 1 && target.tileColumns > 0 ? target.tileColumns : 32;
    for (int64_t tn = 8; tn <= maxColumns; tn *= 2)
      if ((!staticN || tn <= extentN) && (!panels || tn % panelWidth == 0))
        tns.push_back(tn); // a tile of panels starts at a panel
    // Three vectors of a weight packed in panels along N (48 columns of 16
    // lanes): 8 rows of them fill the long budget's 24 accumulators, a
    // tile that covers a batch of 8, or 128 rows, in whole tiles (the
    // MLP's 4096 x 4096 GEMM at a batch of 8: 6 x 64 tiles 2.5-2.8 ms,
    // 8 x 32 2.2-2.5, 8 x 48 1.86-1.92). Not where N runs over an
    // activation (a convolution over NCHW pixels, its weight in panels
    // along M): there 8 x 48 tiles took 0.50 ms against 0.38 in 6 x 64
    // (conv_r50_1x1), as did 8 x 32 and 8 x 64.
    if (lanes >= 8 && panels && 3 * lanes <= maxColumns &&
        (!staticN || 3 * lanes <= extentN) && (3 * lanes) % panelWidth == 0)
      tns.push_back(3 * lanes);
    // The tile with the fewest estimated cycles per output: whole tiles at
    // stepCycles, the last tile along a static extent as a smaller tile,
    // past a symbolic N element by element.
    for (int64_t tn : tns)
      for (int64_t tm : tms) {
        // A tile beyond the common budget divides a static M: one of 12
        // rows over a 7 x 7 map's 49 (4 tiles and a row) made MobileNetV2's
        // and ResNet-50's last 1 x 1 convolutions 0-11% slower than 7 rows
        // (on Zen 5 and on an AVX-512 Xeon). Within the long budget it may
        // leave a last tile of 2 rows or more: 12 rows over the 14- and
        // 28-wide maps, 6 over a GEMM's 1024.
        //
        // Nor one whose last tile is exactly half of it, over a static M:
        // 14 rows over a 7 x 7 map's 49, which ties with 7 rows (both
        // FMA-bound) and wins the tie below by its fewer loads per output
        // (7 broadcasts and 2 weight vectors for 14 FMAs against 14 and 2
        // for 28, and each weight slice read 4 times a map instead of 7).
        // On an AVX-512 Xeon (stop 89, --kernel-configs, per kernel):
        // MobileNetV2's 960 -> 320 projection 8-9% faster at batch 1 and
        // 7-9% at batch 8 (its 320 -> 1280 layer too, given 14 rows: 320
        // steps are outside the budget), ResNet-50's 2048 -> 512 ones 10%
        // at batch 8, its 3 x 3 and 512 -> 2048 ones on 7 x 7 within
        // noise; MobileNetV2 1.5-1.9% faster at batch 1 (ab_models, both
        // orders), at batch 8 within the harness's order bias.
        int64_t accumulators = tm * vectorOps(tn, lanes);
        bool beyond = accumulators > accumulatorVectors(target);
        bool divides = staticM && extentM % tm == 0;
        bool halfLast = staticM && halfLastTile(extentM, tm);
        bool longTile = accumulators <= target.longAccumulatorVectors &&
                        (!staticM || extentM % tm >= 2);
        if (accumulators > budget || tm * tn < 4 ||
            (beyond && !divides && !longTile && !halfLast))
          continue;
        double fn = wholeFraction(nest.shape[n], tn);
        int64_t rest = staticN ? extentN % tn : 1;
        double cost =
            store +
            fn * perOutput(loads, m < 0 ? 1 : extentM, tm, tn, lanes,
                           plannedM) +
            (1 - fn) * (staticN && rest
                            ? perOutput(loads, m < 0 ? 1 : extentM, tm, rest,
                                        lanes, plannedM)
                            : stepCycles(loads, 1, 1, lanes));
        // Of two tiles beyond the common budget estimated alike (both
        // FMA-bound), the one of fewer loads per output: 6 x 64 rather than
        // 12 x 32 (6 + 4 loads a step for 24 FMAs, not 12 + 2; gemm_1024
        // 6.3 against 7.2 ms on an AVX-512 Xeon). Within the common budget
        // the first found stays (ties there were not measured).
        double reads = stepReads(loads, tm, tn, lanes) /
                       static_cast<double>(tm * tn);
        auto better = [&](const Pick &p) {
          return !p.set || cost < p.cost - 1e-9 ||
                 (cost < p.cost + 1e-9 && beyond && (p.beyond || halfLast) &&
                  reads < p.reads - 1e-9);
        };
        auto take = [&](Pick &p) {
          p = Pick{true, cost, reads, beyond, halfLast, tm > 1 ? m : -1, n,
                   tm, tn};
        };
        if (better(best))
          take(best);
        if (!halfLast && better(whole))
          take(whole);
      }
  }
  // A row loop over the tiles of M walks whole tiles (row_loop.h): where
  // one pays for the best tile that leaves no half tile, that tile stays.
  // ResNet-50's 1 x 1 convolutions of layer4 at batch 1 (2048 -> 512, 4
  // MB of weight) in 7-row tiles walked by a row loop: the model 1.1%
  // faster than in 14-row tiles without one (ab_models, both orders).
  if (best.set && best.halfLast && whole.set) {
    RegisterTile alt = t;
    whole.apply(alt);
    chooseRowLoop(nest, alt, symbolsAt);
    if (alt.rowLoop >= 0)
      best = whole;
  }
  if (best.set)
    best.apply(t);
  // A CPU tile of several rows over a long reduction in blocks (a
  // channel-blocked input: a tile's rows are one segment per block, the
  // blocks a map apart) prefetches the next tile's rows as it goes
  // (registerTiledNest). Measured on ResNet-50 (docs/PERFORMANCE.md, stop
  // 40): at batch 8 its 1x1 convolutions of 256 to 1024 input channels on
  // 56 x 56 to 14 x 14 maps took 25-45% less; with 64 input channels (the
  // 64 -> 256 expansions) 30% more, on the 7 x 7 maps 5-10% more, at batch
  // 1 about the same, and a GEMM's rows (one contiguous stream each)
  // 1-3% more: hence the thresholds (rows planned at a batch of 1). At 128
  // steps (stop 41, was 256): MobileNetV2's 160 -> 24 projection (its 144
  // channels padded, pad_channels.h) at batch 8 took 0.73 ms instead of
  // 2.1, the model 5% less at batch 1 and 8; ResNet-50's four 128 -> 512
  // expansions it adds: the model 1% less at batch 1, the same at 8.
  //
  // A tile whose M is a row of a larger map (a 3 x 3 convolution's width)
  // counts the map's rows where its channels (the outermost and innermost
  // reduction loops: blocks by lanes, without the window) are
  // kPrefetchMinSteps or more (mapRows); with 64, ResNet-18's 64 -> 128
  // of stride 2 over 28 x 28 took 3% more, and ResNet's stem, of 3
  // channels, the same.
  auto channelSteps = [&] {
    int64_t outer = 0, inner = 0;
    if (!nest.reduceExtents.front().isConst(outer) ||
        !nest.reduceExtents.back().isConst(inner))
      return int64_t{0};
    return outer * inner;
  };
  if (t.m >= 0 && t.tm > 1 && nest.reduceExtents.size() >= 2 &&
      staticSteps(nest) >= kPrefetchMinSteps &&
      (plannedExtent(nest.shape[t.m], symbolsAt) >= kPrefetchMinRows ||
       (channelSteps() >= kPrefetchMinSteps &&
        mapRows(nest, t.m, t.n, idx, r, symbolsAt) >= kPrefetchMinRows)))
    t.prefetch = 1;
  chooseRowLoop(nest, t, symbolsAt);
  chooseNextSlice(nest, t, target);
  chooseUnroll(nest, t, target);
  return t;
}


} // namespace aotc
