/// \file
/// Lowering of ScatterND, ScatterElements and Scatter: the data with
/// updates written at indices read from data, computed by pointwise defs
/// and reductions that search the updates, with no store at an index from
/// data and no order between writers. ScatterND's output element o looks
/// for the index rows j that name its first k indices:
///   winner[p] = max over j of (row j names p ? j : -1)   (p: data's first k
///                                                         indices; int64)
///   none:     out[o] = winner >= 0 ? updates[winner, o[k:]] : data[o]
///   add/mul/max/min:
///             out[o] = winner >= 0 ? f(data[o], f over the rows j that
///                                       name o of updates[j, o[k:]])
///                                  : data[o]
/// ScatterElements searches the same way along its axis. With duplicates,
/// "none" takes the last (ONNX leaves it open; ONNX Runtime's loop and the
/// reference's take the last too). The search costs J reads of index rows
/// per element of data's first k dims (the axis's extent per element for
/// ScatterElements), and as many per output element for a reduction:
/// cheap for the updates exporters write (a mask's slices, a cache's new
/// positions), slow for a scatter of millions of rows.
#include "compiler/lowering/data_indices.h"
#include "compiler/lowering/lowering.h"

#include "ir/indexing.h"

namespace aotc {

namespace {

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

/// The node's reduction: "none" where its opset has none (before 16); an
/// error for a reduction of bool.
Expected<std::string> reductionOf(const Node &n) {
  std::string r = n.hasAttr("reduction") ? n.stringAttr("reduction") : "none";
  if (r != "none" && n.input(0)->type().dtype == DType::Bool)
    return makeError(n.describe(), ": reduction '", r,
                     "' of bool is unsupported");
  return r;
}

Combiner combinerOf(const std::string &reduction) {
  return reduction == "add"   ? Combiner::Sum
         : reduction == "mul" ? Combiner::Prod
         : reduction == "max" ? Combiner::Max
                              : Combiner::Min;
}

/// A def of \p shape whose element folds (match ? value : otherwise) over
/// \p extents with \p c: the search both scatters make over their updates
/// (a pointwise def where there is nothing to fold over).
int addSearch(LowerCtx &ctx, std::string name, DType t, std::vector<Expr> shape,
              std::vector<Expr> extents, Combiner c, const Expr &match,
              const Expr &value, const Expr &otherwise) {
  TensorDef d;
  d.kind =
      extents.empty() ? TensorDef::Kind::Pointwise : TensorDef::Kind::Reduction;
  d.name = std::move(name);
  d.dtype = t;
  d.shape = std::move(shape);
  d.combiner = c;
  d.reduceExtents = std::move(extents);
  d.body = Select::make(match, value, otherwise);
  return ctx.add(std::move(d));
}

} // namespace

Status lowerScatterND(const Node &n, LowerCtx &ctx) {
  const Value *data = n.input(0), *indices = n.input(1), *updates = n.input(2),
              *out = n.output(0);
  const TensorType &x = data->type(), &it = indices->type();
  const DType t = x.dtype;
  const int r = x.rank(), q = it.rank();
  int64_t k = 0;
  AOTC_CHECK(it.dims.back().isConst(k) && k >= 1 && k <= r,
             n.describe() << ": index rows survived shape inference unsized");
  AOTC_ASSIGN_OR_RETURN(const std::string reduction, reductionOf(n));
  const std::vector<Expr> rows(it.dims.begin(), it.dims.end() - 1);
  const Expr count = rows.empty() ? Expr(1) : product(rows);
  const std::string &name = out->name();

  // Whether row j (indices checked, a negative one wrapped) names the first
  // k indices at.
  auto names = [&](const std::vector<Expr> &j, const std::vector<Expr> &at) {
    DataIndices di(n, ctx);
    Expr m;
    for (int64_t d = 0; d < k; ++d) {
      std::vector<Expr> ii = j;
      ii.push_back(Expr(d));
      Expr c = di.check(ctx.readValue(indices, ii), x.dims[d],
                        "data dim " + std::to_string(d));
      m = logicalAnd(m, cmp(BinOp::EQ, c, at[d]));
    }
    return m;
  };
  std::vector<Expr> rv;
  for (int d = 0; d + 1 < q; ++d)
    rv.push_back(ctx.rvar(d));

  // winner[p]: the last row naming p, or -1 (int64's lowest without rows).
  const int winner = addSearch(
      ctx, name + "_row", DType::Int64,
      std::vector<Expr>(x.dims.begin(), x.dims.begin() + k), rows,
      Combiner::Max, names(rv, ctx.idxVars(static_cast<int>(k))),
      rows.empty() ? Expr(0) : linearize(rv, rows), Expr(int64_t{-1}));

  std::vector<Expr> o = ctx.idxVars(r);
  const std::vector<Expr> lead(o.begin(), o.begin() + k);
  const std::vector<Expr> tail(o.begin() + k, o.end());
  const Expr row = ctx.read(winner, lead);
  // Row count 1 or more on the path that reads a row (the prover's fact).
  const Expr found =
      logicalAnd(cmp(BinOp::GE, row, Expr(0)), cmp(BinOp::GE, count, Expr(1)));
  Expr changed;
  if (reduction == "none") {
    // The winner clamped into [0, count): in bounds on every path.
    Expr j = bin(BinOp::Max, bin(BinOp::Min, row, count - Expr(1)), Expr(0));
    std::vector<Expr> at =
        rows.empty() ? std::vector<Expr>() : delinearize(j, rows);
    at.insert(at.end(), tail.begin(), tail.end());
    changed = ctx.readValue(updates, at);
  } else {
    // f over every row naming o, then f with the data.
    const Combiner c = combinerOf(reduction);
    std::vector<Expr> at = rv;
    at.insert(at.end(), tail.begin(), tail.end());
    const int folded = addSearch(ctx, name + "_" + reduction, t, x.dims, rows,
                                 c, names(rv, lead), ctx.readValue(updates, at),
                                 combinerIdentity(c, t));
    changed = combineWith(c, ctx.readValue(data, o), ctx.read(folded, o));
  }
  ctx.addPointwise(out, Select::make(found, changed, ctx.readValue(data, o)));
  return Status::ok();
}

/// ScatterElements (and Scatter): the update at position p goes to p with
/// its axis index replaced by indices[p]. An output element o searches the
/// positions p that agree with it off the axis (o inside the indices'
/// shape there) for those whose index is o's along the axis: a reduction
/// over the indices' axis, as ScatterND's over its rows (the last wins for
/// "none").
Status lowerScatterElements(const Node &n, LowerCtx &ctx) {
  const Value *data = n.input(0), *indices = n.input(1), *updates = n.input(2),
              *out = n.output(0);
  const TensorType &x = data->type(), &it = indices->type();
  const DType t = x.dtype;
  const int r = x.rank();
  AOTC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(n, n.intAttr("axis"), r));
  AOTC_ASSIGN_OR_RETURN(const std::string reduction, reductionOf(n));
  const std::vector<Expr> o = ctx.idxVars(r);
  const Expr a = ctx.rvar(0);
  const Expr &extent = it.dims[axis];
  // o inside the indices' shape off the axis (where they may be smaller).
  Expr inside;
  for (int d = 0; d < r; ++d)
    if (d != axis &&
        !simplify(x.dims[d] - it.dims[d], ctx.env()).isConstValue(0))
      inside = logicalAnd(inside, cmp(BinOp::LT, o[d], it.dims[d]));
  // p: o with its axis index at a.
  std::vector<Expr> p = o;
  p[axis] = a;
  // Whether position p's index names o along the axis (checked, a negative
  // one wrapped; read only inside the indices).
  auto names = [&]() {
    DataIndices di(n, ctx);
    Expr raw = ctx.readValue(indices, p);
    if (inside.defined())
      raw = Select::make(inside, raw, literal(it.dtype, 0));
    Expr c = di.check(raw, x.dims[axis], "axis " + std::to_string(axis));
    return logicalAnd(inside, cmp(BinOp::EQ, c, o[axis]));
  };
  const Expr pos = ctx.read(
      addSearch(ctx, out->name() + "_position", DType::Int64, x.dims, {extent},
                Combiner::Max, names(), a, Expr(int64_t{-1})),
      o);
  const Expr found =
      logicalAnd(logicalAnd(inside, cmp(BinOp::GE, pos, Expr(0))),
                 cmp(BinOp::GE, extent, Expr(1)));
  Expr changed;
  if (reduction == "none") {
    std::vector<Expr> at = o;
    at[axis] = bin(BinOp::Max, bin(BinOp::Min, pos, extent - Expr(1)), Expr(0));
    changed = ctx.readValue(updates, at);
  } else {
    const Combiner c = combinerOf(reduction);
    const int folded =
        addSearch(ctx, out->name() + "_" + reduction, t, x.dims, {extent}, c,
                  names(), ctx.readValue(updates, p), combinerIdentity(c, t));
    changed = combineWith(c, ctx.readValue(data, o), ctx.read(folded, o));
  }
  ctx.addPointwise(out, Select::make(found, changed, ctx.readValue(data, o)));
  return Status::ok();
}

} // namespace aotc
