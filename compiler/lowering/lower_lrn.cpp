/// \file
/// Lowering of LRN (local response normalization across channels, as
/// AlexNet, GoogLeNet and CaffeNet use it): for x of shape [N, C, ...],
///   sq[n, c, ...]  = sum over j in [0, size) of x[n, c - lo + j, ...]^2,
///                    the channels outside [0, C) adding 0,
///   out[n, c, ...] = x[n, c, ...] / (bias + alpha / size * sq)^beta,
/// with lo = floor((size - 1) / 2): the window reaches floor((size - 1) / 2)
/// channels below c and ceil((size - 1) / 2) above, as ONNX defines it.
#include "compiler/lowering/lowering.h"

namespace aotc {

Status lowerLRN(const Node &n, LowerCtx &ctx) {
  const Value *x = n.input(0), *out = n.output(0);
  const int rank = x->type().rank();
  const DType t = x->type().dtype;
  const int64_t size = n.intAttr("size");
  const Expr channels = x->type().dims[1];
  const int xid = ctx.defOf(x);
  std::vector<Expr> iv = ctx.idxVars(rank);
  Expr j = ctx.rvar(0);
  Expr c = iv[1] + j - Expr((size - 1) / 2);
  Expr inside = Binary::make(BinOp::And, Binary::make(BinOp::GE, c, Expr(0)),
                             Binary::make(BinOp::LT, c, channels));
  // The read stays inside x where the term is masked.
  std::vector<Expr> at = iv;
  at[1] = minExpr(maxExpr(c, Expr(0)), channels - Expr(1));
  Expr v = ctx.read(xid, at);
  TensorDef d;
  d.kind = TensorDef::Kind::Reduction;
  d.name = out->name() + "_sq";
  d.dtype = t;
  d.combiner = Combiner::Sum;
  d.shape = x->type().dims;
  d.reduceExtents = {Expr(size)};
  d.body = Select::make(inside, Binary::make(BinOp::Mul, v, v), literal(t, 0));
  int sq = ctx.add(std::move(d));
  Expr scale = Binary::make(
      BinOp::Add, literal(t, n.floatAttr("bias")),
      Binary::make(BinOp::Mul, literal(t, n.floatAttr("alpha") / double(size)),
                   ctx.read(sq, iv)));
  ctx.addPointwise(out,
                   Binary::make(BinOp::Div, ctx.read(xid, iv),
                                Binary::make(BinOp::Pow, scale,
                                             literal(t, n.floatAttr("beta")))));
  return Status::ok();
}

} // namespace aotc
