/// \file
/// Lowering of Resize, nearest and (multi-)linear: each output element maps
/// back to a source coordinate per axis (the coordinate transformation
/// mode), then reads the nearest element or blends the two neighbours of
/// every resized axis. Neighbours outside the input clamp to its edge, as
/// ONNX's reference pads.
#include "compiler/lowering/lowering.h"

#include <algorithm>
#include <cmath>

namespace aotc {

namespace {

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

/// The source coordinate of output index \p i along an axis of input size
/// \p in and output size \p out, in \p ft.
Expr sourceCoordinate(const std::string &mode, const Expr &i, const Expr &in,
                      const Expr &out, const Expr &s, DType ft) {
  Expr x = Cast::make(ft, i);
  Expr half = literal(ft, 0.5);
  Expr fin = Cast::make(ft, in), fout = Cast::make(ft, out);
  if (mode == "asymmetric")
    return bin(BinOp::Div, x, s);
  if (mode == "align_corners") {
    // ONNX's resized length here is scale * in, not the floored output
    // size (a 0.6 downscale of 4 maps over 2.4, not 2).
    Expr len = bin(BinOp::Mul, s, fin);
    return Select::make(bin(BinOp::EQ, len, literal(ft, 1)), literal(ft, 0),
                        bin(BinOp::Div,
                            bin(BinOp::Mul, x,
                                bin(BinOp::Sub, fin, literal(ft, 1))),
                            bin(BinOp::Sub, len, literal(ft, 1))));
  }
  Expr hp = bin(BinOp::Sub, bin(BinOp::Div, bin(BinOp::Add, x, half), s), half);
  if (mode == "pytorch_half_pixel")
    return Select::make(cmp(BinOp::GT, out, Expr(1)), hp, literal(ft, 0));
  if (mode == "half_pixel_symmetric") {
    // offset = in/2 * (1 - out / (scale * in))
    Expr adj = bin(BinOp::Div, fout, bin(BinOp::Mul, s, fin));
    Expr offset = bin(BinOp::Mul, bin(BinOp::Div, fin, literal(ft, 2)),
                      bin(BinOp::Sub, literal(ft, 1), adj));
    return bin(BinOp::Add, offset, hp);
  }
  return hp; // half_pixel
}

/// An index clamped to [0, in - 1]: OpenCL's clamp, whose result the
/// prover bounds whatever the index (no index check follows where in >= 1
/// is proven).
Expr clampIndex(const Expr &v, const Expr &in) {
  return Call::make(DType::Int64, "clamp", {v, Expr(0), in - Expr(1)});
}

/// True if the scale of a dim (\p known: NaN unless shape inference found
/// it) is read from the scales given at run time.
bool readsScales(const Node &n, double known) {
  if (!std::isnan(known))
    return false;
  const Value *sizes = n.numInputs() == 2 ? nullptr : n.input(3);
  return !(sizes && sizes->symbolicData() &&
           !sizes->type().numel().isConstValue(0));
}

/// The scale of dim \p k in \p ft: the constant shape inference found, or
/// computed in the kernel from the sizes (out / in, or the smallest or
/// largest such ratio over the axes under keep_aspect_ratio_policy) or
/// read from the scales given at run time.
Expr scaleOf(const Node &n, LowerCtx &ctx, int k, double known, DType ft,
             const std::vector<int64_t> &axes) {
  if (!std::isnan(known))
    return literal(ft, known);
  const Value *x = n.input(0), *out = n.output(0);
  auto ratio = [&](const Expr &size, int d) {
    return bin(BinOp::Div, Cast::make(ft, size),
               Cast::make(ft, x->type().dims[d]));
  };
  bool opset10 = n.numInputs() == 2;
  const Value *sizes = opset10 ? nullptr : n.input(3);
  size_t j = std::find(axes.begin(), axes.end(), k) - axes.begin();
  if (sizes && sizes->symbolicData() &&
      !sizes->type().numel().isConstValue(0)) {
    const std::string &policy = n.stringAttr("keep_aspect_ratio_policy");
    if (policy == "stretch")
      return ratio(out->type().dims[k], k);
    Expr s;
    for (size_t a = 0; a < axes.size(); ++a) {
      Expr r = ratio((*sizes->symbolicData())[a], static_cast<int>(axes[a]));
      s = !s.defined() ? r
                       : bin(policy == "not_smaller" ? BinOp::Max : BinOp::Min,
                             s, r);
    }
    return s;
  }
  const Value *scales = n.input(opset10 ? 1 : 2);
  return Cast::make(ft, ctx.readValue(scales, {Expr(static_cast<int64_t>(j))}));
}

} // namespace

Status lowerResize(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int r = x->type().rank();
  DType t = out->type().dtype;
  DType ft = t == DType::Float64 ? DType::Float64 : DType::Float32;
  const auto &scales = std::get<std::vector<double>>(n.attrs().at("aotc_scales").value);
  const std::string &ct = n.stringAttr("coordinate_transformation_mode");
  bool linear = n.stringAttr("mode") == "linear";
  const std::string &nm = n.stringAttr("nearest_mode");
  std::vector<int64_t> axes;
  if (n.hasAttr("axes")) {
    for (int64_t a : n.intsAttr("axes"))
      axes.push_back(a < 0 ? a + r : a);
  } else {
    for (int64_t a = 0; a < r; ++a)
      axes.push_back(a);
  }
  std::vector<Expr> iv = ctx.idxVars(r);
  const std::vector<Expr> &inDims = x->type().dims;
  const std::vector<Expr> &outDims = out->type().dims;
  // Per resized axis: the two neighbours and the weight of the second.
  struct Axis {
    int k;
    Expr i0, i1, w;
  };
  std::vector<Axis> blend;
  std::vector<Expr> at = iv;
  for (int k = 0; k < r; ++k) {
    if (inDims[k].sameAs(outDims[k]) && scales[k] == 1.0)
      continue; // same size, scale 1: the identity for every mode
    if (std::find(axes.begin(), axes.end(), k) == axes.end())
      continue; // not resized
    Expr c;
    if (readsScales(n, scales[k])) {
      // A scale given at run time: the source coordinates along the axis
      // are a small table computed once (out_k elements), so that the
      // kernel reads one value per axis instead of repeating the division
      // by a loaded scale in every neighbour's weight and index.
      TensorDef table;
      table.kind = TensorDef::Kind::Pointwise;
      table.name = out->name() + "_src" + std::to_string(k);
      table.dtype = ft;
      table.shape = {outDims[k]};
      table.body = sourceCoordinate(ct, ctx.idx(0), inDims[k], outDims[k],
                                    scaleOf(n, ctx, k, scales[k], ft, axes),
                                    ft);
      table.materialize = true;
      c = ctx.read(ctx.add(std::move(table)), {iv[k]});
    } else {
      c = sourceCoordinate(ct, Cast::make(DType::Int64, iv[k]), inDims[k],
                           outDims[k], scaleOf(n, ctx, k, scales[k], ft, axes),
                           ft);
    }
    if (!linear) {
      Expr f;
      if (nm == "floor")
        f = Call::make(ft, "floor", {c});
      else if (nm == "ceil")
        f = Call::make(ft, "ceil", {c});
      else if (nm == "round_prefer_ceil")
        f = Call::make(ft, "floor", {bin(BinOp::Add, c, literal(ft, 0.5))});
      else // round_prefer_floor: x.5 goes down
        f = Call::make(ft, "ceil", {bin(BinOp::Sub, c, literal(ft, 0.5))});
      at[k] = clampIndex(Cast::make(DType::Int64, f), inDims[k]);
      continue;
    }
    Expr fl = Call::make(ft, "floor", {c});
    Expr i0 = Cast::make(DType::Int64, fl);
    blend.push_back({k, clampIndex(i0, inDims[k]),
                     clampIndex(i0 + Expr(1), inDims[k]),
                     bin(BinOp::Sub, c, fl)});
  }
  Expr v;
  size_t corners = size_t{1} << blend.size();
  for (size_t m = 0; m < corners; ++m) {
    std::vector<Expr> idx = at;
    Expr weight = literal(ft, 1);
    for (size_t a = 0; a < blend.size(); ++a) {
      bool hi = (m >> a) & 1;
      idx[blend[a].k] = hi ? blend[a].i1 : blend[a].i0;
      Expr w = hi ? blend[a].w : bin(BinOp::Sub, literal(ft, 1), blend[a].w);
      weight = bin(BinOp::Mul, weight, w);
    }
    Expr term = bin(BinOp::Mul, weight, Cast::make(ft, ctx.readValue(x, idx)));
    v = v.defined() ? bin(BinOp::Add, v, term) : term;
  }
  if (!linear)
    v = ctx.readValue(x, at);
  else if (isFloat(t))
    v = Cast::make(t, v);
  else // integers round to nearest, as ONNX's reference casts a float
    v = Cast::make(t, Call::make(ft, "rint", {v}));
  ctx.addPointwise(out, v);
  return Status::ok();
}

} // namespace aotc
