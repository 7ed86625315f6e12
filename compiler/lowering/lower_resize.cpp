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

/// The sizes input when it gives the output size (opset 11+, present and
/// not empty; shape inference read its data), else null: the scales do.
const Value *givenSizes(const Node &n) {
  const Value *sizes = n.numInputs() == 2 ? nullptr : n.input(3);
  return sizes && sizes->symbolicData() &&
                 !sizes->type().numel().isConstValue(0)
             ? sizes
             : nullptr;
}

/// True if the scale of a dim (\p known: NaN unless shape inference found
/// it) is read from the scales given at run time.
bool readsScales(const Node &n, double known) {
  return std::isnan(known) && !givenSizes(n);
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
  size_t j = std::find(axes.begin(), axes.end(), k) - axes.begin();
  if (const Value *sizes = givenSizes(n)) {
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
  const Value *scales = n.input(n.numInputs() == 2 ? 1 : 2); // opset 10: 1
  return Cast::make(ft, ctx.readValue(scales, {Expr(static_cast<int64_t>(j))}));
}

/// The ROI of a tf_crop_and_resize along dim \p k (the \p j-th resized
/// axis of \p naxes): its start and end, read from the roi input.
std::pair<Expr, Expr> roiOf(const Node &n, LowerCtx &ctx, size_t j,
                            size_t naxes, DType ft) {
  const Value *roi = n.input(1);
  auto at = [&](size_t i) {
    return Cast::make(ft, ctx.readValue(roi, {Expr(static_cast<int64_t>(i))}));
  };
  return {at(j), at(naxes + j)};
}

/// Cubic convolution weights (Keys, coefficient \p a) of the taps at
/// floor(c) - 1 .. floor(c) + 2 for the fraction \p t = c - floor(c).
std::vector<Expr> cubicWeights(const Expr &t, double a, DType ft) {
  Expr A = literal(ft, a), one = literal(ft, 1);
  auto lit = [&](double v) { return literal(ft, v); };
  auto mul = [&](const Expr &x, const Expr &y) { return bin(BinOp::Mul, x, y); };
  auto add = [&](const Expr &x, const Expr &y) { return bin(BinOp::Add, x, y); };
  auto sub = [&](const Expr &x, const Expr &y) { return bin(BinOp::Sub, x, y); };
  // |x| in [1, 2): ((A x - 5A) x + 8A) x - 4A; |x| < 1: ((A+2) x - (A+3)) x^2 + 1.
  auto outer = [&](const Expr &x) {
    return sub(mul(add(mul(sub(mul(A, x), lit(5 * a)), x), lit(8 * a)), x),
               lit(4 * a));
  };
  auto inner = [&](const Expr &x) {
    return add(mul(mul(sub(mul(lit(a + 2), x), lit(a + 3)), x), x), one);
  };
  Expr u = sub(one, t);
  return {outer(add(t, one)), inner(t), inner(u), outer(add(u, one))};
}

} // namespace

