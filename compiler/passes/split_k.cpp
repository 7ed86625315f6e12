/// \file
/// Deep MatMuls split along K across work-groups (see split_k.h).
#include "compiler/passes/split_k.h"

#include "compiler/passes/fold_program.h"

#include <cstdint>

namespace aotc {

int64_t deepMatMulSplit(int64_t rows, int64_t k, int64_t n) {
  if (rows < 64 || n <= 0 || k < 2048 || k < 4 * n)
    return 1;
  int64_t s = 1;
  while (s * 2 <= 8 && s * 2 * n <= k && k % (s * 2 * 64) == 0 &&
         k / (s * 2) >= 512)
    s *= 2;
  return s;
}

namespace {

/// Splits \p mm (A x W) into \p s parts; see split_k.h.
void splitMatMul(Graph &g, Node *mm, int64_t s) {
  Value *a = mm->input(0), *w = mm->input(1), *out = mm->output(0);
  const TensorType &at = a->type();
  const int r = at.rank();
  const std::vector<int64_t> wd = w->type().staticDims();
  const int64_t k = wd[0], n = wd[1], part = k / s;
  const std::string p = "aotc_split_" + mm->name() + "_";
  // Each node with its type and every attribute written out, as
  // canonicalization would have (a Reshape's 0 copies the input's dim).
  auto node = [&](OpKind op, const std::string &name,
                  const std::vector<Value *> &in, std::vector<Expr> dims) {
    Node *x = g.addNodeBefore(mm, op, p + name, in, {p + name});
    TensorType t = at;
    t.dims = std::move(dims);
    x->output(0)->setType(t);
    if (op == OpKind::Reshape)
      x->setAttr("allowzero", Attribute{int64_t{0}, std::nullopt});
    return x;
  };
  // A as [.., M, S, K/S] (0 copies a dim), then S moved to the front.
  std::vector<int64_t> shape(r - 1, 0);
  shape.push_back(s);
  shape.push_back(part);
  std::vector<Expr> split(at.dims.begin(), at.dims.end() - 1);
  split.push_back(Expr(s));
  split.push_back(Expr(part));
  Value *as = node(OpKind::Reshape, "a",
                   {a, g.addShapeConstant(p + "a_shape", shape)}, split)
                  ->output(0);
  std::vector<int64_t> perm{r - 1};
  std::vector<Expr> moved{Expr(s)};
  for (int i = 0; i < r - 1; ++i) {
    perm.push_back(i);
    moved.push_back(at.dims[i]);
  }
  perm.push_back(r);
  moved.push_back(Expr(part));
  Node *tr = node(OpKind::Transpose, "a_parts", {as}, moved);
  tr->setAttr("perm", Attribute{perm, std::nullopt});
  // W as [S, 1.., K/S, N]: part i is rows [i K/S, (i+1) K/S) of W.
  std::vector<int64_t> wshape{s};
  std::vector<Expr> wdims{Expr(s)};
  for (int i = 0; i < r - 2; ++i) {
    wshape.push_back(1);
    wdims.push_back(Expr(1));
  }
  wshape.push_back(part);
  wshape.push_back(n);
  wdims.push_back(Expr(part));
  wdims.push_back(Expr(n));
  Value *ws = node(OpKind::Reshape, "w",
                   {w, g.addShapeConstant(p + "w_shape", wshape)}, wdims)
                  ->output(0);
  std::vector<Expr> pdims = moved;
  pdims.back() = Expr(n);
  Value *parts =
      node(OpKind::MatMul, "matmul", {tr->output(0), ws}, pdims)->output(0);
  // ReduceSum as opset 13 and later write it: axes as an input.
  Node *sum = node(OpKind::ReduceSum, "sum",
                   {parts, g.addShapeConstant(p + "sum_axes", {0})},
                   out->type().dims);
  sum->setAttr("keepdims", Attribute{int64_t{0}, std::nullopt});
  sum->setAttr("noop_with_empty_axes", Attribute{int64_t{0}, std::nullopt});
  g.replaceAllUsesWith(out, sum->output(0));
  // A graph output keeps its name (the ABI): the sum takes it.
  if (g.isOutput(sum->output(0))) {
    const std::string name = out->name();
    out->setName(p + "replaced");
    sum->output(0)->setName(name);
  }
}

} // namespace

int splitDeepMatMuls(Graph &g, const DeviceProfile &p) {
  if (p.family != "gpu")
    return 0;
  std::vector<std::pair<Node *, int64_t>> todo;
  for (const auto &nd : g.nodes()) {
    Node *mm = nd.get();
    if (mm->op() != OpKind::MatMul || mm->numInputs() != 2 ||
        mm->outputs().size() != 1)
      continue;
    const Value *a = mm->input(0);
    int64_t k;
    if (!a || a->type().dtype != DType::Float32 || a->type().rank() < 2 ||
        isFoldable(a) || !a->type().dims.back().isConst(k))
      continue;
    const int64_t n = foldableMatrixColumns(mm->input(1), k);
    if (n == 0)
      continue;
    // Rows: the leading dims, a symbol counted as 1.
    int64_t rows = 1;
    for (int i = 0; i + 1 < a->type().rank(); ++i) {
      int64_t d;
      if (a->type().dims[i].isConst(d))
        rows *= d;
    }
    int64_t s = deepMatMulSplit(rows, k, n);
    if (s > 1)
      todo.push_back({mm, s});
  }
  for (auto &[mm, s] : todo)
    splitMatMul(g, mm, s);
  if (!todo.empty())
    g.removeDeadNodes();
  return static_cast<int>(todo.size());
}

} // namespace aotc
