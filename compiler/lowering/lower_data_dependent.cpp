/// \file
/// Lowering of the ops whose output size is counted from data (NonZero,
/// Compress, Unique). Both list the positions f in [0, n) where a predicate holds,
/// in order; their count is a data symbol that the run reads back mid-run
/// (LowerCtx::addSync), after which the kernels sized by it run.
///
/// The positions are found without a serial scan, in defs the scheduler
/// runs as ordinary parallel kernels, by blocks of B = 256 positions, each
/// 16 sub-blocks of 16 (P = 256 blocks make a super-block):
///   counts[b]    = number of hits in block b                  n reads
///   incl[b]      = counts[0] + ... + counts[b]                nb^2 reads
///   count        = counts[0] + ... + counts[nb - 1]           (the sync)
///   sub[b, s]    = hits in sub-block s of block b             n reads
///   local[b, k]  = hits in block b at offsets <= k: the
///                  sub-blocks before k's, then k's own        32 n reads
///   table[s, r]  = incl of block s P + r (n past the last)
///   block[j]     = number of blocks b with incl[b] <= j: the
///                  super-block (by its last entry), then the
///                  blocks in it                               N (nb/P + P)
///   pos[j]       = block[j] B + the offset whose local count
///                  reaches the hit's rank in its block: the
///                  sub-block (by its last offset), the offset  N 32
/// (incl and local are non-decreasing, so each search counts the entries
/// that have not reached the hit yet). Data-dependent indices are clamped
/// to where they are by construction, which tells the prover; each search
/// reads a materialized table at such an index, never an index computed
/// inside another data-dependent index (that nesting made the prover's
/// intervals recurse exponentially for symbolic sizes).
#include "compiler/lowering/lowering.h"

#include "ir/indexing.h"

#include <algorithm>

