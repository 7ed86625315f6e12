/// \file
/// Lowering of contractions (MatMul, Gemm, Conv, Einsum) to reductions whose
/// epilogue carries the bias; the scheduler fuses pointwise consumers into
/// that epilogue.
#include "compiler/lowering/lowering.h"
#include "ir/einsum.h"
#include "ir/scalar_ops.h"
#include "ir/simplify.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace aotc {

namespace {

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

TensorDef contraction(const Value *out) {
  TensorDef d;
  d.kind = TensorDef::Kind::Reduction;
  d.name = out->name();
  d.dtype = out->type().dtype;
  d.shape = out->type().dims;
  d.combiner = Combiner::Sum;
  d.rereadsInputs = true;
  return d;
}

/// The def that def \p id (0 or more) reads through its views (each a view
/// of one def): \p id itself where it is no such view.
int viewSource(const LowerCtx &ctx, int id) {
  for (;;) {
    const TensorDef &d = ctx.def(id);
    const std::vector<int> reads = accessedDefs(d);
    if (!d.isView || reads.size() != 1)
      return id;
    id = reads[0];
  }
}

/// Whether def \p id is a constant or a view of one (a weight that
/// compiler/passes/pack_weights.h packed, read through its views).
bool constantOrView(const LowerCtx &ctx, int id) {
  return id >= 0 &&
         ctx.def(viewSource(ctx, id)).kind == TensorDef::Kind::Constant;
}

/// The dims of A's rows (M) and of its steps (K) in A [batch..., M, K]
/// (\p transA: [batch..., K, M]) of rank \p rank.
std::pair<int, int> rowAndStepDims(int rank, bool transA) {
  return transA ? std::pair{rank - 1, rank - 2} : std::pair{rank - 2, rank - 1};
}

/// The rows per panel of the copy through which contraction \p n reads its
/// A [batch..., M, K] (\p transA: [K, M]) by a constant B [K, N]
/// (LowerOptions::rowPanel), or 0: A read in place.
int64_t rowPanelOf(const Node &n, const LowerCtx &ctx, bool transA,
                   bool transB) {
  const Value *a = n.input(0), *b = n.input(1);
  const int ra = a->type().rank();
  if (!ctx.options().rowPanel || ra < 2 || b->type().rank() != 2 ||
      ctx.def(ctx.defOf(a)).kind == TensorDef::Kind::Constant ||
      !constantOrView(ctx, ctx.defOf(b)))
    return 0;
  const auto [rowDim, stepDim] = rowAndStepDims(ra, transA);
  int64_t m, k, cols;
  if (!a->type().dims[rowDim].isConst(m) ||
      !a->type().dims[stepDim].isConst(k) ||
      !b->type().dims[transB ? 0 : 1].isConst(cols))
    return 0;
  // Computed by a kernel of the model: not a graph input (or a constant)
  // read in place through views (a Reshape of the input).
  const TensorDef::Kind source = ctx.def(viewSource(ctx, ctx.defOf(a))).kind;
  return ctx.options().rowPanel(m, cols, k, a->type().dtype,
                                source != TensorDef::Kind::Input &&
                                    source != TensorDef::Kind::Constant);
}

/// The copy of \p a [batch..., M, K] (\p transA: [batch..., K, M]) in
/// panels [batch..., ceil(M / rows), K, rows]: element (b..., p, k, r) is
/// A's row p * rows + r at k, the rows past M repeating its last (read by
/// no output).
int rowPanelCopy(LowerCtx &ctx, const Value *a, int64_t rows, bool transA) {
  const std::string key =
      "row panels " + std::to_string(rows) + (transA ? " transposed" : "");
  return ctx.copyOf(a, key, [&] {
    const TensorType &at = a->type();
    const int ra = at.rank();
    const auto [rowDim, stepDim] = rowAndStepDims(ra, transA);
    const Expr m = at.dims[rowDim], k = at.dims[stepDim];
    TensorDef d;
    d.kind = TensorDef::Kind::Pointwise;
    d.name = a->name() + "_rows";
    d.dtype = at.dtype;
    d.shape.assign(at.dims.begin(), at.dims.end() - 2);
    d.shape.push_back(simplify(floorDiv(m + Expr(rows - 1), Expr(rows))));
    d.shape.push_back(k);
    d.shape.push_back(Expr(rows));
    d.materialize = true;
    d.layoutCopy = true;
    std::vector<Expr> i = ctx.idxVars(ra + 1);
    std::vector<Expr> src(i.begin(), i.begin() + (ra - 2));
    Expr row = minExpr(i[ra - 2] * Expr(rows) + i[ra], m - Expr(1));
    src.push_back(transA ? i[ra - 1] : row);
    src.push_back(transA ? row : i[ra - 1]);
    d.body = ctx.readValue(a, src);
    return ctx.add(std::move(d));
  });
}

/// The read of A's row \p row at \p k through its panel copy of \p rows
/// rows per panel, at batch index \p batch.
Expr rowPanelRead(LowerCtx &ctx, const Value *a, int64_t rows, bool transA,
                  std::vector<Expr> batch, const Expr &row, const Expr &k) {
  batch.push_back(floorDiv(row, Expr(rows)));
  batch.push_back(k);
  batch.push_back(mod(row, Expr(rows)));
  return ctx.read(rowPanelCopy(ctx, a, rows, transA), batch);
}

Status lowerMatMul(const Node &n, LowerCtx &ctx) {
  const Value *a = n.input(0), *b = n.input(1), *out = n.output(0);
  int ra = a->type().rank(), rb = b->type().rank(), ro = out->type().rank();
  if (ra < 1 || rb < 1)
    return makeError(n.describe(), ": MatMul of a scalar");
  std::vector<Expr> o = ctx.idxVars(ro);
  Expr k = ctx.rvar(0);
  // Output layout: batch..., [m if ra > 1], [n if rb > 1].
  int nb = ro - (ra > 1) - (rb > 1);
  const std::vector<Expr> outBatch(out->type().dims.begin(),
                                   out->type().dims.begin() + nb);
  const std::vector<Expr> outBatchIdx(o.begin(), o.begin() + nb);
  std::vector<Expr> ai, bi;
  if (ra == 1) {
    ai = {k};
  } else {
    ai = matMulBatchIndex(a->type().dims, outBatch, outBatchIdx, ctx.env());
    ai.push_back(o[nb]);
    ai.push_back(k);
  }
  if (rb == 1) {
    bi = {k};
  } else {
    bi = matMulBatchIndex(b->type().dims, outBatch, outBatchIdx, ctx.env());
    bi.push_back(k);
    bi.push_back(o[ro - 1]);
  }
  TensorDef d = contraction(out);
  d.reduceExtents = {a->type().dims[ra - 1]};
  // A large A through its copy in panels of the tile's rows (row_panels.h).
  Expr aRead = ctx.readValue(a, ai);
  if (const int64_t rows = rowPanelOf(n, ctx, false, false); rows > 0)
    aRead = rowPanelRead(ctx, a, rows, false,
                         std::vector<Expr>(ai.begin(), ai.end() - 2), o[nb], k);
  d.body = bin(BinOp::Mul, aRead, ctx.readValue(b, bi));
  ctx.bind(out, ctx.add(std::move(d)));
  return Status::ok();
}

Status lowerGemm(const Node &n, LowerCtx &ctx) {
  double alpha = n.floatAttr("alpha"), beta = n.floatAttr("beta");
  int64_t transA = n.intAttr("transA"), transB = n.intAttr("transB");
  const Value *a = n.input(0), *b = n.input(1), *c = n.input(2);
  const Value *out = n.output(0);
  DType t = out->type().dtype;
  Expr i = ctx.idx(0), j = ctx.idx(1), k = ctx.rvar(0);
  TensorDef d = contraction(out);
  d.reduceExtents = {a->type().dims[transA ? 0 : 1]};
  // A large A through its copy in panels of the tile's rows (row_panels.h).
  const int64_t rows = rowPanelOf(n, ctx, transA, transB);
  d.body = bin(BinOp::Mul,
               rows > 0 ? rowPanelRead(ctx, a, rows, transA, {}, i, k)
                        : ctx.readValue(a, transA ? std::vector<Expr>{k, i}
                                                  : std::vector<Expr>{i, k}),
               ctx.readValue(b, transB ? std::vector<Expr>{j, k}
                                       : std::vector<Expr>{k, j}));
  Expr acc = ctx.acc(t);
  Expr e = alpha == 1.0 ? acc : bin(BinOp::Mul, literal(t, alpha), acc);
  if (c && beta != 0.0) {
    Expr cv = ctx.readBroadcast(ctx.defOf(c), out->type().dims, {i, j});
    e = bin(BinOp::Add, e,
            beta == 1.0 ? cv : bin(BinOp::Mul, literal(t, beta), cv));
  }
  if (!e.sameAs(acc))
    d.epilogue = e;
  ctx.bind(out, ctx.add(std::move(d)));
  return Status::ok();
}

/// The order in which a contraction wants an operand's labels: with the
/// output's last label (its N, along which the register tile's vectors run)
/// last, as a MatMul's B [batch..., k, n], where the output has two dims or
/// more and the operand names N; otherwise as given (a MatMul's A is read
/// as it is laid out).
std::vector<int> contractionOrder(const std::vector<int> &labels,
                                  const EinsumSpec &spec) {
  if (spec.output.size() < 2)
    return labels;
  const int nLabel = spec.output.back();
  std::vector<int> order;
  for (int l : labels)
    if (l != nLabel)
      order.push_back(l);
  if (order.size() + 1 == labels.size())
    order.push_back(nLabel);
  return order.size() == labels.size() ? order : labels;
}

/// Einsum (ir/einsum.h): the output at its labels' indices is the sum, over
/// the labels of no output dim, of the operands' product, each operand read
/// at its labels' indices (an ellipsis dim of size 1 where the output's is
/// not: at 0). With nothing summed, a pointwise def. An operand whose
/// distinct labels are out of contractionOrder is read through a transposing
/// view in that order, as a MatMul reads a Transpose: the fusion plan gives
/// a view read along N with a stride its own buffer (layoutForContraction),
/// attention's K in "bhid,bhjd->bhij" as MatMul(Q, Transpose(K)) has it.
Status lowerEinsum(const Node &n, LowerCtx &ctx) {
  const Value *out = n.output(0);
  std::vector<int> ranks;
  for (const Value *v : n.inputs())
    ranks.push_back(v->type().rank());
  Expected<EinsumSpec> parsed = parseEinsum(n.stringAttr("equation"), ranks);
  if (!parsed)
    return parsed.status().withContext(n.describe());
  const EinsumSpec spec = parsed.take();
  std::map<int, Expr> index, outSize;
  for (size_t k = 0; k < spec.output.size(); ++k) {
    index.emplace(spec.output[k], ctx.idx(static_cast<int>(k)));
    outSize.emplace(spec.output[k], out->type().dims[k]);
  }
  std::vector<Expr> extents;
  for (size_t j = 0; j < spec.summed.size(); ++j) {
    const int l = spec.summed[j];
    index.emplace(l, ctx.rvar(static_cast<int>(j)));
    for (size_t i = 0; i < spec.operands.size() && extents.size() == j; ++i)
      for (size_t k = 0; k < spec.operands[i].size(); ++k)
        if (spec.operands[i][k] == l) {
          extents.push_back(n.input(i)->type().dims[k]);
          break;
        }
  }
  std::optional<Expr> body;
  for (size_t i = 0; i < spec.operands.size(); ++i) {
    const Value *v = n.input(i);
    const std::vector<int> &labels = spec.operands[i];
    // Where each label is read: at its index, or at 0 for an ellipsis dim
    // of size 1 that the output broadcasts.
    auto at = [&](size_t k) {
      const int l = labels[k];
      const bool broadcast = l >= kEinsumEllipsisLabel &&
                             v->type().dims[k].isConstValue(1) &&
                             !outSize.at(l).isConstValue(1);
      return broadcast ? Expr(0) : index.at(l);
    };
    std::vector<int> order = contractionOrder(labels, spec);
    const bool distinct =
        std::set<int>(labels.begin(), labels.end()).size() == labels.size();
    Expr r;
    if (!spec.summed.empty() && distinct && order != labels) {
      // view[order] = v[labels]: a transposing view, read at order's indices.
      std::vector<size_t> from; // the operand dim of each view dim
      for (int l : order)
        from.push_back(static_cast<size_t>(
            std::find(labels.begin(), labels.end(), l) - labels.begin()));
      TensorDef view;
      view.kind = TensorDef::Kind::Pointwise;
      view.name = v->name() + "_einsum_order";
      view.dtype = v->type().dtype;
      view.isView = true;
      std::vector<Expr> src(labels.size()), viewIdx;
      for (size_t d = 0; d < from.size(); ++d) {
        view.shape.push_back(v->type().dims[from[d]]);
        src[from[d]] = ctx.idx(static_cast<int>(d));
        viewIdx.push_back(at(from[d]));
      }
      view.body = ctx.readValue(v, src);
      r = ctx.read(ctx.add(std::move(view)), viewIdx);
    } else {
      std::vector<Expr> idx;
      for (size_t k = 0; k < labels.size(); ++k)
        idx.push_back(at(k));
      r = ctx.readValue(v, idx);
    }
    body = body ? bin(BinOp::Mul, *body, r) : r;
  }
  if (spec.summed.empty()) {
    ctx.addPointwise(out, *body);
    return Status::ok();
  }
  TensorDef d = contraction(out);
  d.reduceExtents = std::move(extents);
  d.body = *body;
  ctx.bind(out, ctx.add(std::move(d)));
  return Status::ok();
}

} // namespace

