/// \file
/// Row kernels: a pointwise def computed together with the reductions it
/// reads row by row (fusion.cpp's row groups: softmax's max and sum of
/// exponentials, a normalization's mean and inverse deviation). One
/// work-item per row (the output's index with the row axes at 0) computes
/// each reduction in turn into a local, each reading the ones before, then
/// walks the row storing the output. The reductions' innermost loop and the
/// output's row run as explicit vectors where their expressions vectorize
/// (vectorize.h): softmax's exp is then one vector call per 8 or 16 lanes.
/// A stage's term that the output's element computes again (softmax's
/// exp(x - max), read by its sum and by the division) is computed once:
/// the stage stores it in a private array of the row, the output reads it
/// back (termReuse).
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/vectorize.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <functional>

namespace aotc {

Stmt vectorStage(const ReductionNest &stage, const std::vector<Expr> &row,
                 int lanes, const RangeEnv &ranges,
                 const std::string &saveTo) {
  size_t n = stage.reduceExtents.size();
  int64_t extent, terms = staticTerms(stage.reduceExtents);
  // At most kSumBlock static terms (a sum is not blocked here), except
  // for a lane-wise max or min, which any number of terms, in any order,
  // leaves exact.
  const bool anyTerms = !isFloatSum(stage) && isFloatVectorCombine(stage);
  if (lanes < 4 || !stage.term || n == 0 || !isFloat(stage.accType) ||
      !stage.reduceExtents[n - 1].isConst(extent) || extent < lanes ||
      (!anyTerms && (terms < 0 || terms > kSumBlock)))
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
  Stmt step = accumulate(stage, vacc, term);
  if (!saveTo.empty()) {
    // The term kept for the output (termReuse): bound once, stored, summed.
    Expr e = Var::make("e", term.type(), lanes);
    step = LocalDecl::make(
        e, term,
        Block::make({Store::make(saveTo, {group * Expr(lanes)}, e),
                     accumulate(stage, vacc, e)}));
  }
  Stmt body = For::make(group, Expr(0), Expr(groups), ForKind::Serial, 0, step);
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
  // The lanes combined in a tree (pairs, then pairs of pairs): a chain of
  // log2(lanes) combines, not of lanes (a 16-lane max tests each lane for
  // NaN and selects: 16 dependent steps per row were a tenth of BERT's
  // softmax). Each level's values are locals, so a combiner that reads its
  // operand twice (max) reads a local.
  std::vector<Expr> level;
  for (int l = 0; l < lanes; ++l)
    level.push_back(Lane::make(vacc, l));
  std::vector<Expr> decls, inits;
  while (level.size() > 1) {
    std::vector<Expr> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      Expr v = Var::make("h", stage.accType);
      decls.push_back(v);
      inits.push_back(stage.combine(level[i], level[i + 1]));
      next.push_back(v);
    }
    if (level.size() % 2)
      next.push_back(level.back());
    level = next;
  }
  Stmt tail = Block::make({LocalAssign::make(acc, stage.combine(acc, level[0])),
                           stage.finish(row, acc)});
  for (size_t k = decls.size(); k-- > 0;)
    tail = LocalDecl::make(decls[k], inits[k], tail);
  return LocalDecl::make(vacc, Broadcast::make(stage.init, lanes),
                         LocalDecl::make(acc, stage.init, Block::make({body, tail})));
}