namespace aotc {

namespace {

/// The multi-index of flat (row-major) position \p f of a tensor of
/// \p dims (empty for a scalar).
std::vector<Expr> unravel(const Expr &f, const std::vector<Expr> &dims) {
  return dims.empty() ? std::vector<Expr>() : delinearize(f, dims);
}

/// Offsets per sub-block.
constexpr int64_t kSubBlock = 16;

Expr one() { return Expr(int64_t{1}); }
Expr zero() { return Expr(int64_t{0}); }
Expr asCount(const Expr &cond) { return Select::make(cond, one(), zero()); }

TensorDef reduction(const std::string &name, std::vector<Expr> shape,
                    std::vector<Expr> extents, Expr body, Expr epilogue,
                    Combiner combiner = Combiner::Sum) {
  TensorDef d;
  d.kind = TensorDef::Kind::Reduction;
  d.name = name;
  d.dtype = DType::Int64;
  d.combiner = combiner;
  d.shape = std::move(shape);
  d.reduceExtents = std::move(extents);
  d.body = std::move(body);
  d.epilogue = std::move(epilogue);
  return d;
}

/// Adds the defs that list the positions f in [0, n) where hit(f) (a Bool
/// expression over f, only called with 0 <= f < n) holds, in order; makes
/// their number the value of data symbol \p count (read back by the run);
/// returns the def of the positions, int64 [count].
int addHitPositions(LowerCtx &ctx, const Node &node, const Expr &n,
                    const std::function<Expr(const Expr &)> &hit,
                    const Expr &count) {
  const std::string &name = node.output(0)->name();
  // A small constant n is one block of its own size.
  int64_t nConst = 0, block = kHitBlock;
  Expr nb;
  if (simplify(n, ctx.env()).isConst(nConst)) {
    block = std::clamp<int64_t>(nConst, 1, kHitBlock);
    nb = Expr((nConst + block - 1) / block);
  } else {
    nb = declaredSymbol(ctx, node, hitBlocks(n));
  }
  Expr B(block);
  const Expr i0 = ctx.idx(0), i1 = ctx.idx(1), r0 = ctx.rvar(0);
  // Position b B + k, if it is inside [0, n), is a hit.
  auto hitAt = [&](const Expr &b, const Expr &k) {
    Expr f = b * B + k;
    return Select::make(cmp(BinOp::LT, f, n), asCount(hit(f)), zero());
  };
  int counts = ctx.add(
      reduction(name + "_block_hits", {nb}, {B}, hitAt(i0, r0), Expr()));
  int incl = ctx.add(reduction(
      name + "_hits_through_block", {nb}, {nb},
      Select::make(cmp(BinOp::LE, r0, i0), ctx.read(counts, {r0}), zero()),
      Expr()));
  int total = ctx.add(
      reduction(name + "_count", {}, {nb}, ctx.read(counts, {r0}), Expr()));
  ctx.addSync(total, count);
  int64_t sub = block % kSubBlock == 0 ? kSubBlock : block;
  int64_t nsub = block / sub;
  Expr S(sub), NS(nsub);
  int subHits = ctx.add(reduction(name + "_sub_block_hits", {nb, NS}, {S},
                                  hitAt(i0, i1 * S + r0), Expr()));
  Expr own = r0 - NS;
  int local = ctx.add(reduction(
      name + "_hits_in_block", {nb, B}, {NS + S},
      Select::make(cmp(BinOp::LT, r0, NS),
                   Select::make(cmp(BinOp::LT, r0, floorDiv(i1, S)),
                                ctx.read(subHits, {i0, r0}), zero()),
                   Select::make(cmp(BinOp::LE, own, mod(i1, S)),
                                hitAt(i0, floorDiv(i1, S) * S + own), zero())),
      Expr()));
  // The j-th hit (j < count) is in the block `blk`: the number of blocks
  // whose hits through them are at most j. Counted in two steps over the
  // hits through each block laid out by super-blocks of P blocks (past the
  // last block: n, more than any j): the super-block (by its last
  // block), then the blocks in it.
  int64_t per = kSubBlock * kSubBlock;
  Expr P(per), nsb = floorDiv(nb + Expr(per - 1), P);
  TensorDef table;
  table.name = name + "_hits_through_block_by_super_block";
  table.dtype = DType::Int64;
  table.shape = {nsb, P};
  table.materialize = true;
  table.body = Select::make(cmp(BinOp::LT, i0 * P + i1, nb),
                            ctx.read(incl, {i0 * P + i1}), n);
  int bySuper = ctx.add(std::move(table));
  int super = ctx.add(reduction(
      name + "_super_block", {count}, {nsb},
      asCount(cmp(BinOp::LE, ctx.read(bySuper, {r0, P - one()}), i0)), Expr()));
  Expr sb = Call::make(DType::Int64, "clamp",
                       {ctx.read(super, {i0}), zero(), nsb - one()});
  int blk = ctx.add(reduction(
      name + "_block", {count}, {P},
      asCount(cmp(BinOp::LE, ctx.read(bySuper, {sb, r0}), i0)),
      sb * P + ctx.acc(DType::Int64)));
  Expr raw = ctx.read(blk, {i0});
  Expr b = Call::make(DType::Int64, "clamp", {raw, zero(), nb - one()});
  Expr before = Select::make(
      cmp(BinOp::GT, raw, zero()),
      ctx.read(incl,
               {Call::make(DType::Int64, "clamp", {raw - one(), zero(), nb - one()})}),
      zero());
  // Within the block: the sub-block (by its last offset), then the offset
  // in it whose count reaches the hit's rank in the block.
  Expr rank = i0 - before;
  int subIdx = ctx.add(reduction(
      name + "_sub_block", {count}, {NS},
      asCount(cmp(BinOp::LE, ctx.read(local, {b, r0 * S + S - one()}), rank)),
      Expr()));
  Expr s = Call::make(DType::Int64, "clamp",
                      {ctx.read(subIdx, {i0}), zero(), NS - one()});
  return ctx.add(reduction(
      name + "_position", {count}, {S},
      asCount(cmp(BinOp::LE, ctx.read(local, {b, s * S + r0}), rank)),
      b * B + s * S + ctx.acc(DType::Int64)));
}

/// NonZero: Y[r, j] = coordinate r of the j-th nonzero element of X in
/// row-major order.
Status lowerNonZero(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *y = n.output(0);
  const std::vector<Expr> &dims = x->type().dims;
  Expr numel = product(dims);
  int xid = ctx.defOf(x);
  DType t = x->type().dtype;
  auto nonzero = [&](const Expr &f) {
    return cmp(BinOp::NE, ctx.read(xid, unravel(f, dims)), literal(t, 0));
  };
  const Expr &count = y->type().dims[1];
  int pos = addHitPositions(ctx, n, numel, nonzero, count);
  // Positions are below numel by construction: clamp() tells the prover.
  Expr f = Call::make(DType::Int64, "clamp",
                      {ctx.read(pos, {ctx.idx(1)}), zero(), numel - one()});
  std::vector<Expr> coords = unravel(f, dims); // (shape inference: rank >= 1)
  Expr body = coords.back();
  for (size_t r = coords.size() - 1; r-- > 0;)
    body = Select::make(cmp(BinOp::EQ, ctx.idx(0), Expr(int64_t(r))),
                        coords[r], body);
  ctx.addPointwise(y, body);
  return Status::ok();
}

/// Compress: the elements of X (flattened) or its slices along `axis` at
/// the positions where the condition is true. A true element of the
/// condition past X's size is an error the run reports (the gather's index
/// check), as NumPy's compress raises.
Status lowerCompress(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *cond = n.input(1), *y = n.output(0);
  int xid = ctx.defOf(x), cid = ctx.defOf(cond);
  auto isTrue = [&](const Expr &f) { return ctx.read(cid, {f}); };
  bool hasAxis = n.hasAttr("axis");
  int64_t axis = hasAxis ? n.intAttr("axis") : 0;
  const Expr &count = y->type().dims[hasAxis ? axis : 0];
  int pos = addHitPositions(ctx, n, cond->type().dims[0], isTrue, count);
  const std::vector<Expr> &dims = x->type().dims;
  // The position, checked against what it indexes: the flattened input,
  // or its dim `axis`.
  Expr extent = hasAxis ? dims[axis] : product(dims);
  int code = ctx.addError(
      n.describe() + ": the condition is true at position {value}, past the " +
      (hasAxis ? "size of axis " + std::to_string(axis) : "element count") +
      " of the input ({extent})");
  Expr index = IndexCheck::make(ctx.read(pos, {ctx.idx(hasAxis ? axis : 0)}),
                                extent, code, /*wrapNegative=*/false);
  std::vector<Expr> at;
  if (hasAxis) {
    at = ctx.idxVars(static_cast<int>(dims.size()));
    at[axis] = index;
  } else {
    at = unravel(index, dims);
  }
  // The check runs first (the condition); an input with no element to read
  // yields 0 where the check already failed.
  Expr ok = logicalAnd(cmp(BinOp::GE, index, zero()),
                       cmp(BinOp::GE, extent, one()));
  ctx.addPointwise(y, Select::make(ok, ctx.read(xid, at),
                                   literal(x->type().dtype, 0)));
  return Status::ok();
}

/// Unique over n items: the elements of X (flattened), or its slices along
/// `axis` (S elements each, compared in row-major order). Items are equal
/// when all their elements are (NaN equal to NaN) and ordered by their
/// first differing element (NaN after every number), as np.unique orders
/// them. All pairwise: about n^2 S comparisons (n^2 for elements), plus
/// N n for the outputs; fine for the label sets and token lists Unique
/// meets in models, slow for millions of elements.
///   first[i]  = the lowest j whose item equals item i (i is new if i)
///   pos[u]    = the u-th new item in order of appearance (a data count)
///   rank[i]   = how many new items are less than item i   (sorted)
///   src[u]    = the new item of rank u (sorted) or pos[u]
///   Y[u] = item src[u]; indices = src; inverse[i] = rank[i] (sorted) or
///   the number of new items before first[i]; counts[u] = how many items
///   equal item src[u].
Status lowerUnique(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *y = n.output(0);
  const std::vector<Expr> &dims = x->type().dims;
  DType t = x->type().dtype;
  int xid = ctx.defOf(x);
  bool hasAxis = n.hasAttr("axis");
  int64_t axis = hasAxis ? n.intAttr("axis") : 0;
  bool sorted = n.intAttr("sorted") != 0;
  Expr length = hasAxis ? dims[axis] : product(dims);
  const Expr &count = y->type().dims[hasAxis ? axis : 0];
  // The other dims of a slice, and element k of item i.
  std::vector<Expr> rest;
  for (size_t d = 0; d < dims.size(); ++d)
    if (hasAxis && static_cast<int64_t>(d) != axis)
      rest.push_back(dims[d]);
  Expr slice = product(rest);
  auto elem = [&](const Expr &i, const Expr &k) {
    if (!hasAxis)
      return ctx.read(xid, unravel(i, dims));
    std::vector<Expr> in = unravel(k, rest);
    in.insert(in.begin() + axis, i);
    return ctx.read(xid, in);
  };
  auto same = [&](const Expr &a, const Expr &b) {
    Expr e = cmp(BinOp::EQ, a, b);
    if (isFloat(t))
      e = logicalOr(e, logicalAnd(Call::make(DType::Bool, "isnan", {a}),
                                  Call::make(DType::Bool, "isnan", {b})));
    return e;
  };
  auto less = [&](const Expr &a, const Expr &b) {
    Expr e = cmp(BinOp::LT, a, b);
    if (isFloat(t)) // NaN after every number
      e = logicalOr(e, logicalAnd(Not::make(Call::make(DType::Bool, "isnan", {a})),
                                  Call::make(DType::Bool, "isnan", {b})));
    return e;
  };
  const Expr i0 = ctx.idx(0), i1 = ctx.idx(1), r0 = ctx.rvar(0);
  // Item comparisons: eq(i, j) and lt(i, j) (item i before item j).
  std::function<Expr(const Expr &, const Expr &)> eq, lt;
  int64_t sliceConst = 0;
  if (!hasAxis || (simplify(slice, ctx.env()).isConst(sliceConst) && sliceConst == 1)) {
    eq = [&](const Expr &i, const Expr &j) { return same(elem(i, zero()), elem(j, zero())); };
    lt = [&](const Expr &i, const Expr &j) { return less(elem(i, zero()), elem(j, zero())); };
  } else {
    // diff[i, j] = the first element where items i and j differ, or S.
    int diff = ctx.add(reduction(
        y->name() + "_first_difference", {length, length}, {slice},
        Select::make(same(elem(i0, r0), elem(i1, r0)), slice, r0), Expr(),
        Combiner::Min));
    eq = [&, diff](const Expr &i, const Expr &j) {
      return cmp(BinOp::GE, ctx.read(diff, {i, j}), slice);
    };
    lt = [&, diff](const Expr &i, const Expr &j) {
      Expr k = ctx.read(diff, {i, j});
      Expr at = Call::make(DType::Int64, "clamp", {k, zero(), slice - one()});
      return logicalAnd(cmp(BinOp::LT, k, slice), less(elem(i, at), elem(j, at)));
    };
  }
  int first = ctx.add(reduction(y->name() + "_first", {length}, {length},
                                Select::make(eq(r0, i0), r0, length), Expr(),
                                Combiner::Min));
  auto isNew = [&](const Expr &i) { return cmp(BinOp::EQ, ctx.read(first, {i}), i); };
  int pos = addHitPositions(ctx, n, length, isNew, count);
  // Positions below n by construction: clamp() tells the prover.
  auto item = [&](const Expr &v) {
    return Call::make(DType::Int64, "clamp", {v, zero(), length - one()});
  };
  int order, src;
  if (sorted) {
    order = ctx.add(reduction(y->name() + "_rank", {length}, {length},
                              asCount(logicalAnd(isNew(r0), lt(r0, i0))), Expr()));
    src = ctx.add(reduction(
        y->name() + "_source", {count}, {length},
        Select::make(logicalAnd(isNew(r0), cmp(BinOp::EQ, ctx.read(order, {r0}), i0)),
                     r0, length),
        Expr(), Combiner::Min));
  } else {
    order = ctx.add(reduction(
        y->name() + "_order", {length}, {length},
        asCount(logicalAnd(isNew(r0), cmp(BinOp::LT, r0, ctx.read(first, {i0})))),
        Expr()));
    src = pos;
  }
  Expr from = item(ctx.read(src, {ctx.idx(hasAxis ? static_cast<int>(axis) : 0)}));
  Expr value;
  if (!hasAxis) {
    value = elem(from, zero());
  } else {
    std::vector<Expr> at = ctx.idxVars(static_cast<int>(dims.size()));
    at[axis] = from;
    value = ctx.read(xid, at);
  }
  // There are items whenever Y has an element (count <= n): the select
  // tells the prover that the clamp above stays inside [0, n).
  ctx.addPointwise(y, Select::make(cmp(BinOp::GE, length, one()), value,
                                   literal(t, 0)));
  const auto &outs = n.outputs();
  if (outs.size() > 1 && outs[1])
    ctx.addPointwise(outs[1], item(ctx.read(src, {i0})));
  if (outs.size() > 2 && outs[2])
    ctx.addPointwise(outs[2], ctx.read(order, {i0}));
  if (outs.size() > 3 && outs[3])
    ctx.bind(outs[3], ctx.add(reduction(outs[3]->name(), {count}, {length},
                                        asCount(eq(r0, item(ctx.read(src, {i0})))),
                                        Expr())));
  return Status::ok();
}

} // namespace

Status lowerDataDependent(const Node &n, LowerCtx &ctx) {
  switch (n.op()) {
  case OpKind::NonZero:
    return lowerNonZero(n, ctx);
  case OpKind::Compress:
    return lowerCompress(n, ctx);
  case OpKind::Unique:
    return lowerUnique(n, ctx);
  default:
    return makeError(n.describe(), ": no lowering");
  }
}

} // namespace aotc
