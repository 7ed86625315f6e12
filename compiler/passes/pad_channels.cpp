/// \file
/// Convolution channels padded to whole channel blocks (see pad_channels.h).
#include "compiler/passes/pad_channels.h"

#include "compiler/passes/fold_program.h"
#include "compiler/schedule/device_profile.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace aotc {

namespace {

/// The static channel count of a float32 rank-4 value, or 0.
int64_t channelsOf(const Value *v) {
  int64_t c = 0;
  if (!v || v->type().dtype != DType::Float32 || v->type().rank() != 4 ||
      !v->type().dims[1].isConst(c))
    return 0;
  return c;
}

/// A weight the folding program can compute from: float32, static, not a
/// per-run default.
bool foldableWeight(const Value *w) {
  return w && w->type().dtype == DType::Float32 && w->type().isStatic() &&
         isFoldable(w);
}

/// A constant scalar whose value is known and finite (a Clip's bound).
bool finiteScalar(const Value *v) {
  if (!v)
    return true; // absent: no bound
  if (!v->isConstant() || !v->data().defined() || !isFoldable(v))
    return false;
  return v->type().numel().isConstValue(1) && isFloat(v->type().dtype) &&
         std::isfinite(tensorDataFloat(v->data(), v->type().dtype, 0));
}

bool finiteAttr(const Node &n, const char *name) {
  auto it = n.attrs().find(name);
  if (it == n.attrs().end())
    return true;
  const double *d = std::get_if<double>(&it->second.value);
  return d && std::isfinite(*d);
}

/// An activation that maps a finite value to a finite value (a padded
/// channel, finite, stays finite), applied to input 0 alone.
bool finiteActivation(const Node &n) {
  switch (n.op()) {
  case OpKind::Relu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::HardSwish:
    return true;
  case OpKind::LeakyRelu:
    return finiteAttr(n, "alpha");
  case OpKind::HardSigmoid:
    return finiteAttr(n, "alpha") && finiteAttr(n, "beta");
  case OpKind::Clip:
    return finiteScalar(n.input(1)) && finiteScalar(n.input(2)) &&
           finiteAttr(n, "min") && finiteAttr(n, "max");
  default:
    return false;
  }
}

bool sameShape(const TensorType &a, const TensorType &b) {
  if (a.dtype != b.dtype || a.rank() != b.rank())
    return false;
  for (int k = 0; k < a.rank(); ++k)
    if (!structurallyEqual(a.dims[k], b.dims[k]))
      return false;
  return true;
}

bool isConv2d(const Node &n) {
  return n.op() == OpKind::Conv && n.output(0)->type().rank() == 4 &&
         foldableWeight(n.input(1)) && n.input(1)->type().rank() == 4 &&
         (!n.input(2) || foldableWeight(n.input(2)));
}

/// A one-group 2-D Conv with foldable weights: a seed when its channels are
/// padded, and a reader of padded channels through zero weights.
bool isDenseConv2d(const Node &n) {
  return isConv2d(n) && n.intAttr("group") == 1;
}

class PadChannels {
public:
  PadChannels(Graph &g, int64_t block) : g_(g), block_(block) {}

  int run() {
    findRegions();
    if (region_.empty())
      return 0;
    int padded = 0;
    std::vector<Node *> nodes;
    for (const auto &n : g_.nodes())
      nodes.push_back(n.get());
    for (Node *n : nodes)
      padded += rewriteConv(*n);
    for (Node *n : nodes)
      if (seeds_.count(n))
        maskAddedChannels(*n);
    nodes.clear(); // with the masks
    for (const auto &n : g_.nodes())
      nodes.push_back(n.get());
    for (Node *n : nodes)
      for (Value *out : n->outputs())
        if (region_.count(out))
          sliceForOthers(out);
    // The region's values get their padded channel counts.
    for (const auto &[v, c] : region_) {
      TensorType t = v->type();
      t.dims[1] = Expr(padTo(c));
      v->setType(t);
    }
    g_.removeDeadNodes();
    return padded;
  }

private:
  /// The channel count \p c is padded to: c where the block divides it;
  /// else whole blocks where they add at most 1/8 of c (144 -> 160 with
  /// AVX-512's 32); else the least count with a block of one vector
  /// (channelBlockFor), c itself where a vector divides it. Two
  /// measurements bracket the 1/8 (MobileNetV2, ab_models, both orders):
  /// under generic-avx512, 144 channels in blocks of 16 instead of 160 in
  /// blocks of 32 were 1-6% slower at batch 8 and 0-2% at batch 1 (a
  /// depthwise tile over one vector of channels, for 11% fewer bytes);
  /// under generic-avx2, 24 channels in blocks of 8 instead of 32 in
  /// blocks of 16 were 3-7% faster at batch 8 and 2-3% at batch 1 (for a
  /// third fewer bytes and FLOPs).
  int64_t padTo(int64_t c) const {
    if (c % block_ == 0)
      return c;
    const int64_t whole = (c + block_ - 1) / block_ * block_;
    if (whole * 8 <= c * 9)
      return whole;
    int64_t p = c;
    while (channelBlockFor(p, block_) == 0)
      ++p;
    return p;
  }

