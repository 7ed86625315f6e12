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

/// f(a, b) for reduction \p r of dtype \p t; NaN propagates through max
/// and min as in NumPy (ONNX's reference).
Expr combineValues(const std::string &r, DType t, const Expr &a,
                   const Expr &b) {
  if (r == "add")
    return bin(BinOp::Add, a, b);
  if (r == "mul")
    return bin(BinOp::Mul, a, b);
  BinOp op = r == "max" ? BinOp::Max : BinOp::Min;
  if (!isFloat(t))
    return bin(op, a, b);
  return Select::make(bin(BinOp::Or,
                          bin(op == BinOp::Max ? BinOp::GT : BinOp::LT, b, a),
                          Call::make(DType::Bool, "isnan", {b})),
                      b, a);
}

/// The node's reduction: "none" where its opset has none (before 16).
std::string reductionOf(const Node &n) {
  return n.hasAttr("reduction") ? n.stringAttr("reduction") : "none";
}

Combiner combinerOf(const std::string &reduction) {
  return reduction == "add"   ? Combiner::Sum
         : reduction == "mul" ? Combiner::Prod
         : reduction == "max" ? Combiner::Max
                              : Combiner::Min;
}

Expr identityOf(Combiner c, DType t) {
  return c == Combiner::Sum    ? literal(t, 0)
         : c == Combiner::Prod ? literal(t, 1)
         : c == Combiner::Max  ? lowestValue(t)
                               : highestValue(t);
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
  const std::string reduction = reductionOf(n);
  if (reduction != "none" && t == DType::Bool)
    return makeError(n.describe(), ": reduction '", reduction,
                     "' of bool is unsupported");
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
  TensorDef w;
  w.name = name + "_row";
  w.dtype = DType::Int64;
  w.shape.assign(x.dims.begin(), x.dims.begin() + k);
  {
    std::vector<Expr> p = ctx.idxVars(static_cast<int>(k));
    Expr j = rows.empty() ? Expr(0) : linearize(rv, rows);
    w.body = Select::make(names(rv, p), j, Expr(int64_t{-1}));
    if (!rows.empty()) {
      w.kind = TensorDef::Kind::Reduction;
      w.combiner = Combiner::Max;
      w.reduceExtents = rows;
    } else {
      w.kind = TensorDef::Kind::Pointwise;
    }
  }
  const int winner = ctx.add(std::move(w));

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
    Expr folded;
    if (rows.empty()) {
      folded = ctx.readValue(updates, tail);
    } else {
      TensorDef v;
      v.kind = TensorDef::Kind::Reduction;
      v.name = name + "_" + reduction;
      v.dtype = t;
      v.shape = x.dims;
      v.combiner = c;
      v.reduceExtents = rows;
      std::vector<Expr> at = rv;
      at.insert(at.end(), tail.begin(), tail.end());
      v.body = Select::make(names(rv, lead), ctx.readValue(updates, at),
                            identityOf(c, t));
      folded = ctx.read(ctx.add(std::move(v)), o);
    }
    changed = combineValues(reduction, t, ctx.readValue(data, o), folded);
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
  const std::string reduction = reductionOf(n);
  if (reduction != "none" && t == DType::Bool)
    return makeError(n.describe(), ": reduction '", reduction,
                     "' of bool is unsupported");
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
  TensorDef w;
  w.kind = TensorDef::Kind::Reduction;
  w.name = out->name() + "_position";
  w.dtype = DType::Int64;
  w.shape = x.dims;
  w.combiner = Combiner::Max;
  w.reduceExtents = {extent};
  w.body = Select::make(names(), a, Expr(int64_t{-1}));
  const Expr pos = ctx.read(ctx.add(std::move(w)), o);
  const Expr found =
      logicalAnd(logicalAnd(inside, cmp(BinOp::GE, pos, Expr(0))),
                 cmp(BinOp::GE, extent, Expr(1)));
  Expr changed;
  if (reduction == "none") {
    std::vector<Expr> at = o;
    at[axis] = Binary::make(
        BinOp::Max, Binary::make(BinOp::Min, pos, extent - Expr(1)), Expr(0));
    changed = ctx.readValue(updates, at);
  } else {
    const Combiner c = combinerOf(reduction);
    TensorDef v;
    v.kind = TensorDef::Kind::Reduction;
    v.name = out->name() + "_" + reduction;
    v.dtype = t;
    v.shape = x.dims;
    v.combiner = c;
    v.reduceExtents = {extent};
    v.body = Select::make(names(), ctx.readValue(updates, p), identityOf(c, t));
    changed = combineValues(reduction, t, ctx.readValue(data, o),
                            ctx.read(ctx.add(std::move(v)), o));
  }
  ctx.addPointwise(out, Select::make(found, changed, ctx.readValue(data, o)));
  return Status::ok();
}

} // namespace aotc
