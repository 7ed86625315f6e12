/// \file
/// Lowering of WinogradConv (compiler/passes/winograd.h): F(2x2, 3x3) as
/// three defs over rank-4 buffers, which channel_blocks.h stores blocked
/// like any convolution's:
///
///  - V [16 N, C, TH, TW], the input transform of each 4 x 4 window (rows
///    2 ty .. 2 ty + 3 of the zero-padded input): V[16 n + 4 a + b, c] =
///    (Bt d B)[a, b], additions only;
///  - M [16 N, Co, TH, TW], the 16 GEMMs: M[16 n + e, co] = sum over c of
///    V[16 n + e, c] U[e, co / B, c, co % B] (a reduction over input
///    channels that channel blocking tiles like a 1 x 1 convolution);
///  - Y [N, Co, Ho, Wo], the output transform (At M A)[y % 2, x % 2] of
///    tile (y / 2, x / 2), plus the bias; pointwise consumers fuse into it.
///    Where the transform's value is not finite, Y is the direct
///    convolution's sum over the window instead (a FiniteOrSum reading the
///    padded input and the weight as ONNX lays it out), computed only then:
///    an infinity in the window gives the direct form's infinity, not the
///    transforms' NaN.
///
/// TH x TW = ceil(Ho / 2) x ceil(Wo / 2) tiles; where Ho or Wo is odd, the
/// last tile's second row or column is computed from zero padding and not
/// stored.
///
/// Every row of Bt (with its last row negated, and G's with it: the
/// products U V are unchanged) and of At is x[p] + s x[q] over two of its
/// four inputs, p, q and the sign s functions of the row k:
///   Bt: p = k, q = 2 - k / 2, s = (-1, 1, -1, -1)  (d0 - d2, d1 + d2,
///       d2 - d1, d3 - d1);
///   At: m1 + s (m[2 k] + m[2 + k]), s = (1, -1)    (m0 + m1 + m2,
///       m1 - m2 - m3).
/// So each element reads its four (nine) inputs at indices affine in its
/// own index, and its signs are selects that are the same for every lane
/// of a channel vector: a handful of loads and FMAs, not a select over
/// every combination.
#include "compiler/lowering/lowering.h"

