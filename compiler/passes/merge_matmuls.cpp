/// \file
/// Sibling MatMuls merged into one (see merge_matmuls.h).
#include "compiler/passes/merge_matmuls.h"

#include "compiler/passes/fold_program.h"

#include <cstdint>
#include <map>

namespace aotc {

namespace {

/// One MatMul of a group: the node, its columns, and the bias Add after it
/// (null if the group merges no bias).
struct Member {
  Node *matmul = nullptr;
  int64_t columns = 0;
  Node *add = nullptr;
  Value *bias = nullptr;
};

/// The Add that reads \p out (the MatMul's only reader) with a float32
/// weight of \p n elements broadcast along the last axis; its bias input,
/// or null.
Value *biasAfter(const Graph &g, const Value *out, int64_t n, Node **add) {
  if (out->users().size() != 1)
    return nullptr;
  Node *a = out->users()[0];
  if (a->op() != OpKind::Add || a->numInputs() != 2 ||
      a->outputs().size() != 1 || g.isOutput(a->output(0)))
    return nullptr;
  Value *b = a->input(0) == out ? a->input(1) : a->input(0);
  if (b == out || !b || b->type().dtype != DType::Float32 ||
      !b->type().isStatic() || !isFoldable(b))
    return nullptr;
  std::vector<int64_t> d = b->type().staticDims();
  if (d.empty() || d.back() != n)
    return nullptr;
  for (size_t i = 0; i + 1 < d.size(); ++i)
    if (d[i] != 1)
      return nullptr;
  if (a->output(0)->type().dims.size() != out->type().dims.size())
    return nullptr; // the bias would add dimensions
  *add = a;
  return b;
}

bool mergeGroup(Graph &g, Value *a, int64_t k, std::vector<Member> group) {
  const TensorType &at = a->type();
  const std::string p = "aotc_merged_" + group[0].matmul->name() + "_";
  // The merged nodes go just before the first reader of an old result;
  // A, every weight and every bias must be computed before it (else the
  // group is left alone: the graph keeps its order).
  std::map<const Node *, size_t> pos;
  for (const auto &n : g.nodes())
    pos[n.get()] = pos.size();
  size_t at0 = SIZE_MAX;
  Node *first = nullptr;
  for (const Member &m : group) {
    const Value *old = m.add ? m.add->output(0) : m.matmul->output(0);
    for (Node *u : old->users())
      if (pos[u] < at0) {
        at0 = pos[u];
        first = u;
      }
  }
  if (!first)
    return false; // nothing reads them
  auto before = [&](const Value *v) {
    return !v->producer() || pos[v->producer()] < at0;
  };
  bool ready = before(a);
  for (const Member &m : group)
    ready = ready && before(m.matmul->input(1)) && (!m.bias || before(m.bias));
  if (!ready)
    return false;
  int64_t total = 0;
  std::vector<Value *> weights;
  for (const Member &m : group) {
    total += m.columns;
    weights.push_back(m.matmul->input(1));
  }
  auto node = [&](OpKind op, const std::string &name,
                  const std::vector<Value *> &in, const TensorType &t) {
    Node *n = g.addNodeBefore(first, op, p + name, in, {p + name});
    n->output(0)->setType(t);
    return n;
  };
  Node *cw = node(OpKind::Concat, "weight", weights,
                  TensorType::of(DType::Float32, {k, total}));
  cw->setAttr("axis", Attribute{int64_t{1}, std::nullopt});
  TensorType mt = at;
  mt.dims.back() = Expr(total);
  Value *merged =
      node(OpKind::MatMul, "matmul", {a, cw->output(0)}, mt)->output(0);
  const bool biased = group[0].add != nullptr;
  if (biased) {
    std::vector<Value *> biases;
    for (const Member &m : group) {
      // Each bias as [N_i]: a Reshape of a [1, .., N_i] weight.
      Value *b = m.bias;
      if (b->type().rank() != 1)
        b = node(OpKind::Reshape, "bias_flat_" + std::to_string(biases.size()),
                 {b, g.addShapeConstant(p + "bias_shape_" +
                                            std::to_string(biases.size()),
                                        {m.columns})},
                 TensorType::of(DType::Float32, {m.columns}))
                ->output(0);
      biases.push_back(b);
    }
    Node *cb = node(OpKind::Concat, "bias", biases,
                    TensorType::of(DType::Float32, {total}));
    cb->setAttr("axis", Attribute{int64_t{0}, std::nullopt});
    merged = node(OpKind::Add, "add", {merged, cb->output(0)}, mt)->output(0);
  }
  // Each old result: the Slice of its columns.
  int64_t start = 0;
  const int64_t lastAxis = at.rank() - 1;
  for (size_t i = 0; i < group.size(); ++i) {
    const Member &m = group[i];
    Value *old = biased ? m.add->output(0) : m.matmul->output(0);
    std::string idx = std::to_string(i);
    Node *s = node(OpKind::Slice, "slice_" + idx,
                   {merged, g.addShapeConstant(p + "starts_" + idx, {start}),
                    g.addShapeConstant(p + "ends_" + idx, {start + m.columns}),
                    g.addShapeConstant(p + "axes_" + idx, {lastAxis})},
                   old->type());
    g.replaceAllUsesWith(old, s->output(0));
    start += m.columns;
  }
  return true;
}

} // namespace

int mergeSiblingMatMuls(Graph &g) {
  // MatMuls by their A, in node order.
  std::map<Value *, std::vector<Node *>> byA;
  std::vector<Value *> order;
  for (const auto &n : g.nodes()) {
    if (n->op() != OpKind::MatMul || n->numInputs() != 2 ||
        n->outputs().size() != 1)
      continue;
    Value *a = n->input(0);
    if (!a || a->type().dtype != DType::Float32 || a->type().rank() < 2)
      continue;
    if (!byA.count(a))
      order.push_back(a);
    byA[a].push_back(n.get());
  }
  int merged = 0;
  for (Value *a : order) {
    const std::vector<Node *> &nodes = byA[a];
    if (nodes.size() < 2)
      continue;
    // An activation of weights alone is folded whole: nothing to merge.
    int64_t k;
    if (!a->type().dims.back().isConst(k) || k <= 0 || isFoldable(a))
      continue;
    std::vector<Member> group;
    for (Node *n : nodes) {
      Member m;
      m.matmul = n;
      m.columns = foldableMatrixColumns(n->input(1), k);
      if (m.columns == 0 || g.isOutput(n->output(0)) || n->input(1) == a)
        continue;
      if (n->output(0)->type().rank() != a->type().rank())
        continue;
      m.bias = biasAfter(g, n->output(0), m.columns, &m.add);
      group.push_back(m);
    }
    // Biases merge only if every member has one; else none does.
    bool allBiased = !group.empty();
    for (const Member &m : group)
      allBiased &= m.add != nullptr;
    if (!allBiased)
      for (Member &m : group)
        m.add = nullptr, m.bias = nullptr;
    if (group.size() < 2)
      continue;
    merged += mergeGroup(g, a, k, group);
  }
  if (merged)
    g.removeDeadNodes();
  return merged;
}

} // namespace aotc