/// The explicit pads of a Conv/Pool node: begins, then ends, one per
/// spatial dim. Shape inference has already turned auto_pad into pads.
Expected<std::vector<int64_t>> spatialPads(const Node &n, size_t spatialRank) {
  const std::string &autoPad = n.stringAttr("auto_pad");
  AOTC_CHECK(autoPad == "NOTSET", n.describe() << ": auto_pad " << autoPad
                                               << " survived shape inference");
  std::vector<int64_t> pads = n.intsAttr("pads");
  if (pads.size() != 2 * spatialRank)
    return makeError(n.describe(), ": 'pads' has ", pads.size(),
                     " values, expected ", 2 * spatialRank);
  return pads;
}

namespace {

/// A Conv's materialized copy of \p x [N, C, spatial...] over spatial sizes
/// \p dims, named after x with \p suffix; its body is the caller's.
TensorDef pixelCopy(const Value *x, const std::string &suffix,
                    const std::vector<Expr> &dims) {
  const TensorType &xt = x->type();
  TensorDef d;
  d.kind = TensorDef::Kind::Pointwise;
  d.name = x->name() + suffix;
  d.dtype = xt.dtype;
  d.shape = {xt.dims[0], xt.dims[1]};
  d.shape.insert(d.shape.end(), dims.begin(), dims.end());
  d.materialize = true;
  return d;
}

} // namespace