/// Resize in stages, each a def that resizes some of the axes (the last
/// ones first, as ONNX's reference interpolates) with at most 16 taps per
/// element: all linear axes of a 4-D tensor in one, cubic ones two at a
/// time; a stage before the last is materialized in the float type, so
/// its taps are not pasted into the next stage's.
Status lowerResize(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  int r = x->type().rank();
  DType t = out->type().dtype;
  DType ft = t == DType::Float64 ? DType::Float64 : DType::Float32;
  const auto &scales = std::get<std::vector<double>>(n.attrs().at("aotc_scales").value);
  const std::string &ct = n.stringAttr("coordinate_transformation_mode");
  const std::string &mode = n.stringAttr("mode");
  const std::string &nm = n.stringAttr("nearest_mode");
  bool crop = ct == "tf_crop_and_resize";
  bool exclude = n.intAttr("exclude_outside") != 0;
  std::vector<int64_t> axes;
  if (n.hasAttr("axes")) {
    for (int64_t a : n.intsAttr("axes"))
      axes.push_back(a < 0 ? a + r : a);
  } else {
    for (int64_t a = 0; a < r; ++a)
      axes.push_back(a);
  }
  const std::vector<Expr> &inDims = x->type().dims;
  const std::vector<Expr> &outDims = out->type().dims;
  // The dims that change: resized axes, except a crop's, whose size and
  // scale are those of the input (the identity for every other mode).
  std::vector<int> resized;
  for (int k = 0; k < r; ++k) {
    if (std::find(axes.begin(), axes.end(), k) == axes.end())
      continue;
    if (!crop && structurallyEqual(inDims[k], outDims[k]) && scales[k] == 1.0)
      continue;
    resized.push_back(k);
  }
  int taps = mode == "cubic" ? 4 : mode == "linear" ? 2 : 1;
  size_t perStage = taps == 4 ? 2 : taps == 2 ? 4 : resized.size();
  // Stages from the last axes to the first.
  std::vector<std::vector<int>> stages;
  for (size_t end = resized.size(); end > 0;) {
    size_t begin = end > perStage ? end - perStage : 0;
    stages.emplace_back(resized.begin() + begin, resized.begin() + end);
    end = begin;
  }
  if (stages.empty())
    stages.emplace_back();
  int src = ctx.defOf(x);
  std::vector<Expr> srcDims = inDims;
  Expr extrapolation = literal(ft, n.floatAttr("extrapolation_value"));
  for (size_t st = 0; st < stages.size(); ++st) {
    bool last = st + 1 == stages.size();
    std::vector<Expr> iv = ctx.idxVars(r);
    std::vector<Expr> stageDims = srcDims;
    for (int k : stages[st])
      stageDims[k] = outDims[k];
    // Per axis of the stage: its taps (index, weight).
    struct Axis {
      int k;
      std::vector<Expr> idx, w;
    };
    std::vector<Axis> blend;
    std::vector<Expr> at = iv;
    Expr outside; // a crop coordinate outside the input
    for (int k : stages[st]) {
      size_t j = std::find(axes.begin(), axes.end(), k) - axes.begin();
      Expr c;
      if (crop) {
        auto [s0, s1] = roiOf(n, ctx, j, axes.size(), ft);
        Expr fin = Cast::make(ft, inDims[k]), m1 = literal(ft, 1);
        Expr span = bin(BinOp::Mul, bin(BinOp::Sub, s1, s0),
                        bin(BinOp::Sub, fin, m1));
        // ONNX's output width here is scale * in, not the floored size.
        Expr width = bin(BinOp::Mul, scaleOf(n, ctx, k, scales[k], ft, axes),
                         fin);
        Expr xo = Cast::make(ft, Cast::make(DType::Int64, iv[k]));
        c = Select::make(bin(BinOp::EQ, width, m1),
                         bin(BinOp::Div, span, literal(ft, 2)),
                         bin(BinOp::Div, bin(BinOp::Mul, xo, span),
                             bin(BinOp::Sub, width, m1)));
        c = bin(BinOp::Add, c, bin(BinOp::Mul, s0, bin(BinOp::Sub, fin, m1)));
        Expr out1 = bin(BinOp::Or, bin(BinOp::LT, c, literal(ft, 0)),
                        bin(BinOp::GT, c, bin(BinOp::Sub, fin, m1)));
        outside = outside.defined() ? bin(BinOp::Or, outside, out1) : out1;
      } else if (readsScales(n, scales[k])) {
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
      if (taps == 1) {
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
      Expr frac = bin(BinOp::Sub, c, fl);
      Axis a{k, {}, {}};
      if (taps == 2) {
        a.idx = {clampIndex(i0, inDims[k]), clampIndex(i0 + Expr(1), inDims[k])};
        a.w = {bin(BinOp::Sub, literal(ft, 1), frac), frac};
      } else {
        a.w = cubicWeights(frac, n.floatAttr("cubic_coeff_a"), ft);
        std::vector<Expr> inside;
        for (int q = 0; q < 4; ++q) {
          Expr tap = i0 + Expr(q - 1);
          a.idx.push_back(clampIndex(tap, inDims[k]));
          inside.push_back(Cast::make(
              ft, bin(BinOp::And, cmp(BinOp::GE, tap, Expr(0)),
                      cmp(BinOp::LT, tap, inDims[k]))));
        }
        if (exclude) { // taps outside weigh 0, the others renormalized
          Expr sum;
          for (int q = 0; q < 4; ++q) {
            a.w[q] = bin(BinOp::Mul, a.w[q], inside[q]);
            sum = sum.defined() ? bin(BinOp::Add, sum, a.w[q]) : a.w[q];
          }
          for (int q = 0; q < 4; ++q)
            a.w[q] = bin(BinOp::Div, a.w[q], sum);
        }
      }
      blend.push_back(std::move(a));
    }
    Expr v;
    size_t corners = 1;
    for (size_t b = 0; b < blend.size(); ++b)
      corners *= blend[b].idx.size();
    for (size_t m = 0; m < corners; ++m) {
      std::vector<Expr> idx = at;
      Expr weight = literal(ft, 1);
      size_t rest = m;
      for (const Axis &a : blend) {
        size_t q = rest % a.idx.size();
        rest /= a.idx.size();
        idx[a.k] = a.idx[q];
        weight = bin(BinOp::Mul, weight, a.w[q]);
      }
      Expr term = bin(BinOp::Mul, weight, Cast::make(ft, ctx.read(src, idx)));
      v = v.defined() ? bin(BinOp::Add, v, term) : term;
    }
    if (blend.empty())
      v = Cast::make(ft, ctx.read(src, at));
    if (outside.defined())
      v = Select::make(outside, extrapolation, v);
    if (!last) {
      TensorDef d;
      d.kind = TensorDef::Kind::Pointwise;
      d.name = out->name() + "_stage" + std::to_string(st);
      d.dtype = ft;
      d.shape = stageDims;
      d.body = v;
      d.materialize = true;
      src = ctx.add(std::move(d));
      srcDims = stageDims;
      continue;
    }
    if (taps == 1 && !outside.defined())
      v = ctx.read(src, at); // nearest: the element itself
    else if (isFloat(t))
      v = Cast::make(t, v);
    else // integers round to nearest, as ONNX's reference casts a float
      v = Cast::make(t, Call::make(ft, "rint", {v}));
    ctx.addPointwise(out, v);
  }
  return Status::ok();
}

} // namespace aotc
