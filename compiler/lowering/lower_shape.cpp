/// \file
/// Lowering of data-movement ops. Reshape, Flatten, Squeeze, Unsqueeze,
/// Transpose and Expand are views (pure index remapping, no
/// kernel once inlined); Concat, Gather, Slice and Pad are pointwise selects
/// and re-indexings.
#include "compiler/lowering/data_indices.h"
#include "compiler/lowering/lowering.h"

#include "ir/indexing.h"

namespace aotc {

namespace {

Expected<std::vector<int64_t>> constInts(const Node &n, const Value *v,
                                         const char *what) {
  if (!v)
    return std::vector<int64_t>{};
  const auto &sym = v->symbolicData();
  if (!sym)
    return makeError(n.describe(), ": '", what,
                     "' must be a compile-time constant");
  std::vector<int64_t> out;
  for (const Expr &e : *sym) {
    int64_t c;
    if (!e.isConst(c))
      return makeError(n.describe(), ": '", what, "' must be constant, got ",
                       printExpr(e));
    out.push_back(c);
  }
  return out;
}

Status lowerReshapeLike(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  const std::vector<Expr> &xd = x->type().dims, &od = out->type().dims;
  std::vector<Expr> o = ctx.idxVars(out->type().rank());
  // Leading and trailing dims the reshape keeps map one to one; only the
  // dims between are linearized and split again. With symbolic sizes this
  // matters: [b, 2, 2, s, 64] -> [b, 4, s, 64] divides by 2 alone, where
  // the whole index divided by 64 * s (and by s * 64 in the next view),
  // which the simplifier cannot cancel, and chains of such views grew
  // kernels of a megabyte of OpenCL (GQA's repeated heads).
  size_t rx = xd.size(), ro = od.size(), p = 0, q = 0;
  auto same = [&](const Expr &a, const Expr &b) {
    return structurallyEqual(a, b) || proveEqual(a, b, ctx.env());
  };
  while (p < rx && p < ro && same(xd[p], od[p]))
    ++p;
  while (q < rx - p && q < ro - p && same(xd[rx - 1 - q], od[ro - 1 - q]))
    ++q;
  std::vector<Expr> in(o.begin(), o.begin() + p);
  std::vector<Expr> mid = delinearize(
      linearize(std::vector<Expr>(o.begin() + p, o.end() - q),
                std::vector<Expr>(od.begin() + p, od.end() - q)),
      std::vector<Expr>(xd.begin() + p, xd.end() - q));
  in.insert(in.end(), mid.begin(), mid.end());
  in.insert(in.end(), o.end() - q, o.end());
  ctx.addPointwise(out, ctx.readValue(x, in), /*isView=*/true);
  return Status::ok();
}

Status lowerSqueezeLike(const Node &n, LowerCtx &ctx) {
  // Squeeze/Unsqueeze only drop or insert size-1 dims: map the non-unit dims
  // in order and read index 0 on the input's size-1 dims.
  const Value *x = n.input(0), *out = n.output(0);
  const auto &xd = x->type().dims, &od = out->type().dims;
  if (givenAtRunTime(n, 1))
    return lowerReshapeLike(n, ctx); // axes given at run time
  std::vector<Expr> o = ctx.idxVars(od.size());
  std::vector<Expr> in;
  size_t j = 0;
  for (size_t k = 0; k < xd.size(); ++k) {
    if (xd[k].isConstValue(1)) {
      in.push_back(Expr(0));
      continue;
    }
    while (j < od.size() && od[j].isConstValue(1))
      ++j;
    if (j >= od.size())
      return lowerReshapeLike(n, ctx);
    in.push_back(o[j++]);
  }
  ctx.addPointwise(out, ctx.readValue(x, in), /*isView=*/true);
  return Status::ok();
}

Status lowerTranspose(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int r = x->type().rank();
  const std::vector<int64_t> &perm = n.intsAttr("perm");
  if ((int)perm.size() != r)
    return makeError(n.describe(), ": 'perm' has ", perm.size(),
                     " values for rank ", r);
  std::vector<Expr> o = ctx.idxVars(r), in(r);
  for (int k = 0; k < r; ++k) {
    if (perm[k] < 0 || perm[k] >= r)
      return makeError(n.describe(), ": bad 'perm' value ", perm[k]);
    in[perm[k]] = o[k];
  }
  ctx.addPointwise(out, ctx.readValue(x, in), /*isView=*/true);
  return Status::ok();
}

Status lowerConcat(const Node &n, LowerCtx &ctx) {
  const Value *out = n.output(0);
  int r = out->type().rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += r;
  if (axis < 0 || axis >= r)
    return makeError(n.describe(), ": axis out of range");
  std::vector<Expr> o = ctx.idxVars(r);
  // Walk the inputs backwards, building select(i < start_k, earlier, x_k).
  std::vector<Expr> starts;
  Expr start = Expr(0);
  std::vector<const Value *> parts;
  for (const Value *v : n.inputs()) {
    if (!v)
      continue;
    if (v->type().dims[axis].isConstValue(0))
      continue;
    starts.push_back(start);
    parts.push_back(v);
    start = simplify(start + v->type().dims[axis], ctx.env());
  }
  // Every input empty on the axis: so is the output, which has no element
  // to compute.
  if (parts.empty()) {
    ctx.addPointwise(out, literal(out->type().dtype, 0));
    return Status::ok();
  }
  Expr body;
  for (size_t p = 0; p < parts.size(); ++p) {
    std::vector<Expr> in = o;
    in[axis] = o[axis] - starts[p];
    Expr v = ctx.readValue(parts[p], in);
    body =
        p == 0 ? v : Select::make(cmp(BinOp::LT, o[axis], starts[p]), body, v);
  }
  ctx.addPointwise(out, body);
  return Status::ok();
}

Status lowerGather(const Node &n, LowerCtx &ctx) {
  const Value *data = n.input(0), *indices = n.input(1), *out = n.output(0);
  int rd = data->type().rank(), ri = indices->type().rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += rd;
  if (axis < 0 || axis >= rd)
    return makeError(n.describe(), ": axis out of range");
  std::vector<Expr> o = ctx.idxVars(out->type().rank());
  std::vector<Expr> ii(o.begin() + axis, o.begin() + axis + ri);
  DataIndices di(n, ctx);
  std::vector<Expr> in(o.begin(), o.begin() + axis);
  in.push_back(di.check(ctx.readValue(indices, ii), data->type().dims[axis],
                        "axis " + std::to_string(axis)));
  in.insert(in.end(), o.begin() + axis + ri, o.end());
  ctx.addPointwise(out, di.read(data, in, out));
  return Status::ok();
}

/// GatherElements: out[i] = data[i with the axis index replaced by
/// indices[i]], the index checked (and a negative one wrapped) as Gather's.
Status lowerGatherElements(const Node &n, LowerCtx &ctx) {
  const Value *data = n.input(0), *indices = n.input(1), *out = n.output(0);
  int r = data->type().rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += r;
  std::vector<Expr> o = ctx.idxVars(r);
  DataIndices di(n, ctx);
  std::vector<Expr> in = o;
  in[axis] = di.check(ctx.readValue(indices, o), data->type().dims[axis],
                      "axis " + std::to_string(axis));
  ctx.addPointwise(out, di.read(data, in, out));
  return Status::ok();
}

/// GatherND: out[o] = data[o[:b], indices[o[:q-1], 0..k-1], o[q-1:]], each
/// index checked (and a negative one wrapped) as Gather's.
Status lowerGatherND(const Node &n, LowerCtx &ctx) {
  const Value *data = n.input(0), *indices = n.input(1), *out = n.output(0);
  const TensorType &x = data->type(), &idx = indices->type();
  int64_t b = n.intAttr("batch_dims"), q = idx.rank(), k;
  if (!idx.dims.back().isConst(k))
    return makeError(n.describe(), ": index rows of unknown length");
  std::vector<Expr> o = ctx.idxVars(out->type().rank());
  DataIndices di(n, ctx);
  std::vector<Expr> in(o.begin(), o.begin() + b);
  for (int64_t j = 0; j < k; ++j) {
    std::vector<Expr> at(o.begin(), o.begin() + (q - 1));
    at.push_back(Expr(j));
    in.push_back(di.check(ctx.readValue(indices, at), x.dims[b + j],
                          "data dim " + std::to_string(b + j)));
  }
  in.insert(in.end(), o.begin() + (q - 1), o.end());
  ctx.addPointwise(out, di.read(data, in, out));
  return Status::ok();
}

/// A Slice whose axes or steps are given at run time: x read at start +
/// o * step per dim, the sizes shape inference declared (runtimeSlice).
Status lowerSliceRuntime(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  const std::vector<Expr> &starts = *n.input(1)->symbolicData();
  const std::vector<Expr> &ends = *n.input(2)->symbolicData();
  std::vector<Expr> axes, steps;
  if (n.input(3))
    axes = *n.input(3)->symbolicData();
  else
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(Expr(static_cast<int64_t>(i)));
  if (n.input(4))
    steps = *n.input(4)->symbolicData();
  else
    steps.assign(starts.size(), Expr(1));
  std::vector<SliceDim> dims =
      runtimeSlice(starts, ends, axes, steps, x->type().dims);
  std::vector<Expr> o = ctx.idxVars(x->type().rank()), in;
  for (size_t i = 0; i < dims.size(); ++i)
    in.push_back(declaredSymbol(ctx, n, dims[i].start) +
                 o[i] * declaredSymbol(ctx, n, dims[i].step));
  ctx.addPointwise(out, ctx.readValue(x, in), /*isView=*/true);
  return Status::ok();
}

Status lowerSlice(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int r = x->type().rank();
  if (n.numInputs() > 1 && (givenAtRunTime(n, 3) || givenAtRunTime(n, 4)))
    return lowerSliceRuntime(n, ctx);
  std::vector<Expr> starts; // constants, or symbolic (given at run time)
  std::vector<int64_t> axes, steps;
  if (n.numInputs() > 1) {
    if (!n.input(1)->symbolicData())
      return makeError(n.describe(), ": 'starts' must be known at compile "
                                     "time");
    starts = *n.input(1)->symbolicData();
    AOTC_ASSIGN_OR_RETURN(axes, constInts(n, n.input(3), "axes"));
    AOTC_ASSIGN_OR_RETURN(steps, constInts(n, n.input(4), "steps"));
  } else { // opset < 10
    for (int64_t s : n.intsAttr("starts"))
      starts.push_back(Expr(s));
    if (n.hasAttr("axes"))
      axes = n.intsAttr("axes");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k)
      axes.push_back(static_cast<int64_t>(k));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  std::vector<Expr> o = ctx.idxVars(r), in = o;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + r : axes[k];
    if (a < 0 || a >= r || steps[k] == 0)
      return makeError(n.describe(), ": bad slice axis or step");
    // As in shape inference: a step beyond any size takes one element.
    constexpr int64_t kMaxStep = int64_t{1} << 62;
    steps[k] = std::max(-kMaxStep, std::min(steps[k], kMaxStep));
    Expr dim = x->type().dims[a];
    // The start as shape inference sized the output with: [0, dim] for
    // positive steps, [0, dim-1] else.
    Expr start =
        clampSliceIndex(starts[k], dim, 0, steps[k] > 0 ? 0 : -1, ctx.env());
    in[a] = start + o[a] * Expr(steps[k]);
  }
  ctx.addPointwise(out, ctx.readValue(x, in), /*isView=*/true);
  return Status::ok();
}

/// Range: start + i * delta (its count is static or symbolic, set by shape
/// inference; known integer values were lowered as constants already).
Status lowerRange(const Node &n, LowerCtx &ctx) {
  const Value *out = n.output(0);
  DType t = out->type().dtype;
  Expr start = ctx.readValue(n.input(0), {});
  Expr delta = ctx.readValue(n.input(2), {});
  Expr i = ctx.idxVars(1)[0];
  Expr v = isFloat(t) ? Binary::make(BinOp::Add, start,
                                     Binary::make(BinOp::Mul,
                                                  Cast::make(t, i), delta))
                      : Cast::make(t, Cast::make(DType::Int64, start) +
                                          i * Cast::make(DType::Int64, delta));
  ctx.addPointwise(out, v);
  return Status::ok();
}

/// Split: each output is a view of its range along the axis (sizes from
/// shape inference).
Status lowerSplit(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0);
  int r = x->type().rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += r;
  Expr offset = Expr(0);
  for (const Value *out : n.outputs()) {
    std::vector<Expr> in = ctx.idxVars(r);
    in[axis] = in[axis] + offset;
    ctx.addPointwise(out, ctx.readValue(x, in), /*isView=*/true);
    offset = simplify(offset + out->type().dims[axis], ctx.env());
  }
  return Status::ok();
}