int zeroPaddedCopy(LowerCtx &ctx, const Value *x,
                   const std::vector<int64_t> &begins,
                   const std::vector<Expr> &paddedDims) {
  const TensorType &xt = x->type();
  const int s = xt.rank() - 2;
  TensorDef pd = pixelCopy(x, "_padded", paddedDims);
  std::vector<Expr> pi = ctx.idxVars(xt.rank());
  std::vector<Expr> src = {pi[0], pi[1]};
  Expr inside;
  for (int k = 0; k < s; ++k) {
    const Expr &in = xt.dims[2 + k];
    Expr pos = pi[2 + k] - Expr(begins[k]);
    // Clamped into the input: the read is in bounds whatever the select
    // picks, so it is made before the select (speculate_loads.cpp).
    src.push_back(minExpr(maxExpr(pos, Expr(0)), maxExpr(in - Expr(1), Expr(0))));
    inside = logicalAnd(inside, logicalAnd(cmp(BinOp::GE, pos, Expr(0)),
                                           cmp(BinOp::LT, pos, in)));
  }
  // x an integer widened from a narrower one where it is read (an int16
  // activation less its zero point read as int32 by ConvInteger,
  // expand_quantized_matmul.cpp): the copy pads the narrow values and the
  // convolution widens them as it reads (fusion.cpp's widensNarrowRead),
  // half the bytes, and factors its kernel sees fit in 16 bits.
  const int xd = ctx.defOf(x);
  const TensorDef &xdef = ctx.def(xd);
  const Cast *widen = xdef.kind == TensorDef::Kind::Pointwise && !xdef.isView
                          ? xdef.body.as<Cast>()
                          : nullptr;
  const Access *narrow = widen ? widen->value.as<Access>() : nullptr;
  if (narrow && scalar::widensInteger(narrow->type, widen->type) &&
      std::equal(pi.begin(), pi.end(), narrow->indices.begin(),
                 narrow->indices.end(),
                 [](const Expr &a, const Expr &b) { return a.sameAs(b); })) {
    const DType from = narrow->type;
    const int source = narrow->tensor;
    pd.dtype = from;
    pd.name += "16";
    pd.body = Select::make(inside, ctx.read(source, src), literal(from, 0));
    const int padded = ctx.add(std::move(pd));
    TensorDef wd;
    wd.kind = TensorDef::Kind::Pointwise;
    wd.name = x->name() + "_padded";
    wd.dtype = xt.dtype;
    wd.shape = ctx.def(padded).shape;
    wd.body = Cast::make(xt.dtype, ctx.read(padded, pi));
    return ctx.add(std::move(wd));
  }
  pd.body = Select::make(inside, ctx.read(xd, src), literal(xt.dtype, 0));
  return ctx.add(std::move(pd));
}

