/// \file
/// Lowering of Resize, nearest and (multi-)linear: each output element maps
/// back to a source coordinate per axis (the coordinate transformation
/// mode), then reads the nearest element or blends the two neighbours of
/// every resized axis. Neighbours outside the input clamp to its edge, as
/// ONNX's reference pads.
#include "compiler/lowering/lowering.h"

#include <cmath>

namespace aotc {

namespace {

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

/// The source coordinate of output index \p i along an axis of input size
/// \p in and output size \p out, in \p ft.
Expr sourceCoordinate(const std::string &mode, const Expr &i, const Expr &in,
                      const Expr &out, double scale, DType ft) {
  Expr x = Cast::make(ft, i);
  Expr half = literal(ft, 0.5), s = literal(ft, scale);
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

/// An index clamped to [0, in - 1].
Expr clampIndex(const Expr &v, const Expr &in) {
  Expr hi = in - Expr(1);
  Expr lo = Select::make(cmp(BinOp::LT, v, Expr(0)), Expr(0), v);
  return Select::make(cmp(BinOp::GT, lo, hi), hi, lo);
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
    Expr c = sourceCoordinate(ct, Cast::make(DType::Int64, iv[k]), inDims[k],
                              outDims[k], scales[k], ft);
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
