/// \file
/// Register tiling of reduction kernels (unroll-and-jam in the Loop IR).
///
/// The naive kernel gives each work-item one output element and a serial
/// reduction loop: every operand element is loaded once per output that uses
/// it, and nothing is left for the CPU's vector units (PoCL does not
/// vectorize across work-items when the kernel has an inner loop). A tiled
/// kernel gives each work-item a TM x TN block of outputs along two output
/// dimensions, N (the innermost, contiguous) and M (one whose operands do not
/// depend on N): TM*TN accumulators in registers, one reduction loop whose
/// body updates all of them, so a load that does not depend on N is shared by
/// the TN outputs of a row and one that does not depend on M by the TM rows,
/// and the TN independent chains over contiguous addresses are what LLVM's
/// vectorizers turn into vector FMAs. Every statement is ordinary Loop IR
/// (scalar locals, loops, stores), so epilogues and fused consumers are
/// instantiated per element exactly as in the naive kernel, and the verifier
/// proves every access of a full tile from the tile's bounds check.
///
/// Pointwise kernels get the same treatment with rows of innermost elements
/// (ReductionNest without a term): the index arithmetic is paid once per row.
///
/// A tile that sticks out of the output (sizes not multiples of the tile, or
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

/// The accumulator budget of a tile over \p steps reduction steps (0:
/// symbolic) whose operands read per row are \p loads: the profile's
/// convolution budget where those all read adjacent rows (a channel-blocked
/// convolution's pixels) over kConvBudgetMinSteps or more, or the rows are
/// strided; its long budget over kLongBudgetMinSteps or more where the tile
/// stores along the innermost dimension (\p innerN; ResNet-50's stem into
/// NCHW, its N the output channels a plane apart, took 1.07 ms in 12 x 32
/// tiles against 0.92 in 7 x 32 on an AVX-512 Xeon); else
/// accumulatorVectors.
int64_t tileBudget(const DeviceProfile &target,
                   const std::vector<Operand> &loads, int64_t steps,
                   bool innerN) {
  bool perRow = false, adjacent = true, strided = true;
  for (const Operand &o : loads)
    if (o.m && !o.n) {
      perRow = true;
      adjacent &= o.adjacentRows;
      strided &= o.rowStep >= 2;
    }
  int64_t budget = accumulatorVectors(target);
  if (innerN && (steps == 0 || steps >= kLongBudgetMinSteps))
    budget = std::max(budget, target.longAccumulatorVectors);
  if (perRow && adjacent && (steps >= kConvBudgetMinSteps || strided))
    budget = std::max(budget, target.convAccumulatorVectors);
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

/// The fraction of an extent's elements that lie in whole tiles of \p t
/// (1 for a symbolic extent: assumed large).
double wholeFraction(const Expr &extent, int64_t t) {
  int64_t e;
  if (!extent.isConst(e) || e == 0)
    return 1.0;
  return static_cast<double>(e - e % t) / static_cast<double>(e);
}

} // namespace

Expr initialValue(const ReductionNest &nest, const Expr &acc) {
  return acc.lanes() > 1 ? Broadcast::make(nest.init, acc.lanes()) : nest.init;
}

int64_t plannedExtent(const Expr &extent, int64_t symbolsAt) {
  int64_t v;
  if (extent.isConst(v))
    return std::max<int64_t>(v, 1);
  struct At : IRMutator {
    int64_t value = 1;
    Expr mutateVar(const Var *, const Expr &) override { return Expr(value); }
  } at;
  at.value = std::max<int64_t>(symbolsAt, 1);
  return simplify(at.mutate(extent)).isConst(v) && v > 1 ? v : 1;
}

bool tilesDependOnPlannedSizes(const DeviceProfile &target) {
  return target.family == "gpu";
}

std::vector<int64_t> staticExtents(const ReductionNest &nest) {
  std::vector<int64_t> out;
  for (const Expr &e : nest.reduceExtents) {
    int64_t v;
    if (!e.isConst(v) || v < 1)
      return {};
    out.push_back(v);
  }
  return out;
}

int64_t staticSteps(const ReductionNest &nest) {
  std::vector<int64_t> ext = staticExtents(nest);
  if (ext.empty() && !nest.reduceExtents.empty())
    return 0;
  int64_t steps = 1;
  for (int64_t e : ext)
    steps *= e;
  return steps;
}

TermReads termReads(const ReductionNest &nest) {
  TermReads out;
  for (size_t d = 0; d < nest.shape.size(); ++d)
    out.idx.push_back(Var::make("i" + std::to_string(d)));
  for (size_t k = 0; k < nest.reduceExtents.size(); ++k)
    out.r.push_back(Var::make("r" + std::to_string(k)));
  out.term = nest.term(out.idx, out.r);
  struct V : IRVisitor {
    TermReads *out = nullptr;
    void visitLoad(const Load *op) override {
      std::vector<bool> uses(out->idx.size(), false);
      for (const Expr &i : op->indices)
        for (size_t d = 0; d < out->idx.size(); ++d)
          uses[d] = uses[d] || usesVar(i, out->idx[d].as<Var>());
      out->uses.push_back(uses);
      out->indices.push_back(op->indices);
      IRVisitor::visitLoad(op);
    }
  } v;
  v.out = &out;
  v.visit(out.term);
  return out;
}

std::vector<bool> weightReads(const ReductionNest &nest, const RegisterTile &t) {
  std::vector<bool> out(nest.shape.size(), false);
  if (t.m < 0)
    return out;
  for (const auto &u : termReads(nest).uses)
    for (size_t d = 0; d < u.size(); ++d)
      out[d] = out[d] || (u[d] && !u[t.m]);
  return out;
}

std::vector<Stmt> prefetchLoads(const std::vector<Expr> &terms, const Var *by,
                                const std::vector<Expr> &avoid,
                                const std::function<Expr(const Expr &)> &at) {
  std::vector<Stmt> out;
  std::set<std::string> seen;
  for (const Expr &term : terms)
    for (const Load *l : loadsIndexedBy(term, by)) {
      bool skip = false;
      for (const Expr &i : l->indices) {
        skip |= readsMemory(i);
        for (const Expr &v : avoid)
          skip |= usesVar(i, v.as<Var>());
      }
      if (skip)
        continue;
      std::vector<Expr> idx;
      for (const Expr &i : l->indices)
        idx.push_back(simplify(at ? at(i) : i));
      if (seen.insert(exprKey(Load::make(l->type, l->buffer, idx))).second)
        out.push_back(Prefetch::make(l->buffer, std::move(idx)));
    }
  return out;
}

std::vector<Expr> tileCounts(const ReductionNest &nest, const RegisterTile &t) {
  std::vector<Expr> out;
  for (int d = 0; d < static_cast<int>(nest.shape.size()); ++d) {
    const int64_t size = d == t.m ? t.tm : d == t.n ? t.tn : 1;
    out.push_back(d == t.m || d == t.n
                      ? floorDiv(nest.shape[d] + Expr(size - 1), Expr(size))
                      : nest.shape[d]);
  }
  return out;
}

int64_t tileWeightBytes(const ReductionNest &nest, const RegisterTile &t) {
  const int64_t steps = staticSteps(nest);
  if (t.m < 0 || t.n < 0 || steps == 0)
    return 0;
  const std::vector<bool> reads = weightReads(nest, t);
  int64_t weight = steps * dtypeSize(nest.accType), columns = 0;
  if (!nest.shape[t.n].isConst(columns))
    return 0;
  weight *= (columns + t.tn - 1) / t.tn * t.tn;
  for (int d = 0; d < static_cast<int>(nest.shape.size()); ++d) {
    int64_t e = 0;
    if (d == t.n || d == t.m || !reads[d])
      continue;
    if (!nest.shape[d].isConst(e))
      return 0;
    weight *= e;
  }
  return weight;
}