Status lowerPad(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int r = x->type().rank();
  const std::string &mode = n.stringAttr("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return makeError(n.describe(), ": Pad mode '", mode, "' is not supported");
  // Begins then ends, constants or symbolic.
  AOTC_ASSIGN_OR_RETURN(std::vector<Expr> pads, padAmounts(n));
  DType t = out->type().dtype;
  std::vector<Expr> o = ctx.idxVars(r), in;
  auto unpadded = [&](int k) {
    return pads[k].isConstValue(0) && pads[r + k].isConstValue(0);
  };
  if (mode != "constant") {
    // Of the part negative pads keep ([start, start + length): ONNX crops
    // first), edge reads the nearest element, reflect the element mirrored
    // about the edge one, wrap the part repeated (any number of times, as
    // numpy.pad does). Shape inference checked length >= 1 and reflect's
    // pads below it.
    for (int k = 0; k < r; ++k) {
      Expr p = o[k] - pads[k];
      if (unpadded(k)) {
        in.push_back(p);
        continue;
      }
      PadKept kept = padKept(x->type().dims[k], pads[k], pads[r + k], ctx.env());
      const Expr &s = kept.start;
      Expr end = s + kept.length; // one past the kept part
      if (mode == "wrap") {
        in.push_back(s + mod(p - s, kept.length));
        continue;
      }
      Expr lo = mode == "edge" ? s : Expr(2) * s - p;
      Expr hi = mode == "edge" ? end - Expr(1)
                               : Expr(2) * (end - Expr(1)) - p;
      in.push_back(Select::make(cmp(BinOp::LT, p, s), lo,
                                Select::make(cmp(BinOp::GE, p, end), hi, p)));
    }
    ctx.addPointwise(out, ctx.readValue(x, in));
    return Status::ok();
  }
  Expr fill = literal(t, 0);
  if (const Value *cv = n.input(2))
    fill = ctx.readValue(cv, std::vector<Expr>(cv->type().rank(), Expr(0)));
  else if (n.hasAttr("value")) {
    fill = literal(t, n.floatAttr("value"));
  }
  // Each padded index is clamped into the input, as the convolutions' own
  // padded copies are (lower_contraction.cpp): the read is then in bounds
  // whatever the select picks, so a pass that moves it out from under the
  // select (speculate_loads.cpp, or inline_padding.cpp substituting this
  // body into a reduction) reads inside the input, which the Loop IR
  // verifier checks. Unclamped, a channel-blocked ReduceMean over a Pad
  // failed to compile.
  Expr inBounds;
  for (int k = 0; k < r; ++k) {
    Expr p = o[k] - pads[k];
    if (unpadded(k)) {
      in.push_back(p);
      continue;
    }
    const Expr &dim = x->type().dims[k];
    in.push_back(minExpr(maxExpr(p, Expr(0)), maxExpr(dim - Expr(1), Expr(0))));
    inBounds = logicalAnd(inBounds, logicalAnd(cmp(BinOp::GE, p, Expr(0)),
                                               cmp(BinOp::LT, p, dim)));
  }
  Expr v = ctx.readValue(x, in);
  ctx.addPointwise(out,
                   inBounds.defined() ? Select::make(inBounds, v, fill) : v,
                   /*isView=*/!inBounds.defined());
  return Status::ok();
}

} // namespace

