/// \file
/// The folding program's extraction (see fold_program.h).
#include "compiler/passes/fold_program.h"

#include "ir/scalar_ops.h"

#include <functional>
#include <map>
#include <set>

namespace aotc {

namespace {

/// Ops a kernel reads through without computing anything.
bool isView(OpKind op) {
  switch (op) {
  case OpKind::Identity:
  case OpKind::Reshape:
  case OpKind::Flatten:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Transpose:
  case OpKind::Slice:
  case OpKind::Expand:
    return true;
  default:
    return false;
  }
}

/// A node with inputs, all computable by \p inputComputable, and results of
/// static shapes.
template <typename InputComputable>
bool computableNode(const Node &n, InputComputable inputComputable) {
  for (const Value *in : n.inputs())
    if (in && !inputComputable(in))
      return false;
  for (const Value *out : n.outputs())
    if (!out->type().isStatic())
      return false;
  return !n.inputs().empty();
}

/// Whether shape arithmetic knows a result of \p n at compile time (it
/// stays in the main graph, where kernels read it as a literal).
bool resultKnownAtCompileTime(const Node &n) {
  for (const Value *out : n.outputs())
    if (out->symbolicData().has_value())
      return true;
  return false;
}

/// A computable node whose results are not known at compile time.
template <typename InputFoldable>
bool foldableNode(const Node &n, InputFoldable inputFoldable) {
  return computableNode(n, inputFoldable) && !resultKnownAtCompileTime(n);
}

} // namespace

bool isFoldable(const Value *v) {
  if (!v)
    return false;
  if (v->isConstant())
    return !v->overridable() && v->type().isStatic() &&
           (v->data().defined() || v->computedAtLoad());
  if (v->isInput() || !v->producer())
    return false;
  return foldableNode(*v->producer(), isFoldable);
}

int64_t foldableMatrixColumns(const Value *w, int64_t k) {
  if (!w || w->type().dtype != DType::Float32 || w->type().rank() != 2 ||
      !w->type().isStatic() || !isFoldable(w))
    return 0;
  std::vector<int64_t> d = w->type().staticDims();
  return d[0] == k && d[1] > 0 ? d[1] : 0;
}

/// A weight worth computing from: a constant tensor of more than one
/// element that is not shape data. Values made from scalars or shapes alone
/// (ConstantOfShape, 2 + 3) stay where they are: a kernel inlines them as
/// literals, which a computed constant's load would replace.
bool isWeightTensor(const Value *v) {
  if (!v || !v->isConstant() || !v->data().defined() ||
      v->symbolicData().has_value() || !v->type().isStatic())
    return false;
  int64_t numel = 1;
  for (int64_t d : v->type().staticDims())
    numel *= d;
  return numel > 1;
}

Node *integerWidening(const Value *v) {
  Node *p = v->producer();
  if (p && (p->op() == OpKind::Sub || p->op() == OpKind::Add) &&
      p->inputs().size() == 2 && p->input(0) && p->input(1) &&
      p->input(1)->symbolicData().has_value() &&
      p->input(1)->symbolicData()->size() == 1)
    p = p->input(0)->producer();
  if (!p || p->op() != OpKind::Cast || p->inputs().size() != 1 ||
      !p->input(0))
    return nullptr;
  const DType from = p->input(0)->type().dtype, to = v->type().dtype;
  return scalar::widensInteger(from, to) ? p : nullptr;
}

namespace {

/// Whether \p v is a weight tensor, or views of one (its panels,
/// pack_weights.h).
bool weightOrItsView(const Value *v) {
  while (v && !v->isConstant() && v->producer() &&
         isView(v->producer()->op()))
    v = v->producer()->input(0);
  return isWeightTensor(v);
}

/// Whether \p n widens a weight (or views of one, its panels) of a
/// narrower integer type: integerWidening.
bool widensWeight(const Node &n) {
  if (n.outputs().size() != 1)
    return false;
  const Node *cast = integerWidening(n.output(0));
  return cast && weightOrItsView(cast->input(0));
}

} // namespace

Expected<FoldProgram> extractFoldProgram(Graph &g) {
  FoldProgram out;
  const auto &nodes = g.nodes();
  // Computable and foldable nodes, in one pass over the topological order
  // (isFoldable alone would walk every node's ancestors again), and the
  // foldable ones that read a weight tensor, directly or through another.
  // A foldable node may read a computable one whose result is known at
  // compile time (a weight minus a zero point cast to int32): the program
  // then computes that one too.
  std::set<const Node *> computable, foldable, readsWeights;
  auto inputComputable = [&](const Value *in) {
    return in->isConstant() ? isFoldable(in)
                            : in->producer() && computable.count(in->producer());
  };
  for (const auto &n : nodes) {
    if (!computableNode(*n, inputComputable))
      continue;
    computable.insert(n.get());
    if (resultKnownAtCompileTime(*n))
      continue;
    foldable.insert(n.get());
    for (const Value *in : n->inputs())
      if (isWeightTensor(in) ||
          (in && in->producer() && readsWeights.count(in->producer())))
        readsWeights.insert(n.get());
  }
  // Which of them the program computes, deciding from the graph's end
  // (consumers first). A widening of an integer weight that only
  // contractions (MatMul, Conv) read, directly or through another widening, stays in the
  // main graph: their kernels widen the narrow weight as they read it
  // (fusion.cpp), a quarter of the bytes of the int32 copy the program
  // would make of an int8 weight.
  std::set<const Node *> inProgram, widenedInKernels;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node &n = **it;
    if (widensWeight(n)) {
      bool onlyContractions = !n.output(0)->users().empty() &&
                              !g.isOutput(n.output(0));
      for (const Node *u : n.output(0)->users())
        onlyContractions &= u->op() == OpKind::MatMul ||
                            u->op() == OpKind::Conv ||
                            widenedInKernels.count(u) != 0;
      if (onlyContractions) {
        widenedInKernels.insert(&n);
        continue;
      }
    }
    bool outputOfGraph = false, marked = false, consumed = false,
         allConsumersIn = true;
    for (const Value *o : n.outputs()) {
      outputOfGraph |= g.isOutput(o);
      marked |= o->foldTarget();
      for (const Node *u : o->users()) {
        consumed = true;
        allConsumersIn &= inProgram.count(u) != 0;
      }
    }
    if (outputOfGraph || !consumed || !readsWeights.count(&n))
      continue;
    if (!isView(n.op()) || marked || allConsumersIn)
      inProgram.insert(&n);
  }
  if (inProgram.empty())
    return out;

