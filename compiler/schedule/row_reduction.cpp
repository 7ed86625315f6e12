/// \file
/// Row kernels: a pointwise def computed together with the reductions it
/// reads row by row (fusion.cpp's row groups: softmax's max and sum of
/// exponentials, a normalization's mean and inverse deviation). One
/// work-item per row (the output's index with the row axes at 0) computes
/// each reduction in turn into a local, each reading the ones before, then
/// walks the row storing the output. The reductions' innermost loop and the
/// output's row run as explicit vectors where their expressions vectorize
/// (vectorize.h): softmax's exp is then one vector call per 8 or 16 lanes,
/// computed twice per element instead of twice per element in two scalar
/// kernels plus a third kernel's worth of reading.
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/vectorize.h"

#include "ir/visitor.h"

namespace aotc {

namespace {

/// One reduction of the row at \p row with its innermost loop as vectors
/// of \p lanes: a vector accumulator over the whole groups of lanes, a
/// scalar one over the rest, then the lanes combined into the scalar one.
/// Undefined where that does not apply (scalar stage, short or symbolic
/// innermost extent, a term that does not vectorize, a sum long enough to
/// need blocking).
Stmt vectorStage(const ReductionNest &stage, const std::vector<Expr> &row,
                 int lanes, const RangeEnv &ranges) {
  size_t n = stage.reduceExtents.size();
  int64_t extent, terms = staticTerms(stage.reduceExtents);
  if (lanes < 4 || !stage.term || n == 0 || !isFloat(stage.accType) ||
      !stage.reduceExtents[n - 1].isConst(extent) || extent < lanes ||
      terms < 0 || terms > kSumBlock)
    return Stmt();
  std::vector<Expr> rvars;
  for (size_t k = 0; k < n; ++k)
    rvars.push_back(Var::make("r" + std::to_string(k)));
  Expr group = Var::make("rv"), lane = Var::make("lane");
  RangeEnv env = ranges;
  setStaticRanges(env, rvars, stage.reduceExtents);
  int64_t groups = extent / lanes, whole = groups * lanes;
  env.set(group, Range{0, groups - 1});
  std::vector<Expr> r = rvars;
  r[n - 1] = group * Expr(lanes) + lane;
  Expr term = vectorizeLanes(stage.term(row, r), lane, lanes, env);
  if (!term.defined())
    return Stmt();
  if (term.lanes() == 1)
    term = Broadcast::make(term, lanes);
  Expr vacc = Var::make("vacc", stage.accType, lanes);
  Expr acc = Var::make("acc", stage.accType);
  Stmt body = For::make(group, Expr(0), Expr(groups), ForKind::Serial, 0,
                        accumulate(stage, vacc, term));
  if (whole < extent) {
    std::vector<Expr> rs = rvars;
    Expr rest = Var::make("rr");
    rs[n - 1] = rest;
    Expr t = stage.term(row, rs);
    body = Block::make(
        {body, For::make(rest, Expr(whole), Expr(extent - whole),
                         ForKind::Serial, 0,
                         accumulate(stage, acc, t))});
  }
  for (size_t k = n - 1; k-- > 0;)
    body = For::make(rvars[k], Expr(0), stage.reduceExtents[k],
                     ForKind::Serial, 0, body);
  std::vector<Stmt> seq = {body};
  for (int l = 0; l < lanes; ++l)
    seq.push_back(
        LocalAssign::make(acc, stage.combine(acc, Lane::make(vacc, l))));
  seq.push_back(stage.finish(row, acc));
  return LocalDecl::make(
      vacc, Broadcast::make(stage.init, lanes),
      LocalDecl::make(acc, stage.init, Block::make(seq)));
}

/// The output's row at \p idx (the row axes' variables free): serial loops
/// over the row axes, the innermost as vectors of \p lanes where it is the
/// output's last dimension and the store vectorizes.
Stmt rowStores(const RowNest &nest, const std::vector<Expr> &idx, int lanes,
               const RangeEnv &ranges, bool *vectorized) {
  int rank = static_cast<int>(nest.shape.size());
  int inner = -1;
  for (int k = 0; k < rank; ++k)
    if (nest.rowAxis[k])
      inner = k;
  Stmt s;
  int64_t extent = 0;
  if (lanes >= 4 && inner == rank - 1 &&
      nest.shape[inner].isConst(extent) && extent >= lanes) {
    int64_t groups = extent / lanes, whole = groups * lanes;
    Expr group = Var::make("c"), lane = Var::make("lane");
    RangeEnv env = ranges;
    env.set(group, Range{0, groups - 1});
    std::vector<Expr> at = idx;
    at[inner] = group * Expr(lanes) + lane;
    Stmt st = nest.store(at);
    const Store *store = st.as<Store>();
    Stmt v = store ? vectorStore(store->buffer, store->indices, store->value,
                                 lane, lanes, env)
                   : Stmt();
    if (v.defined()) {
      *vectorized = true;
      s = For::make(group, Expr(0), Expr(groups), ForKind::Serial, 0, v);
      if (whole < extent) {
        Expr rest = Var::make("cr");
        at[inner] = rest;
        s = Block::make({s, For::make(rest, Expr(whole), Expr(extent - whole),
                                      ForKind::Serial, 0, nest.store(at))});
      }
    }
  }
  if (!s.defined()) {
    s = nest.store(idx);
    inner = rank; // every row axis a serial loop below
  }
  for (int k = std::min(inner, rank) - 1; k >= 0; --k)
    if (nest.rowAxis[k])
      s = For::make(idx[k], Expr(0), nest.shape[k], ForKind::Serial, 0, s);
  return s;
}

} // namespace

Stmt rowKernel(const RowNest &nest, int lanes, const RangeEnv &env,
               bool *vectorized) {
  bool any = false;
  int rank = static_cast<int>(nest.shape.size());
  std::vector<Expr> idx, row;
  for (int k = 0; k < rank; ++k) {
    idx.push_back(Var::make("i" + std::to_string(k)));
    row.push_back(nest.rowAxis[k] ? Expr(0) : idx[k]);
  }
  RangeEnv ranges = env;
  setStaticRanges(ranges, idx, nest.shape);
  Stmt s = rowStores(nest, idx, lanes, ranges, &any);
  for (size_t k = nest.stages.size(); k-- > 0;) {
    const ReductionNest &stage = nest.stages[k];
    Stmt compute = vectorStage(stage, row, lanes, ranges);
    any |= compute.defined();
    if (!compute.defined())
      compute = reductionElement(stage, row);
    s = LocalDecl::make(nest.results[k],
                        Cast::make(nest.results[k].type(), stage.init),
                        Block::make({compute, s}));
  }
  for (int k = rank - 1; k >= 0; --k)
    if (!nest.rowAxis[k])
      s = For::make(idx[k], Expr(0), nest.shape[k], ForKind::Parallel, 0, s);
  if (vectorized)
    *vectorized = any;
  return s;
}

} // namespace aotc