  /// Seeds (one-group convolutions worth padding), then, to a fixed point,
  /// what keeps their added channels finite and separate.
  void findRegions() {
    std::set<const Node *> candidates;
    for (const auto &n : g_.nodes()) {
      if (!isDenseConv2d(*n))
        continue;
      const int64_t c = channelsOf(n->output(0)), p = c > 0 ? padTo(c) : 0;
      if (p != c && p * 3 <= c * 4)
        candidates.insert(n.get());
    }
    // A region (a connected part: a value with the region values it is
    // computed from) that no convolution over its channels reads would only
    // compute the added channels: channel_blocks.h keeps such a region NCHW
    // (a depthwise convolution to the graph's output gains nothing from
    // blocks). Its seeds are dropped, and the rest grown again.
    seeds_ = candidates;
    grow();
    std::map<const Value *, const Value *> parent;
    std::function<const Value *(const Value *)> root = [&](const Value *v) {
      const Value *p = parent.count(v) ? parent[v] : v;
      return p == v ? v : (parent[v] = root(p));
    };
    for (const auto &[v, c] : region_)
      for (const Value *in : v->producer()->inputs())
        if (region_.count(const_cast<Value *>(in)))
          parent[root(v)] = root(in);
    std::set<const Value *> read;
    for (const auto &[v, c] : region_)
      for (const Node *u : v->users())
        if (u->input(0) == v && isDenseConv2d(*u))
          read.insert(root(v));
    std::set<const Node *> kept;
    for (const Node *seed : candidates)
      if (read.count(root(seed->output(0))))
        kept.insert(seed);
    region_.clear();
    seeds_ = kept;
    grow();
  }

  /// The seeds' results, then (to a fixed point) what joins the region.
  void grow() {
    for (const Node *seed : seeds_)
      region_[seed->output(0)] = channelsOf(seed->output(0));
    for (bool grew = !region_.empty(); grew;) {
      grew = false;
      for (const auto &n : g_.nodes()) {
        if (n->outputs().empty() || region_.count(n->output(0)))
          continue;
        int64_t c = joins(*n);
        if (c > 0 && channelsOf(n->output(0)) == c) {
          region_[n->output(0)] = c;
          grew = true;
        }
      }
    }
  }

  /// The channel count \p n's result keeps padded, or 0 where it leaves
  /// the region.
  int64_t joins(const Node &n) const {
    auto in = [&](size_t i) -> int64_t {
      auto it = region_.find(n.input(i));
      return it == region_.end() ? 0 : it->second;
    };
    if (n.outputs().size() != 1 || n.numInputs() == 0)
      return 0;
    int64_t c = in(0);
    if (c == 0)
      return 0;
    if (finiteActivation(n))
      return c;
    if ((n.op() == OpKind::Add || n.op() == OpKind::Sub) &&
        n.numInputs() == 2 && in(1) == c &&
        sameShape(n.input(0)->type(), n.input(1)->type()))
      return c;
    if (isConv2d(n) && n.intAttr("group") == c &&
        n.input(1)->type().staticDims()[0] == c &&
        n.input(1)->type().staticDims()[1] == 1)
      return c; // depthwise
    return 0;
  }

