/// \file
/// BatchNormalization folded into the convolution before it (see
/// fold_batchnorm.h).
#include "compiler/passes/fold_batchnorm.h"

#include "compiler/passes/fold_program.h"

namespace aotc {

namespace {

/// A float32 weight of shape [channels], computable at load.
bool perChannel(const Value *v, int64_t channels) {
  if (!v || v->type().dtype != DType::Float32 || !isFoldable(v))
    return false;
  const TensorType &t = v->type();
  int64_t c;
  return t.rank() == 1 && t.dims[0].isConst(c) && c == channels;
}

bool foldOne(Graph &g, Node &bn) {
  if (bn.outputs().size() != 1 || bn.intAttr("training_mode") != 0)
    return false;
  Value *x = bn.input(0);
  Node *conv = x->producer();
  if (!conv || conv->op() != OpKind::Conv || x->users().size() != 1 ||
      g.isOutput(x))
    return false;
  Value *w = conv->input(1), *b = conv->input(2);
  if (!w || w->type().dtype != DType::Float32 || !w->type().isStatic() ||
      w->type().rank() < 3 || !isFoldable(w))
    return false;
  int64_t co = w->type().staticDims()[0];
  if ((b && !perChannel(b, co)) || !perChannel(bn.input(1), co) ||
      !perChannel(bn.input(2), co) || !perChannel(bn.input(3), co) ||
      !perChannel(bn.input(4), co))
    return false;
  double eps = bn.floatAttr("epsilon");

  const std::string p = "aotc_bnfold_" + bn.name() + "_";
  TensorType vec = TensorType::of(DType::Float32, {co});
  auto node = [&](OpKind op, const std::string &name,
                  const std::vector<Value *> &in, const TensorType &t) {
    Node *n = g.addNodeBefore(conv, op, p + name, in, {p + name});
    n->output(0)->setType(t);
    return n->output(0);
  };
  Value *var = node(OpKind::Add, "var_eps",
                    {bn.input(4),
                     g.addScalarConstant(p + "epsilon", static_cast<float>(eps))},
                    vec);
  Value *stddev = node(OpKind::Sqrt, "stddev", {var}, vec);
  Value *s = node(OpKind::Div, "scale", {bn.input(1), stddev}, vec);
  std::vector<int64_t> column(w->type().rank(), 1);
  column[0] = co;
  Value *sCol = node(OpKind::Reshape, "scale_column",
                     {s, g.addShapeConstant(p + "column_shape", column)},
                     TensorType::of(DType::Float32, column));
  Value *w2 = node(OpKind::Mul, "weight", {w, sCol}, w->type());
  Value *b2;
  if (b) {
    Value *centred = node(OpKind::Sub, "bias_centred", {b, bn.input(3)}, vec);
    Value *scaled = node(OpKind::Mul, "bias_scaled", {centred, s}, vec);
    b2 = node(OpKind::Add, "bias", {scaled, bn.input(2)}, vec);
  } else {
    Value *meanScaled =
        node(OpKind::Mul, "mean_scaled", {bn.input(3), s}, vec);
    b2 = node(OpKind::Sub, "bias", {bn.input(2), meanScaled}, vec);
  }
  // The folded Conv's result keeps the normalization's name (a graph
  // output is named by it).
  std::string outName = bn.output(0)->name();
  bn.output(0)->setName(p + "unfolded");
  Node *folded = g.addNodeBefore(conv, OpKind::Conv, conv->name(),
                                 {conv->input(0), w2, b2}, {outName});
  for (const auto &[name, attr] : conv->attrs())
    folded->setAttr(name, attr);
  folded->output(0)->setType(bn.output(0)->type());
  g.replaceAllUsesWith(bn.output(0), folded->output(0));
  return true;
}

} // namespace

int foldBatchNorms(Graph &g) {
  std::vector<Node *> bns;
  for (const auto &n : g.nodes())
    if (n->op() == OpKind::BatchNormalization)
      bns.push_back(n.get());
  int folded = 0;
  for (Node *bn : bns)
    folded += foldOne(g, *bn);
  if (folded)
    g.removeDeadNodes();
  return folded;
}

} // namespace aotc