int subsampledCopy(LowerCtx &ctx, const Value *x,
                   const std::vector<int64_t> &strides,
                   const std::vector<Expr> &dims) {
  std::string key = "subsampled";
  for (int64_t st : strides)
    key += " " + std::to_string(st);
  return ctx.copyOf(x, key, [&] {
    TensorDef sd = pixelCopy(x, "_subsampled", dims);
    std::vector<Expr> si = ctx.idxVars(x->type().rank());
    std::vector<Expr> src = {si[0], si[1]};
    for (size_t k = 0; k < dims.size(); ++k)
      src.push_back(si[2 + k] * Expr(strides[k]));
    sd.body = ctx.read(ctx.defOf(x), src);
    return ctx.add(std::move(sd));
  });
}

namespace {

Status lowerConv(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *w = n.input(1), *bias = n.input(2);
  const Value *out = n.output(0);
  const TensorType &xt = x->type();
  int s = xt.rank() - 2;
  if (s < 1)
    return makeError(n.describe(), ": input rank ", xt.rank(), " is below 3");
  std::vector<int64_t> kernel;
  for (int k = 0; k < s; ++k) {
    int64_t v;
    if (!w->type().dims[2 + k].isConst(v))
      return makeError(n.describe(), ": weight spatial dims must be static");
    kernel.push_back(v);
  }
  const std::vector<int64_t> &strides = n.intsAttr("strides");
  const std::vector<int64_t> &dil = n.intsAttr("dilations");
  int64_t group = n.intAttr("group");
  std::vector<Expr> inSpatial(xt.dims.begin() + 2, xt.dims.end());
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, spatialPads(n, s));
  int64_t m;
  if (!w->type().dims[0].isConst(m) || m % group != 0)
    return makeError(n.describe(),
                     ": output channels must be static and divisible by group");
  // Input channels per group: the weight's, which may be fewer than the
  // input's (ops.def: the first ones are read).
  Expr cg = w->type().dims[1];
  std::vector<Expr> o = ctx.idxVars(out->type().rank());
  // The input channel: group g's slice (none to pick with one group, so the
  // input does not depend on the output channel, which register tiling
  // shares it across).
  Expr ci = ctx.rvar(0);
  if (group != 1)
    ci = floorDiv(o[1], Expr(m / group)) * cg + ci;
  std::vector<Expr> xi = {o[0], ci}, wi = {o[1], ctx.rvar(0)};
  // A padded input is read from a zero-padded copy (a pointwise def that
  // fusion materializes, as it does every producer of a contraction): the
  // contraction's loads then need no bounds test, which would keep the
  // innermost loop from being vectorized, and the copy costs one pass over
  // the input against the kernel-size reads of the convolution.
  int xdef = ctx.defOf(x);
  bool padded = false;
  for (int64_t p : pads)
    padded |= p != 0;
  if (padded) {
    std::vector<int64_t> begins(pads.begin(), pads.begin() + s);
    std::vector<Expr> paddedDims;
    for (int k = 0; k < s; ++k)
      paddedDims.push_back(inSpatial[k] + Expr(pads[k] + pads[s + k]));
    xdef = zeroPaddedCopy(ctx, x, begins, paddedDims);
  }
  // A strided 1 x 1 convolution over a copy of the pixels it reads
  // (LowerOptions::subsampleStridedPointwiseConvs), at stride 1.
  std::vector<int64_t> step = strides;
  bool oneByOne = !padded, strided = false;
  for (int k = 0; k < s; ++k) {
    oneByOne &= kernel[k] == 1;
    strided |= strides[k] > 1;
  }
  if (ctx.options().subsampleStridedPointwiseConvs && oneByOne && strided) {
    std::vector<Expr> outSpatial(out->type().dims.begin() + 2,
                                 out->type().dims.end());
    xdef = subsampledCopy(ctx, x, strides, outSpatial);
    step.assign(s, 1);
  }
  TensorDef d = contraction(out);
  d.reduceExtents.push_back(cg);
  for (int k = 0; k < s; ++k) {
    Expr r = ctx.rvar(1 + k);
    xi.push_back(o[2 + k] * Expr(step[k]) + r * Expr(dil[k]));
    wi.push_back(r);
    d.reduceExtents.push_back(Expr(kernel[k]));
  }
  DType t = out->type().dtype;
  d.body = bin(BinOp::Mul, ctx.read(xdef, xi), ctx.readValue(w, wi));
  if (bias)
    d.epilogue = bin(BinOp::Add, ctx.acc(t), ctx.readValue(bias, {o[1]}));
  ctx.bind(out, ctx.add(std::move(d)));
  return Status::ok();
}

