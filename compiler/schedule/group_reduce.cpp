/// \file
/// Work-group reductions (the GPU form of a long reduction, issue 9).
///
/// The naive reduction kernel gives each output one work-item and a serial
/// loop over its terms: a LayerNorm's mean over 768 elements of each of
/// BERT's 128 rows is 128 work-items on a GPU of 132 compute units, each
/// adding 768 terms one after another (0.08 ms a statistic on an H200, half
/// of BERT's batch-1 time once its GEMMs were tiled). Here each output has a
/// work-group: its work-items add every group-size-th term (consecutive
/// work-items read consecutive terms), leave their partial results in a
/// local array, and halve it in a tree (log2 of the group steps, a barrier
/// after each) until work-item 0 holds the result and finishes the output
/// (epilogue and fused consumer included).
///
/// Any combiner applies (sum, product, max, min with its NaN rule): the
/// tree combines partial results with the same combine function the serial
/// loop uses, in another order (a float sum rounds differently, as on any
/// parallel reduction).
#include "compiler/schedule/schedule.h"

#include "ir/status.h"

#include <algorithm>

namespace aotc {

std::vector<Expr> unflattenIndex(const Expr &k,
                                 const std::vector<Expr> &extents) {
  std::vector<Expr> r(extents.size());
  Expr stride(1);
  for (size_t j = extents.size(); j-- > 0;) {
    Expr q = stride.isConstValue(1) ? k : floorDiv(k, stride);
    r[j] = j == 0 ? q : mod(q, extents[j]);
    stride = stride * extents[j];
  }
  return r;
}

namespace {

/// The tree over local array \p partial of \p size partial results: the
/// work-items below the half combine their element with the one a half
/// above, a barrier after each step, until element 0 holds everything.
void appendTree(const ReductionNest &nest, const std::string &partial,
                const Expr &lid, int64_t size, std::vector<Stmt> &body) {
  for (int64_t half = size / 2; half >= 1; half /= 2) {
    Expr mine = Var::make("a", nest.accType);
    Stmt step = LocalDecl::make(
        mine, Load::make(nest.accType, partial, {lid}),
        Block::make(
            {accumulate(nest, mine,
                        Load::make(nest.accType, partial, {lid + Expr(half)})),
             Store::make(partial, {lid}, mine)}));
    body.push_back(IfThenElse::make(cmp(BinOp::LT, lid, Expr(half)), step));
    body.push_back(Barrier::make());
  }
}

bool groupReducible(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int32 ||
         t == DType::Int64;
}

} // namespace

int64_t chooseGroupReduce(const ReductionNest &nest,
                          const DeviceProfile &target, int64_t symbolsAt) {
  if (target.family != "gpu" || nest.contraction || !nest.term ||
      !groupReducible(nest.accType) || nest.reduceExtents.empty())
    return 0;
  // Terms per output (all static) and outputs (symbols at symbolsAt;
  // plannedExtent).
  int64_t terms = 1, outputs = 1, e;
  for (const Expr &x : nest.reduceExtents) {
    if (!x.isConst(e))
      return 0;
    terms *= e;
  }
  for (const Expr &x : nest.shape)
    outputs *= plannedExtent(x, symbolsAt);
  // Long reductions of few outputs: at 64 terms or more, while the
  // outputs alone (one work-item each) would not fill a GPU many times
  // over. 64 work-items per output below 512 terms, 128 below 2048, else
  // 256 (NVIDIA's OpenCL limit).
  if (terms < 64 || outputs >= 65536)
    return 0;
  int64_t size = terms < 512 ? 64 : terms < 2048 ? 128 : 256;
  if (target.maxWorkGroupSize > 0)
    while (size > target.maxWorkGroupSize)
      size /= 2;
  if (nest.blockedSum && terms / size > kSumBlock)
    return 0; // one accumulator per work-item: at most kSumBlock terms
  return size;
}

Expected<GroupTiledKernel> groupReductionNest(const ReductionNest &nest,
                                              int64_t size) {
  if (nest.contraction || !nest.term)
    return makeError("a work-group reduction needs a plain reduction");
  if (!groupReducible(nest.accType))
    return makeError("a work-group reduction of ", dtypeName(nest.accType),
                     " is not supported");
  if (size < 2 || size > 1024 || (size & (size - 1)) != 0)
    return makeError("a work-group reduction needs a group of a power of 2 "
                     "from 2 to 1024 work-items, not ",
                     size);
  int64_t terms = 1, e;
  for (const Expr &x : nest.reduceExtents) {
    if (!x.isConst(e))
      return makeError("a work-group reduction needs static extents");
    terms *= e;
  }
  if (nest.blockedSum && terms / size > kSumBlock)
    return makeError("a work-group reduction adds at most ", kSumBlock,
                     " terms per work-item");
  const int rank = static_cast<int>(nest.shape.size());
  std::vector<Expr> idx;
  for (int d = 0; d < rank; ++d)
    idx.push_back(Var::make("i" + std::to_string(d)));
  Expr lid = Var::make("lid"), j = Var::make("j"), stride;
  Expr acc = Var::make("acc", nest.accType);
  const std::string partial = "partial";

  // Each work-item's terms: lid, lid + size, ... below the count.
  Expr k = j * Expr(size) + lid;
  Stmt add = accumulate(nest, acc,
                        nest.term(idx, unflattenIndex(k, nest.reduceExtents)));
  if (terms % size != 0)
    add = IfThenElse::make(cmp(BinOp::LT, k, Expr(terms)), add);
  std::vector<Stmt> body = {For::make(j, Expr(0),
                                      Expr((terms + size - 1) / size),
                                      ForKind::Serial, 0, add),
                            Store::make(partial, {lid}, acc), Barrier::make()};
  appendTree(nest, partial, lid, size, body);
  body.push_back(IfThenElse::make(
      cmp(BinOp::EQ, lid, Expr(0)),
      nest.finish(idx, Load::make(nest.accType, partial, {Expr(0)}))));
  Stmt s = LocalDecl::make(acc, nest.init, Block::make(body));
  s = For::make(lid, Expr(0), Expr(size), ForKind::Parallel, 0, s);
  for (int d = rank - 1; d >= 0; --d)
    s = For::make(idx[d], Expr(0), nest.shape[d], ForKind::Parallel, 0, s);
  GroupTiledKernel out;
  out.body = s;
  out.locals = {KernelBuffer{partial, nest.accType, true, {Expr(size)}}};
  out.workGroupSize = size;
  return out;
}

} // namespace aotc

