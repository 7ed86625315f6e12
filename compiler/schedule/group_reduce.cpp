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

int64_t staticTerms(const std::vector<Expr> &extents) {
  int64_t n = 1;
  for (const Expr &e : extents) {
    int64_t v;
    if (!e.isConst(v) || v < 0)
      return -1;
    n *= v;
  }
  return n;
}

namespace {

bool groupReducible(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int32 ||
         t == DType::Int64;
}

/// A group of \p size work-items: a power of 2 from 2 to 1024.
Status checkGroupSize(int64_t size, const char *what) {
  if (size < 2 || size > 1024 || (size & (size - 1)) != 0)
    return makeError(what, " needs a group of a power of 2 from 2 to 1024 "
                     "work-items, not ",
                     size);
  return Status::ok();
}

/// The work-items per output for a reduction of \p terms terms on
/// \p target: 64 below 512 terms, 128 below 2048, else 256 (NVIDIA's
/// OpenCL limit), halved to the device's limit; 0 where a blocked sum
/// (\p blockedSum) would add more than kSumBlock terms per work-item (one
/// accumulator each).
int64_t groupSizeFor(int64_t terms, bool blockedSum,
                     const DeviceProfile &target) {
  int64_t size = terms < 512 ? 64 : terms < 2048 ? 128 : 256;
  if (target.maxWorkGroupSize > 0)
    while (size > target.maxWorkGroupSize)
      size /= 2;
  return blockedSum && terms / size > kSumBlock ? 0 : size;
}

/// The statements that sum \p nest's terms at output index \p at over a
/// group of \p size work-items: work-item \p lid adds every size-th term
/// (consecutive work-items read consecutive terms) into \p acc (declared
/// by the caller with nest.init) and leaves it in local array \p partial;
/// then a tree, a barrier after each step, in which the work-items below
/// the half combine their element with the one a half above, until
/// element 0 holds the whole. An error where \p nest does not fit.
Expected<std::vector<Stmt>> groupSum(const ReductionNest &nest,
                                     const std::vector<Expr> &at,
                                     const Expr &lid, const Expr &acc,
                                     int64_t size,
                                     const std::string &partial) {
  if (!groupReducible(nest.accType))
    return makeError("a work-group reduction of ", dtypeName(nest.accType),
                     " is not supported");
  const int64_t terms = staticTerms(nest.reduceExtents);
  if (terms < 0)
    return makeError("a work-group reduction needs static extents");
  if (nest.blockedSum && terms / size > kSumBlock)
    return makeError("a work-group reduction adds at most ", kSumBlock,
                     " terms per work-item");
  Expr j = Var::make("j");
  Expr k = j * Expr(size) + lid;
  Stmt add = accumulate(nest, acc,
                        nest.term(at, unflattenIndex(k, nest.reduceExtents)));
  if (terms % size != 0)
    add = IfThenElse::make(cmp(BinOp::LT, k, Expr(terms)), add);
  std::vector<Stmt> body = {For::make(j, Expr(0),
                                      Expr((terms + size - 1) / size),
                                      ForKind::Serial, 0, add),
                            Store::make(partial, {lid}, acc), Barrier::make()};
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
  return body;
}

} // namespace

int64_t chooseGroupReduce(const ReductionNest &nest,
                          const DeviceProfile &target, int64_t symbolsAt) {
  if (target.family != "gpu" || nest.contraction || !nest.term ||
      !groupReducible(nest.accType) || nest.reduceExtents.empty())
    return 0;
  // Terms per output (all static) and outputs (symbols at symbolsAt;
  // plannedExtent).
  const int64_t terms = staticTerms(nest.reduceExtents);
  int64_t outputs = 1;
  for (const Expr &x : nest.shape)
    outputs *= plannedExtent(x, symbolsAt);
  // Long reductions of few outputs: at 64 terms or more, while the
  // outputs alone (one work-item each) would not fill a GPU many times
  // over.
  if (terms < 64 || outputs >= 65536)
    return 0;
  return groupSizeFor(terms, nest.blockedSum, target);
}

Expected<GroupTiledKernel> groupReductionNest(const ReductionNest &nest,
                                              int64_t size) {
  if (nest.contraction || !nest.term)
    return makeError("a work-group reduction needs a plain reduction");
  AOTC_RETURN_IF_ERROR(checkGroupSize(size, "a work-group reduction"));
  const int rank = static_cast<int>(nest.shape.size());
  std::vector<Expr> idx;
  for (int d = 0; d < rank; ++d)
    idx.push_back(Var::make("i" + std::to_string(d)));
  Expr lid = Var::make("lid");
  Expr acc = Var::make("acc", nest.accType);
  const std::string partial = "partial";
  AOTC_ASSIGN_OR_RETURN(std::vector<Stmt> body,
                        groupSum(nest, idx, lid, acc, size, partial));
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

int64_t groupRowSize(const RowNest &nest, const DeviceProfile &target) {
  if (target.family != "gpu" || nest.stages.empty())
    return 0;
  int64_t longest = 0;
  for (const ReductionNest &stage : nest.stages) {
    const int64_t terms = staticTerms(stage.reduceExtents);
    if (terms < 0 || !groupReducible(stage.accType) || !stage.term)
      return 0;
    longest = std::max(longest, terms);
  }
  for (size_t d = 0; d < nest.shape.size(); ++d) {
    int64_t e;
    if (nest.rowAxis[d] && !nest.shape[d].isConst(e))
      return 0;
  }
  // Sized by the longest statistic; every blocked sum must then fit
  // (groupSum refuses more than kSumBlock terms per work-item).
  const int64_t size = groupSizeFor(longest, false, target);
  for (const ReductionNest &stage : nest.stages)
    if (stage.blockedSum &&
        staticTerms(stage.reduceExtents) / size > kSumBlock)
      return 0;
  return size;
}

Expected<GroupTiledKernel> groupRowKernel(const RowNest &nest, int64_t size) {
  AOTC_RETURN_IF_ERROR(checkGroupSize(size, "a work-group row kernel"));
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
    const std::string partial = "partial" + std::to_string(k);
    out.locals.push_back(
        KernelBuffer{partial, stage.accType, true, {Expr(size)}});
    Expr acc = Var::make("acc", stage.accType);
    AOTC_ASSIGN_OR_RETURN(std::vector<Stmt> steps,
                          groupSum(stage, row, lid, acc, size, partial));
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