Status lowerShapeOp(const Node &n, LowerCtx &ctx) {
  switch (n.op()) {
  case OpKind::Reshape:
  case OpKind::Flatten:
    return lowerReshapeLike(n, ctx);
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
    return lowerSqueezeLike(n, ctx);
  case OpKind::Transpose:
    return lowerTranspose(n, ctx);
  case OpKind::Expand: {
    const Value *out = n.output(0);
    ctx.addPointwise(out,
                     ctx.readBroadcast(ctx.defOf(n.input(0)), out->type().dims,
                                       ctx.idxVars(out->type().rank())),
                     /*isView=*/true);
    return Status::ok();
  }
  case OpKind::Tile: {
    // out[i] = in[i mod d] on every axis.
    const Value *x = n.input(0), *out = n.output(0);
    std::vector<Expr> o = ctx.idxVars(out->type().rank()), in;
    for (int k = 0; k < out->type().rank(); ++k) {
      const Expr &d = x->type().dims[k];
      in.push_back(o[k] - floorDiv(o[k], d) * d);
    }
    ctx.addPointwise(out, ctx.readValue(x, in), /*isView=*/true);
    return Status::ok();
  }
  case OpKind::DepthToSpace: {
    // out[n, c, h*b + i, w*b + j] = in[n, ch, h, w] with ch = (i*b + j)*C'
    // + c (DCR) or c*b*b + i*b + j (CRD), C' the output channels.
    const Value *x = n.input(0), *out = n.output(0);
    const int64_t b = n.intAttr("blocksize");
    const Expr &co = out->type().dims[1]; // symbolic: C / b^2 (assumed exact)
    std::vector<Expr> o = ctx.idxVars(4);
    Expr h = floorDiv(o[2], Expr(b)), i = o[2] - h * Expr(b);
    Expr w = floorDiv(o[3], Expr(b)), j = o[3] - w * Expr(b);
    Expr ch = n.stringAttr("mode") == "CRD"
                  ? o[1] * Expr(b * b) + i * Expr(b) + j
                  : (i * Expr(b) + j) * co + o[1];
    ctx.addPointwise(out, ctx.readValue(x, {o[0], ch, h, w}), /*isView=*/true);
    return Status::ok();
  }
  case OpKind::SpaceToDepth: {
    // out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
    const Value *x = n.input(0), *out = n.output(0);
    const int64_t b = n.intAttr("blocksize");
    const Expr &ci = x->type().dims[1];
    std::vector<Expr> o = ctx.idxVars(4);
    Expr blk = floorDiv(o[1], ci), c = mod(o[1], ci);
    Expr i = floorDiv(blk, Expr(b)), j = mod(blk, Expr(b));
    ctx.addPointwise(out,
                     ctx.readValue(x, {o[0], c, o[2] * Expr(b) + i,
                                       o[3] * Expr(b) + j}),
                     /*isView=*/true);
    return Status::ok();
  }
  case OpKind::Concat:
    return lowerConcat(n, ctx);
  case OpKind::Gather:
    return lowerGather(n, ctx);
  case OpKind::Slice:
    return lowerSlice(n, ctx);
  case OpKind::Split:
    return lowerSplit(n, ctx);
  case OpKind::GatherElements:
    return lowerGatherElements(n, ctx);
  case OpKind::GatherND:
    return lowerGatherND(n, ctx);
  case OpKind::ScatterND:
    return lowerScatterND(n, ctx);
  case OpKind::ScatterElements:
  case OpKind::Scatter:
    return lowerScatterElements(n, ctx);
  case OpKind::Range:
    return lowerRange(n, ctx);
  case OpKind::Resize:
    return lowerResize(n, ctx);
  case OpKind::EyeLike:
  case OpKind::OneHot:
    return lowerGenerate(n, ctx);
  case OpKind::QuantizeLinear:
  case OpKind::DequantizeLinear:
    return lowerQuantize(n, ctx);
  case OpKind::Trilu: {
    // Keeps x where column - row >= k (upper) or <= k (lower); k is read at
    // run time.
    const Value *x = n.input(0), *out = n.output(0);
    int r = x->type().rank();
    std::vector<Expr> iv = ctx.idxVars(r);
    Expr k = n.input(1) ? ctx.readValue(n.input(1), std::vector<Expr>(
                                                        n.input(1)->type().rank(),
                                                        Expr(0)))
                        : Expr(0);
    Expr diff = Cast::make(DType::Int64, iv[r - 1]) -
                Cast::make(DType::Int64, iv[r - 2]);
    Expr keep = Binary::make(n.intAttr("upper") ? BinOp::GE : BinOp::LE, diff,
                             Cast::make(DType::Int64, k));
    ctx.addPointwise(out, Select::make(keep, ctx.readValue(x, iv),
                                       literal(out->type().dtype, 0)));
    return Status::ok();
  }
  case OpKind::Dropout:
    ctx.bind(n.output(0), ctx.defOf(n.input(0)));
    if (n.outputs().size() > 1)
      ctx.addPointwise(n.output(1), literal(DType::Bool, 1));
    return Status::ok();
  case OpKind::Pad:
    return lowerPad(n, ctx);
  case OpKind::ConstantOfShape: {
    const Value *out = n.output(0);
    DType t = out->type().dtype;
    Expr v = literal(t, 0);
    auto it = n.attrs().find("value");
    if (it != n.attrs().end() && it->second.tensor) {
      const auto &[tt, data] = *it->second.tensor;
      // Integers stay exact (a double holds 53 bits).
      v = isFloat(tt.dtype)
              ? Cast::make(t, FloatImm::make(tensorDataFloat(data, tt.dtype, 0),
                                             tt.dtype))
              : Cast::make(t, IntImm::make(tensorDataInt(data, tt.dtype, 0),
                                           tt.dtype == DType::Bool
                                               ? DType::Bool
                                               : DType::Int64));
    }
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  case OpKind::Shape:
  case OpKind::Size:
  case OpKind::Constant:
  default:
    return makeError(n.describe(), ": value is not known at compile time");
  }
}

} // namespace aotc