namespace aotc {

int64_t groupRowSize(const RowNest &nest, const DeviceProfile &target) {
  if (target.family != "gpu" || nest.stages.empty())
    return 0;
  int64_t longest = 0;
  for (const ReductionNest &stage : nest.stages) {
    int64_t terms = 1, e;
    for (const Expr &x : stage.reduceExtents) {
      if (!x.isConst(e))
        return 0;
      terms *= e;
    }
    if (!groupReducible(stage.accType) || !stage.term)
      return 0;
    longest = std::max(longest, terms);
  }
  for (size_t d = 0; d < nest.shape.size(); ++d) {
    int64_t e;
    if (nest.rowAxis[d] && !nest.shape[d].isConst(e))
      return 0;
  }
  int64_t size = longest < 512 ? 64 : longest < 2048 ? 128 : 256;
  if (target.maxWorkGroupSize > 0)
    while (size > target.maxWorkGroupSize)
      size /= 2;
  return size;
}

Expected<GroupTiledKernel> groupRowKernel(const RowNest &nest, int64_t size) {
  if (size < 2 || size > 1024 || (size & (size - 1)) != 0)
    return makeError("a work-group row kernel needs a group of a power of 2 "
                     "from 2 to 1024 work-items, not ",
                     size);
  const int rank = static_cast<int>(nest.shape.size());
  std::vector<Expr> idx, row, rowExtents;
  std::vector<int> rowDims;
  int64_t count = 1, e;
  for (int d = 0; d < rank; ++d) {
    idx.push_back(Var::make("i" + std::to_string(d)));
    row.push_back(nest.rowAxis[d] ? Expr(0) : idx[d]);
    if (nest.rowAxis[d]) {
      if (!nest.shape[d].isConst(e))
        return makeError("a work-group row kernel needs static row extents");
      count *= e;
      rowDims.push_back(d);
      rowExtents.push_back(nest.shape[d]);
    }
  }
  Expr lid = Var::make("lid");
  GroupTiledKernel out;
  out.workGroupSize = size;
  std::vector<Stmt> body;
  // Each reduction of the row: every work-item adds every size-th term,
  // the tree combines the partial results, and every work-item finishes
  // the stage from element 0 into its result (a local each: no barrier
  // between one stage's last read and the next stage's first write).
  for (size_t k = 0; k < nest.stages.size(); ++k) {
    const ReductionNest &stage = nest.stages[k];
    if (!groupReducible(stage.accType))
      return makeError("a work-group reduction of ",
                       dtypeName(stage.accType), " is not supported");
    int64_t terms = 1;
    for (const Expr &x : stage.reduceExtents) {
      if (!x.isConst(e))
        return makeError("a work-group row kernel needs static extents");
      terms *= e;
    }
    if (stage.blockedSum && terms / size > kSumBlock)
      return makeError("a work-group reduction adds at most ", kSumBlock,
                       " terms per work-item");
    const std::string partial = "partial" + std::to_string(k);
    out.locals.push_back(
        KernelBuffer{partial, stage.accType, true, {Expr(size)}});
    Expr j = Var::make("j"), acc = Var::make("acc", stage.accType);
    Expr t = j * Expr(size) + lid;
    Stmt add = accumulate(
        stage, acc, stage.term(row, unflattenIndex(t, stage.reduceExtents)));
    if (terms % size != 0)
      add = IfThenElse::make(cmp(BinOp::LT, t, Expr(terms)), add);
    std::vector<Stmt> steps = {
        For::make(j, Expr(0), Expr((terms + size - 1) / size),
                  ForKind::Serial, 0, add),
        Store::make(partial, {lid}, acc), Barrier::make()};
    appendTree(stage, partial, lid, size, steps);
    steps.push_back(
        stage.finish(row, Load::make(stage.accType, partial, {Expr(0)})));
    body.push_back(LocalDecl::make(acc, stage.init, Block::make(steps)));
  }
  // The row: every size-th element, consecutive work-items at consecutive
  // elements (coalesced along the innermost row axis).
  Expr j = Var::make("c"), el = j * Expr(size) + lid;
  std::vector<Expr> at = idx;
  std::vector<Expr> place = unflattenIndex(el, rowExtents);
  for (size_t r = 0; r < rowDims.size(); ++r)
    at[rowDims[r]] = place[r];
  Stmt store = nest.store(at);
  if (count % size != 0)
    store = IfThenElse::make(cmp(BinOp::LT, el, Expr(count)), store);
  body.push_back(For::make(j, Expr(0), Expr((count + size - 1) / size),
                           ForKind::Serial, 0, store));
  Stmt s = Block::make(body);
  for (size_t k = nest.stages.size(); k-- > 0;)
    s = LocalDecl::make(nest.results[k],
                        Cast::make(nest.results[k].type(), nest.stages[k].init),
                        s);
  s = For::make(lid, Expr(0), Expr(size), ForKind::Parallel, 0, s);
  for (int d = rank - 1; d >= 0; --d)
    if (!nest.rowAxis[d])
      s = For::make(idx[d], Expr(0), nest.shape[d], ForKind::Parallel, 0, s);
  out.body = s;
  return out;
}

} // namespace aotc