bool isFloatSum(const ReductionNest &nest) {
  // float16 and bfloat16 values are computed in float (their loads
  // widen, their stores round): their sums accumulate in float vectors.
  if (!nest.term || !isFloat32Valued(nest.accType))
    return false;
  Expr acc = Var::make("acc", nest.accType), term = Var::make("t", nest.accType);
  Expr sum = nest.combine(acc, term); // held: b points into it
  const Binary *b = sum.as<Binary>();
  return b && b->op == BinOp::Add &&
         ((b->a.sameAs(acc) && b->b.sameAs(term)) ||
          (b->a.sameAs(term) && b->b.sameAs(acc)));
}

bool isFloatVectorCombine(const ReductionNest &nest) {
  if (!nest.term || !isFloat32Valued(nest.accType))
    return false;
  if (isFloatSum(nest))
    return true;
  // Lane-wise over the accumulator and the term alone: float arithmetic,
  // comparisons and their logic, selects, lane-wise calls and isnan (a
  // max's `(t > acc) | isnan(t) ? t : acc`). No literal (it would need
  // its own broadcast).
  Expr acc = Var::make("acc", nest.accType), term = Var::make("t", nest.accType);
  Expr next = nest.combine(acc, term);
  struct Lanewise : IRVisitor {
    uint64_t acc, term;
    bool ok = true;
    void visitVar(const Var *op) override {
      ok &= op->id == acc || op->id == term;
    }
    void visitBinary(const Binary *op) override {
      bool logic = op->op == BinOp::And || op->op == BinOp::Or;
      ok &= logic ? op->a.type() == DType::Bool : isFloat(op->a.type());
      ok &= logic || isComparison(op->op) || op->op == BinOp::Add ||
            op->op == BinOp::Sub || op->op == BinOp::Mul ||
            op->op == BinOp::Div || op->op == BinOp::Min ||
            op->op == BinOp::Max;
      IRVisitor::visitBinary(op);
    }
    void visitCall(const Call *op) override {
      ok &= op->name == "isnan" || isLanewiseBuiltin(op->name);
      IRVisitor::visitCall(op);
    }
    void visitIntImm(const IntImm *) override { ok = false; }
    void visitFloatImm(const FloatImm *) override { ok = false; }
    void visitLoad(const Load *) override { ok = false; }
  } v;
  v.acc = acc.as<Var>()->id;
  v.term = term.as<Var>()->id;
  v.visit(next);
  return v.ok && next.type() == nest.accType;
}

Stmt stmtUnderLets(const Stmt &s, VarBindings &lets) {
  Stmt cur = s;
  while (const LetStmt *l = cur.as<LetStmt>()) {
    lets.push_back({l->var, substitute(l->value, lets)});
    cur = l->body;
  }
  return cur;
}

const Store *storeUnderLets(const Stmt &s, VarBindings &lets) {
  return stmtUnderLets(s, lets).as<Store>(); // a node of s's tree
}

Stmt vectorFinish(const ReductionNest &nest,
                  const std::function<std::vector<Expr>(const Expr &)> &at,
                  const Expr &col, const Expr &acc, int width,
                  const RangeEnv &ranges) {
  return vectorFinish(nest.finish, nest.accType, at, col, acc, width, ranges);
}

Stmt vectorFinish(const FinishFn &finish, DType type,
                  const std::function<std::vector<Expr>(const Expr &)> &at,
                  const Expr &col, const Expr &acc, int width,
                  const RangeEnv &ranges) {
  Expr lane = Var::make("lane"), x = Var::make("x", type);
  Stmt f = finish(at(col + lane), x);
  // The bindings before the store (the reduction's value, `red`) are
  // substituted into it.
  VarBindings lets;
  const Stmt cur = stmtUnderLets(f, lets);
  // A store, or blocks of stores under conditions the lanes share (a
  // padded store's border, padded_stores.h).
  std::function<Stmt(const Stmt &)> vectorized = [&](const Stmt &s) {
    if (const Block *b = s.as<Block>()) {
      std::vector<Stmt> out;
      for (const Stmt &part : b->stmts) {
        out.push_back(vectorized(part));
        if (!out.back().defined())
          return Stmt();
      }
      return Block::make(std::move(out));
    }
    if (const IfThenElse *i = s.as<IfThenElse>()) {
      Expr cond = simplify(substitute(i->cond, lets), ranges);
      if (i->elseCase.defined() || usesVar(cond, lane.as<Var>()))
        return Stmt();
      Stmt then = vectorized(i->thenCase);
      return then.defined() ? IfThenElse::make(cond, then) : Stmt();
    }
    const Store *st = s.as<Store>();
    if (!st)
      return Stmt();
    std::vector<Expr> indices;
    for (const Expr &i : st->indices)
      indices.push_back(substitute(i, lets));
    return vectorStore(st->buffer, indices, substitute(st->value, lets),
                       lane, width, ranges, {{x.as<Var>()->id, acc}});
  };
  return vectorized(cur);
}

Stmt accumulate(const ReductionNest &nest, const Expr &acc, const Expr &term) {
  if (term.as<Var>() || term.as<IntImm>() || term.as<FloatImm>())
    return LocalAssign::make(acc, nest.combine(acc, term));
  Expr v = Var::make("v", term.type(), term.lanes());
  Expr combined = nest.combine(acc, v);
  struct Uses : IRVisitor {
    uint64_t id;
    int n = 0;
    void visitVar(const Var *op) override { n += op->id == id; }
  } uses;
  uses.id = v.as<Var>()->id;
  uses.visit(combined);
  if (uses.n <= 1)
    return LocalAssign::make(acc, nest.combine(acc, term));
  return LetStmt::make(v, term, LocalAssign::make(acc, combined));
}

Stmt reductionLoops(const ReductionNest &nest, const std::vector<Expr> &rvars,
                    const std::vector<Expr> &accs, const Updates &updates,
                    int unroll) {
  const std::vector<Expr> &ext = nest.reduceExtents;
  size_t n = rvars.size();
  auto wrap = [&](Stmt s, size_t from, size_t to) {
    for (size_t k = to; k-- > from;)
      s = For::make(rvars[k], Expr(0), ext[k], ForKind::Serial, 0, s);
    return s;
  };
  // All loops, the innermost \p unroll steps an iteration where it can.
  auto plain = [&]() {
    int64_t e = 0;
    if (unroll <= 1 || n == 0 || !ext[n - 1].isConst(e) || e % unroll != 0 ||
        e < 2 * unroll)
      return wrap(Block::make(updates(accs, rvars)), 0, n);
    const Var *inner = rvars[n - 1].as<Var>();
    Expr step = Var::make(inner ? inner->name + "u" : std::string("ru"));
    std::vector<Stmt> body;
    for (int k = 0; k < unroll; ++k) {
      std::vector<Expr> r = rvars;
      r[n - 1] = Expr(unroll) * step + Expr(k);
      for (Stmt &s : updates(accs, r))
        body.push_back(std::move(s));
    }
    return wrap(For::make(step, Expr(0), Expr(e / unroll), ForKind::Serial, 0,
                          Block::make(body)),
                0, n - 1);
  };
  // The outermost level whose inner nest adds at most kSumBlock terms.
  size_t level = n;
  int64_t terms = 1;
  while (level > 0) {
    int64_t e;
    if (!ext[level - 1].isConst(e) || e < 0 || e > kSumBlock / terms)
      break;
    terms *= std::max<int64_t>(e, 1);
    --level;
  }
  if (!nest.blockedSum || level == 0 || accs.empty())
    return plain();
  std::vector<Expr> parts;
  for (size_t i = 0; i < accs.size(); ++i)
    parts.push_back(Var::make("part", nest.accType, accs[i].lanes()));
  std::vector<Expr> r = rvars;
  Stmt partial;
  Expr block; // the innermost loop's block number, when it is split
  if (level < n) {
    partial = Block::make(updates(parts, r));
    for (size_t k = n; k-- > level;)
      partial = For::make(rvars[k], Expr(0), ext[k], ForKind::Serial, 0,
                          partial);
  } else {
    block = Var::make("rb");
    Expr inner = Var::make("ri");
    Expr start = block * Expr(kSumBlock);
    r[n - 1] = start + inner;
    partial = For::make(inner, Expr(0),
                        minExpr(Expr(kSumBlock), ext[n - 1] - start),
                        ForKind::Serial, 0, Block::make(updates(parts, r)));
  }
  std::vector<Stmt> seq = {partial};
  for (size_t i = 0; i < accs.size(); ++i)
    seq.push_back(LocalAssign::make(accs[i], nest.combine(accs[i], parts[i])));
  Stmt s = Block::make(seq);
  for (size_t i = parts.size(); i-- > 0;)
    s = LocalDecl::make(parts[i], initialValue(nest, parts[i]), s);
  if (block.defined()) {
    s = For::make(block, Expr(0),
                  floorDiv(ext[n - 1] + Expr(kSumBlock - 1), Expr(kSumBlock)),
                  ForKind::Serial, 0, s);
    return wrap(s, 0, n - 1);
  }
  return wrap(s, 0, level);
}