namespace aotc {

namespace {

Expr add(const Expr &a, const Expr &b) { return Binary::make(BinOp::Add, a, b); }
Expr mul(const Expr &a, const Expr &b) { return Binary::make(BinOp::Mul, a, b); }

/// 1 where \p k equals \p plus, else -1, in type \p t.
Expr sign(const Expr &k, int64_t plus, DType t) {
  return Select::make(cmp(BinOp::EQ, k, Expr(plus)), literal(t, 1),
                      literal(t, -1));
}

} // namespace

Status lowerWinogradConv(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *u = n.input(1), *weight = n.input(2);
  const Value *bias = n.numInputs() > 3 ? n.input(3) : nullptr;
  const Value *out = n.output(0);
  const TensorType &xt = x->type(), &ut = u->type(), &ot = out->type();
  const std::vector<int64_t> &pads = n.intsAttr("pads");
  int64_t block = 0, ho = 0, wo = 0;
  AOTC_CHECK(xt.rank() == 4 && ut.rank() == 4 && ot.rank() == 4 &&
                 pads.size() == 4 && ut.dims[3].isConst(block) &&
                 ot.dims[2].isConst(ho) && ot.dims[3].isConst(wo),
             n.describe() << ": not a WinogradConv of winograd.h");
  const DType t = ot.dtype;
  const int64_t th = (ho + 1) / 2, tw = (wo + 1) / 2;
  const Expr batch = xt.dims[0], c = xt.dims[1], co = ot.dims[1];

  // The input, zero-padded to 2 T + 2 rows and columns (none to add where
  // the pads are 0 and the tiles cover the input exactly).
  int xdef = ctx.defOf(x);
  int64_t h = 0, w = 0;
  xt.dims[2].isConst(h);
  xt.dims[3].isConst(w);
  if (pads[0] != 0 || pads[1] != 0 || 2 * th + 2 != h || 2 * tw + 2 != w)
    xdef = zeroPaddedCopy(ctx, x, {pads[0], pads[1]},
                          {Expr(2 * th + 2), Expr(2 * tw + 2)});

  // V: the input transform, (Bt d B)[a, b] for element 16 n + 4 a + b.
  std::vector<Expr> i = ctx.idxVars(4);
  const Expr sixteen(16), four(4), two(2);
  TensorDef vd;
  vd.kind = TensorDef::Kind::Pointwise;
  vd.name = out->name() + "_winograd_in";
  vd.dtype = t;
  vd.shape = {batch * sixteen, c, Expr(th), Expr(tw)};
  {
    Expr img = floorDiv(i[0], sixteen), e = mod(i[0], sixteen);
    Expr a = floorDiv(e, four), b = mod(e, four);
    Expr rows[2] = {i[2] * two + a, i[2] * two + (two - floorDiv(a, two))};
    Expr cols[2] = {i[3] * two + b, i[3] * two + (two - floorDiv(b, two))};
    Expr sa = sign(a, 1, t), sb = sign(b, 1, t);
    Expr part[2];
    for (int k = 0; k < 2; ++k)
      part[k] = add(ctx.read(xdef, {img, i[1], rows[k], cols[0]}),
                    mul(sb, ctx.read(xdef, {img, i[1], rows[k], cols[1]})));
    vd.body = add(part[0], mul(sa, part[1]));
  }
  vd.materialize = true;
  int vdef = ctx.add(std::move(vd));

  // M: the 16 GEMMs over the input channels.
  TensorDef md;
  md.kind = TensorDef::Kind::Reduction;
  md.name = out->name() + "_winograd_gemm";
  md.dtype = t;
  md.shape = {batch * sixteen, co, Expr(th), Expr(tw)};
  md.combiner = Combiner::Sum;
  md.rereadsInputs = true;
  md.reduceExtents = {c};
  Expr r = ctx.rvar(0);
  md.body = Binary::make(
      BinOp::Mul, ctx.read(vdef, {i[0], r, i[2], i[3]}),
      ctx.readValue(u, {mod(i[0], sixteen), floorDiv(i[1], Expr(block)), r,
                        mod(i[1], Expr(block))}));
  int mdef = ctx.add(std::move(md));

  // Y: the output transform, (At M A)[y % 2, x % 2] of tile (y / 2, x / 2).
  Expr pi = mod(i[2], two), pj = mod(i[3], two);
  Expr si = sign(pi, 0, t), sj = sign(pj, 0, t);
  Expr as[3] = {Expr(1), pi * two, two + pi}, bs[3] = {Expr(1), pj * two, two + pj};
  auto m = [&](const Expr &a, const Expr &b) {
    return ctx.read(mdef, {i[0] * sixteen + a * four + b, i[1],
                           floorDiv(i[2], two), floorDiv(i[3], two)});
  };
  Expr rowsOut[3];
  for (int k = 0; k < 3; ++k)
    rowsOut[k] = add(m(as[0], bs[k]),
                     mul(si, add(m(as[1], bs[k]), m(as[2], bs[k]))));
  Expr y = add(rowsOut[0], mul(sj, add(rowsOut[1], rowsOut[2])));
  // Where that is not finite (an infinity or a huge value in the window,
  // which the transforms turn into NaN, or a NaN beside it in the tile),
  // the direct convolution's sum over the window: exact where the
  // transforms are not.
  {
    Expr fc = Var::make("wc"), fkh = Var::make("wkh"), fkw = Var::make("wkw");
    Expr direct =
        mul(ctx.read(xdef, {i[0], fc, i[2] + fkh, i[3] + fkw}),
            ctx.readValue(weight, {i[1], fc, fkh, fkw}));
    y = FiniteOrSum::make(y, direct, {fc, fkh, fkw}, {c, Expr(3), Expr(3)});
  }
  if (bias)
    y = add(y, ctx.readValue(bias, {i[1]}));
  ctx.addPointwise(out, y);
  return Status::ok();
}

} // namespace aotc
