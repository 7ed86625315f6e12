/// \file
/// Row loops of CPU register tiles (row_loop.h): where the heuristic takes
/// one, what a configuration must satisfy, and the statements of a tile
/// that walks its rows itself.
#include "compiler/schedule/row_loop.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <algorithm>
#include <set>

namespace aotc {

namespace {

/// The weight slice a CPU tile's work-item reads (tn columns over every
/// reduction step) from which its rows go in a row loop
/// (RegisterTile::rowLoop): ResNet-18's and -50's 512-channel 3 x 3
/// convolutions on 7 x 7 maps read 590 KB per channel block of 32, which
/// every row of 7 streamed again, the first from memory at more than a
/// core's bandwidth (docs/PERFORMANCE.md, stop 50).
constexpr int64_t kRowLoopWeightBytes = int64_t{512} << 10;

/// The most rows a row loop walks (its private array holds their
/// accumulators).
constexpr int64_t kRowLoopMaxRows = 16;

/// The work-items a row loop leaves at least (its rows no longer run in
/// parallel), counted at the planned symbol values.
constexpr int64_t kRowLoopMinWorkItems = 16;

/// The weight of one block of a row loop at most: the inner reduction
/// loops whose reads every row takes in turn, from L1.
constexpr int64_t kRowBlockBytes = int64_t{32} << 10;

} // namespace

/// Sets \p t's row loop where it pays (kRowLoopWeightBytes): an output
/// dimension other than m and n with a static extent of 2 to
/// kRowLoopMaxRows that the operands read per row (\p term's loads that
/// read idx[t.m]) read and the others (the weight) do not, leaving
/// kRowLoopMinWorkItems, where no other work-item reads the same weight
/// slice at the planned symbol values. With several images (ResNet-18 at
/// a batch of 8) the work-items of one slice are neighbours
/// (weightOuterDims) and take it from L2, and the row loop made the 7 x 7
/// maps' 3 x 3 convolutions 5.6-5.8 -> 6.5-6.8 ms. Its blocks: the
/// innermost reduction loops whose weight takes at most kRowBlockBytes, at
/// least the last one.
void chooseRowLoop(const ReductionNest &nest, const Expr &term,
                   const std::vector<Expr> &idx, RegisterTile &t,
                   int64_t symbolsAt) {
  const int rank = static_cast<int>(nest.shape.size());
  const size_t loops = nest.reduceExtents.size();
  const int64_t steps = staticSteps(nest);
  const int64_t elem = dtypeSize(nest.accType);
  if (t.m < 0 || t.n < 0 || loops < 2 || !isFloatSum(nest) || steps == 0 ||
      steps > kSumBlock || t.tn * steps * elem < kRowLoopWeightBytes)
    return;
  std::vector<std::vector<bool>> uses; // per load, per output dimension
  struct V : IRVisitor {
    const std::vector<Expr> *idx = nullptr;
    std::vector<std::vector<bool>> *uses = nullptr;
    void visitLoad(const Load *op) override {
      std::vector<bool> u(idx->size(), false);
      for (const Expr &i : op->indices)
        for (size_t d = 0; d < idx->size(); ++d)
          u[d] = u[d] || usesVar(i, (*idx)[d].as<Var>());
      uses->push_back(u);
      IRVisitor::visitLoad(op);
    }
  } v;
  v.idx = &idx;
  v.uses = &uses;
  v.visit(term);
  for (int d = 0; d < rank; ++d) {
    int64_t rows = 0;
    if (d == t.m || d == t.n || !nest.shape[d].isConst(rows) || rows < 2 ||
        rows > kRowLoopMaxRows)
      continue;
    bool read = false, weightReads = false;
    for (const auto &u : uses) {
      read |= u[d];
      weightReads |= u[d] && !u[t.m];
    }
    if (!read || weightReads)
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
      bool weightReadsK = false;
      for (const auto &u : uses)
        weightReadsK |= u[k] && !u[t.m];
      if (!weightReadsK)
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
  if (t.rowLoop == t.m || t.rowLoop == t.n)
    return "the row loop is an output dimension other than m and n";
  if (!nest.shape[t.rowLoop].isConst(e) || e < 1)
    return "the row loop's extent is not static";
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
  const Var *rowVar = p.row.as<Var>();
  const Var *lastOuter = rvars[outer - 1].as<Var>();
  auto nextBlock = [&](const std::vector<Expr> &r) {
    std::vector<Stmt> out;
    std::set<std::string> seen;
    VarBindings at, next{{rvars[outer - 1], r[outer - 1] + Expr(1)}};
    for (size_t k = 0; k < rvars.size(); ++k)
      at.push_back({rvars[k], r[k]});
    for (const Expr &term : p.columnTerms)
      for (const Load *l : loadsIndexedBy(term, lastOuter)) {
        bool alongRows = false, fromData = false;
        for (const Expr &i : l->indices) {
          alongRows |= usesVar(i, rowVar);
          fromData |= readsMemory(i);
        }
        if (alongRows || fromData)
          continue;
        std::vector<Expr> idx;
        for (const Expr &i : l->indices)
          idx.push_back(simplify(substitute(substitute(i, at), next)));
        if (seen.insert(exprKey(Load::make(l->type, l->buffer, idx))).second)
          out.push_back(Prefetch::make(l->buffer, std::move(idx)));
      }
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