  /// Pads the weights (and bias, and group) of a convolution that
  /// computes, or reads, padded channels. Returns 1 where it computes them.
  int rewriteConv(Node &n) {
    if (!isConv2d(n))
      return 0;
    auto inIt = region_.find(n.input(0));
    auto outIt = region_.find(n.output(0));
    bool computesPadded = outIt != region_.end();
    bool depthwise = n.intAttr("group") != 1;
    // A one-group Conv over a padded value reads its added channels with
    // zero weights, unless it reduces over the valid ones alone
    // (readsValidOnly); a grouped one outside the region reads a Slice.
    bool readsPadded = inIt != region_.end() && (computesPadded || !depthwise);
    bool padsInputChannels =
        readsPadded && !depthwise && !readsValidOnly(n, inIt->second);
    if (!padsInputChannels && !computesPadded)
      return 0;
    std::vector<int64_t> pads(8, 0);
    if (computesPadded)
      pads[4] = padTo(outIt->second) - outIt->second;
    if (padsInputChannels)
      pads[5] = padTo(inIt->second) - inIt->second;
    n.replaceInput(1, padded(n, n.input(1), pads));
    if (computesPadded && n.input(2))
      n.replaceInput(2, padded(n, n.input(2), {0, pads[4]}));
    if (depthwise) {
      Attribute group;
      group.value = padTo(outIt->second);
      n.setAttr("group", group);
    }
    return computesPadded && seeds_.count(&n) ? 1 : 0;
  }

  /// Whether one-group Conv \p n, reading a padded value of \p c valid
  /// channels, reduces over those c alone: a 1 x 1 one whose input is one
  /// channel block (c < P, P its block: 24 of 32). Its weight then keeps
  /// its c input channels, and the Conv reads the first c of its input's P
  /// (ops.def), a loop of c steps inside the one block; no multiply by an
  /// added channel's zero weight. Elsewhere the reduction runs over whole
  /// blocks: channel_blocks.h splits a channel loop into blocks and lanes
  /// only over whole blocks (144 of 160 in blocks of 32 would stay one
  /// loop of 144, whose reads of the blocked input compute the block and
  /// lane at each step: MobileNetV2's 144 -> 24 projection took 1.33x as
  /// long so), and Winograd (winograd.h) transforms whole blocks. Measured
  /// under AVX-512's blocks of 32 (MobileNetV2, batch 8, per-kernel
  /// profile, 2 x 30 runs each): the 24 -> 144 expansions of features.3
  /// and .4 took 0.93x and 0.85x as long.
  bool readsValidOnly(const Node &n, int64_t c) const {
    const int64_t p = padTo(c);
    const std::vector<int64_t> w = n.input(1)->type().staticDims();
    return c < p && channelBlockFor(p, block_) == p && w[2] == 1 && w[3] == 1;
  }

  /// The added channels of seed \p conv's result set to 0 by a select on a
  /// constant mask: Where(mask[1, P, 1, 1], conv, 0), which the scheduler
  /// fuses into the convolution's store. Computed, they are 0 x input: NaN
  /// where the input holds an infinity, which an activation would keep
  /// (Relu(NaN)) while making the valid channels finite (Relu(-inf) = 0),
  /// and which the next convolution's zero weights would spread into
  /// every valid channel.
  void maskAddedChannels(Node &conv) {
    Value *v = conv.output(0);
    const int64_t c = region_.at(v), p = padTo(c);
    std::vector<uint8_t> bits(static_cast<size_t>(p), 0);
    for (int64_t k = 0; k < c; ++k)
      bits[static_cast<size_t>(k)] = 1;
    // Named after the result (value names are unique; node names need
    // not be).
    const std::string base = "aotc_padc_" + v->name();
    std::string name = base + "_mask";
    // One bool per channel, viewed as [1, P, 1, 1]: a tile's lanes then
    // read consecutive mask elements (one vector load).
    Value *bits1d = g_.addConstant(name + "_bits",
                                   TensorType::of(DType::Bool, {p}),
                                   TensorData::fromBytes(std::move(bits)), "",
                                   /*folded=*/true);
    Value *z = g_.addScalarConstant(name + "_zero", 0.0f);
    // The Where takes over the conv's result: its name (a graph output's),
    // its readers and its place in the region.
    std::string outName = v->name();
    v->setName(base + "_unmasked");
    const Node *next = nullptr;
    for (size_t i = 0; i + 1 < g_.nodes().size(); ++i)
      if (g_.nodes()[i].get() == &conv)
        next = g_.nodes()[i + 1].get();
    Node *r = g_.addNodeBefore(&conv, OpKind::Reshape, name,
                               {bits1d, g_.addShapeConstant(name + "_shape",
                                                            {1, p, 1, 1})},
                               {name});
    r->output(0)->setType(TensorType::of(DType::Bool, {1, p, 1, 1}));
    Value *mask = r->output(0);
    std::string where = name + "_where";
    Node *w = next ? g_.addNodeBefore(next, OpKind::Where, where, {mask, v, z},
                                      {outName})
                   : g_.addNode(OpKind::Where, where, {mask, v, z}, {outName});
    w->output(0)->setType(v->type());
    g_.replaceAllUsesWith(v, w->output(0)); // the Where's own input too:
    w->replaceInput(1, v);                  // it reads the conv again
    region_[w->output(0)] = c;
  }

