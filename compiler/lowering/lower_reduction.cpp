/// \file
/// Lowering of reductions: ReduceSum/Mean/Max/Min, Softmax and LogSoftmax
/// (max, then sum of exp, then a pointwise normalization), and pooling.
#include "compiler/lowering/lowering.h"
#include "ir/indexing.h"

#include <algorithm>
#include <functional>

namespace aotc {

namespace {

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

Expected<std::vector<int>> normalizeAxes(const Node &n,
                                         std::vector<int64_t> axes, int rank) {
  std::vector<int> out;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return makeError(n.describe(), ": axis ", a, " out of range for rank ",
                       rank);
    out.push_back(static_cast<int>(a < 0 ? a + rank : a));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Axes of a Reduce* node: from the `axes` input (when present) or attribute.
Expected<std::vector<int64_t>> reduceAxes(const Node &n) {
  if (const Value *ax = n.input(1)) {
    const auto &sym = ax->symbolicData();
    if (!sym)
      return makeError(n.describe(),
                       ": 'axes' input must be a compile-time constant");
    std::vector<int64_t> axes;
    for (const Expr &e : *sym) {
      int64_t v;
      if (!e.isConst(v))
        return makeError(n.describe(), ": 'axes' must be constant");
      axes.push_back(v);
    }
    return axes;
  }
  if (n.hasAttr("axes"))
    return n.intsAttr("axes");
  return std::vector<int64_t>{};
}

/// The index space a Reduce* reduces: the reduction's input dims and
/// reduced axes, x read at an index of them, and the index among them
/// (reduced axes 0) of an output element.
struct ReduceSpace {
  std::vector<Expr> dims;
  std::vector<int> axes;
  std::function<Expr(const std::vector<Expr> &)> read;
  std::function<std::vector<Expr>(const std::vector<Expr> &)> at;
  bool keepdims = true;       ///< the reduction keeps its reduced dims
  bool resultIsOutput = true; ///< the reduction's result is the output
  std::vector<Expr> keptDims; ///< run-time axes: the result's dims
};

/// Axes known at compile time: x's own dims.
ReduceSpace staticSpace(LowerCtx &ctx, int xid, const std::vector<Expr> &dims,
                        const std::vector<int> &axes, bool keepdims) {
  ReduceSpace s;
  s.dims = dims;
  s.axes = axes;
  s.keepdims = keepdims;
  s.read = [&ctx, xid](const std::vector<Expr> &idx) {
    return ctx.read(xid, idx);
  };
  s.at = [axes, keepdims, rank = dims.size()](const std::vector<Expr> &iv) {
    std::vector<Expr> at;
    size_t o = 0;
    for (size_t k = 0; k < rank; ++k) {
      if (std::find(axes.begin(), axes.end(), static_cast<int>(k)) !=
          axes.end()) {
        at.push_back(Expr(0));
        if (keepdims)
          ++o;
      } else {
        at.push_back(iv[o++]);
      }
    }
    return at;
  };
  return s;
}

/// Axes given at run time: x seen as [kept_0, reduced_0, kept_1, ...], the
/// per-run sizes shape inference declared (runtimeAxisExtents); either of
/// a dim's pair is 1, so x[kept_i + reduced_i] reads each element once.
/// The reduction over the odd dims has the kept extents as its shape.
ReduceSpace runtimeSpace(LowerCtx &ctx, const Node &n,
                         const std::vector<Expr> &given, bool keepdims) {
  const Value *x = n.input(0), *out = n.output(0);
  const std::vector<Expr> &xd = x->type().dims;
  std::vector<Expr> ext =
      runtimeAxisExtents(runtimeAxisMask(given, xd.size()), xd);
  ReduceSpace s;
  for (size_t i = 0; i < ext.size(); ++i) {
    Expr size = declaredSymbol(ctx, n, ext[i]);
    s.dims.push_back(size);
    if (i % 2)
      s.axes.push_back(static_cast<int>(i));
    else
      s.keptDims.push_back(size);
  }
  s.keepdims = false;
  s.resultIsOutput = keepdims;
  int xid = ctx.defOf(x);
  s.read = [&ctx, xid](const std::vector<Expr> &idx) {
    std::vector<Expr> in;
    for (size_t i = 0; i + 1 < idx.size(); i += 2)
      in.push_back(idx[i] + idx[i + 1]);
    return ctx.read(xid, in);
  };
  s.at = [keepdims, kept = s.keptDims,
          od = out->type().dims](const std::vector<Expr> &iv) {
    std::vector<Expr> e =
        keepdims ? iv : delinearize(linearize(iv, od), kept);
    std::vector<Expr> at;
    for (const Expr &k : e) {
      at.push_back(k);
      at.push_back(Expr(0));
    }
    return at;
  };
  return s;
}

Status lowerReduce(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int rank = x->type().rank();
  // Axes given at run time (their value symbols), or known here.
  const std::vector<Expr> *given = givenAtRunTime(n, 1);
  std::vector<int64_t> raw;
  if (!given) {
    AOTC_ASSIGN_OR_RETURN(raw, reduceAxes(n));
  }
  int64_t keepdims = n.intAttr("keepdims");
  int64_t noop = n.intAttr("noop_with_empty_axes");
  int xid = ctx.defOf(x);
  if (!given && raw.empty() && noop) {
    // A reduction over no axis: each element on its own (ONNX's reference:
    // ReduceSumSquare gives x*x, ReduceL1 |x|, ReduceLogSum log(x)).
    DType t = out->type().dtype;
    std::vector<Expr> iv = ctx.idxVars(rank);
    Expr v = ctx.read(xid, iv);
    switch (n.op()) {
    case OpKind::ReduceL1:
      v = isFloat(t) ? Call::make(t, "fabs", {v})
                     : Select::make(bin(BinOp::LT, v, literal(t, 0)),
                                    bin(BinOp::Sub, literal(t, 0), v), v);
      break;
    case OpKind::ReduceSumSquare:
      v = bin(BinOp::Mul, v, v);
      break;
    case OpKind::ReduceL2:
      v = isFloat(t) ? Call::make(t, "sqrt", {bin(BinOp::Mul, v, v)})
                     : Cast::make(t, Call::make(DType::Float64, "sqrt",
                                                {Cast::make(DType::Float64,
                                                            bin(BinOp::Mul, v,
                                                                v))}));
      break;
    case OpKind::ReduceLogSum:
      v = Call::make(t, "log", {v});
      break;
    case OpKind::ReduceLogSumExp:
      v = Call::make(t, "log", {Call::make(t, "exp", {v})});
      break;
    default:
      ctx.bind(out, xid);
      return Status::ok();
    }
    ctx.addPointwise(out, v);
    return Status::ok();
  }
  ReduceSpace space;
  if (given) {
    space = runtimeSpace(ctx, n, *given, keepdims != 0);
  } else {
    std::vector<int> axes;
    if (raw.empty()) {
      for (int k = 0; k < rank; ++k)
        axes.push_back(k);
    } else {
      AOTC_ASSIGN_OR_RETURN(axes, normalizeAxes(n, raw, rank));
    }
    space = staticSpace(ctx, xid, x->type().dims, axes, keepdims != 0);
  }
  const std::vector<int> &axes = space.axes;
  DType t = out->type().dtype;
  Combiner comb = n.op() == OpKind::ReduceMax    ? Combiner::Max
                  : n.op() == OpKind::ReduceMin  ? Combiner::Min
                  : n.op() == OpKind::ReduceProd ? Combiner::Prod
                                                 : Combiner::Sum;
  std::function<Expr(const std::vector<Expr> &)> term = space.read;
  Expr epi;
  switch (n.op()) {
  case OpKind::ReduceL1:
    term = [&](const std::vector<Expr> &idx) {
      Expr v = space.read(idx);
      return isFloat(t) ? Call::make(t, "fabs", {v})
                        : Select::make(bin(BinOp::LT, v, literal(t, 0)),
                                       bin(BinOp::Sub, literal(t, 0), v), v);
    };
    break;
  case OpKind::ReduceL2:
  case OpKind::ReduceSumSquare:
    term = [&](const std::vector<Expr> &idx) {
      Expr v = space.read(idx);
      return bin(BinOp::Mul, v, v);
    };
    if (n.op() == OpKind::ReduceL2)
      epi = isFloat(t) ? Call::make(t, "sqrt", {ctx.acc(t)})
                       : Cast::make(t, Call::make(DType::Float64, "sqrt",
                                                  {Cast::make(DType::Float64,
                                                              ctx.acc(t))}));
    break;
  case OpKind::ReduceLogSum:
    epi = Call::make(t, "log", {ctx.acc(t)});
    break;
  default:
    break;
  }
  if (n.op() == OpKind::ReduceLogSumExp) {
    // log(sum(exp(x - m))) + m with m the max (a finite shift: all -inf
    // gives log(0) = -inf, as the unshifted form).
    int mx = addAxisReduction(ctx, out->name() + "_max", t, space.dims, axes,
                              true, Combiner::Max, term, Expr());
    auto shift = [&](const std::vector<Expr> &idx) {
      std::vector<Expr> m = idx;
      for (int a : axes)
        m[a] = Expr(0);
      Expr v = ctx.read(mx, m);
      return Select::make(Call::make(DType::Bool, "isfinite", {v}), v,
                          literal(t, 0));
    };
    auto shifted = [&](const std::vector<Expr> &idx) {
      return Call::make(t, "exp",
                        {bin(BinOp::Sub, space.read(idx), shift(idx))});
    };
    int sum = addAxisReduction(ctx, out->name() + "_sum", t, space.dims, axes,
                               true, Combiner::Sum, shifted, Expr());
    std::vector<Expr> at = space.at(ctx.idxVars(out->type().rank()));
    ctx.addPointwise(out, bin(BinOp::Add, Call::make(t, "log", {ctx.read(sum, at)}),
                              shift(at)));
    return Status::ok();
  }
  if (n.op() == OpKind::ReduceMean) {
    std::vector<Expr> ext;
    for (int a : axes)
      ext.push_back(space.dims[a]);
    // Integers: the (wrapped) sum divided by the count in 64 bits, which
    // the type may not hold.
    epi = isFloat(t) ? bin(BinOp::Div, ctx.acc(t), Cast::make(t, product(ext)))
                     : Cast::make(t, bin(BinOp::Div,
                                         Cast::make(DType::Int64, ctx.acc(t)),
                                         product(ext)));
  }
  int id = addAxisReduction(ctx, out->name(), t, space.dims, axes,
                            space.keepdims, comb, term, epi);
  if (space.resultIsOutput) {
    ctx.bind(out, id);
    return Status::ok();
  }
  // Run-time axes without keepdims: the result has the kept extents; the
  // output drops the reduced ones (size 1), the same elements in order.
  std::vector<Expr> o = ctx.idxVars(out->type().rank());
  ctx.addPointwise(out,
                   ctx.read(id, delinearize(linearize(o, out->type().dims),
                                            space.keptDims)),
                   /*isView=*/true);
  return Status::ok();
}

Status lowerSoftmax(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int rank = x->type().rank();
  int64_t opset = ctx.graph().opsetVersion;
  int64_t axis = n.intAttr("axis");
  if (axis < -rank || axis >= rank)
    return makeError(n.describe(), ": axis ", axis, " out of range");
  if (axis < 0)
    axis += rank;
  std::vector<int> axes;
  if (opset >= 13)
    axes = {static_cast<int>(axis)};
  else
    for (int k = static_cast<int>(axis); k < rank; ++k)
      axes.push_back(k); // coerced to 2-D: normalize over all trailing dims
  DType t = out->type().dtype;
  int xid = ctx.defOf(x);
  const std::vector<Expr> &shape = x->type().dims;
  int mx = addAxisReduction(
      ctx, out->name() + "_max", t, shape, axes, true, Combiner::Max,
      [&](const std::vector<Expr> &idx) { return ctx.read(xid, idx); }, Expr());
  // The max at the position of a full-rank index (reduced axes read 0).
  auto maxAt = [&](const std::vector<Expr> &idx) {
    std::vector<Expr> m = idx;
    for (int a : axes)
      m[a] = Expr(0);
    return ctx.read(mx, m);
  };
  auto shifted = [&](const std::vector<Expr> &idx) {
    return bin(BinOp::Sub, ctx.read(xid, idx), maxAt(idx));
  };
  int sum = addAxisReduction(
      ctx, out->name() + "_sum", t, shape, axes, true, Combiner::Sum,
      [&](const std::vector<Expr> &idx) {
        return Call::make(t, "exp", {shifted(idx)});
      },
      Expr());
  std::vector<Expr> iv = ctx.idxVars(rank);
  std::vector<Expr> si = iv;
  for (int a : axes)
    si[a] = Expr(0);
  Expr s = ctx.read(sum, si);
  // A float32 or float64 Softmax multiplies by the sum's reciprocal, as
  // ONNX Runtime's kernels do: one division per row (the kernels hoist it)
  // instead of a vector division (10-16 cycles) per element. The sum is at
  // least 1 (the max's own term is exp(0)) and at most the row's length, so
  // 1 / s is a normal number and the product is within 1.5 ulp of the
  // quotient (OpenCL allows a float division 2.5 ulp); a NaN sum gives NaN
  // either way. A float16 row longer than 16384 would make 1 / s
  // subnormal, so narrower types divide.
  Expr body;
  if (n.op() == OpKind::LogSoftmax) {
    body = bin(BinOp::Sub, shifted(iv), Call::make(t, "log", {s}));
  } else {
    Expr e = Call::make(t, "exp", {shifted(iv)});
    body = t == DType::Float32 || t == DType::Float64
               ? bin(BinOp::Mul, e, bin(BinOp::Div, literal(t, 1), s))
               : bin(BinOp::Div, e, s);
  }
  ctx.addPointwise(out, body);
  return Status::ok();
}

Status lowerPool(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  for (size_t i = 1; i < n.outputs().size(); ++i)
    if (!n.output(i)->users().empty() || ctx.graph().isOutput(n.output(i)))
      return makeError(n.describe(), ": the 'Indices' output is not supported");
  const TensorType &xt = x->type();
  int s = xt.rank() - 2;
  if (s < 1)
    return makeError(n.describe(), ": input rank ", xt.rank(), " is below 3");
  DType t = out->type().dtype;
  bool global =
      n.op() == OpKind::GlobalAveragePool || n.op() == OpKind::GlobalMaxPool;
  bool isMax = n.op() == OpKind::MaxPool || n.op() == OpKind::GlobalMaxPool;
  std::vector<Expr> o = ctx.idxVars(out->type().rank());
  std::vector<Expr> inSpatial(xt.dims.begin() + 2, xt.dims.end());
  TensorDef d;
  d.kind = TensorDef::Kind::Reduction;
  d.name = out->name();
  d.dtype = t;
  d.shape = out->type().dims;
  d.combiner = isMax ? Combiner::Max : Combiner::Sum;
  int xid = ctx.defOf(x);
  Expr acc = ctx.acc(t);
  if (global) {
    std::vector<Expr> xi = {o[0], o[1]};
    for (int k = 0; k < s; ++k) {
      xi.push_back(ctx.rvar(k));
      d.reduceExtents.push_back(inSpatial[k]);
    }
    d.body = ctx.read(xid, xi);
    if (!isMax)
      d.epilogue = bin(BinOp::Div, acc, Cast::make(t, product(inSpatial)));
    ctx.bind(out, ctx.add(std::move(d)));
    return Status::ok();
  }
  const std::vector<int64_t> &kernel = n.intsAttr("kernel_shape");
  if ((int)kernel.size() != s)
    return makeError(n.describe(), ": 'kernel_shape' has ", kernel.size(),
                     " values, expected ", s);
  const std::vector<int64_t> &strides = n.intsAttr("strides");
  const std::vector<int64_t> &dil = n.intsAttr("dilations");
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, spatialPads(n, s));
  int64_t includePad =
      n.op() == OpKind::AveragePool ? n.intAttr("count_include_pad") : 0;
  std::vector<Expr> xi = {o[0], o[1]};
  Expr inBounds, count = Expr(1);
  for (int k = 0; k < s; ++k) {
    Expr r = ctx.rvar(k);
    Expr start = o[2 + k] * Expr(strides[k]) - Expr(pads[k]);
    Expr pos = start + r * Expr(dil[k]);
    xi.push_back(pos);
    d.reduceExtents.push_back(Expr(kernel[k]));
    inBounds =
        logicalAnd(inBounds, logicalAnd(cmp(BinOp::GE, pos, Expr(0)),
                                        cmp(BinOp::LT, pos, inSpatial[k])));
    if (!isMax) {
      // The divisor: the window's taps inside the input, or with
      // count_include_pad every tap of the kernel, those past the padded
      // input that ceil_mode's last windows reach included (ONNX's reference
      // and ONNX Runtime, undilated). With dilations and ceil_mode, ONNX's
      // backend test
      // averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True
      // expects fewer taps while the reference counts all of them on a 1-D
      // window: that combination is refused rather than guessed.
      if (includePad) {
        if (dil[k] != 1 && n.intAttr("ceil_mode") != 0)
          return makeError(n.describe(),
                           ": AveragePool with dilations, count_include_pad "
                           "and ceil_mode together is not supported (its "
                           "divisor is ambiguous in ONNX's reference)");
        count = count * Expr(kernel[k]);
      } else if (dil[k] == 1) {
        Expr hi = minExpr(start + Expr(kernel[k]), inSpatial[k]);
        count = count * (hi - maxExpr(start, Expr(0)));
      } else {
        // Taps r in [0, K) with 0 <= start + r * d < in: from
        // ceil(-start / d) to floor((in - 1 - start) / d), within [0, K).
        Expr d = Expr(dil[k]);
        Expr first = maxExpr(floorDiv(d - Expr(1) - start, d), Expr(0));
        Expr last = minExpr(floorDiv(inSpatial[k] - Expr(1) - start, d),
                            Expr(kernel[k] - 1));
        count = count * maxExpr(last - first + Expr(1), Expr(0));
      }
    }
  }
  Expr fill = isMax ? lowestValue(t) : literal(t, 0);
  bool padded = n.intAttr("ceil_mode") != 0;
  for (int64_t p : pads)
    padded |= p != 0;
  if (padded) {
    // Windows that reach past the input read a padded copy (a pointwise
    // def with the fill value outside the input, materialized): the pooling
    // loop then has no bounds test per tap, which kept it scalar. The copy
    // covers every position a window reads, ceil_mode's last windows
    // included.
    TensorDef pd;
    pd.kind = TensorDef::Kind::Pointwise;
    pd.name = x->name() + "_padded";
    pd.dtype = t;
    pd.materialize = true;
    pd.shape = {xt.dims[0], xt.dims[1]};
    std::vector<Expr> pi = ctx.idxVars(xt.rank());
    std::vector<Expr> src = {pi[0], pi[1]}, at = {o[0], o[1]};
    Expr inside;
    for (int k = 0; k < s; ++k) {
      // The last window starts at (out - 1) * stride. For a symbolic output
      // size, one stride more keeps the extent positive and linear in it
      // (no max with 0, which the bounds prover cannot see through), at the
      // cost of one stride of extra copy.
      int64_t outSize;
      const Expr &od = out->type().dims[2 + k];
      Expr windows = od.isConst(outSize) && outSize >= 1 ? od - Expr(1) : od;
      pd.shape.push_back(windows * Expr(strides[k]) +
                         Expr((kernel[k] - 1) * dil[k] + 1));
      Expr pos = pi[2 + k] - Expr(pads[k]);
      // Clamped into the input, as the convolution's padded copy.
      src.push_back(
          minExpr(maxExpr(pos, Expr(0)), maxExpr(inSpatial[k] - Expr(1), Expr(0))));
      inside = logicalAnd(inside,
                          logicalAnd(cmp(BinOp::GE, pos, Expr(0)),
                                     cmp(BinOp::LT, pos, inSpatial[k])));
      at.push_back(o[2 + k] * Expr(strides[k]) + ctx.rvar(k) * Expr(dil[k]));
    }
    pd.body = Select::make(inside, ctx.read(xid, src), fill);
    d.body = ctx.read(ctx.add(std::move(pd)), at);
  } else {
    d.body = Select::make(inBounds, ctx.read(xid, xi), fill);
  }
  if (!isMax)
    d.epilogue = bin(BinOp::Div, acc, Cast::make(t, count));
  ctx.bind(out, ctx.add(std::move(d)));
  return Status::ok();
}

/// Inference-mode BatchNormalization: a pointwise normalization per channel.
Status lowerBatchNorm(const Node &n, LowerCtx &ctx) {
  const Value *out = n.output(0);
  DType outT = out->type().dtype;
  if (n.outputs().size() > 1)
    for (size_t i = 1; i < n.outputs().size(); ++i)
      if (!n.output(i)->users().empty() || ctx.graph().isOutput(n.output(i)))
        return makeError(n.describe(),
                         ": training-mode outputs are not supported");
  double eps = n.floatAttr("epsilon");
  const TensorType &t = out->type();
  std::vector<Expr> iv = ctx.idxVars(t.rank());
  Expr c = t.rank() > 1 ? iv[1] : Expr(0);
  auto param = [&](size_t i) { return ctx.readValue(n.input(i), {c}); };
  Expr x = ctx.readValue(n.input(0), iv);
  Expr denom =
      Call::make(outT, "sqrt", {bin(BinOp::Add, param(4), literal(outT, eps))});
  Expr v =
      bin(BinOp::Add,
          bin(BinOp::Mul, bin(BinOp::Div, bin(BinOp::Sub, x, param(3)), denom),
              param(1)),
          param(2));
  ctx.addPointwise(out, v);
  return Status::ok();
}

/// LayerNormalization: mean, then the mean squared deviation (two passes,
/// more accurate than E[x^2] - E[x]^2), then one pointwise kernel
/// (x - mean) * invstd * scale + bias. RMSNormalization: the mean square
/// only, x * invrms * scale. Statistics are computed in stash_type.
/// InstanceNormalization is LayerNormalization over the spatial dims (from
/// axis 2 on) with a scale and bias per channel (dim 1).
Status lowerNormalization(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int rank = x->type().rank();
  bool instance = n.op() == OpKind::InstanceNormalization;
  int64_t axis = instance ? 2 : n.intAttr("axis");
  if (axis < 0)
    axis += rank;
  std::vector<int> axes;
  std::vector<Expr> ext;
  for (int k = static_cast<int>(axis); k < rank; ++k) {
    axes.push_back(k);
    ext.push_back(x->type().dims[k]);
  }
  DType t = out->type().dtype;
  // InstanceNormalization has no stash_type: double inputs keep double.
  bool wide = instance ? x->type().dtype == DType::Float64
                       : n.intAttr("stash_type") == 11;
  DType u = wide ? DType::Float64 : DType::Float32;
  Expr count = Cast::make(u, product(ext));
  Expr eps = literal(u, n.floatAttr("epsilon"));
  const std::vector<Expr> &shape = x->type().dims;
  int xid = ctx.defOf(x);
  auto xu = [&](const std::vector<Expr> &idx) {
    return Cast::make(u, ctx.read(xid, idx));
  };
  auto statAt = [&](int def, const std::vector<Expr> &idx) {
    std::vector<Expr> m = idx;
    for (int a : axes)
      m[a] = Expr(0);
    return ctx.read(def, m);
  };
  bool rms = n.op() == OpKind::RMSNormalization;
  int mean = -1;
  if (!rms)
    mean = addAxisReduction(ctx, out->name() + "_mean", u, shape, axes, true,
                            Combiner::Sum, xu,
                            bin(BinOp::Div, ctx.acc(u), count));
  auto centered = [&](const std::vector<Expr> &idx) {
    return rms ? xu(idx) : bin(BinOp::Sub, xu(idx), statAt(mean, idx));
  };
  // 1 / sqrt(mean square + epsilon)
  int inv = addAxisReduction(
      ctx, out->name() + (rms ? "_invrms" : "_invstd"), u, shape, axes, true,
      Combiner::Sum,
      [&](const std::vector<Expr> &idx) {
        Expr d = centered(idx);
        return bin(BinOp::Mul, d, d);
      },
      bin(BinOp::Div, literal(u, 1),
          Call::make(u, "sqrt",
                     {bin(BinOp::Add, bin(BinOp::Div, ctx.acc(u), count),
                          eps)})));
  std::vector<Expr> iv = ctx.idxVars(rank);
  Expr y = bin(BinOp::Mul, centered(iv), statAt(inv, iv));
  auto param = [&](size_t i) {
    int def = ctx.defOf(n.input(i));
    return Cast::make(u, instance ? ctx.read(def, {iv[1]})
                                  : ctx.readBroadcast(def, shape, iv));
  };
  y = bin(BinOp::Mul, y, param(1));
  if (n.numInputs() > 2 && n.input(2))
    y = bin(BinOp::Add, y, param(2));
  ctx.addPointwise(out, Cast::make(t, y));
  if (n.outputs().size() > 1)
    ctx.bind(n.output(1), mean);
  if (n.outputs().size() > 2)
    ctx.bind(n.output(2), inv);
  return Status::ok();
}

/// ArgMax/ArgMin: the max (min) along the axis, then the first (or last,
/// select_last_index) position that holds it; a NaN counts as the extreme
/// (NumPy: the first NaN's index).
Status lowerArgExtreme(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int rank = x->type().rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += rank;
  std::vector<int> axes = {static_cast<int>(axis)};
  DType t = x->type().dtype;
  int xid = ctx.defOf(x);
  bool isMax = n.op() == OpKind::ArgMax;
  bool last = n.intAttr("select_last_index") != 0;
  int ext = addAxisReduction(
      ctx, out->name() + (isMax ? "_max" : "_min"), t, x->type().dims, axes,
      true, isMax ? Combiner::Max : Combiner::Min,
      [&](const std::vector<Expr> &idx) { return ctx.read(xid, idx); },
      Expr());
  auto term = [&](const std::vector<Expr> &idx) {
    Expr v = ctx.read(xid, idx);
    std::vector<Expr> at = idx;
    at[axis] = Expr(0);
    Expr m = ctx.read(ext, at);
    Expr hit = bin(BinOp::EQ, v, m);
    if (isFloat(t))
      hit = Select::make(Call::make(DType::Bool, "isnan", {m}),
                         Call::make(DType::Bool, "isnan", {v}), hit);
    Expr sentinel = last ? literal(DType::Int64, -1)
                         : Cast::make(DType::Int64, x->type().dims[axis]);
    return Select::make(hit, Cast::make(DType::Int64, idx[axis]), sentinel);
  };
  int id = addAxisReduction(ctx, out->name(), DType::Int64, x->type().dims,
                            axes, n.intAttr("keepdims") != 0,
                            last ? Combiner::Max : Combiner::Min, term, Expr());
  ctx.bind(out, id);
  return Status::ok();
}

/// TopK as two reductions: each element's rank along the axis (how many
/// elements come before it: larger, or equal at a lower index; NaN counts
/// as larger than every number, as PyTorch orders it), then for each output
/// position j the index of the element whose rank is j; Values gathers
/// those. Always sorted (sorted = 0 leaves the order to the implementation).
/// The rank costs n^2 comparisons per row: fine for the boxes of a
/// detection head, slow for a vocabulary.
Status lowerTopK(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0);
  const TensorType &xt = x->type();
  int rank = xt.rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += rank;
  DType t = xt.dtype;
  bool largest = n.intAttr("largest") != 0;
  int xid = ctx.defOf(x);
  const Expr &len = xt.dims[axis];
  // before(a at ia, b at ib): a comes first in the order.
  auto before = [&](const Expr &a, const Expr &ia, const Expr &b,
                    const Expr &ib) {
    Expr beats = bin(largest ? BinOp::GT : BinOp::LT, a, b);
    Expr same = bin(BinOp::EQ, a, b);
    if (isFloat(t)) {
      Expr na = Call::make(DType::Bool, "isnan", {a});
      Expr nb = Call::make(DType::Bool, "isnan", {b});
      // NaN is the largest: first when largest, last otherwise.
      beats = largest ? bin(BinOp::Or, bin(BinOp::And, na, Not::make(nb)), beats)
                      : bin(BinOp::Or, bin(BinOp::And, Not::make(na), nb), beats);
      same = bin(BinOp::Or, same, bin(BinOp::And, na, nb));
    }
    return bin(BinOp::Or, beats, bin(BinOp::And, same, cmp(BinOp::LT, ia, ib)));
  };
  // rank[.., i, ..] = sum over m of before(x[.., m, ..], x[.., i, ..]),
  // reduced over a trailing axis m.
  std::vector<Expr> rankShape = xt.dims;
  rankShape.push_back(len);
  int rankDef = addAxisReduction(
      ctx, n.output(1)->name() + "_rank", DType::Int64, rankShape, {rank},
      false, Combiner::Sum,
      [&](const std::vector<Expr> &idx) {
        std::vector<Expr> at(idx.begin(), idx.begin() + rank), other = at;
        other[axis] = idx[rank];
        return Cast::make(DType::Int64,
                          before(ctx.read(xid, other), idx[rank],
                                 ctx.read(xid, at), idx[axis]));
      },
      Expr());
  // index[.., j, ..] = min over i of (rank[.., i, ..] == j ? i : n).
  const std::vector<Expr> &outDims = n.output(0)->type().dims;
  std::vector<Expr> idxShape = outDims;
  idxShape.push_back(len);
  int idxDef = addAxisReduction(
      ctx, n.output(1)->name(), DType::Int64, idxShape, {rank}, false,
      Combiner::Min,
      [&](const std::vector<Expr> &idx) {
        std::vector<Expr> at(idx.begin(), idx.begin() + rank);
        at[axis] = idx[rank];
        return Select::make(
            cmp(BinOp::EQ, ctx.read(rankDef, at), idx[axis]),
            Cast::make(DType::Int64, idx[rank]), Cast::make(DType::Int64, len));
      },
      Expr());
  ctx.bind(n.output(1), idxDef);
  std::vector<Expr> iv = ctx.idxVars(rank), at = iv;
  // Exactly one element has each rank below n: the index is in range.
  at[axis] = Call::make(DType::Int64, "clamp",
                        {ctx.read(idxDef, iv), Expr(0), len - Expr(1)});
  ctx.addPointwise(n.output(0), ctx.read(xid, at));
  return Status::ok();
}

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
/// LpNormalization: x divided by its L1 or L2 norm along the axis (a zero
/// vector gives NaN, as ONNX's reference).
Status lowerAxisNormalize(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int rank = x->type().rank();
  int64_t axis = n.intAttr("axis");
  if (axis < 0)
    axis += rank;
  std::vector<int> axes = {static_cast<int>(axis)};
  DType t = x->type().dtype;
  int xid = ctx.defOf(x);
  std::vector<Expr> iv = ctx.idxVars(rank);
  std::vector<Expr> at = iv;
  at[axis] = Expr(0);
  if (n.op() == OpKind::LpNormalization) {
    bool l1 = n.intAttr("p") == 1;
    int norm = addAxisReduction(
        ctx, out->name() + "_norm", t, x->type().dims, axes, true,
        Combiner::Sum,
        [&](const std::vector<Expr> &idx) {
          Expr v = ctx.read(xid, idx);
          return l1 ? Call::make(t, "fabs", {v}) : bin(BinOp::Mul, v, v);
        },
        l1 ? Expr() : Call::make(t, "sqrt", {ctx.acc(t)}));
    ctx.addPointwise(out, bin(BinOp::Div, ctx.read(xid, iv), ctx.read(norm, at)));
    return Status::ok();
  }
  int mx = addAxisReduction(
      ctx, out->name() + "_max", t, x->type().dims, axes, true, Combiner::Max,
      [&](const std::vector<Expr> &idx) { return ctx.read(xid, idx); },
      Expr());
  int first = addAxisReduction(
      ctx, out->name() + "_at", DType::Int64, x->type().dims, axes, true,
      Combiner::Min,
      [&](const std::vector<Expr> &idx) {
        std::vector<Expr> m = idx;
        m[axis] = Expr(0);
        Expr v = ctx.read(xid, idx), e = ctx.read(mx, m);
        Expr hit = Select::make(Call::make(DType::Bool, "isnan", {e}),
                                Call::make(DType::Bool, "isnan", {v}),
                                bin(BinOp::EQ, v, e));
        return Select::make(hit, Cast::make(DType::Int64, idx[axis]),
                            Cast::make(DType::Int64, x->type().dims[axis]));
      },
      Expr());
  ctx.addPointwise(out, Select::make(bin(BinOp::EQ,
                                         Cast::make(DType::Int64, iv[axis]),
                                         ctx.read(first, at)),
                                     literal(t, 1), literal(t, 0)));
  return Status::ok();
}

/// CumSum: out[.., i, ..] = the sum of x[.., j, ..] over j <= i (j < i when
/// exclusive; j >= i or j > i when reversed), as a reduction over the whole
/// axis whose term is masked: quadratic in the axis length, one pass, no
/// order between work-items.
Status lowerCumSum(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int rank = x->type().rank();
  const auto &axisData = n.input(1)->symbolicData();
  bool exclusive = n.intAttr("exclusive") != 0;
  bool reverse = n.intAttr("reverse") != 0;
  BinOp keep = reverse ? (exclusive ? BinOp::GT : BinOp::GE)
                       : (exclusive ? BinOp::LT : BinOp::LE);
  DType t = out->type().dtype;
  // The scanned dim's length, x's index at reduction index j, and the
  // output's position along the scanned dim.
  std::vector<Expr> iv = ctx.idxVars(rank), at = iv;
  Expr j = ctx.rvar(0), length, pos;
  if (givenAtRunTime(n, 1)) {
    // The axis given at run time: the length of the dim it names (a size
    // shape inference declared), x read at j on that dim.
    std::vector<Expr> mask = runtimeAxisMask(*axisData, rank);
    length = declaredSymbol(ctx, n, runtimeAxisLength(mask, x->type().dims));
    pos = Expr(0);
    for (int i = 0; i < rank; ++i) {
      at[i] = Select::make(mask[i], j, iv[i]);
      pos = pos + Select::make(mask[i], iv[i], Expr(0));
    }
  } else {
    int64_t given = 0;
    if (!axisData || axisData->size() != 1 || !(*axisData)[0].isConst(given))
      return makeError(n.describe(), ": the axis is not known (shape "
                                     "inference checks it)");
    AOTC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(n, given, rank));
    length = x->type().dims[axis];
    pos = iv[axis];
    at[axis] = j;
  }
  TensorDef d;
  d.kind = TensorDef::Kind::Reduction;
  d.name = out->name();
  d.dtype = t;
  d.combiner = Combiner::Sum;
  d.shape = x->type().dims;
  d.reduceExtents = {length};
  d.body = Select::make(bin(keep, j, pos), ctx.read(ctx.defOf(x), at),
                        literal(t, 0));
  ctx.bind(out, ctx.add(std::move(d)));
  return Status::ok();
}

} // namespace

Status lowerReduction(const Node &n, LowerCtx &ctx) {
  if (isAxesReduction(n.op()))
    return lowerReduce(n, ctx);
  switch (n.op()) {
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return lowerSoftmax(n, ctx);
  case OpKind::BatchNormalization:
    return lowerBatchNorm(n, ctx);
  case OpKind::LayerNormalization:
  case OpKind::RMSNormalization:
  case OpKind::InstanceNormalization:
    return lowerNormalization(n, ctx);
  case OpKind::ArgMax:
  case OpKind::ArgMin:
    return lowerArgExtreme(n, ctx);
  case OpKind::TopK:
    return lowerTopK(n, ctx);
  case OpKind::CumSum:
    return lowerCumSum(n, ctx);
  case OpKind::Hardmax:
  case OpKind::LpNormalization:
    return lowerAxisNormalize(n, ctx);
  case OpKind::LRN:
    return lowerLRN(n, ctx);
  case OpKind::MaxPool:
  case OpKind::AveragePool:
  case OpKind::GlobalMaxPool:
  case OpKind::GlobalAveragePool:
    return lowerPool(n, ctx);
  default:
    return makeError(n.describe(), ": no reduction lowering for this op");
  }
}

} // namespace aotc