namespace {

/// The most elements of a row whose stage term is kept for the output
/// (termReuse): 16 KB, in L1 beside the row.
constexpr int64_t kReuseElements = 4096;

/// \p e with every subexpression whose exprKey is \p key replaced by
/// \p by; \p count counts them.
Expr replaceKey(const Expr &e, const std::string &key, const Expr &by,
                int *count) {
  struct R : IRMutator {
    const std::string *key;
    Expr by;
    int *count;
    Expr rep(const Expr &self, const std::function<Expr()> &deeper) {
      if (exprKeyRef(self) == *key) {
        ++*count;
        return by;
      }
      return deeper();
    }
#define AOTC_X(n)                                                             \
  Expr mutate##n(const n *op, const Expr &self) override {                    \
    return rep(self, [&] { return IRMutator::mutate##n(op, self); });         \
  }
    AOTC_FOR_EACH_EXPR(AOTC_X)
#undef AOTC_X
  } r;
  r.key = &key;
  r.by = by;
  r.count = count;
  return r.mutate(e);
}

/// True if \p e calls a function (a transcendental: worth keeping).
bool hasCall(const Expr &e) {
  struct V : IRVisitor {
    bool found = false;
    void visitCall(const Call *op) override {
      found = true;
      IRVisitor::visitCall(op);
    }
  } v;
  v.visit(e);
  return v.found;
}

/// A stage's term kept for the output (termReuse): stage \p stage stores
/// its term at reduction index r into private array \p array, whose
/// element r the output reads instead of the term.
struct TermReuse {
  int stage = -1;
  std::string array;
  DType type = DType::Float32; ///< the term's: float32 or float64
  std::string key(const RowNest &nest, const std::vector<Expr> &row,
                  const Expr &at) const {
    return exprKey(simplify(nest.stages[stage].term(row, {at})));
  }
};

/// The stage of \p nest whose term the output's element computes again,
/// where the row is the output's last dimension, static, whole vectors of
/// \p lanes and at most kReuseElements, the stage a single loop over it
/// whose term, float32 or float64, calls a function (softmax's sum of
/// exp(x - max), which its division recomputes): the last such stage, to
/// be kept in private array \p array; stage -1 for none.
TermReuse termReuse(const RowNest &nest, int lanes,
                    const std::vector<Expr> &idx, const std::vector<Expr> &row,
                    const std::string &array) {
  TermReuse none;
  const int rank = static_cast<int>(nest.shape.size());
  int64_t extent = 0;
  int inner = -1;
  for (int k = 0; k < rank; ++k)
    if (nest.rowAxis[k])
      inner = k;
  if (lanes < 4 || inner != rank - 1 || !nest.shape[inner].isConst(extent) ||
      extent % lanes != 0 || extent > kReuseElements)
    return none;
  Expr r = Var::make("r");
  std::vector<Expr> at = idx;
  at[inner] = r;
  Stmt st = nest.store(at); // owns store
  const Store *store = st.as<Store>();
  if (!store)
    return none;
  const Expr value = simplify(store->value);
  for (int k = static_cast<int>(nest.stages.size()); k-- > 0;) {
    const ReductionNest &stage = nest.stages[k];
    int64_t steps = 0;
    if (stage.reduceExtents.size() != 1 ||
        !stage.reduceExtents[0].isConst(steps) || steps != extent)
      continue;
    // float16 and bfloat16 terms are computed in float: an array of their
    // type would round them (and OpenCL C declares no half variables
    // without cl_khr_fp16), so they are computed again.
    const Expr term = simplify(stage.term(row, {r}));
    if (!hasCall(term) ||
        (term.type() != DType::Float32 && term.type() != DType::Float64))
      continue;
    int count = 0;
    replaceKey(value, exprKey(term), term, &count);
    if (count > 0)
      return TermReuse{k, array, term.type()};
  }
  return none;
}

/// The output's row at \p idx (the row axes' variables free): serial loops
/// over the row axes, the innermost as vectors of \p lanes where it is the
/// output's last dimension and the store vectorizes. With \p reuse, the
/// kept stage term is read back from its array where the vector store
/// computes it (\p reused tells whether it did).
Stmt rowStores(const RowNest &nest, const std::vector<Expr> &idx, int lanes,
               const RangeEnv &ranges, bool *vectorized,
               const std::vector<Expr> &row, const TermReuse &reuse,
               bool *reused) {
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
    Expr value = store ? store->value : Expr();
    if (store && reuse.stage >= 0) {
      int count = 0;
      Expr kept = replaceKey(simplify(value), reuse.key(nest, row, at[inner]),
                             Load::make(reuse.type, reuse.array, {at[inner]}),
                             &count);
      if (count > 0) {
        value = kept;
        *reused = true;
      }
    }
    Stmt v = store ? vectorStore(store->buffer, store->indices, value, lane,
                                 lanes, env)
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
               bool *vectorized, std::vector<KernelBuffer> *privates) {
  bool any = false;
  int rank = static_cast<int>(nest.shape.size());
  std::vector<Expr> idx, row;
  for (int k = 0; k < rank; ++k) {
    idx.push_back(Var::make("i" + std::to_string(k)));
    row.push_back(nest.rowAxis[k] ? Expr(0) : idx[k]);
  }
  RangeEnv ranges = env;
  setStaticRanges(ranges, idx, nest.shape);
  // A stage term the output computes again, kept in a private array: only
  // where both the stage and the row's stores run as vectors.
  TermReuse reuse;
  if (privates)
    reuse = termReuse(nest, lanes, idx, row, "row_vals");
  if (reuse.stage >= 0 &&
      !vectorStage(nest.stages[reuse.stage], row, lanes, ranges).defined())
    reuse.stage = -1;
  bool storesVectorized = false, reused = false;
  Stmt s = rowStores(nest, idx, lanes, ranges, &storesVectorized, row, reuse,
                     &reused);
  if (reuse.stage >= 0 && (!storesVectorized || !reused)) {
    reuse.stage = -1;
    storesVectorized = false;
    s = rowStores(nest, idx, lanes, ranges, &storesVectorized, row, reuse,
                  &reused);
  }
  any |= storesVectorized;
  if (reuse.stage >= 0) {
    int64_t extent = 0;
    nest.shape[rank - 1].isConst(extent);
    privates->push_back(
        KernelBuffer{reuse.array, reuse.type, true, {Expr(extent)}});
  }
  for (size_t k = nest.stages.size(); k-- > 0;) {
    const ReductionNest &stage = nest.stages[k];
    Stmt compute =
        vectorStage(stage, row, lanes, ranges,
                    static_cast<int>(k) == reuse.stage ? reuse.array : "");
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