Stmt reductionElement(const ReductionNest &nest,
                      const std::vector<Expr> &idx) {
  if (!nest.term)
    return nest.finish(idx, Expr());
  Expr acc = Var::make("acc", nest.accType);
  std::vector<Expr> rvars;
  for (size_t k = 0; k < nest.reduceExtents.size(); ++k)
    rvars.push_back(Var::make("r" + std::to_string(k)));
  Stmt loop = reductionLoops(
      nest, rvars, {acc},
      [&](const std::vector<Expr> &targets, const std::vector<Expr> &r) {
        return std::vector<Stmt>{accumulate(nest, targets[0], nest.term(idx, r))};
      });
  return LocalDecl::make(acc, nest.init,
                         Block::make({loop, nest.finish(idx, acc)}));
}

namespace {

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
/// Floats in a cache line of 64 bytes. A tile's linear prefetch of its next
/// tile's rows (registerTiledNest) fetches one line a step: the rows of a
/// channel block (each as many floats as the block's steps) are all
/// fetched where there are at most this many.
constexpr int64_t kPrefetchLineFloats = 16;

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

/// Whether pointwise \p nest's element stores, along its innermost index,
/// a vector of \p lanes elements (vectorizeLanes): a row of them is then
/// row / lanes copies of its code.
bool rowOfVectors(const ReductionNest &nest, int64_t lanes) {
  const int rank = static_cast<int>(nest.shape.size());
  if (lanes < 4 || rank < 1)
    return false;
  std::vector<Expr> at;
  for (int k = 0; k < rank; ++k)
    at.push_back(Var::make("i" + std::to_string(k)));
  RangeEnv ranges;
  setStaticRanges(ranges, at, nest.shape);
  Expr lane = Var::make("lane");
  ranges.set(lane, Range{0, lanes - 1});
  at[rank - 1] = lane;
  VarBindings lets;
  const Stmt element = nest.finish(at, Expr());
  const Store *st = storeUnderLets(element, lets);
  return st && lets.empty() &&
         vectorizeLanes(st->value, lane, static_cast<int>(lanes), ranges)
             .defined();
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
///  - the row is vectors of the element (rowOfVectors),
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
      !rowOfVectors(nest, t.vectorLanes))
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
/// broadcast element (chooseUnroll).
constexpr int64_t kUnrollSpareRegisters = 3;

/// The fewest accumulator vectors of a tile that chooseUnroll unrolls: the
/// smallest measured (MobileNetV2's 12 x 16 tiles; ResNet-50's 7 x 32,
/// 14, ran 5-7% faster). A 16-register target (AVX2) has no tile of 12
/// accumulators that leaves kUnrollSpareRegisters, so it never unrolls.
constexpr int64_t kUnrollMinAccumulators = 12;

/// Sets \p t.unroll to 2 for a CPU contraction tile whose accumulators,
/// operand vectors and broadcast element leave kUnrollSpareRegisters of the
/// target's vector registers free (unrollProblem permitting). Each step of
/// such a tile is two dozen FMAs, a dozen loads and broadcasts and the
/// loop's own counters, compares and address updates, near the 4 (fused)
/// instructions a cycle an AVX-512 core issues; two steps an iteration pay
/// the loop's part once (stop 53, clbench, minimum of 360 launches on an
/// AVX-512 Xeon): ResNet-50's 128 -> 128 1 x 1 convolution over 28 x 28
/// at batch 8 in 12 x 32 tiles (27 registers) 2.50-2.54 -> 2.37-2.39 ms,
/// BERT's 128 x 768 x 3072 GEMM in 6 x 64 tiles (29) 1.81 -> 1.76; but a
/// 3 x 3 convolution's 14 x 32 tiles (31) 4.92 -> 5.16.
void chooseUnroll(const ReductionNest &nest, RegisterTile &t,
                  const DeviceProfile &target) {
  if (target.family == "gpu" || !nest.contraction || t.vectorLanes < 8)
    return;
  const int64_t vectors = vectorOps(t.tn, t.vectorLanes);
  if (t.tm * vectors < kUnrollMinAccumulators ||
      t.tm * vectors + vectors + 1 >
          target.vectorRegisters - kUnrollSpareRegisters)
    return;
  RegisterTile u = t;
  u.unroll = 2;
  if (unrollProblem(nest, u).empty())
    t.unroll = 2;
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
  double best = 0, bestReads = 0;
  bool bestBeyond = false;
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
    if (staticM && !panelsAlongM && contiguousAlongN)
      for (int64_t tm = 5; tm <= 15; tm += wide ? 1 : 2)
        if (extentM % tm == 0 && (extentM > tm || wide) &&
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
        int64_t accumulators = tm * vectorOps(tn, lanes);
        bool beyond = accumulators > accumulatorVectors(target);
        bool divides = staticM && extentM % tm == 0;
        bool longTile = accumulators <= target.longAccumulatorVectors &&
                        (!staticM || extentM % tm >= 2);
        if (accumulators > budget || tm * tn < 4 ||
            (beyond && !divides && !longTile))
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
        if (t.n < 0 || cost < best - 1e-9 ||
            (cost < best + 1e-9 && beyond && bestBeyond &&
             reads < bestReads - 1e-9)) {
          best = cost;
          bestReads = reads;
          bestBeyond = beyond;
          t.m = tm > 1 ? m : -1;
          t.n = n;
          t.tm = tm;
          t.tn = tn;
        }
      }
  }
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
  if (t.m >= 0 && t.tm > 1 && nest.reduceExtents.size() >= 2 &&
      staticSteps(nest) >= kPrefetchMinSteps &&
      plannedExtent(nest.shape[t.m], symbolsAt) >= kPrefetchMinRows)
    t.prefetch = 1;
  chooseRowLoop(nest, t, symbolsAt);
  chooseNextSlice(nest, t, target);
  chooseUnroll(nest, t, target);
  return t;
}