/// ConvTranspose as a stride-1 correlation: the input is spread into a
/// zero-filled copy Z (element i at (K_eff - 1) + i * stride, K_eff the
/// dilated kernel extent), and out[o] = sum over c, k of
/// Z[o + pad_begin + k * d] * W[c, m, K - 1 - k] (the kernel flipped).
Status lowerConvTranspose(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *w = n.input(1), *bias = n.input(2);
  const Value *out = n.output(0);
  const TensorType &xt = x->type();
  int s = xt.rank() - 2;
  const std::vector<int64_t> &st = n.intsAttr("strides");
  const std::vector<int64_t> &dil = n.intsAttr("dilations");
  const std::vector<int64_t> &pads = n.intsAttr("pads");
  int64_t group = n.intAttr("group");
  std::vector<int64_t> kernel, eff;
  for (int k = 0; k < s; ++k) {
    int64_t v = 0;
    w->type().dims[2 + k].isConst(v);
    kernel.push_back(v);
    eff.push_back((v - 1) * dil[k] + 1);
  }
  int64_t cin = 0;
  w->type().dims[0].isConst(cin); // static (shape inference)
  int64_t cg = cin / group;
  Expr mg = w->type().dims[1]; // output channels per group
  const std::vector<Expr> &outDims = out->type().dims;
  // Z: [N, C, (out - 1) + pad_begin + K_eff] spread input.
  TensorDef zd;
  zd.kind = TensorDef::Kind::Pointwise;
  zd.name = x->name() + "_spread";
  zd.dtype = xt.dtype;
  zd.shape = {xt.dims[0], xt.dims[1]};
  std::vector<Expr> zi = ctx.idxVars(xt.rank());
  std::vector<Expr> src = {zi[0], zi[1]};
  Expr inside;
  int xdef = ctx.defOf(x);
  for (int k = 0; k < s; ++k) {
    zd.shape.push_back(outDims[2 + k] + Expr(pads[k] + eff[k] - 1));
    Expr t = zi[2 + k] - Expr(eff[k] - 1);
    Expr q = floorDiv(t, Expr(st[k]));
    const Expr &in = xt.dims[2 + k];
    // Clamped into the input, so the read is in bounds whatever the select
    // picks.
    src.push_back(minExpr(maxExpr(q, Expr(0)), maxExpr(in - Expr(1), Expr(0))));
    Expr ok = logicalAnd(cmp(BinOp::GE, t, Expr(0)),
                         cmp(BinOp::LT, q, in));
    if (st[k] != 1)
      ok = logicalAnd(ok, cmp(BinOp::EQ, t - q * Expr(st[k]), Expr(0)));
    inside = logicalAnd(inside, ok);
  }
  zd.body = Select::make(inside, ctx.read(xdef, src), literal(xt.dtype, 0));
  zd.materialize = true;
  int zdef = ctx.add(std::move(zd));
  std::vector<Expr> o = ctx.idxVars(out->type().rank());
  Expr ci = ctx.rvar(0);
  if (group != 1)
    ci = floorDiv(o[1], mg) * Expr(cg) + ci;
  Expr mo = group != 1 ? o[1] - floorDiv(o[1], mg) * mg : o[1];
  TensorDef d = contraction(out);
  d.reduceExtents.push_back(Expr(cg));
  std::vector<Expr> xi = {o[0], ci}, wi = {ci, mo};
  for (int k = 0; k < s; ++k) {
    Expr r = ctx.rvar(1 + k);
    xi.push_back(o[2 + k] + Expr(pads[k]) + r * Expr(dil[k]));
    wi.push_back(Expr(kernel[k] - 1) - r);
    d.reduceExtents.push_back(Expr(kernel[k]));
  }
  DType t = out->type().dtype;
  d.body = bin(BinOp::Mul, ctx.read(zdef, xi), ctx.readValue(w, wi));
  if (bias)
    d.epilogue = bin(BinOp::Add, ctx.acc(t), ctx.readValue(bias, {o[1]}));
  ctx.bind(out, ctx.add(std::move(d)));
  return Status::ok();
}

} // namespace

Status lowerContraction(const Node &n, LowerCtx &ctx) {
  switch (n.op()) {
  case OpKind::MatMul: {
    AOTC_ASSIGN_OR_RETURN(bool fused, lowerFusedAttention(n, ctx));
    return fused ? Status::ok() : lowerMatMul(n, ctx);
  }
  case OpKind::Gemm:
    return lowerGemm(n, ctx);
  case OpKind::Einsum:
    return lowerEinsum(n, ctx);
  case OpKind::Conv:
    return lowerConv(n, ctx);
  case OpKind::ConvTranspose:
    return lowerConvTranspose(n, ctx);
  case OpKind::WinogradConv:
    return lowerWinogradConv(n, ctx);
  default:
    return makeError(n.describe(), ": not a contraction");
  }
}

} // namespace aotc