  out.graph = std::make_unique<Graph>();
  Graph &fold = *out.graph;
  fold.name = g.name + "_fold";
  fold.opsetVersion = g.opsetVersion;
  std::map<const Value *, Value *> mapped;
  // A value of the main graph in the program: a weight's copy (same data,
  // same ONNX name), or the result of a copied node (views of weights that
  // the main graph keeps too are copied as well).
  std::function<Value *(const Value *)> import = [&](const Value *v) -> Value * {
    if (!v)
      return nullptr;
    if (auto it = mapped.find(v); it != mapped.end())
      return it->second;
    Value *copy = nullptr;
    if (v->isConstant()) {
      copy = fold.addConstant(v->name(), v->type(), v->data(), v->onnxName(),
                              v->folded());
      copy->setSymbolicData(v->symbolicData());
      copy->setComputedAtLoad(v->computedAtLoad());
      // A packed copy of an initializer is repacked when it is updated, in
      // the program too (attachFoldProgram keeps the recipe): a program
      // that read it stale computed from the old weights.
      for (const Graph::FoldRecipe &r : g.foldRecipes())
        if (r.target == v) {
          Graph::FoldRecipe c = r;
          c.target = copy;
          fold.addFoldRecipe(std::move(c));
        }
    } else {
      const Node &n = *v->producer();
      std::vector<Value *> ins;
      for (const Value *in : n.inputs())
        ins.push_back(import(in));
      std::vector<std::string> names;
      for (const Value *o : n.outputs())
        names.push_back(o->name());
      Node *c = fold.addNode(n.op(), n.name(), ins, names);
      for (const auto &[name, attr] : n.attrs())
        c->setAttr(name, attr);
      for (size_t i = 0; i < n.outputs().size(); ++i) {
        c->output(i)->setType(n.output(i)->type());
        mapped[n.output(i)] = c->output(i);
      }
      copy = mapped.at(v);
    }
    mapped[v] = copy;
    return copy;
  };
  // The program's outputs: its values that the rest of the graph reads.
  std::vector<std::pair<Value *, Value *>> targets; // main value, program's
  for (const auto &n : nodes) {
    if (!inProgram.count(n.get()))
      continue;
    for (Value *o : n->outputs()) {
      bool readOutside = false;
      for (const Node *u : o->users())
        readOutside |= !inProgram.count(u);
      if (readOutside)
        targets.emplace_back(o, import(o));
    }
  }
  // Each target's constant under a name of its own: attachFoldProgram
  // finds the constant an output writes by that name, and two targets may
  // share their value's name (a weight packed for two GEMMs gives two
  // "<w>_packed" values; ALBERT's shared layers did, and the second GEMM's
  // packed weight was never written).
  std::set<std::string> taken;
  for (const Value *c : g.constants())
    taken.insert(c->name());
  for (auto &[value, computed] : targets) {
    fold.addOutput(computed);
    std::string name = value->name() + "_folded";
    for (int k = 2; taken.count(name); ++k)
      name = value->name() + "_folded_" + std::to_string(k);
    taken.insert(name);
    Value *c = g.addConstant(name, value->type(), TensorData(), "",
                             /*folded=*/true);
    c->setComputedAtLoad(true);
    g.replaceAllUsesWith(value, c);
    out.targets.push_back(c->name());
  }
  g.removeDeadNodes();
  return out;
}

} // namespace aotc