namespace {

/// The last-level cache taken where the profile does not know it
/// (DeviceProfile::cacheBytes): the Zen 5's L3 the row groups were
/// measured on.
constexpr int64_t kDefaultCacheBytes = int64_t{32} << 20;

/// The M tiles per group of a CPU tile \p t over tile counts \p extents,
/// where the rows of all M tiles take more than half the last-level cache
/// (t.cacheBytes) and there are several N tiles: the most tiles whose rows
/// take at most a quarter of it (at least 2), or a divisor of the M tiles
/// down to half of that (every group whole); 0 for no groups (symbolic
/// extents, rows that fit). Without a divisor the last group is partial
/// and its missing tiles' work-items do nothing (registerTiledNest):
/// gemm_4096's 683 M tiles of 6 rows (a prime) under generic-avx512 ran
/// ungrouped before stop 48.
int64_t rowGroup(const ReductionNest &nest, const RegisterTile &t,
                 const std::vector<Expr> &extents) {
  int64_t tilesM = 0, tilesN = 0;
  const int64_t steps = staticSteps(nest);
  if (t.m < 0 || t.n < 0 || steps == 0 || !extents[t.m].isConst(tilesM) ||
      !extents[t.n].isConst(tilesN) || tilesN < 2)
    return 0;
  const int64_t groupBytes =
      (t.cacheBytes > 0 ? t.cacheBytes : kDefaultCacheBytes) / 4;
  const int64_t tileBytes = t.tm * steps * dtypeSize(nest.accType);
  if (tilesM * tileBytes <= 2 * groupBytes)
    return 0;
  const int64_t most = std::min(tilesM / 2, groupBytes / tileBytes);
  if (most < 2)
    return 0;
  for (int64_t g = most; g >= 2 && 2 * g >= most; --g)
    if (tilesM % g == 0)
      return g;
  return most;
}

/// The weight the moved blocks read together at most (sharedRowDims): all
/// of it stays in a core's L2 while the work-items cycle through them.
constexpr int64_t kInnerWeightBytes = int64_t{512} << 10;

/// The same for a convolution that skips the input's pixels
/// (skipsRowPixels), whose dimension order rereads the input once per
/// block: its weight may come from L3. ResNet-50's layer3.0 downsampling
/// (512 -> 1024 channels at stride 2, a 2 MB weight) on a Zen 3: 14.0 ->
/// 11.7 ms at batch 8, 1.59 -> 1.42 at batch 1 (kernel_profile.py).
constexpr int64_t kStridedInnerWeightBytes = int64_t{2} << 20;

/// The untiled output dimensions of a CPU tile \p t that only operands
/// not read along M depend on (a channel-blocked convolution's output
/// channel block, which only its weight reads), with static extents, and
/// the elements the weight reads over all of them (blocks x tn x steps).
struct WeightDims {
  std::vector<int> dims;
  int64_t elements = 0;
};

WeightDims weightDims(const ReductionNest &nest, const RegisterTile &t,
                      const TermReads &reads,
                      const std::vector<Expr> &extents) {
  const int rank = static_cast<int>(nest.shape.size());
  const int64_t steps = staticSteps(nest);
  WeightDims w;
  if (t.m < 0 || t.n < 0 || steps == 0)
    return w;
  bool anyM = false;
  for (const auto &u : reads.uses)
    anyM = anyM || u[t.m];
  if (!anyM)
    return w;
  int64_t blocks = 1;
  for (int d = 0; d < rank; ++d) {
    if (d == t.m || d == t.n)
      continue;
    bool read = false, withM = false;
    for (const auto &u : reads.uses) {
      read = read || u[d];
      withM = withM || (u[d] && u[t.m]);
    }
    int64_t e = 0;
    if (!read || withM || !extents[d].isConst(e))
      continue;
    w.dims.push_back(d);
    blocks *= e;
  }
  w.elements = blocks * t.tn * steps;
  return w;
}

/// The untiled output dimensions of a CPU tile \p t that only the operand
/// read along N depends on (a channel-blocked convolution's output channel
/// block: its input does not depend on it), where that operand's reads
/// over all of them take at most kInnerWeightBytes and the reduction is
/// at least as long as their outputs per pixel (blocks x tn); empty where
/// any extent is symbolic (\p w: the weight's dimensions of the tile).
/// registerTiledNest runs them innermost, inside
/// the M tiles, so the work-items of one tile of pixels compute every
/// channel block while the tile's input is in cache: in dimension order
/// each block streamed the whole input again, from memory where a batch of
/// 8 outgrew the cache (ResNet-50's 256 -> 64 1 x 1 convolutions at batch
/// 8: 4.2 ms at 195 GFLOP/s; 10-33% less this way). Where the outputs per
/// pixel outnumber the inputs (a 64 -> 256 expansion with its residual),
/// cycling through 8 blocks' outputs and residuals took 80-100% longer;
/// except where \p stridedRows (skipsRowPixels: a strided 1 x 1
/// convolution without a residual), up to kStridedInnerWeightBytes: in
/// dimension order each block read the strided pixels again, every other
/// line of the input, whose neighbours the line-pair prefetch reads too
/// (ResNet-50's layer2.0 downsampling, 256 -> 512 channels at stride 2,
/// batch 8 on a Zen 3: 14.3 -> 10.7 ms this way, though its outputs per
/// pixel outnumber its inputs).
std::vector<int> sharedRowDims(const ReductionNest &nest, const WeightDims &w,
                               bool stridedRows) {
  const int64_t steps = staticSteps(nest);
  if (w.dims.empty() ||
      w.elements * dtypeSize(nest.accType) >
          (stridedRows ? kStridedInnerWeightBytes : kInnerWeightBytes) ||
      (steps < w.elements / steps && !stridedRows))
    return {};
  return w.dims;
}

/// True if a load of \p reads along output dimension \p m reads rows
/// (its second-innermost index; the innermost, the channels of a pixel,
/// does not depend on \p m) more than one apart between neighbouring
/// outputs, with no reduction index in that row index: a strided 1 x 1
/// convolution read in place, which skips the pixels between (on CPU
/// profiles only with --no-subsample-strided: by default it reads a copy
/// of its pixels at stride 1, LowerOptions::subsampleStridedPointwiseConvs).
/// (A window along the row, a 3 x 3 at stride 2, reads them all:
/// ResNet-50's layer2.0 and layer3.0 3 x 3s gained nothing with their
/// blocks inside, -5% to +8%.)
bool skipsRowPixels(const TermReads &reads, int m) {
  if (m < 0)
    return false;
  const Var *mv = reads.idx[m].as<Var>();
  for (size_t k = 0; k < reads.indices.size(); ++k) {
    const std::vector<Expr> &ix = reads.indices[k];
    if (!reads.uses[k][m] || ix.size() < 2 || usesVar(ix.back(), mv))
      continue;
    const Expr &row = ix[ix.size() - 2];
    bool window = false;
    for (const Expr &r : reads.r)
      window = window || usesVar(row, r.as<Var>());
    if (window || !usesVar(row, mv))
      continue;
    Expr next = substitute(row, VarBindings{{reads.idx[m], reads.idx[m] + Expr(1)}});
    int64_t step = 0;
    if (simplify(next - row).isConst(step) && step > 1)
      return true;
  }
  return false;
}

/// True if the finish of \p nest (its epilogue) loads anything along
/// output dimension \p m of the index variables \p idx: a residual, where
/// a bias is read along the channels only.
bool finishReadsAlong(const ReductionNest &nest, const std::vector<Expr> &idx,
                      int m) {
  if (!nest.finish || m < 0)
    return false;
  struct V : IRVisitor {
    const Var *mv = nullptr;
    bool found = false;
    void note(const std::vector<Expr> &indices) {
      for (const Expr &i : indices)
        found = found || usesVar(i, mv);
    }
    void visitLoad(const Load *op) override {
      note(op->indices);
      IRVisitor::visitLoad(op);
    }
    void visitVectorLoad(const VectorLoad *op) override {
      note(op->indices);
      IRVisitor::visitVectorLoad(op);
    }
  } v;
  v.mv = idx[m].as<Var>();
  v.visit(nest.finish(idx, Var::make("acc", nest.accType)));
  return v.found;
}

/// The weight from which the dimensions only it reads go outside the
/// batch (weightOuterDims): more than a core's L2 holds, so in dimension
/// order each image streamed all of it from L3 or memory again.
constexpr int64_t kOuterWeightBytes = int64_t{2} << 20;

/// The images a CPU tile's order is planned for (weightOuterDims).
constexpr int64_t kOuterPlannedBatch = 8;

/// The output dimensions of a CPU tile \p t to run outermost: the
/// weightDims (a convolution's output channel blocks) where the weight
/// they read takes more than kOuterWeightBytes and more than twice the
/// input of kOuterPlannedBatch images, the input read per image being what
/// the operands read along M span at one index of the dimensions before
/// the weight's (the batch). The work-items that read one panel of the
/// weight are then consecutive across images, so each panel is read from
/// memory once, not once per image, and the images' inputs, the smaller
/// stream, are read once per panel. Measured on an AVX-512 Xeon at batch 8
/// (stop 47): ResNet-18's and -50's 512-channel 3 x 3 convolutions (9.4 MB
/// of weight, 1.3 MB of input) 6.3-7.2 -> 5.4-6.3 ms, ResNet-50's 512 ->
/// 2048 expansions (4 MB, 0.8 MB) 2.8-3.0 -> 2.4-2.8 ms; where the input was
/// near the weight's size, slower: the 256-channel 3 x 3 ones (2.4 MB, 2.1
/// MB) 5-8%, the 2048 -> 512 reductions (4 MB, 3.2 MB) 30%, the stride-2
/// downsampling 1024 -> 2048 (8 MB, 6.4 MB) 78%, hence twice. Empty
/// otherwise, and where extents other than the batch's are symbolic.
std::vector<int> weightOuterDims(const ReductionNest &nest,
                                 const RegisterTile &t,
                                 const TermReads &reads, const WeightDims &w) {
  const int64_t elem = dtypeSize(nest.accType);
  if (w.dims.empty() || w.elements * elem <= kOuterWeightBytes)
    return {};
  // The dimensions before the weight's that it does not read (the batch),
  // held at 0; every other output and reduction index over its range.
  RangeEnv env;
  bool outer = false;
  for (int d = 0; d < static_cast<int>(nest.shape.size()); ++d) {
    bool weightReads = false;
    for (size_t k = 0; k < reads.uses.size(); ++k)
      weightReads = weightReads || (reads.uses[k][d] && !reads.uses[k][t.m]);
    int64_t e = 0;
    if (d < w.dims.front() && !weightReads) {
      env.set(reads.idx[d], Range{0, 0});
      outer = true;
    } else if (nest.shape[d].isConst(e) && e > 0) {
      env.set(reads.idx[d], Range{0, e - 1});
    } else {
      return {};
    }
  }
  // (weightDims found static extents: one per reduction variable.)
  std::vector<int64_t> steps = staticExtents(nest);
  if (!outer)
    return {};
  for (size_t k = 0; k < steps.size(); ++k)
    env.set(reads.r[k], Range{0, steps[k] - 1});
  int64_t input = 0;
  for (size_t k = 0; k < reads.uses.size(); ++k) {
    if (!reads.uses[k][t.m])
      continue;
    int64_t span = 1;
    for (const Expr &i : reads.indices[k]) {
      std::optional<Range> b = boundsOf(i, env);
      if (!b)
        return {};
      span *= b->max - b->min + 1;
    }
    input += span;
  }
  if (w.elements <= 2 * kOuterPlannedBatch * input)
    return {};
  return w.dims;
}

/// The order of a tile's work-items (launchOrder).
struct LaunchOrder {
  /// Output dimensions, outermost first: with row groups, those around
  /// the groups (M's tiles go in groups inside them, registerTiledNest).
  std::vector<int> order;
  std::vector<int> inner; ///< sharedRowDims, inside M's tiles
  int last = -1;          ///< M, innermost but for inner (CPUs)
  int64_t group = 0;      ///< M's tiles per row group (rowGroup); 0: none
};

/// Work-items in dimension order, except that on CPUs (t.mInnermost) the
/// tiles along M are the innermost (consecutive; only sharedRowDims go
/// inside them): neighbouring
/// work-items, which PoCL runs on one core, read the same columns of the
/// operand shared along M (a weight panel) while it is in that core's L2,
/// and walk down the rows of the other. In dimension order a MatMul's
/// neighbours walked N, and each row of tiles streamed all of B again
/// (128x768x3072: B's 9.4 MB once per 6 rows, 2.96 ms). On GPUs the
/// dimension order keeps N innermost: a warp's neighbours read
/// consecutive columns of B and store consecutive outputs (4096^3 on an
/// H200: 7.1 ms against 124.8 ms with M innermost).
LaunchOrder launchOrder(const ReductionNest &nest, const RegisterTile &t,
                        const std::vector<Expr> &extents) {
  const int rank = static_cast<int>(nest.shape.size());
  LaunchOrder o;
  o.last = t.mInnermost && t.m != t.rowLoop ? t.m : -1;
  // The weight's dimensions innermost (sharedRowDims) or, a large one,
  // outside the batch (weightOuterDims); the term read once for both.
  std::vector<int> outer;
  if (o.last >= 0 && nest.term) {
    const TermReads reads = termReads(nest);
    const WeightDims w = weightDims(nest, t, reads, extents);
    // A strided 1 x 1 convolution's input, unless its finish reads a
    // residual along M: cycling the blocks through it is what made
    // expansions slower (ResNet-18's layer2.0 downsampling with its
    // residual, batch 8: 1.88 -> 2.26 ms inside).
    o.inner = sharedRowDims(nest, w,
                            skipsRowPixels(reads, t.m) &&
                                !finishReadsAlong(nest, reads.idx, t.m));
    if (o.inner.empty())
      outer = weightOuterDims(nest, t, reads, w);
  }
  o.order = outer;
  for (int d = 0; d < rank; ++d)
    if (d != o.last && d != t.rowLoop &&
        std::find(o.inner.begin(), o.inner.end(), d) == o.inner.end() &&
        std::find(outer.begin(), outer.end(), d) == outer.end())
      o.order.push_back(d);
  o.group = o.last >= 0 && nest.term && o.inner.empty() && outer.empty()
                ? rowGroup(nest, t, extents)
                : 0;
  if (o.group > 0)
    return o;
  if (o.last >= 0)
    o.order.push_back(o.last);
  o.order.insert(o.order.end(), o.inner.begin(), o.inner.end());
  return o;
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

std::string nextSliceProblem(const ReductionNest &nest, const RegisterTile &t,
                             int64_t cacheBytes) {
  if (t.m < 0 || t.n < 0 || t.groupM > 0 || t.groupReduce > 0)
    return "it needs a CPU register tile along m and n";
  if (t.rowLoop >= 0)
    return "a row loop prefetches its own next block";
  RegisterTile cpu = t;
  cpu.mInnermost = true;
  cpu.cacheBytes = cacheBytes;
  const std::vector<Expr> extents = tileCounts(nest, t);
  const LaunchOrder o = launchOrder(nest, cpu, extents);
  if (o.group > 0)
    return "its tiles of M run in row groups";
  const NextSlice next = nextSlice(nest, t, o.order, extents);
  if (next.dim < 0)
    return "no dimension the weight reads has two or more work-items of "
           "static extents inside it that the weight does not read";
  // The turns are whole runs of the innermost reduction loop: a GEMM's
  // single loop would test its turn at every step (BERT's attention
  // projections took 3-5% longer so).
  const std::vector<int64_t> steps = staticExtents(nest);
  if (steps.empty())
    return "its reduction's extents are symbolic";
  int64_t outer = 1;
  for (size_t k = 0; k + 1 < steps.size(); ++k)
    outer *= steps[k];
  if (steps.size() < 2 || outer < next.count)
    return "its reduction loops outside the innermost take fewer steps "
           "than the " + std::to_string(next.count) +
           " work-items sharing a slice";
  return "";
}

Stmt registerTiledNest(const ReductionNest &nest, const RegisterTile &t,
                       const BorderColumns *border,
                       std::vector<KernelBuffer> *privates) {
  int rank = static_cast<int>(nest.shape.size());
  const bool rowLoop = t.rowLoop >= 0;
  AOTC_CHECK(!rowLoop || (privates && !border &&
                          rowLoopProblem(nest, t).empty()),
             "a row loop without its private array, or one that cannot run");
  int64_t rowExtent = 0; // the rows a row loop walks
  if (rowLoop)
    nest.shape[t.rowLoop].isConst(rowExtent);
  // Along M the rows are its tiles (the tile numbers, whole tiles only).
  if (rowLoop && t.rowLoop == t.m)
    rowExtent /= t.tm;
  const std::string rowArray = "row_accs";
  int64_t rowArrayElems = 0; // the largest tile's accumulators x rows
  // Loop variables: the tile numbers along M and N, the index elsewhere.
  std::vector<Expr> loopVars, base;
  std::vector<Expr> extents = tileCounts(nest, t);
  for (int d = 0; d < rank; ++d) {
    bool tiled = d == t.m || d == t.n;
    int64_t size = d == t.m ? t.tm : d == t.n ? t.tn : 1;
    Expr v = Var::make(tiled ? "t" + std::to_string(d) : "i" + std::to_string(d));
    loopVars.push_back(v);
    // One tile covers the whole extent: its base is 0, not 16 * t.
    base.push_back(!tiled ? v
                   : nest.shape[d].isConstValue(size) ? Expr(0)
                                                      : v * Expr(size));
  }
  int64_t tm = t.m >= 0 ? t.tm : 1;
  const LaunchOrder launch = launchOrder(nest, t, extents);
  // The next weight slice, prefetched in shares (next_slice.h): not with
  // row groups (their order is not a plain nest).
  const NextSlice nextPlan = t.prefetchNext && launch.group == 0
                             ? nextSlice(nest, t, launch.order, extents)
                             : NextSlice{};
  std::vector<Expr> notWeight; // the sharers' variables, M's
  for (int d : nextPlan.shares)
    notWeight.push_back(loopVars[d]);
  if (t.m >= 0)
    notWeight.push_back(loopVars[t.m]);
  const std::vector<int64_t> reduceSteps = staticExtents(nest);

  // \p rows x \p cols elements from \p origin, one reduction loop. A float
  // sum whose term vectorizes along N (vectorizeLanes) accumulates each row
  // in vectors: groups of 16, 8 or 4 columns (at most t.vectorLanes), one
  // fma per group and step, the columns left over in scalars; otherwise
  // one scalar accumulator per element.
  bool vectorSum = t.vectorLanes >= 4 && isFloatSum(nest);
  // Max and min (pooling) accumulate in vectors too, by their own
  // lane-wise combine.
  bool vectorAcc = t.vectorLanes >= 4 && isFloatVectorCombine(nest);
  // A row of \p cols pointwise elements. Where the element selects between
  // an in-bounds read and a constant by comparisons of its indices (a
  // padded copy), the row first tests whether every lane takes the read
  // (row_interior.h); there it stores the read without the select and the
  // index clamps, as vectors where it is contiguous.
  auto pointwiseRow = [&](int64_t a, int64_t cols, const auto &rowIndex,
                          const RangeEnv &ranges) -> Stmt {
    std::vector<Stmt> elems;
    for (int64_t c = 0; c < cols; ++c)
      elems.push_back(nest.finish(rowIndex(a, Expr(c)), Expr()));
    Stmt generic = Block::make(elems);
    if (cols < 4)
      return generic;
    Expr lane = Var::make("lane");
    Stmt f = nest.finish(rowIndex(a, lane), Expr());
    const Store *st = f.as<Store>();
    if (!st || st->value.lanes() != 1)
      return generic;
    // Without a select on the indices the whole row is its interior.
    Expr inside = rowInteriorCondition(st->value, lane, cols, ranges);
    Expr value = inside.defined() ? assumeRowInterior(st->value, ranges)
                                  : st->value;
    int widest = std::max(4, std::min(16, t.vectorLanes));
    std::vector<Stmt> row;
    bool anyVector = false;
    for (int64_t c0 = 0; c0 < cols;) {
      int w = groupWidth(c0, cols, widest);
      Expr l = Var::make("lane");
      VarBindings at{{lane, Expr(c0) + l}};
      std::vector<Expr> indices;
      for (const Expr &i : st->indices)
        indices.push_back(substitute(i, at));
      if (Stmt v = vectorStore(st->buffer, indices, substitute(value, at), l,
                               w, ranges);
          v.defined()) {
        row.push_back(v);
        anyVector = true;
      } else {
        for (int k = 0; k < w; ++k) {
          VarBindings one{{lane, Expr(c0 + k)}};
          std::vector<Expr> idx;
          for (const Expr &i : st->indices)
            idx.push_back(substitute(i, one));
          row.push_back(Store::make(st->buffer, idx, substitute(value, one)));
        }
      }
      c0 += w;
    }
    if (!inside.defined())
      return anyVector ? Block::make(row) : generic;
    return IfThenElse::make(inside, Block::make(row), generic);
  };
  auto tile = [&](const std::vector<Expr> &origin, int64_t rows,
                  int64_t cols) {
    std::vector<Expr> rvars;
    for (size_t k = 0; k < nest.reduceExtents.size(); ++k)
      rvars.push_back(Var::make("r" + std::to_string(k)));
    struct Group {
      int64_t c0;
      int width; // 1: a scalar column
    };
    std::vector<Group> groups;
    for (int64_t c = 0; c < cols;) {
      int w = vectorAcc ? groupWidth(c, cols, t.vectorLanes) : 1;
      groups.push_back({c, w});
      c += w;
    }
    // The term of row a, group g at reduction index r: a vector (the lane
    // variable substituted) or a scalar; undefined if it does not vectorize.
    auto rowIndex = [&](int64_t a, const Expr &col) {
      std::vector<Expr> idx = origin;
      if (t.m >= 0)
        idx[t.m] = idx[t.m] + Expr(a);
      idx[t.n] = idx[t.n] + col;
      return idx;
    };
    // The vector terms at reduction index rvars, found with the ranges of
    // the loop variables (a panel's index simplifies only with them);
    // each update substitutes its own reduction index (a blocked sum's
    // index stays in the same range).
    RangeEnv ranges;
    setStaticRanges(ranges, loopVars, extents);
    setStaticRanges(ranges, rvars, nest.reduceExtents);
    // Along a static extent that the tile does not divide, a whole tile's
    // number is below the count of whole tiles and the narrower last tile
    // is that count (the branch conditions around this tile say so). The
    // vector forms need it: a padded panel's index `(16 t + 8 + lane)
    // floordiv 8 mod 13` drops its mod only once 16 t + 16 <= 101.
    auto narrow = [&](int d, int64_t size, int64_t used) {
      int64_t e;
      if (d < 0 || size <= 1 || !nest.shape[d].isConst(e) || e % size == 0 ||
          e / size == 0)
        return;
      int64_t whole = e / size;
      ranges.set(loopVars[d], used == size ? Range{0, whole - 1}
                                           : Range{whole, whole});
    };
    if (t.m >= 0)
      narrow(t.m, t.tm, rows);
    narrow(t.n, t.tn, cols);
    std::map<std::pair<int64_t, int64_t>, Expr> vectorTerms; // (row, c0)
    bool vectorized = false;
    for (const Group &g : groups)
      vectorized |= g.width > 1;
    for (int64_t a = 0; vectorized && a < rows; ++a)
      for (const Group &g : groups) {
        if (g.width == 1)
          continue;
        Expr lane = Var::make("lane");
        Expr v = vectorizeLanes(
            nest.term(rowIndex(a, Expr(g.c0) + lane), rvars), lane, g.width,
            ranges);
        if (!v.defined()) {
          vectorized = false;
          break;
        }
        vectorTerms[{a, g.c0}] = v;
      }
    if (!vectorized) {
      groups.clear();
      for (int64_t c = 0; c < cols; ++c)
        groups.push_back({c, 1});
    }
    auto groupTerm = [&](int64_t a, const Group &g, const std::vector<Expr> &r) {
      if (g.width == 1)
        return nest.term(rowIndex(a, Expr(g.c0)), r);
      VarBindings at;
      for (size_t k = 0; k < rvars.size(); ++k)
        at.push_back({rvars[k], r[k]});
      return substitute(vectorTerms.at({a, g.c0}), at);
    };

    // A group's finish as one vector store (an epilogue of bias, GELU,
    // residual: SLEEF's vector erf, not one call per element) where the
    // store is contiguous along N and its value vectorizes with the
    // accumulator; else undefined, and each lane finishes alone.
    auto groupFinish = [&](int64_t a, const Group &g, const Expr &acc) {
      if (g.width == 1)
        return Stmt();
      return vectorFinish(
          nest, [&](const Expr &col) { return rowIndex(a, col); },
          Expr(g.c0), acc, g.width, ranges);
    };
    // The reads of the M tile t.prefetch tiles ahead at reduction index r:
    // one row per step, row (innermost reduction index mod rows), so that
    // every row of the next tile is fetched as the steps go, one prefetch
    // instruction per step; the scalar loads of the term that depend on
    // the tile number (the operand broadcast along N). A 1x1 convolution's
    // channel blocks are as many streams as its input has blocks, which the
    // hardware prefetchers did not follow: ResNet-50's 256 -> 64 over
    // 56 x 56 (batch 8) took 2.6-3.0 ms without and 1.65-1.75 ms with them
    // (bench/cpu/clbench.c); all rows at every step did the same there but
    // made the 64 -> 256 expansions 20-25% slower.
    const Var *tileVar = t.m >= 0 ? loopVars[t.m].as<Var>() : nullptr;
    // The next slice's weight at reduction index r: one prefetch per 16
    // columns of vector groups (contiguous: a cache line of 16 floats; two
    // groups of 8 share one), one per scalar column (their stride unknown
    // here).
    auto nextSlices = [&](const std::vector<Expr> &r) {
      const int d = nextPlan.dim;
      if (d < 0 || !nest.term)
        return std::vector<Stmt>{};
      std::vector<Expr> at = origin;
      at[d] = at[d] + Expr(d == t.n ? t.tn : d == t.m ? t.tm : 1);
      std::vector<Expr> terms;
      for (const Group &g : groups) {
        if (g.width > 1 && g.c0 % 16 != 0)
          continue;
        std::vector<Expr> idx = at;
        idx[t.n] = idx[t.n] + Expr(g.c0);
        terms.push_back(nest.term(idx, r));
      }
      return nextSlicePrefetches(nextPlan, terms, notWeight, loopVars, extents,
                                 reduceSteps, r);
    };
    //
    // Where the next tile's rows are read at the innermost reduction index
    // and lie one after another (a channel block's pixels, [.., pixel,
    // channel], neighbours along the index before it),
    // they are fetched as one run instead: step r fetches the cache line r
    // lines past the next tile's first element, an address linear in r
    // that needs no `r mod rows` in the loop (its multiply, mask and shifts
    // took 5 of the loop's 49 instructions). ResNet-50's 128 -> 128 1 x 1
    // convolution over 28 x 28 at batch 8 in 12 x 32 tiles (clbench,
    // minimum of 360 launches): 2.70-2.79 ms, 2.50-2.54 linear, 2.59-2.61
    // without prefetches. Its 32 steps a block fetch 32 lines, the 12
    // rows' 24 and 8 beyond (kPrefetchLineFloats).
    auto prefetches = [&](const std::vector<Expr> &r) {
      if (t.prefetch <= 0 || !tileVar || !nest.term || r.empty())
        return std::vector<Stmt>{};
      std::vector<Expr> at = origin;
      at[t.m] = at[t.m] + Expr(t.prefetch * t.tm);
      if (rows > 1 && rows <= kPrefetchLineFloats) {
        // Each prefetched load's rows must be adjacent along its index
        // before the innermost (a stride-2 convolution's are not).
        std::vector<Expr> below = at;
        below[t.m] = below[t.m] + Expr(1);
        std::vector<Stmt> linear =
            prefetchLoads({nest.term(at, r)}, tileVar, {});
        std::vector<Stmt> next =
            prefetchLoads({nest.term(below, r)}, tileVar, {});
        bool ok = !linear.empty() && linear.size() == next.size();
        for (size_t i = 0; ok && i < linear.size(); ++i) {
          const Prefetch *p = linear[i].as<Prefetch>();
          const Prefetch *q = next[i].as<Prefetch>();
          const size_t n = p->indices.size();
          ok = n >= 2 && q->indices.size() == n &&
               structurallyEqual(p->indices.back(), r.back()) &&
               simplify(q->indices[n - 2] - p->indices[n - 2])
                   .isConstValue(1);
          if (!ok)
            break;
          std::vector<Expr> idx = p->indices;
          idx.back() = Expr(kPrefetchLineFloats) * r.back();
          linear[i] = Prefetch::make(p->buffer, std::move(idx));
        }
        if (ok)
          return linear;
      }
      if (rows > 1)
        at[t.m] = at[t.m] + mod(r.back(), Expr(rows));
      return prefetchLoads({nest.term(at, r)}, tileVar, {});
    };
    std::vector<Expr> accs;
    std::vector<std::pair<int64_t, Group>> accOf; // row, group
    std::vector<Stmt> finishes;
    for (int64_t a = 0; a < rows; ++a) {
      if (!nest.term) {
        finishes.push_back(pointwiseRow(a, cols, rowIndex, ranges));
        continue;
      }
      for (const Group &g : groups) {
        Expr acc = Var::make("acc", nest.accType, g.width);
        accs.push_back(acc);
        accOf.push_back({a, g});
        if (Stmt v = groupFinish(a, g, acc); v.defined()) {
          finishes.push_back(v);
          continue;
        }
        for (int k = 0; k < g.width; ++k)
          finishes.push_back(
              nest.finish(rowIndex(a, Expr(g.c0 + k)),
                          g.width == 1 ? acc : Lane::make(acc, k)));
      }
    }
    auto stepUpdates =
          [&](const std::vector<Expr> &targets, const std::vector<Expr> &r) {
            // The next slice's prefetches go first: after the updates, their
            // branch made LLVM compile ResNet-18's 14 x 14 layers' loop 70%
            // slower (0.59-0.69 ms against 1.02-1.05 in clbench).
            std::vector<Stmt> updates = nextSlices(r);
            for (size_t i = 0; i < targets.size(); ++i) {
              const auto &[a, g] = accOf[i];
              Expr term = groupTerm(a, g, r);
              if (g.width == 1) {
                updates.push_back(accumulate(nest, targets[i], term));
                continue;
              }
              // acc + x * y as one fma per lane (PoCL does not contract a
              // multiply and an add on its own).
              // A term that does not depend on the column is broadcast.
              // (clang 14 cannot capture a structured binding.)
              const int width = g.width;
              auto widen = [width](const Expr &x) {
                return x.lanes() == 1 ? Broadcast::make(x, width) : x;
              };
              if (!vectorSum) {
                updates.push_back(accumulate(nest, targets[i], widen(term)));
                continue;
              }
              const Binary *mul = term.as<Binary>();
              Expr next =
                  mul && mul->op == BinOp::Mul
                      ? Call::make(nest.accType, "fma",
                                   {widen(mul->a), widen(mul->b), targets[i]})
                      : Binary::make(BinOp::Add, targets[i], widen(term));
              updates.push_back(LocalAssign::make(targets[i], next));
            }
            for (Stmt &s : prefetches(r))
              updates.push_back(std::move(s));
            return updates;
          };
    if (rowLoop && nest.term) {
      RowLoopParts p;
      p.nest = &nest;
      p.rowBlock = t.rowBlock;
      p.accs = accs;
      p.rvars = rvars;
      p.updates = stepUpdates;
      p.finishes = finishes;
      p.row = loopVars[t.rowLoop];
      p.rows = rowExtent;
      for (const Group &g : groups)
        p.columnTerms.push_back(nest.term(rowIndex(0, Expr(g.c0)), rvars));
      p.array = rowArray;
      return rowLoopTile(p, rowArrayElems);
    }
    std::vector<Stmt> seq;
    if (nest.term)
      seq.push_back(reductionLoops(nest, rvars, accs, stepUpdates, t.unroll));
    seq.insert(seq.end(), finishes.begin(), finishes.end());
    Stmt s = Block::make(seq);
    for (int k = static_cast<int>(accs.size()) - 1; k >= 0; --k)
      s = LocalDecl::make(accs[k], initialValue(nest, accs[k]), s);
    return s;
  };

  // Whether the tile lies inside the output along a dimension: statically so
  // when the extent is a multiple of the tile.
  auto fits = [&](int d, int64_t size) {
    int64_t e;
    if (nest.shape[d].isConst(e) && e % size == 0)
      return Expr();
    return cmp(BinOp::LE, base[d] + Expr(size), nest.shape[d]);
  };
  Expr fitsM = t.m >= 0 ? fits(t.m, t.tm) : Expr();
  Expr fitsN = fits(t.n, t.tn);
  // TM rows of \p cols columns. The last tile along a static M: its
  // remaining rows, still tiled; along a symbolic M, a 1 x cols tile for
  // each row that exists.
  int64_t extentM;
  auto rowsOf = [&](int64_t cols) {
    Stmt whole = tile(base, tm, cols);
    if (!fitsM.defined())
      return whole;
    if (nest.shape[t.m].isConst(extentM))
      return IfThenElse::make(fitsM, whole,
                              tile(base, extentM % t.tm, cols));
    Expr row = Var::make("a");
    std::vector<Expr> origin = base;
    origin[t.m] = base[t.m] + row;
    Stmt rows = IfThenElse::make(
        cmp(BinOp::LT, base[t.m] + row, nest.shape[t.m]), tile(origin, 1, cols));
    rows = For::make(row, Expr(0), Expr(t.tm), ForKind::Serial, 0, rows);
    return IfThenElse::make(fitsM, whole, rows);
  };
  Stmt body = rowsOf(t.tn);
  int64_t extentN;
  if (fitsN.defined() && nest.shape[t.n].isConst(extentN)) {
    // The last tile along a static N: its remaining columns, still tiled
    // (their range follows from the tile number's, so every access is
    // proven in bounds).
    body = IfThenElse::make(fitsN, body, rowsOf(extentN % t.tn));
  } else if (fitsN.defined()) {
    // Past a symbolic N's end: each existing element, the naive way.
    Expr a = Var::make("a"), b = Var::make("b");
    std::vector<Expr> idx = base;
    Expr exists = cmp(BinOp::LT, base[t.n] + b, nest.shape[t.n]);
    idx[t.n] = base[t.n] + b;
    if (t.m >= 0) {
      idx[t.m] = base[t.m] + a;
      exists = logicalAnd(cmp(BinOp::LT, base[t.m] + a, nest.shape[t.m]),
                          exists);
    }
    Stmt partial = IfThenElse::make(exists, reductionElement(nest, idx));
    partial = For::make(b, Expr(0), Expr(t.tn), ForKind::Serial, 0, partial);
    if (t.m >= 0)
      partial = For::make(a, Expr(0), Expr(t.tm), ForKind::Serial, 0, partial);
    body = IfThenElse::make(fitsN, body, partial);
  }
  if (border) {
    AOTC_CHECK(t.m < 0 && t.n == rank - 1,
               "border columns need a 1 x tn tile along the innermost dim");
    // The first tile's work-item of each row: the columns outside the
    // tiled interior, element by element, with the padding's selects.
    std::vector<Stmt> cols;
    auto columns = [&](int64_t from, int64_t count) {
      if (count <= 0)
        return;
      Expr b = Var::make("b");
      std::vector<Expr> idx = base;
      idx[t.n] = Expr(from) + b;
      cols.push_back(For::make(b, Expr(0), Expr(count), ForKind::Serial, 0,
                               reductionElement(*border->nest, idx)));
    };
    columns(0, border->lo);
    columns(border->hi, border->extent - border->hi);
    if (!cols.empty())
      body = Block::make(
          {body, IfThenElse::make(cmp(BinOp::EQ, loopVars[t.n], Expr(0)),
                                  Block::make(cols))});
  }
  if (rowLoop)
    privates->push_back(KernelBuffer{rowArray, nest.accType, true,
                                     {Expr(std::max<int64_t>(rowArrayElems, 1))}});
  const int last = launch.last;
  std::vector<int> order = launch.order;
  // Rows in groups (CPUs): where the operand read along M is larger than a
  // cache holds, walking every M tile for each N tile streams all of it
  // from memory once per N tile (gemm_4096: A's 64 MB 128 times). The M
  // tiles then go in groups of g, whose rows fit the cache: the group's
  // M tiles innermost, the N tiles around them, the groups outermost, so
  // each group's rows are read from memory once and the shared operand
  // once per group (Triton's grouped ordering).
  const int64_t group = launch.group;
  if (group > 0) {
    Expr g = Var::make("g" + std::to_string(last));
    Expr within = Var::make("t" + std::to_string(last) + "i");
    int64_t tiles = 0;
    extents[last].isConst(tiles);
    Expr tile = g * Expr(group) + within;
    body = substitute(body, {{loopVars[last], tile}});
    // A last partial group: its tiles past the end do nothing.
    if (tiles % group != 0)
      body = IfThenElse::make(cmp(BinOp::LT, tile, Expr(tiles)), body);
    body = For::make(within, Expr(0), Expr(group), ForKind::Parallel, 0, body);
    for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k)
      body = For::make(loopVars[order[k]], Expr(0), extents[order[k]],
                       ForKind::Parallel, 0, body);
    return For::make(g, Expr(0), Expr((tiles + group - 1) / group),
                     ForKind::Parallel, 0, body);
  }
  for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k)
    body = For::make(loopVars[order[k]], Expr(0), extents[order[k]],
                     ForKind::Parallel, 0, body);
  return body;
}

std::string unrollProblem(const ReductionNest &nest, const RegisterTile &t) {
  if (t.unroll < 1 || t.unroll > 2)
    return "unroll is 1 or 2";
  if (t.unroll == 1)
    return {};
  if (t.m < 0 || t.n < 0 || t.groupM > 0 || t.groupReduce > 0 ||
      t.rowLoop >= 0)
    return "it needs a register tile along m and n without work-groups or "
           "a row loop";
  int64_t e = 0;
  if (!nest.term || nest.reduceExtents.empty() ||
      !nest.reduceExtents.back().isConst(e) || e % t.unroll != 0 ||
      e < 2 * t.unroll)
    return "the innermost reduction loop's extent must be static, a "
           "multiple of unroll and at least twice it";
  const int64_t steps = staticSteps(nest);
  if (nest.blockedSum && (steps == 0 || steps > kSumBlock))
    return "a float sum of more than " + std::to_string(kSumBlock) +
           " steps, or of symbolic steps, is split in blocks";
  return {};
}

} // namespace aotc
