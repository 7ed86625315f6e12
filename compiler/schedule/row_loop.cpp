/// \file
/// Row loops of CPU register tiles (row_loop.h): where the heuristic takes
/// one, what a configuration must satisfy, and the statements of a tile
/// that walks its rows itself.
#include "compiler/schedule/row_loop.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <algorithm>

namespace aotc {

namespace {

/// The weight (every work-item's slice: tn columns over every reduction
/// step, times the channel blocks) beyond which a tile's rows go in a row
/// loop (RegisterTile::rowLoop): more than a core's L2 holds, so each run
/// streams it from memory, and each work-item's first row read its slice
/// at more than a core's bandwidth while its other rows reread it from L2.
/// Measured on an AVX-512 Xeon at batch 1 (docs/PERFORMANCE.md, stop 50):
/// ResNet-18's and -50's 512-channel 3 x 3 convolutions on 7 x 7 maps
/// (9.4 MB of weight, 590 KB slices) 1.25-1.28 -> 0.89-0.95 ms, ResNet-18's
/// strided 256 -> 512 one (4.7 MB) 0.58 -> 0.47 ms, ResNet-50's 1 x 1
/// convolutions of layer4 (4 to 8 MB, slices of 64 to 256 KB, their rows
/// the tiles of 7 pixels of a merged 49) 15-24% less.
constexpr int64_t kRowLoopWeightBytes = int64_t{2} << 20;

/// The most rows a row loop walks (its private array holds their
/// accumulators). ResNet-18's 256-channel 3 x 3 convolutions over 14 rows
/// of 14 (28 accumulators a row) ran 70% slower in a row loop; they leave
/// too few work-items anyway.
constexpr int64_t kRowLoopMaxRows = 16;

/// The work-items a row loop leaves at least (its rows no longer run in
/// parallel), counted at the planned symbol values.
constexpr int64_t kRowLoopMinWorkItems = 16;

/// The weight of one block of a row loop at most: the inner reduction
/// loops whose reads every row takes in turn, from L1. ResNet-18's 512
/// -channel 3 x 3 layers: blocks of 32 steps (4 KB) 0.89-0.95 ms, of 512
/// steps (64 KB) 1.03-1.05; its strided 256 -> 512 one: 32 steps 0.51 ms,
/// 256 steps (32 KB) 0.57.
constexpr int64_t kRowBlockBytes = int64_t{16} << 10;

} // namespace

/// Sets \p t's row loop where it pays (kRowLoopWeightBytes): over an
/// output dimension other than m and n with a static extent of 2 to
/// kRowLoopMaxRows that the operands read per row (the term's loads that
/// read output dimension m) read and the others (the weight) do not, or
/// else over the tiles of M (2 to kRowLoopMaxRows whole tiles: a 1 x 1
/// convolution's merged pixels), leaving kRowLoopMinWorkItems, where no
/// other work-item reads the same weight slice at the planned symbol
/// values. With several images (ResNet-18 at a batch of 8) the work-items
/// of one slice are neighbours (weightOuterDims) and take it from L2, and
/// the row loop made the 7 x 7 maps' 3 x 3 convolutions 5.6-5.8 -> 6.5-6.8
/// ms. Its blocks: the innermost reduction loops whose weight takes at
/// most kRowBlockBytes, at least the last one.
void chooseRowLoop(const ReductionNest &nest, RegisterTile &t,
                   int64_t symbolsAt) {
  const int rank = static_cast<int>(nest.shape.size());
  const size_t loops = nest.reduceExtents.size();
  const int64_t steps = staticSteps(nest);
  const int64_t elem = dtypeSize(nest.accType);
  if (t.m < 0 || t.n < 0 || loops < 2 || !isFloatSum(nest) || steps == 0 ||
      steps > kSumBlock)
    return;
  // Per load of the term, the output dimensions it reads.
  const std::vector<std::vector<bool>> uses = termReads(nest).uses;
  const std::vector<bool> weightRead = weightReads(nest, t);
  const int64_t weight = tileWeightBytes(nest, t);
  if (weight == 0 || weight <= kRowLoopWeightBytes)
    return;
  std::vector<int> candidates;
  for (int d = 0; d < rank; ++d)
    if (d != t.m && d != t.n)
      candidates.push_back(d);
  candidates.push_back(t.m);
  for (int d : candidates) {
    int64_t extent = 0;
    if (!nest.shape[d].isConst(extent) || (d == t.m && extent % t.tm != 0))
      continue;
    const int64_t rows = d == t.m ? extent / t.tm : extent;
    if (rows < 2 || rows > kRowLoopMaxRows || weightRead[d])
      continue;
    bool read = false;
    for (const auto &u : uses)
      read |= u[d];
    if (!read)
      continue;
    // The work-items left, and those of them that read one weight slice
    // (the tiles of the dimensions the weight does not read: images, M).
    int64_t items = 1, sharing = 1;
    for (int k = 0; k < rank; ++k) {
      if (k == d)
        continue;
      int64_t size = k == t.m ? t.tm : k == t.n ? t.tn : 1;
      int64_t tiles = (plannedExtent(nest.shape[k], symbolsAt) + size - 1) / size;
      items *= tiles;
      if (!weightRead[k])
        sharing *= tiles;
    }
    if (items < kRowLoopMinWorkItems || sharing > 1)
      continue;
    std::vector<int64_t> ext = staticExtents(nest);
    size_t outer = loops - 1;
    int64_t block = ext[outer];
    while (outer > 1 && t.tn * block * ext[outer - 1] * elem <= kRowBlockBytes)
      block *= ext[--outer];
    t.rowLoop = d;
    t.rowBlock = static_cast<int>(outer);
    // Every tile of M is this work-item's: none to prefetch ahead.
    if (d == t.m)
      t.prefetch = 0;
    return;
  }
}

std::string rowLoopProblem(const ReductionNest &nest, const RegisterTile &t) {
  const int rank = static_cast<int>(nest.shape.size());
  const int blocks = static_cast<int>(nest.reduceExtents.size());
  int64_t e = 0;
  if (t.rowLoop < 0 || t.rowLoop >= rank)
    return "the row loop is not an output dimension (the kernel has " +
           std::to_string(rank) + ")";
  if (t.rowLoop == t.n)
    return "the row loop is an output dimension other than n";
  if (!nest.shape[t.rowLoop].isConst(e) || e < 1)
    return "the row loop's extent is not static";
  if (t.rowLoop == t.m && e % t.tm != 0)
    return "a row loop along m walks whole tiles: tm must divide its extent";
  if (t.n < 0 || t.groupM > 0 || t.groupReduce > 0)
    return "a row loop needs a register tile (n) without work-groups";
  if (!nest.term || !isFloatSum(nest))
    return "a row loop needs a float sum";
  const int64_t steps = staticSteps(nest);
  if (steps == 0 || steps > kSumBlock)
    return "a row loop needs static reduction steps, at most " +
           std::to_string(kSumBlock);
  if (t.rowBlock < 1 || t.rowBlock >= blocks)
    return "row_block is 1 to " + std::to_string(blocks - 1) +
           " (the reduction loops outside the rows; this reduction has " +
           std::to_string(blocks) + ")";
  return {};
}

Stmt rowLoopTile(const RowLoopParts &p, int64_t &arrayElems) {
  const ReductionNest &nest = *p.nest;
  const std::vector<Expr> &accs = p.accs, &rvars = p.rvars;
  // Row q's accumulator k at q * per + offset[k].
  int64_t per = 0;
  std::vector<int64_t> offset;
  for (const Expr &acc : accs) {
    offset.push_back(per);
    per += acc.lanes();
  }
  arrayElems = std::max(arrayElems, p.rows * per);
  auto slot = [&](const Expr &q, size_t k) {
    return std::vector<Expr>{q * Expr(per) + Expr(offset[k])};
  };
  auto saved = [&](const Expr &q, size_t k) {
    int lanes = accs[k].lanes();
    return lanes > 1
               ? VectorLoad::make(nest.accType, p.array, slot(q, k), lanes)
               : Load::make(nest.accType, p.array, slot(q, k));
  };
  // Each loop over the rows has its own variable (a variable is defined
  // once): \p body at row q, for q over the rows.
  auto overRows = [&](const Stmt &body) {
    Expr q = Var::make("q");
    return For::make(q, Expr(0), Expr(p.rows), ForKind::Serial, 0,
                     substitute(body, {{p.row, q}}));
  };
  std::vector<Stmt> init;
  for (size_t k = 0; k < accs.size(); ++k)
    init.push_back(
        Store::make(p.array, slot(p.row, k), initialValue(nest, accs[k])));
  // One row's turn at a block: its accumulators from the array, the
  // block's inner loops, and back.
  const size_t outer = static_cast<size_t>(p.rowBlock);
  ReductionNest inner = nest;
  inner.reduceExtents.assign(nest.reduceExtents.begin() + outer,
                             nest.reduceExtents.end());
  inner.blockedSum = false; // the whole sum is at most kSumBlock
  std::vector<Expr> innerVars(rvars.begin() + outer, rvars.end());
  std::vector<Expr> held;
  for (const Expr &acc : accs)
    held.push_back(Var::make("acc", nest.accType, acc.lanes()));
  // The next block's reads that do not vary along the rows (the weight),
  // one share of them per row: row q takes the steps whose outermost inner
  // index is q modulo the rows, so the block after this one streams in
  // while the rows compute this one. Past the last block the addresses run
  // past the operand: a prefetch cannot fault.
  const Var *lastOuter = rvars[outer - 1].as<Var>();
  auto nextBlock = [&](const std::vector<Expr> &r) {
    VarBindings at, next{{rvars[outer - 1], r[outer - 1] + Expr(1)}};
    for (size_t k = 0; k < rvars.size(); ++k)
      at.push_back({rvars[k], r[k]});
    std::vector<Stmt> out = prefetchLoads(
        p.columnTerms, lastOuter, {p.row},
        [&](const Expr &i) { return substitute(substitute(i, at), next); });
    if (out.empty())
      return out;
    Expr turn = cmp(BinOp::EQ, mod(r[outer], Expr(p.rows)), p.row);
    return std::vector<Stmt>{IfThenElse::make(turn, Block::make(out))};
  };
  std::vector<Stmt> turn{reductionLoops(
      inner, innerVars, held,
      [&](const std::vector<Expr> &targets, const std::vector<Expr> &ri) {
        std::vector<Expr> r(rvars.begin(), rvars.begin() + outer);
        r.insert(r.end(), ri.begin(), ri.end());
        std::vector<Stmt> u = p.updates(targets, r);
        for (Stmt &s : nextBlock(r))
          u.push_back(std::move(s));
        return u;
      })};
  for (size_t k = 0; k < accs.size(); ++k)
    turn.push_back(Store::make(p.array, slot(p.row, k), held[k]));
  Stmt rowTurn = Block::make(turn);
  for (size_t k = held.size(); k-- > 0;)
    rowTurn = LocalDecl::make(held[k], saved(p.row, k), rowTurn);
  Stmt blocks = overRows(rowTurn);
  for (size_t k = outer; k-- > 0;)
    blocks = For::make(rvars[k], Expr(0), nest.reduceExtents[k],
                       ForKind::Serial, 0, blocks);
  // Each row's finish from its final accumulators.
  Stmt fin = Block::make(p.finishes);
  for (size_t k = accs.size(); k-- > 0;)
    fin = LocalDecl::make(accs[k], saved(p.row, k), fin);
  return Block::make({overRows(Block::make(init)), blocks, overRows(fin)});
}

} // namespace aotc