  /// Pad(\p w, \p pads) with zeros, placed before \p user.
  Value *padded(Node &user, Value *w, const std::vector<int64_t> &pads) {
    std::vector<int64_t> dims = w->type().staticDims();
    const size_t r = dims.size();
    for (size_t k = 0; k < r; ++k)
      dims[k] += pads[k] + pads[r + k];
    std::string name =
        "aotc_padc_" + user.output(0)->name() + "_" + w->name();
    Node *p = g_.addNodeBefore(&user, OpKind::Pad, name,
                               {w, g_.addShapeConstant(name + "_pads", pads)},
                               {name});
    Attribute mode;
    mode.value = std::string("constant");
    p->setAttr("mode", mode);
    p->output(0)->setType(TensorType::of(DType::Float32, dims));
    return p->output(0);
  }

  /// Readers of \p v outside the region (and the graph's outputs) read its
  /// first channels through a Slice.
  void sliceForOthers(Value *v) {
    const int64_t c = region_.at(v);
    std::vector<std::pair<Node *, size_t>> others;
    for (Node *u : v->users()) {
      // A node of the region reads the added channels as its own; a
      // one-group Conv reads them (its input 0) with zero weights.
      bool inside = false;
      for (Value *o : u->outputs())
        inside |= region_.count(o) > 0;
      bool absorbs = isDenseConv2d(*u);
      for (size_t i = 0; i < u->numInputs(); ++i)
        if (u->input(i) == v && !inside && !(absorbs && i == 0))
          others.emplace_back(u, i);
    }
    bool output = g_.isOutput(v);
    if (others.empty() && !output)
      return;
    // Placed before the first reader outside (node order is topological),
    // or at the end for an output alone.
    Node *first = nullptr;
    for (const auto &n : g_.nodes())
      for (auto &[u, i] : others)
        if (!first && u == n.get())
          first = u;
    std::string name = v->name();
    std::string slice = "aotc_padc_" + v->name() + "_slice";
    std::vector<Value *> ins = {
        v, g_.addShapeConstant(slice + "_starts", {0}),
        g_.addShapeConstant(slice + "_ends", {c}),
        g_.addShapeConstant(slice + "_axes", {1}),
        g_.addShapeConstant(slice + "_steps", {1})};
    // The sliced value keeps the name a graph output is known by.
    if (output)
      v->setName(name + "_padded");
    std::string outName = output ? name : slice;
    Node *s = first ? g_.addNodeBefore(first, OpKind::Slice, slice, ins,
                                       {outName})
                    : g_.addNode(OpKind::Slice, slice, ins, {outName});
    s->output(0)->setType(v->type()); // the unpadded type (set before)
    for (auto &[u, i] : others)
      u->replaceInput(i, s->output(0));
    if (output)
      for (size_t k = 0; k < g_.outputs().size(); ++k)
        if (g_.outputs()[k] == v)
          g_.setOutput(k, s->output(0));
  }

  Graph &g_;
  const int64_t block_;
  std::map<Value *, int64_t> region_; ///< value -> its unpadded channels
  std::set<const Node *> seeds_;
};

} // namespace

int padChannels(Graph &g, int64_t block) {
  if (block <= 1)
    return 0;
  return PadChannels(g, block).run();
}

} // namespace aotc
