/// \file
/// Weight packing (see pack_weights.h).
#include "compiler/passes/pack_weights.h"

#include <cstring>

namespace aotc {

namespace {

/// A constant whose bytes are fixed at compile time and whose static shape
/// is known: the only kind packed.
bool packable(const Value *v) {
  if (!v || !v->isConstant() || v->overridable())
    return false;
  if (!v->type().isStatic())
    return false;
  int64_t elems = 1;
  for (int64_t d : v->type().staticDims())
    elems *= d;
  return v->data().size() == elems * dtypeSize(v->type().dtype);
}

/// The bytes of \p v transposed by \p perm (output dim k is input dim
/// perm[k]), and the transposed type.
std::pair<TensorType, TensorData> transposed(const Value *v,
                                             const std::vector<int> &perm) {
  std::vector<int64_t> in = v->type().staticDims();
  int r = static_cast<int>(in.size());
  std::vector<int64_t> out(r), inStride(r, 1), outStride(r, 1);
  for (int k = r - 2; k >= 0; --k)
    inStride[k] = inStride[k + 1] * in[k + 1];
  for (int k = 0; k < r; ++k)
    out[k] = in[perm[k]];
  for (int k = r - 2; k >= 0; --k)
    outStride[k] = outStride[k + 1] * out[k + 1];
  int64_t elem = dtypeSize(v->type().dtype), total = 1;
  for (int64_t d : out)
    total *= d;
  std::vector<uint8_t> bytes(total * elem);
  const uint8_t *src = v->data().data();
  std::vector<int64_t> o(r, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t at = 0;
    for (int k = 0; k < r; ++k)
      at += o[k] * inStride[perm[k]];
    std::memcpy(bytes.data() + i * elem, src + at * elem, elem);
    for (int k = r - 1; k >= 0 && ++o[k] == out[k]; --k)
      o[k] = 0;
  }
  TensorType t = v->type();
  t.dims.clear();
  for (int64_t d : out)
    t.dims.push_back(Expr(d));
  return {t, TensorData::fromBytes(std::move(bytes))};
}

/// Lets the runtime repack \p packed when initializer \p w is updated.
void recordFold(Graph &g, const Value *w, const Value *packed,
                const std::vector<int> &perm) {
  if (w->onnxName().empty() || w->folded())
    return; // not an initializer: never updated
  Graph::FoldRecipe r;
  r.source = w->onnxName();
  r.dtype = w->type().dtype;
  r.sourceShape = w->type().staticDims();
  r.target = packed->name();
  r.perm = perm;
  g.addFoldRecipe(std::move(r));
}

/// Conv with one group: W[co, ci, k...] -> Transpose(W'[ci, k..., co]).
bool packConv(Graph &g, Node &n) {
  Value *w = n.input(1);
  if (n.intAttr("group") != 1 || !packable(w) || w->type().rank() < 3)
    return false;
  int r = w->type().rank();
  std::vector<int> toPacked; // W' dim k is W dim toPacked[k]
  for (int k = 1; k < r; ++k)
    toPacked.push_back(k);
  toPacked.push_back(0);
  auto [type, data] = transposed(w, toPacked);
  Value *packed = g.addConstant(w->name() + "_packed", type, std::move(data),
                                "", /*folded=*/true);
  recordFold(g, w, packed, toPacked);
  // Back to W's layout as a view: output dim 0 (co) is W' dim r - 1, output
  // dim k >= 1 is W' dim k - 1.
  std::vector<int64_t> perm{r - 1};
  for (int k = 0; k < r - 1; ++k)
    perm.push_back(k);
  Node *t = g.addNodeBefore(&n, OpKind::Transpose, w->name() + "_unpacked",
                            {packed}, {w->name() + "_unpacked"});
  Attribute permAttr;
  permAttr.value = perm;
  t->setAttr("perm", permAttr);
  t->output(0)->setType(w->type());
  n.replaceInput(1, t->output(0));
  return true;
}

/// Gemm with transB = 1: B[n, k] -> B'[k, n], transB = 0.
bool packGemm(Graph &g, Node &n) {
  Value *b = n.input(1);
  if (n.intAttr("transB") != 1 || !packable(b) || b->type().rank() != 2)
    return false;
  auto [type, data] = transposed(b, {1, 0});
  Value *packed = g.addConstant(b->name() + "_packed", type, std::move(data),
                                "", /*folded=*/true);
  recordFold(g, b, packed, {1, 0});
  n.replaceInput(1, packed);
  Attribute zero;
  zero.value = int64_t{0};
  n.setAttr("transB", zero);
  return true;
}

} // namespace

int packWeights(Graph &g) {
  std::vector<Node *> nodes;
  for (const auto &n : g.nodes())
    nodes.push_back(n.get());
  int packed = 0;
  for (Node *n : nodes) {
    if (n->op() == OpKind::Conv)
      packed += packConv(g, *n);
    else if (n->op() == OpKind::Gemm)
      packed += packGemm(g, *n);
  }
  if (packed)
    g.removeDeadNodes();
  return packed;
}

} // namespace aotc
