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
///
/// This file builds the tiled nest (registerTiledNest) and the helpers the
/// other nests share; which tile a nest gets is tile_choice.cpp's
/// (chooseRegisterTile).
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/row_interior.h"
#include "compiler/schedule/next_slice.h"
#include "compiler/schedule/row_loop.h"
#include "compiler/schedule/tile_loops.h"
#include "compiler/schedule/vectorize.h"

#include "ir/scalar_ops.h"
#include "ir/status.h"
#include "ir/visitor.h"

#include <algorithm>
#include <optional>
#include <map>
#include <set>

namespace aotc {

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

namespace {

/// Whether \p nest's combine is acc + term.
bool combinesBySum(const ReductionNest &nest) {
  Expr acc = Var::make("acc", nest.accType), term = Var::make("t", nest.accType);
  Expr sum = nest.combine(acc, term); // held: b points into it
  const Binary *b = sum.as<Binary>();
  return b && b->op == BinOp::Add &&
         ((b->a.sameAs(acc) && b->b.sameAs(term)) ||
          (b->a.sameAs(term) && b->b.sameAs(acc)));
}

} // namespace

bool isFloatSum(const ReductionNest &nest) {
  // float16 and bfloat16 values are computed in float (their loads
  // widen, their stores round): their sums accumulate in float vectors.
  return nest.term && isFloat32Valued(nest.accType) && combinesBySum(nest);
}

bool isIntegerSum(const ReductionNest &nest) {
  return nest.term &&
         (nest.accType == DType::Int32 || nest.accType == DType::UInt32 ||
          nest.accType == DType::Int64) &&
         combinesBySum(nest);
}

bool isVectorCombine(const ReductionNest &nest) {
  return isFloatVectorCombine(nest) || isIntegerSum(nest);
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
  // All loops, the innermost \p unroll steps an iteration where it can
  // (all of them, without the loop, where \p unroll is its extent).
  auto plain = [&]() {
    int64_t e = 0;
    if (unroll <= 1 || n == 0 || !ext[n - 1].isConst(e) || e % unroll != 0 ||
        (e < 2 * unroll && e != unroll))
      return wrap(Block::make(updates(accs, rvars)), 0, n);
    const bool whole = e == unroll; // the steps side by side, no loop
    const Var *inner = rvars[n - 1].as<Var>();
    Expr step = Var::make(inner ? inner->name + "u" : std::string("ru"));
    std::vector<Stmt> body;
    for (int k = 0; k < unroll; ++k) {
      std::vector<Expr> r = rvars;
      r[n - 1] = whole ? Expr(k) : Expr(unroll) * step + Expr(k);
      for (Stmt &s : updates(accs, r))
        body.push_back(std::move(s));
    }
    if (whole)
      return wrap(Block::make(body), 0, n - 1);
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

/// The values \p e (a factor of an int32 term) takes, where it is a
/// narrower integer widened, a literal, or sums and differences of those
/// (an 8-bit weight less its zero point); nullopt where not known.
std::optional<std::pair<int64_t, int64_t>> smallRange(const Expr &e) {
  if (const Broadcast *b = e.as<Broadcast>())
    return smallRange(b->value);
  if (const IntImm *i = e.as<IntImm>())
    return std::make_pair(i->value, i->value);
  if (const Cast *c = e.as<Cast>()) {
    const DType from = c->value.type();
    if (from != DType::Bool &&
        !(scalar::isInteger(from) && dtypeSize(from) <= 2))
      return std::nullopt;
    return std::make_pair(scalar::minOf(from), scalar::maxOf(from));
  }
  const Binary *b = e.as<Binary>();
  if (!b || (b->op != BinOp::Add && b->op != BinOp::Sub))
    return std::nullopt;
  auto x = smallRange(b->a), y = smallRange(b->b);
  if (!x || !y)
    return std::nullopt;
  if (b->op == BinOp::Add)
    return std::make_pair(x->first + y->first, x->second + y->second);
  return std::make_pair(x->first - y->second, x->second - y->first);
}

/// Whether every value of \p e fits in int16.
bool fitsInt16(const Expr &e) {
  auto r = smallRange(e);
  return r && r->first >= -32768 && r->second <= 32767;
}

/// acc + \p t0 + \p t1 as one aotc_dot2 (lanes of \p lanes, 8 or 16),
/// where both are int32 products of factors that fit in int16
/// (fitsInt16); else undefined.
Expr pairProduct(const Expr &t0, const Expr &t1, int lanes) {
  const Binary *m0 = t0.as<Binary>(), *m1 = t1.as<Binary>();
  if (!m0 || !m1 || m0->op != BinOp::Mul || m1->op != BinOp::Mul ||
      t0.type() != DType::Int32 || t1.type() != DType::Int32 ||
      (lanes != 8 && lanes != 16))
    return Expr();
  for (const Expr &f : {m0->a, m0->b, m1->a, m1->b})
    if (!fitsInt16(f))
      return Expr();
  auto widen = [lanes](const Expr &x) {
    return x.lanes() == 1 ? Broadcast::make(x, lanes) : x;
  };
  return Call::make(DType::Int32, "aotc_dot2",
                    {widen(m0->a), widen(m0->b), widen(m1->a), widen(m1->b)});
}

/// Floats in a cache line of 64 bytes. A tile's linear prefetch of its next
/// tile's rows (registerTiledNest) fetches one line a step: the rows of a
/// channel block (each as many floats as the block's steps) are all
/// fetched where there are at most this many.
constexpr int64_t kPrefetchLineFloats = 16;

/// The last-level cache taken where the profile does not know it
/// (DeviceProfile::cacheBytes): the Zen 5's L3 the row groups were
/// measured on.
constexpr int64_t kDefaultCacheBytes = int64_t{32} << 20;

/// The M tiles per group of a CPU tile \p t over tile counts \p extents,
/// where the rows of all M tiles take more than a quarter of the
/// last-level cache (t.cacheBytes) and there are several N tiles: the most
/// tiles whose rows take at most an eighth of it (at least 2), or a
/// divisor of the M tiles down to half of that (every group whole); 0 for
/// no groups (symbolic extents, rows that fit). Without a divisor the last
/// group is partial and its missing tiles' work-items do nothing
/// (registerTiledNest): gemm_4096's 683 M tiles of 6 rows (a prime) under
/// generic-avx512 ran ungrouped before stop 48. On a Zen 5 with 32 MB of
/// L3 (stop 80, kernel_profile.py), gemm_2048's 16 MB of rows ran
/// ungrouped at 43.3 ms, in groups of 8 MB at 39.9 and of 4 MB at 35.5
/// (2 MB 35.6, 1 MB 36.6); gemm_4096 in groups of 4 MB no slower than of
/// 8 MB (285 against 322 ms in the same rounds).
int64_t rowGroup(const ReductionNest &nest, const RegisterTile &t,
                 const std::vector<Expr> &extents) {
  int64_t tilesM = 0, tilesN = 0;
  const int64_t steps = staticSteps(nest);
  if (t.m < 0 || t.n < 0 || steps == 0 || !extents[t.m].isConst(tilesM) ||
      !extents[t.n].isConst(tilesN) || tilesN < 2)
    return 0;
  const int64_t groupBytes =
      (t.cacheBytes > 0 ? t.cacheBytes : kDefaultCacheBytes) / 8;
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
  // lane-wise combine, and so do integer sums (MatMulInteger), by their
  // wrapping add (aotc_add_i16).
  bool vectorAcc = t.vectorLanes >= 4 && isVectorCombine(nest);
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
    int widest = std::max(4, std::min(16, t.vectorLanes));
    // The row of \p value in groups of lanes: vectors where they store
    // contiguously and \p value vectorizes, else element by element;
    // \p anyVector tells whether a group is a vector.
    auto vectorRow = [&](const Expr &value, bool &anyVector) -> Stmt {
      std::vector<Stmt> row;
      anyVector = false;
      for (int64_t c0 = 0; c0 < cols;) {
        int w = groupWidth(c0, cols, widest);
        Expr l = Var::make("lane");
        VarBindings at{{lane, Expr(c0) + l}};
        std::vector<Expr> indices;
        for (const Expr &i : st->indices)
          indices.push_back(substitute(i, at));
        if (Stmt v = vectorStore(st->buffer, indices, substitute(value, at),
                                 l, w, ranges);
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
      return Block::make(row);
    };
    bool anyVector = false;
    if (!inside.defined()) {
      Stmt v = vectorRow(st->value, anyVector);
      return anyVector ? v : generic;
    }
    Stmt interior = vectorRow(assumeRowInterior(st->value, ranges), anyVector);
    // A border row (a padding's rows of a channel-blocked copy: the
    // selects on the pixel's indices hold or fail for every lane) is
    // vectors too where the element's selects do not read the lane.
    Stmt border = vectorRow(st->value, anyVector);
    return IfThenElse::make(inside, interior, anyVector ? border : generic);
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
    // An int32 sum of products of 16-bit values (a quantized contraction:
    // int8 weights, activations centred in int16) over an even innermost
    // loop takes its steps in pairs, one aotc_dot2 a pair: on AVX-512BW
    // and AVX2 one vpmaddwd multiplies both steps' lanes and adds each
    // lane's two products, where vpmulld, 2 micro-ops on Intel, did one
    // step (cl_scalar.cpp). Every accumulator pairs, or none does. The
    // pairs' interleaving costs a shuffle per vector of the operand read
    // along N, shared by the tile's rows: one row (a GEMV at batch 1) was
    // slower so (mlp_int8: 0.62 -> 0.78 ms), 8 rows faster (3.07 -> 1.82).
    int64_t innerSteps = 0;
    const bool pairs =
        nest.term && vectorAcc && nest.accType == DType::Int32 && rows >= 4 &&
        isIntegerSum(nest) && !rvars.empty() &&
        nest.reduceExtents.back().isConst(innerSteps) && innerSteps >= 2 &&
        innerSteps % 2 == 0 && [&] {
          std::vector<Expr> r0 = rvars, r1 = rvars;
          r1.back() = rvars.back() + Expr(1);
          for (size_t i = 0; i < accs.size(); ++i) {
            const auto &[a, g] = accOf[i];
            if (!pairProduct(groupTerm(a, g, r0), groupTerm(a, g, r1),
                             g.width)
                     .defined())
              return false;
          }
          return true;
        }();
    if (pairs) {
      ReductionNest half = nest;
      half.reduceExtents.back() = Expr(innerSteps / 2);
      half.blockedSum = false;
      auto pairUpdates = [&](const std::vector<Expr> &targets,
                             const std::vector<Expr> &r) {
        std::vector<Expr> r0 = r, r1 = r;
        r0.back() = Expr(2) * r.back();
        r1.back() = Expr(2) * r.back() + Expr(1);
        std::vector<Stmt> updates = nextSlices(r0);
        for (Stmt &st : nextSlices(r1))
          updates.push_back(std::move(st));
        for (size_t i = 0; i < targets.size(); ++i) {
          const auto &[a, g] = accOf[i];
          Expr dot = pairProduct(groupTerm(a, g, r0), groupTerm(a, g, r1),
                                 g.width);
          updates.push_back(LocalAssign::make(
              targets[i], Binary::make(BinOp::Add, targets[i], dot)));
        }
        for (const std::vector<Expr> &rk : {r0, r1})
          for (Stmt &st : prefetches(rk))
            updates.push_back(std::move(st));
        return updates;
      };
      seq.push_back(reductionLoops(half, rvars, accs, pairUpdates,
                                   std::max(1, t.unroll / 2)));
    } else if (nest.term)
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
  if (t.unroll < 1 || t.unroll > kMaxWholeUnroll)
    return "unroll is 1 to " + std::to_string(kMaxWholeUnroll);
  if (t.unroll == 1)
    return {};
  if (t.m < 0 || t.n < 0 || t.groupM > 0 || t.groupReduce > 0 ||
      t.rowLoop >= 0)
    return "it needs a register tile along m and n without work-groups or "
           "a row loop";
  int64_t e = 0;
  if (!nest.term || nest.reduceExtents.empty() ||
      !nest.reduceExtents.back().isConst(e) || e % t.unroll != 0 ||
      (e != t.unroll && (t.unroll > 2 || e < 2 * t.unroll)))
    return "the innermost reduction loop's extent must be static and equal "
           "to unroll (the whole loop) or, for unroll 2, a multiple of it at "
           "least twice it";
  const int64_t steps = staticSteps(nest);
  if (nest.blockedSum && (steps == 0 || steps > kSumBlock))
    return "a float sum of more than " + std::to_string(kSumBlock) +
           " steps, or of symbolic steps, is split in blocks";
  return {};
}

} // namespace aotc
