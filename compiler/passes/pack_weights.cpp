/// \file
/// Weight packing (see pack_weights.h).
#include "compiler/passes/pack_weights.h"

#include "compiler/passes/fold_program.h"
#include "compiler/schedule/device_profile.h"
#include "ir/scalar_ops.h"

#include <cstring>
#include <map>
#include <set>
#include <tuple>

namespace aotc {

namespace {

/// The packed copies made so far, by weight and layout: a weight that
/// several nodes read (ALBERT's layers share theirs) is packed once, so
/// that one constant holds it and an update repacks every reader's copy.
struct PackCache {
  std::map<std::tuple<const Value *, std::vector<int>, int, int64_t>, Value *>
      packed;
  /// Transposes whose input packWeights replaced by a packed copy: every
  /// reader of one reads the panels through it already.
  std::set<const Node *> holders;
};

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

/// A weight computed from weights alone (a convolution's weight with a
/// BatchNormalization folded in): packed by nodes that the folding program
/// runs, since its bytes are not known at compile time.
bool computedWeight(const Value *v) {
  return v && !v->isConstant() && v->type().isStatic() && isFoldable(v);
}

/// \p n rounded up to a multiple of \p split.
int64_t roundUp(int64_t n, int64_t split) {
  return (n + split - 1) / split * split;
}

/// The shape of \p v's view: its shape, or with split > 0 its dim splitDim
/// split into [ceil(size / split), split] (the last panel padded with
/// zeros when split does not divide the size).
std::vector<int64_t> viewShape(const Value *v, int splitDim, int64_t split) {
  std::vector<int64_t> in = v->type().staticDims(), out;
  for (int k = 0; k < static_cast<int>(in.size()); ++k) {
    if (split > 0 && k == splitDim) {
      out.push_back(roundUp(in[k], split) / split);
      out.push_back(split);
    } else {
      out.push_back(in[k]);
    }
  }
  return out;
}

/// The bytes of \p v with dim \p splitDim padded with zeros to a multiple
/// of \p split; empty when split divides it (or split <= 0): then the
/// bytes are v's own.
std::vector<uint8_t> paddedBytes(const Value *v, int splitDim, int64_t split) {
  std::vector<int64_t> dims = v->type().staticDims();
  if (split <= 0 || dims[splitDim] % split == 0)
    return {};
  const uint8_t *src = v->data().data();
  int64_t elem = dtypeSize(v->type().dtype), outer = 1, inner = elem;
  for (int k = 0; k < splitDim; ++k)
    outer *= dims[k];
  for (size_t k = splitDim + 1; k < dims.size(); ++k)
    inner *= dims[k];
  int64_t row = dims[splitDim] * inner,
          padded = roundUp(dims[splitDim], split) * inner;
  std::vector<uint8_t> out(static_cast<size_t>(outer * padded), 0);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.data() + o * padded, src + o * row,
                static_cast<size_t>(row));
  return out;
}

/// The bytes of \p v's view (viewShape) transposed by \p perm (output dim k
/// is view dim perm[k]), and the transposed type.
std::pair<TensorType, TensorData> transposed(const Value *v,
                                             const std::vector<int> &perm,
                                             int splitDim = -1,
                                             int64_t split = 0) {
  std::vector<int64_t> in = viewShape(v, splitDim, split);
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
  std::vector<uint8_t> padded = paddedBytes(v, splitDim, split);
  const uint8_t *src = padded.empty() ? v->data().data() : padded.data();
  // Row by row of the innermost output dimension, which reads the input
  // at one stride: the per-element index walk took 6-8% of ResNet-50's
  // compile (25 M weights).
  const int64_t inner = r > 0 ? out[r - 1] : 1;
  const int64_t step = r > 0 ? inStride[perm[r - 1]] * elem : 0;
  std::vector<int64_t> o(r, 0);
  uint8_t *dst = bytes.data();
  for (int64_t i = 0; i < total && inner > 0; i += inner) {
    int64_t at = 0;
    for (int k = 0; k + 1 < r; ++k)
      at += o[k] * inStride[perm[k]];
    const uint8_t *from = src + at * elem;
    if (step == elem) {
      std::memcpy(dst, from, static_cast<size_t>(inner * elem));
      dst += inner * elem;
    } else if (elem == 4) {
      for (int64_t j = 0; j < inner; ++j, dst += 4, from += step)
        std::memcpy(dst, from, 4);
    } else {
      for (int64_t j = 0; j < inner; ++j, dst += elem, from += step)
        std::memcpy(dst, from, static_cast<size_t>(elem));
    }
    for (int k = r - 2; k >= 0 && ++o[k] == out[k]; --k)
      o[k] = 0;
  }
  return {TensorType::of(v->type().dtype, out),
          TensorData::fromBytes(std::move(bytes))};
}

/// Lets the runtime repack \p packed when initializer \p w is updated.
void recordFold(Graph &g, const Value *w, const Value *packed,
                const std::vector<int> &perm, int splitDim = -1,
                int64_t split = 0) {
  if (w->onnxName().empty() || w->folded())
    return; // not an initializer: never updated
  Graph::FoldRecipe r;
  r.source = w->onnxName();
  r.dtype = w->type().dtype;
  r.sourceShape = w->type().staticDims();
  r.target = packed;
  r.perm = perm;
  r.splitDim = split > 0 ? splitDim : -1;
  r.split = split;
  g.addFoldRecipe(std::move(r));
}

/// The packed copy of a computed weight \p w (view shape \p view) as
/// nodes before \p n: zero padding of dim splitDim to a multiple of
/// split, the view's Reshape, the Transpose by \p perm; the result is a
/// folding program output (foldTarget).
Value *packingNodes(Graph &g, Node &n, Value *w,
                    const std::vector<int64_t> &view,
                    const std::vector<int> &perm, int splitDim,
                    int64_t split) {
  std::vector<int64_t> dims = w->type().staticDims();
  auto typed = [&](const std::vector<int64_t> &shape) {
    return TensorType::of(w->type().dtype, shape);
  };
  Value *x = w;
  const std::string p = w->name() + "_pack";
  if (split > 0 && dims[splitDim] % split != 0) {
    std::vector<int64_t> pads(2 * dims.size(), 0), padded = dims;
    pads[dims.size() + splitDim] = roundUp(dims[splitDim], split) -
                                   dims[splitDim];
    padded[splitDim] = roundUp(dims[splitDim], split);
    Node *pad = g.addNodeBefore(&n, OpKind::Pad, p + "_pad",
                                {x, g.addShapeConstant(p + "_pads", pads)},
                                {p + "_pad"});
    Attribute mode;
    mode.value = std::string("constant");
    pad->setAttr("mode", mode);
    pad->output(0)->setType(typed(padded));
    x = pad->output(0);
  }
  if (split > 0) {
    Node *r = g.addNodeBefore(&n, OpKind::Reshape, p + "_view",
                              {x, g.addShapeConstant(p + "_view_shape", view)},
                              {p + "_view"});
    r->output(0)->setType(typed(view));
    x = r->output(0);
  }
  std::vector<int64_t> permuted, perm64;
  for (int k : perm) {
    permuted.push_back(view[k]);
    perm64.push_back(k);
  }
  Node *t = g.addNodeBefore(&n, OpKind::Transpose, w->name() + "_packed",
                            {x}, {w->name() + "_packed"});
  Attribute permAttr;
  permAttr.value = perm64;
  t->setAttr("perm", permAttr);
  t->output(0)->setType(typed(permuted));
  t->output(0)->setFoldTarget(true);
  return t->output(0);
}

/// Replaces input \p input of \p n, the weight w, by a packed copy: w's view
/// (split at \p splitDim into panels of \p split when split > 0) transposed
/// by \p perm, a folded constant; \p n reads it back through views
/// (Transpose, and Reshape when split) that give w's shape, which the
/// scheduler inlines into the loads.
void replaceByPacked(Graph &g, PackCache &cache, Node &n, int input,
                     const std::vector<int> &perm, int splitDim,
                     int64_t split) {
  Value *w = n.input(input);
  std::vector<int64_t> view = viewShape(w, splitDim, split);
  Value *&packed = cache.packed[{w, perm, splitDim, split}];
  if (!packed && computedWeight(w))
    packed = packingNodes(g, n, w, view, perm, splitDim, split);
  if (!packed) {
    auto [type, data] = transposed(w, perm, splitDim, split);
    packed = g.addConstant(w->name() + "_packed", type, std::move(data), "",
                           /*folded=*/true);
    recordFold(g, w, packed, perm, splitDim, split);
  }
  std::vector<int64_t> inverse(perm.size());
  for (size_t k = 0; k < perm.size(); ++k)
    inverse[perm[k]] = static_cast<int64_t>(k);
  Node *t = g.addNodeBefore(&n, OpKind::Transpose, w->name() + "_unpacked",
                            {packed}, {w->name() + "_unpacked"});
  Attribute permAttr;
  permAttr.value = inverse;
  t->setAttr("perm", permAttr);
  t->output(0)->setType(split > 0 ? TensorType::of(w->type().dtype, view)
                                   : w->type());
  Value *result = t->output(0);
  if (split > 0) {
    std::vector<int64_t> dims = w->type().staticDims();
    int64_t size = dims[splitDim];
    dims[splitDim] = roundUp(size, split);
    TensorType paddedType = w->type();
    paddedType.dims[splitDim] = Expr(dims[splitDim]);
    Node *r = g.addNodeBefore(&n, OpKind::Reshape, w->name() + "_panels",
                              {result, g.addShapeConstant(w->name() + "_panel_shape", dims)},
                              {w->name() + "_panels"});
    r->output(0)->setType(paddedType);
    result = r->output(0);
    if (dims[splitDim] != size) {
      // The columns of the padding are sliced off again (a view from 0).
      std::string name = w->name() + "_unpadded";
      Node *sl = g.addNodeBefore(
          &n, OpKind::Slice, name,
          {result, g.addShapeConstant(name + "_starts", {0}),
           g.addShapeConstant(name + "_ends", {size}),
           g.addShapeConstant(name + "_axes", {splitDim}),
           g.addShapeConstant(name + "_steps", {1})},
          {name});
      sl->output(0)->setType(w->type());
      result = sl->output(0);
    }
  }
  n.replaceInput(input, result);
}

/// The Cast that widens a packable integer constant of \p b's rank to
/// \p b (integerWidening: MatMulInteger's B or ConvInteger's W), or null.
Node *widenedInteger(const Value *b) {
  Node *p = integerWidening(b);
  return p && packable(p->input(0)) &&
                 p->input(0)->type().rank() == b->type().rank()
             ? p
             : nullptr;
}

/// Conv with one group: W[co, ci, k...] as panels P[co / L, ci, k..., L]
/// when L divides co (each tile of output channels streams one panel), else
/// W'[ci, k..., co]; for channel blocks of B (\p block > 0) that divide
/// co and ci, P[co / B, k..., ci, B] instead. A depthwise Conv: only for
/// channel blocks, P[c / B, 1, k..., B].
bool packConv(Graph &g, PackCache &cache, Node &n, int64_t lanes,
              int64_t block) {
  // The weight's reader: the Conv, or the Cast that widens a narrow
  // integer weight (ConvInteger's), whose own input is packed then.
  Node *holder = &n;
  int input = 1;
  if (Node *cast = widenedInteger(n.input(1))) {
    holder = cast;
    input = 0;
  }
  Value *w = holder->input(input);
  if (!(packable(w) || computedWeight(w)) || w->type().rank() < 3)
    return false;
  int r = w->type().rank();
  int64_t co = w->type().staticDims()[0], ci = w->type().staticDims()[1];
  // Panels of \p width output channels: view [co / W, W, ci, k...] as
  // P[co / W, ci, k..., W].
  auto panels = [&](int64_t width) {
    std::vector<int> perm{0};
    for (int k = 2; k <= r; ++k)
      perm.push_back(k);
    perm.push_back(1);
    replaceByPacked(g, cache, *holder, input, perm, 0, width);
    return true;
  };
  if (n.intAttr("group") != 1) {
    // A depthwise convolution over blocked channels reads, per window
    // step, one weight of each channel of a block.
    const int64_t b = channelBlockFor(co, block);
    if (b == 0 || n.intAttr("group") != co || ci != 1)
      return false;
    return panels(b);
  }
  std::vector<int> perm;
  if (const int64_t b = channelBlockFor(co, block);
      b > 0 && channelBlockFor(ci, block) > 0) {
    // Channel-blocked (the schedule's channel_blocks.h): its reduction
    // runs over input-channel blocks, the window, then the channels of a
    // block, innermost. View [co / B, B, ci, k...] as P[co / B, k..., ci,
    // B]: each step reads the next B output channels of one row, the
    // steps of a block one contiguous run.
    perm.push_back(0);
    for (int k = 3; k <= r; ++k)
      perm.push_back(k);
    perm.push_back(2);
    perm.push_back(1);
    replaceByPacked(g, cache, *holder, input, perm, 0, b);
    return true;
  }
  if (lanes >= 4 && co % lanes == 0 && co > lanes)
    return panels(lanes);
  for (int k = 1; k < r; ++k)
    perm.push_back(k);
  perm.push_back(0);
  replaceByPacked(g, cache, *holder, input, perm, -1, 0);
  return true;
}

/// The Transpose node that makes \p b from a packable rank-2 constant (an
/// exporter that does not fold weights writes MatMul(x, Transpose(W)) for
/// a Linear layer and for a tied embedding), or null.
Node *transposedConstant(const Value *b) {
  Node *t = b->producer();
  if (!t || t->op() != OpKind::Transpose || b->type().rank() != 2 ||
      !packable(t->input(0)))
    return nullptr;
  if (t->hasAttr("perm")) {
    const std::vector<int64_t> &perm = t->intsAttr("perm");
    if (perm != std::vector<int64_t>{1, 0})
      return nullptr;
  }
  return t;
}

/// The constant right operand B of a MatMul (rank 2, [k, n]) or of a Gemm
/// ([k, n], or [n, k] with transB = 1) as panels P[ceil(n / L), k, L] (the
/// last one padded with zero columns when L does not divide n: GPT-2's
/// 50257-wide head); a Gemm with transB = 1 and n <= L gets B'[k, n] and
/// transB = 0. B = Transpose(W) of a constant counts as W with transB (its
/// copy at n <= L, or lanes 1 on GPUs, is W'[k, n] read directly).
bool packRightOperand(Graph &g, PackCache &cache, Node &n, int64_t lanes) {
  const bool transB = n.op() == OpKind::Gemm && n.intAttr("transB") == 1;
  // B = Transpose(W) whose W an earlier reader of the Transpose packed:
  // this node reads the same panels through it.
  if (!transB && n.input(1)->producer() &&
      cache.holders.count(n.input(1)->producer()))
    return true;
  // W[n, k] read transposed: a Gemm's B with transB = 1 (held by n), or the
  // input of B = Transpose(W) (held by the Transpose).
  Node *holder = transB ? &n : transposedConstant(n.input(1));
  const int input = holder == &n ? 1 : 0;
  if (!holder) {
    Value *b = n.input(1);
    if (Node *cast = b->type().rank() == 2 ? widenedInteger(b) : nullptr) {
      // Its narrow weight in panels, which the widening reads through
      // views (fold_program.cpp leaves the widening to the kernel).
      if (lanes < 4 || cast->input(0)->type().staticDims()[1] <= lanes)
        return false;
      replaceByPacked(g, cache, *cast, 0, {1, 0, 2}, 1, lanes);
      return true;
    }
    if (!(packable(b) || computedWeight(b)) || b->type().rank() != 2)
      return false;
    if (lanes >= 4 && b->type().staticDims()[1] > lanes) {
      replaceByPacked(g, cache, n, 1, {1, 0, 2}, 1, lanes); // view [k, n / L, L]
      return true;
    }
    return false;
  }
  Value *w = holder->input(input);
  if (!packable(w) || w->type().rank() != 2)
    return false;
  if (lanes >= 4 && w->type().staticDims()[0] > lanes) {
    // The panels replace W where its holder reads it: every reader of the
    // Transpose sees the same values. View [n / L, L, k] -> [n / L, k, L].
    replaceByPacked(g, cache, *holder, input, {0, 2, 1}, 0, lanes);
    if (holder != &n)
      cache.holders.insert(holder);
    return true;
  }
  // One transposed copy W'[k, n] that n reads directly.
  Value *&packed = cache.packed[{w, {1, 0}, -1, 0}];
  if (!packed) {
    auto [type, data] = transposed(w, {1, 0});
    packed = g.addConstant(w->name() + "_packed", type, std::move(data), "",
                           /*folded=*/true);
    recordFold(g, w, packed, {1, 0});
  }
  n.replaceInput(1, packed);
  if (transB) {
    Attribute zero;
    zero.value = int64_t{0};
    n.setAttr("transB", zero);
  }
  return true;
}

} // namespace

int packWeights(Graph &g, int64_t lanes, int64_t convBlock) {
  std::vector<Node *> nodes;
  for (const auto &n : g.nodes())
    nodes.push_back(n.get());
  int packed = 0;
  PackCache cache;
  for (Node *n : nodes) {
    if (n->op() == OpKind::Conv)
      packed += packConv(g, cache, *n, lanes, convBlock);
    else if (n->op() == OpKind::Gemm || n->op() == OpKind::MatMul)
      packed += packRightOperand(g, cache, *n, lanes);
  }
  if (packed)
    g.removeDeadNodes();
  return packed;
}

} // namespace aotc
