/// \file
/// Work-group tiling of contractions in local memory (the GPU style of
/// issue 9).
///
/// A register tile (register_tile.cpp) has each work-item stream its own
/// rows of A and columns of B from global memory; on a GPU neighbours in a
/// warp share them through L1/L2 at best (an H200 reached 0.38 of cuBLAS
/// that way). Here a work-group of groupM x groupN work-items computes a
/// block of BM x BN outputs (BM = groupM * tm, BN = groupN * tn), and for
/// every block of bk reduction steps it first copies the two operand blocks
/// it needs (BM x bk of the operand that varies along M, bk x BN of the one
/// that varies along N) into local arrays, every work-item copying its
/// share with consecutive work-items on consecutive addresses, then waits
/// at a barrier, and each work-item runs its tm x tn outer products out of
/// local memory: per step tm/4 + tn/4 float4 local loads for tm * tn fmas.
///
/// The operands are whatever the contraction's term multiplies: a MatMul's
/// loads, a convolution's padded input (a select) and its weight, a
/// producer fused into the load. The term is a product whose one factor
/// does not depend on the N index and the other not on the M index; each
/// factor is evaluated where it is staged, at the flat reduction index
/// unflattened into the reduction's loop indices, as zero past the end of
/// an extent the block does not divide. A column block is tn/4 float4
/// groups, 4 * groupN columns apart, so that a quarter-warp's float4
/// loads from local memory and its stores to the output are contiguous.
///
/// Every work-item runs the same staging loops and barriers; only the
/// stores of outputs past the end of M or N are skipped (vector stores
/// where all four columns exist, else element by element).
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/vectorize.h"

#include "ir/status.h"
#include "ir/visitor.h"

#include <algorithm>

