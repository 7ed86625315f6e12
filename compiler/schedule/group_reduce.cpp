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
  // The tree: work-items below the half combine their element with the
  // one a half above, until element 0 holds everything.
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