namespace aotc {

bool contiguousAlong(const Expr &e, const Expr &var) {
  struct V : IRVisitor {
    Expr var;
    bool any = false, all = true;
    void visitLoad(const Load *op) override {
      bool uses = false;
      for (const Expr &i : op->indices)
        uses |= usesVar(i, var.as<Var>());
      if (uses) {
        any = true;
        all &= stepsByOne(op->indices, var, RangeEnv());
      }
      IRVisitor::visitLoad(op);
    }
  } v;
  v.var = var;
  v.visit(e);
  return v.any && v.all;
}

namespace {

/// True if \p extent is a multiple of \p block for every symbol value
/// (a merged [128 * batch] is one of 32: collapse_dims.h).
bool multipleOf(const Expr &extent, int64_t block) {
  int64_t r;
  return simplify(mod(extent, Expr(block))).isConst(r) && r == 0;
}

/// The factors of \p term (at output index \p idx) that depend on the M
/// index and not the N index, and the reverse; undefined unless the term
/// is a float product of two such factors.
struct Factors {
  Expr alongM, alongN;
};
Factors splitFactors(const Expr &term, const std::vector<Expr> &idx, int m,
                     int n) {
  const Binary *mul = term.as<Binary>();
  if (!mul || mul->op != BinOp::Mul || mul->lanes != 1 ||
      mul->type != DType::Float32)
    return {};
  const Var *mv = idx[m].as<Var>(), *nv = idx[n].as<Var>();
  auto side = [&](const Expr &e) {
    bool um = usesVar(e, mv), un = usesVar(e, nv);
    return um && !un ? 1 : un && !um ? 2 : 0;
  };
  int a = side(mul->a), b = side(mul->b);
  if (a == 1 && b == 2)
    return {mul->a, mul->b};
  if (a == 2 && b == 1)
    return {mul->b, mul->a};
  return {};
}


/// True if every load of \p e that reads \p step moves by one element along
/// its last index, and stays along the others, from each step to the next
/// inside a staged block: \p e reads step `step` of block `block`, checked
/// at the first blocks (up to 4 of \p blocks) and steps 0 to bk - 2 with
/// every other variable at 0. A sampled test, which decides only the
/// staging order (what is staged is the same either way); it sees what the
/// symbolic one (contiguousAlong) cannot, a step that crosses a division
/// only between blocks.
bool contiguousInBlocks(const Expr &e, const Expr &block, const Expr &step,
                        int64_t blocks, int64_t bk) {
  const std::vector<const Load *> loads = loadsIndexedBy(e, step.as<Var>());
  if (loads.empty() || bk < 2)
    return false;
  for (const Load *load : loads) {
    VarBindings zeros;
    for (const Expr &i : load->indices)
      for (const Expr &x : freeVars(i))
        if (!x.sameAs(block) && !x.sameAs(step))
          zeros.push_back({x, Expr(0)});
    std::vector<Expr> at;
    for (const Expr &i : load->indices)
      at.push_back(simplify(substitute(i, zeros)));
    // Each index at every step of the block, each evaluated once; then
    // neighbouring steps compared.
    for (int64_t b = 0; b < std::min<int64_t>(blocks, 4); ++b)
      for (size_t d = 0; d < at.size(); ++d) {
        const int64_t stride = d + 1 == at.size() ? 1 : 0;
        int64_t prev = 0;
        for (int64_t k = 0; k < bk; ++k) {
          int64_t x;
          if (!simplify(substitute(at[d], {{block, Expr(b)}, {step, Expr(k)}}))
                   .isConst(x) ||
              (k > 0 && x - prev != stride))
            return false;
          prev = x;
        }
      }
  }
  return true;
}


/// The reduction loop that a staged block of \p block steps runs along at
/// one position of the others: the innermost loop of more than one step
/// whose extent \p block divides (a convolution's input channels), or -1
/// (then a block's steps unflatten through divisions by the extents).
/// groupTiledNest stages along it; chooseGroupTile takes a window only
/// where there is one.
int blockLoop(const std::vector<int64_t> &ext, int64_t block) {
  for (size_t j = ext.size(); j-- > 0;)
    if (ext[j] > 1 && ext[j] % block == 0)
      return static_cast<int>(j);
  return -1;
}

/// A float sum in float32 itself: the local tiles stage float32 operands
/// (float16 and bfloat16 sums keep the register tiles).
bool isFloat32Sum(const ReductionNest &nest) {
  return nest.accType == DType::Float32 && isFloatSum(nest);
}

} // namespace

RegisterTile chooseGroupTile(const ReductionNest &nest, int m, int n,
                             const DeviceProfile &target, bool windows,
                             int64_t symbolsAt) {
  RegisterTile none;
  if (m < 0 || n < 0 || !isFloat32Sum(nest))
    return none;
  std::vector<int64_t> ext = staticExtents(nest);
  if (ext.empty())
    return none;
  int64_t k = 1;
  for (int64_t e : ext)
    k *= e;
  if (nest.blockedSum && k > kSumBlock)
    return none; // one accumulator per output: at most kSumBlock terms
  // One reduction loop of more than one step (a GEMM, a 1 x 1
  // convolution): the staging loads of a convolution's window unflatten
  // the step with divisions, and there the register tile was faster on the
  // H200 (ResNet-50's 3 x 3 layer at batch 8: 0.175 ms against 0.272, its
  // 7 x 7 stem 0.119 against 0.449; its 1 x 1 layer 0.120 against 0.050
  // with this tile). A GEMM view (gemm_view.cpp, \p windows) takes them
  // where a staged block runs along one loop (blockLoop, below).
  const auto reductionLoops =
      std::count_if(ext.begin(), ext.end(), [](int64_t e) { return e > 1; });
  if (!windows && reductionLoops > 1)
    return none;
  std::vector<Expr> idx, r;
  for (size_t d = 0; d < nest.shape.size(); ++d)
    idx.push_back(Var::make("i" + std::to_string(d)));
  for (size_t j = 0; j < ext.size(); ++j)
    r.push_back(Var::make("r" + std::to_string(j)));
  if (!splitFactors(nest.term(idx, r), idx, m, n).alongM.defined())
    return none;
  // Each dimension's size with its symbols (a batch) at symbolsAt: 1 for
  // the kernel of the smallest sizes, more for a size variant
  // (plannedExtent: [128 * batch] is 128 rows at 1).
  auto extentOf = [&](int d) {
    return plannedExtent(nest.shape[d], symbolsAt);
  };
  int64_t extentM = extentOf(m), extentN = extentOf(n), others = 1;
  for (int d = 0; d < static_cast<int>(nest.shape.size()); ++d)
    if (d != m && d != n)
      others *= extentOf(d);
  // Candidates, largest first, each taken where three quarters of its
  // block's outputs lie inside the output and it makes at least minGroups
  // work-groups per compute unit (132 assumed when the profile does not
  // say), the last one at any count. Swept on an H200
  // (bench/gpu/build_sweep.sh, bench/results/2026-11-26-gpu-sweep-group-
  // tiles-h200.txt): 128 x 64 blocks of 16 x 8 work-items with 8 x 8 tiles
  // were the fastest from 2048^3 to 8192^3 (26.5-29.8 TFLOP/s, against
  // 18.7-20.5 for stop 20's register tiles); at 1024^3 and for the M = 128
  // transformer shapes, whose 128 x 64 blocks leave most compute units
  // idle, 32 x 32 blocks of 8 x 8 work-items with 4 x 4 tiles (1024^3
  // 19.6 against 16.7 TFLOP/s, 128x3072x768 10.7 against 4.4).
  // Last, for a thin M of at most 32 rows that no candidate above fills
  // (a GEMV: an MLP at batch 1; a classifier at batch 8), one row of 8
  // work-items with 4 columns each, its 8-step blocks split up to 16
  // ways: each group reads its 32 columns of B once, in parallel slices.
  // At 8 rows on the H200 it ran ResNet-50's classifier in 0.020 ms, the
  // register tile in 0.270 (bench/results/2026-11-27-gpu-size-variants-
  // h200.txt; MobileNetV2's 0.015 against 0.192).
  struct Candidate {
    int64_t groupM, groupN, tm, tn, bk, minGroups, maxSplit, maxM;
  };
  const Candidate candidates[] = {{16, 8, 8, 8, 16, 2, 4, 0},
                                  {8, 8, 8, 8, 16, 2, 4, 0},
                                  {8, 8, 4, 4, 16, 0, 4, 0},
                                  {1, 8, 1, 4, 8, 0, 16, 32}};
  int64_t units = target.computeUnits > 0 ? target.computeUnits : 132;
  if (k < 16)
    return none; // a block of fewer steps than one staging round
  for (const Candidate &c : candidates) {
    int64_t bm = c.groupM * c.tm, bn = c.groupN * c.tn;
    int64_t gm = ceilDiv(extentM, bm), gn = ceilDiv(extentN, bn);
    double used = static_cast<double>(extentM * extentN) /
                  static_cast<double>(gm * bm * gn * bn);
    if (used < 0.75 || gm * gn * others < c.minGroups * units ||
        (c.maxM > 0 && extentM > c.maxM) ||
        !groupBlocksDivide(c.groupM, c.groupN, c.tm, c.tn, c.bk))
      continue;
    // Few groups for the device (under 4 per compute unit): the group
    // splits each block's steps between 2 slices, under 2 per unit
    // between 4 (a long reduction of few outputs: the H200 sweep
    // bench/results/2026-11-26-gpu-sweep-split-k-h200.txt took
    // 128x768x3072 from 0.184 to 0.057 ms, 128x768x768 from 0.049 to
    // 0.018, 128x3072x768 from 0.056 to 0.038 with 2). A device that
    // says less fits neither the group nor its arrays (rows of A padded
    // by 4; the slices' sums): unknown limits are taken as 256
    // work-items (NVIDIA's OpenCL) and 32 KiB (OpenCL's minimum).
    // The GEMV tile's groups of 8 work-items split their blocks as far as
    // they go, however many groups there are: at 8 rows unsplit, an MLP's
    // 4096 x 4096 layer ran 0.404 ms on the H200, split 16 ways 0.129
    // (bench/results/2026-11-27-gpu-size-variants-h200.txt).
    const int64_t groups = gm * gn * others;
    int64_t split = k < 8 * c.bk         ? 1
                    : c.maxM > 0         ? c.maxSplit
                    : groups < 2 * units ? c.maxSplit
                    : groups < 4 * units ? c.maxSplit / 2
                                         : 1;
    const int64_t maxItems =
        target.maxWorkGroupSize > 0 ? target.maxWorkGroupSize : 256;
    const int64_t maxLocal =
        target.localMemBytes > 0 ? target.localMemBytes : 32 * 1024;
    auto localBytes = [&](int64_t sk) {
      return 4 * (c.bk * sk * (bm + 4 + bn + 4) +
                  (sk - 1) * c.groupM * c.groupN * c.tm * c.tn);
    };
    while (split > 1 && (c.groupM * c.groupN * split > maxItems ||
                         localBytes(split) > maxLocal))
      split /= 2;
    if (c.groupM * c.groupN > maxItems || localBytes(1) > maxLocal)
      continue;
    // A window staged through divisions of the flat step by its extents
    // (groupTiledNest's loop order): on the H200 ResNet's 7 x 7 stem over 3
    // channels ran at a third of the register tile's speed that way.
    if (windows && reductionLoops > 1 && blockLoop(ext, c.bk * split) < 0)
      continue;
    RegisterTile t;
    t.m = m;
    t.n = n;
    t.tm = c.tm;
    t.tn = c.tn;
    t.vectorLanes = 4;
    t.mInnermost = false;
    t.groupM = c.groupM;
    t.groupN = c.groupN;
    t.bk = c.bk;
    t.splitK = split;
    return t;
  }
  return none;
}

Expected<GroupTiledKernel> groupTiledNest(const ReductionNest &nest,
                                          const RegisterTile &t) {
  const int rank = static_cast<int>(nest.shape.size());
  if (t.m < 0 || t.n < 0 || t.m >= rank || t.n >= rank || t.m == t.n)
    return makeError("a work-group tile needs two output dimensions");
  if (t.gemmView) {
    // The same tile on the view [m, the others merged] (gemm_view.cpp).
    RegisterTile onView = t;
    onView.gemmView = false;
    onView.m = 0;
    onView.n = 1;
    return groupTiledNest(gemmView(nest, t.m), onView);
  }
  if (!isFloat32Sum(nest))
    return makeError("a work-group tile needs a float32 sum");
  std::vector<int64_t> ext = staticExtents(nest);
  if (ext.empty())
    return makeError("a work-group tile needs static reduction extents");
  if (t.tn % 4 != 0 || t.tm < 1 || t.groupM < 1 || t.groupN < 1 || t.bk < 1 ||
      t.splitK < 1)
    return makeError("a work-group tile needs tn a multiple of 4");
  // Split K: the group is splitK slices of groupM x groupN work-items; each
  // block stages splitK * bk steps, slice q multiplies steps q * bk to
  // q * bk + bk - 1 of it, and at the end the slices add their sums through
  // local memory (a block with few outputs and a long reduction, BERT's FFN
  // down projection, keeps more work-items busy).
  const int64_t slice = t.groupM * t.groupN, splitK = t.splitK;
  const int64_t wg = slice * splitK;
  const int64_t bm = t.groupM * t.tm, bn = t.groupN * t.tn, bk = t.bk * splitK;
  if (wg > 1024 || !groupBlocksDivide(t.groupM, t.groupN, t.tm, t.tn, t.bk))
    return makeError("a work-group of ", wg,
                     " work-items does not divide the operand blocks");
  int64_t kTotal = 1;
  for (int64_t e : ext)
    kTotal *= e;
  if (nest.blockedSum && kTotal > kSumBlock)
    return makeError("a work-group tile adds at most ", kSumBlock,
                     " terms per output");

  std::vector<Expr> idx, r;
  for (int d = 0; d < rank; ++d)
    idx.push_back(Var::make("i" + std::to_string(d)));
  for (size_t j = 0; j < ext.size(); ++j)
    r.push_back(Var::make("r" + std::to_string(j)));
  Factors f = splitFactors(nest.term(idx, r), idx, t.m, t.n);
  if (!f.alongM.defined())
    return makeError("the contraction's term is not a product of one "
                     "operand along dimension ",
                     t.m, " and one along dimension ", t.n);

  // Loops: the other output dimensions, the block numbers along M and N,
  // the work-item in its group (innermost: Kernel::workGroupSize).
  Expr tileM = Var::make("gm"), tileN = Var::make("gn"), lid = Var::make("lid");
  Expr ly = Var::make("ly"), lx = Var::make("lx");
  Expr sliceOf = Var::make("q"), inSlice = Var::make("li");
  Expr m0 = tileM * Expr(bm), n0 = tileN * Expr(bn);
  Expr kb = Var::make("kb"), kk = Var::make("kk");
  const std::string aName = "tileA", bName = "tileB";
  GroupTiledKernel out;
  out.workGroupSize = wg;

  // Stages \p factor's block (BM x bk or bk x BN) into local array \p arr
  // of rows of \p width elements, [bk][block + pad]: the element at
  // reduction step kk of the block and place p along the tiled dimension
  // \p d at [kk][p]. Consecutive work-items take consecutive reduction
  // steps where the factor is contiguous along them (a row-major A),
  // else consecutive places (B); rows of the first kind are padded by 4
  // so that their column-wise stores do not all hit one bank.
  // The flat step's order over the reduction loops: a loop whose extent
  // the staged block divides goes innermost (a convolution's input
  // channels, its window outside them), so that a block lies within one
  // window position: the step then unflattens into the window position
  // of the block (the same for every element staged) plus a channel that
  // moves with the step, where the nest's own order (channels outside the
  // window) divides every staged element's step by the window's extents
  // (on the H200 that index arithmetic took most of a 7 x 7 layer's time).
  std::vector<size_t> order(ext.size());
  for (size_t j = 0; j < ext.size(); ++j)
    order[j] = j;
  const int inner = blockLoop(ext, bk);
  if (inner >= 0) {
    order.erase(order.begin() + inner);
    order.push_back(static_cast<size_t>(inner));
  }
  std::vector<Expr> orderedExtents;
  for (size_t j : order)
    orderedExtents.push_back(Expr(ext[j]));
  // The reduction loops' indices at step \p step of block \p block: where
  // the block divides the innermost extent E, that index is
  // (block mod E / bk) * bk + step and the outer ones unflatten
  // block / (E / bk), the same for the whole block (no division per
  // element); else the flat step block * bk + step unflattened.
  auto loopIndices = [&](const Expr &block, const Expr &step) {
    std::vector<Expr> ordered;
    if (inner >= 0 && order.size() > 1) {
      const Expr blocks(ext[inner] / bk);
      std::vector<Expr> outerExtents(orderedExtents.begin(),
                                     orderedExtents.end() - 1);
      ordered = unflattenIndex(floorDiv(block, blocks), outerExtents);
      ordered.push_back(mod(block, blocks) * Expr(bk) + step);
    } else {
      ordered = unflattenIndex(block * Expr(bk) + step, orderedExtents);
    }
    std::vector<Expr> rk(ext.size());
    for (size_t j = 0; j < order.size(); ++j)
      rk[order[j]] = ordered[j];
    return rk;
  };
  std::vector<std::pair<Expr, Expr>> staged;
  std::vector<Stmt> stagedStores;
  auto stage = [&](const std::string &arr, const Expr &factor, int d,
                   const Expr &base, int64_t block) {
    Expr kVar = Var::make("k");
    std::vector<Expr> flat = unflattenIndex(kVar, orderedExtents);
    VarBindings atFlat;
    for (size_t j = 0; j < order.size(); ++j)
      atFlat.push_back({r[order[j]], flat[j]});
    // Or contiguous within each staged block: an attention output read
    // through its transpose ([b, h, s, d] as [b * s, h * d]) steps along
    // d inside every block of bk steps, though not from one head to the
    // next (on the H200 staging it across rows, 64 floats apart per
    // work-item, took BERT's output projection 0.136 ms at batch 8,
    // against 0.065 for the same GEMM reading a row-major A).
    Expr blockVar = Var::make("kb"), stepVar = Var::make("step");
    VarBindings atStep;
    std::vector<Expr> rkStep = loopIndices(blockVar, stepVar);
    for (size_t j = 0; j < r.size(); ++j)
      atStep.push_back({r[j], rkStep[j]});
    bool alongK = contiguousAlong(substitute(factor, atFlat), kVar) ||
                  contiguousInBlocks(substitute(factor, atStep), blockVar,
                                     stepVar, (kTotal + bk - 1) / bk, bk);
    int64_t width = block + (alongK ? 4 : 0);
    out.locals.push_back(
        KernelBuffer{arr, DType::Float32, true, {Expr(bk), Expr(width)}});
    Expr s = Var::make("s");
    Expr e = s * Expr(wg) + lid;
    Expr step = alongK ? mod(e, Expr(bk)) : floorDiv(e, Expr(block));
    Expr place = alongK ? floorDiv(e, Expr(bk)) : mod(e, Expr(block));
    Expr pos = base + place, k = kb * Expr(bk) + step;
    std::vector<Expr> rk = loopIndices(kb, step);
    VarBindings at = {{idx[d], pos}};
    for (size_t j = 0; j < r.size(); ++j)
      at.push_back({r[j], rk[j]});
    Expr value = substitute(factor, at);
    Expr cond;
    if (!multipleOf(nest.shape[d], block))
      cond = cmp(BinOp::LT, pos, nest.shape[d]);
    if (kTotal % bk != 0)
      cond = logicalAnd(cond, cmp(BinOp::LT, k, Expr(kTotal)));
    if (cond.defined())
      value = Select::make(cond, value, FloatImm::make(0.0));
    for (int64_t si = 0; si < block * bk / wg; ++si) {
      VarBindings sb = {{s, Expr(si)}};
      Expr v = Var::make("st", DType::Float32);
      staged.push_back({v, substitute(value, sb)});
      stagedStores.push_back(Store::make(
          arr, {substitute(step, sb), substitute(place, sb)}, v));
    }
  };
  // Every element a work-item stages, of both operands, is loaded into a
  // register before the first is stored to local memory: the loads are in
  // flight together (a loop of load-then-store waited for each one; on the
  // H200 a 7 x 7 layer's staging rounds took about 3 us each that way).
  // And they are loaded one block ahead (prefetched into registers): block
  // kb + 1's loads are issued after block kb's stores and barrier, before
  // its outer products, which run while they are in flight.
  stage(aName, f.alongM, t.m, m0, bm);
  stage(bName, f.alongN, t.n, n0, bn);
  const int64_t blocks = ceilDiv(kTotal, bk);
  std::vector<Stmt> prefetch;
  for (const auto &[v, value] : staged)
    prefetch.push_back(
        LocalAssign::make(v, substitute(value, {{kb, kb + Expr(1)}})));
  Stmt staging = Block::make(stagedStores);
  Stmt next = IfThenElse::make(cmp(BinOp::LT, kb + Expr(1), Expr(blocks)),
                               Block::make(prefetch));

  // The outer products of one reduction step: the work-item's rows
  // ly * tm + i (float4 loads where tm is a multiple of 4) and its column
  // groups g * 4 * groupN + lx * 4.
  const int64_t groups = t.tn / 4;
  std::vector<std::vector<Expr>> acc(t.tm);
  for (int64_t i = 0; i < t.tm; ++i)
    for (int64_t g = 0; g < groups; ++g)
      acc[i].push_back(Var::make("acc", DType::Float32, 4));
  std::vector<Expr> aRows, aVecs, bVecs;
  std::vector<std::pair<Expr, Expr>> lets;
  const bool aVector = t.tm % 4 == 0;
  // The step of the staged block this slice multiplies.
  const Expr step = splitK > 1 ? sliceOf * Expr(t.bk) + kk : kk;
  for (int64_t q = 0; q < (aVector ? t.tm / 4 : 0); ++q) {
    Expr v = Var::make("a", DType::Float32, 4);
    lets.push_back(
        {v, VectorLoad::make(DType::Float32, aName,
                             {step, ly * Expr(t.tm) + Expr(4 * q)}, 4)});
    aVecs.push_back(v);
  }
  for (int64_t i = 0; i < t.tm; ++i) {
    if (aVector) {
      aRows.push_back(Lane::make(aVecs[i / 4], static_cast<int>(i % 4)));
      continue;
    }
    Expr v = Var::make("a", DType::Float32);
    lets.push_back({v, Load::make(DType::Float32, aName,
                                  {step, ly * Expr(t.tm) + Expr(i)})});
    aRows.push_back(v);
  }
  for (int64_t g = 0; g < groups; ++g) {
    Expr v = Var::make("b", DType::Float32, 4);
    lets.push_back({v, VectorLoad::make(
                           DType::Float32, bName,
                           {step, Expr(g * 4 * t.groupN) + lx * Expr(4)}, 4)});
    bVecs.push_back(v);
  }
  std::vector<Stmt> updates;
  for (int64_t i = 0; i < t.tm; ++i)
    for (int64_t g = 0; g < groups; ++g)
      updates.push_back(LocalAssign::make(
          acc[i][g],
          Call::make(DType::Float32, "fma",
                     {Broadcast::make(aRows[i], 4), bVecs[g], acc[i][g]})));
  Stmt product = Block::make(updates);
  for (size_t j = lets.size(); j-- > 0;)
    product = LetStmt::make(lets[j].first, lets[j].second, product);
  Stmt compute =
      For::make(kk, Expr(0), Expr(t.bk), ForKind::Serial, 0, product);
  Stmt kLoop =
      For::make(kb, Expr(0), Expr(blocks), ForKind::Serial, 0,
                Block::make({staging, Barrier::make(), next, compute,
                             Barrier::make()}));
  for (size_t j = staged.size(); j-- > 0;)
    kLoop = LocalDecl::make(staged[j].first,
                            substitute(staged[j].second, {{kb, Expr(0)}}),
                            kLoop);

  // The stores: each row's column groups as float4 where all four columns
  // exist, else the columns that do one by one.
  RangeEnv ranges;
  std::vector<Stmt> stores;
  const bool wholeM = multipleOf(nest.shape[t.m], bm);
  const bool wholeN = multipleOf(nest.shape[t.n], bn);
  for (int64_t i = 0; i < t.tm; ++i)
    for (int64_t g = 0; g < groups; ++g) {
      Expr row = m0 + ly * Expr(t.tm) + Expr(i);
      Expr col = n0 + Expr(g * 4 * t.groupN) + lx * Expr(4);
      auto at = [&](const Expr &c) {
        std::vector<Expr> p = idx;
        p[t.m] = row;
        p[t.n] = c;
        return p;
      };
      Stmt vec = vectorFinish(nest, at, col, acc[i][g], 4, ranges);
      std::vector<Stmt> lanes;
      for (int j = 0; j < 4; ++j) {
        Stmt one = nest.finish(at(col + Expr(j)), Lane::make(acc[i][g], j));
        lanes.push_back(
            wholeN ? one
                   : IfThenElse::make(
                         cmp(BinOp::LT, col + Expr(j), nest.shape[t.n]), one));
      }
      Stmt s = Block::make(lanes);
      if (vec.defined())
        s = wholeN
                ? vec
                : IfThenElse::make(
                      cmp(BinOp::LE, col + Expr(4), nest.shape[t.n]), vec, s);
      if (!wholeM)
        s = IfThenElse::make(cmp(BinOp::LT, row, nest.shape[t.m]), s);
      stores.push_back(s);
    }

  Stmt finish = Block::make(stores);
  std::vector<Stmt> tail = {kLoop};
  if (splitK > 1) {
    // Slices 1 .. splitK - 1 leave their sums in local memory; slice 0
    // adds them to its own and stores the outputs.
    const std::string cName = "tileC";
    const int64_t per = t.tm * groups * 4;
    out.locals.push_back(
        KernelBuffer{cName,
                     DType::Float32,
                     true,
                     {Expr(splitK - 1), Expr(slice), Expr(per)}});
    std::vector<Stmt> keep, add;
    Expr p = Var::make("p");
    for (int64_t i = 0; i < t.tm; ++i)
      for (int64_t g = 0; g < groups; ++g) {
        Expr at = Expr((i * groups + g) * 4);
        keep.push_back(
            Store::make(cName, {sliceOf - Expr(1), inSlice, at}, acc[i][g]));
        add.push_back(LocalAssign::make(
            acc[i][g],
            Binary::make(BinOp::Add, acc[i][g],
                         VectorLoad::make(DType::Float32, cName,
                                          {p - Expr(1), inSlice, at}, 4))));
      }
    tail.push_back(
        IfThenElse::make(cmp(BinOp::GE, sliceOf, Expr(1)), Block::make(keep)));
    tail.push_back(Barrier::make());
    finish = Block::make({For::make(p, Expr(1), Expr(splitK - 1),
                                    ForKind::Serial, 0, Block::make(add)),
                          finish});
    finish = IfThenElse::make(cmp(BinOp::EQ, sliceOf, Expr(0)), finish);
  }
  tail.push_back(finish);
  Stmt body = Block::make(tail);
  for (int64_t i = t.tm; i-- > 0;)
    for (int64_t g = groups; g-- > 0;)
      body = LocalDecl::make(acc[i][g], Broadcast::make(nest.init, 4), body);
  body = LetStmt::make(ly, floorDiv(inSlice, Expr(t.groupN)),
                       LetStmt::make(lx, mod(inSlice, Expr(t.groupN)), body));
  body = LetStmt::make(sliceOf, floorDiv(lid, Expr(slice)),
                       LetStmt::make(inSlice, mod(lid, Expr(slice)), body));
  body = For::make(lid, Expr(0), Expr(wg), ForKind::Parallel, 0, body);
  body = For::make(tileN, Expr(0),
                   floorDiv(nest.shape[t.n] + Expr(bn - 1), Expr(bn)),
                   ForKind::Parallel, 0, body);
  body = For::make(tileM, Expr(0),
                   floorDiv(nest.shape[t.m] + Expr(bm - 1), Expr(bm)),
                   ForKind::Parallel, 0, body);
  for (int d = rank - 1; d >= 0; --d)
    if (d != t.m && d != t.n)
      body =
          For::make(idx[d], Expr(0), nest.shape[d], ForKind::Parallel, 0, body);
  out.body = body;
  return out;
}

} // namespace aotc
