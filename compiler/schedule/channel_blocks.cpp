/// \file
/// Channel-blocked activations (channel_blocks.h).
#include "compiler/schedule/channel_blocks.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <algorithm>
#include <map>
#include <optional>

namespace aotc {

namespace {

struct Read {
  int tensor;
  std::vector<Expr> indices;
};

/// Each reduction variable of \p d over an extent of 1, bound to 0.
VarBindings unitReductionVars(const TensorDef &d, const FormalVars &vars) {
  VarBindings unit;
  for (size_t k = 0; k < d.reduceExtents.size(); ++k)
    if (d.reduceExtents[k].isConstValue(1))
      unit.push_back({vars.rvar(static_cast<int>(k)), Expr(int64_t{0})});
  return unit;
}

/// Every read of another def in \p d's body and epilogue, its indices
/// simplified where a reduction variable has extent 1 (a depthwise
/// convolution reads channel i1 + r0, r0 in [0, 1)).
std::vector<Read> readsOf(const TensorDef &d, const FormalVars &vars) {
  struct V : IRVisitor {
    std::vector<Read> reads;
    VarBindings unit;
    void visitAccess(const Access *op) override {
      std::vector<Expr> at;
      for (const Expr &i : op->indices)
        at.push_back(simplify(substitute(i, unit)));
      reads.push_back(Read{op->tensor, at});
      IRVisitor::visitAccess(op);
    }
  } v;
  v.unit = unitReductionVars(d, vars);
  v.visit(d.body);
  v.visit(d.epilogue);
  return v.reads;
}

/// Re-indexes every read of a blocked def: (n, c, h, w) -> (n, c / B, h, w,
/// c % B), B the def's block.
class BlockedReads : public IRMutator {
public:
  explicit BlockedReads(const std::vector<int64_t> &blocks) : blocks_(blocks) {}

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    const int64_t b = blocks_[a->tensor];
    if (b == 0 || a->indices.size() != 4)
      return e;
    const std::vector<Expr> &i = a->indices;
    return Access::make(a->type, a->tensor,
                        {i[0], floorDiv(i[1], Expr(b)), i[2], i[3],
                         mod(i[1], Expr(b))});
  }

private:
  const std::vector<int64_t> &blocks_;
};

bool isVar(const Expr &e, const Expr &var) { return structurallyEqual(e, var); }

/// The pass's three phases over one lowered graph: grow the region from
/// the convolutions, trim what would not gain from it, rewrite it.
class ChannelBlocks {
public:
  ChannelBlocks(LoweredGraph &lg, int64_t block)
      : lg_(lg), block_(block), n_(lg.defs.size()),
        channel_(lg.vars.idx(1)), fixed_(n_, false), blocked_(n_, false),
        reads_(n_), readers_(n_) {
    for (int o : lg.outputs)
      fixed_[o] = true; // the caller's buffer has the caller's layout
    for (const LoweredGraph::Sync &s : lg.syncs)
      fixed_[s.def] = true;
    // A fused attention and what it reads keep their layouts: its score
    // reads are not re-indexed here.
    for (size_t id = 0; id < n_; ++id)
      if (lg.defs[id].attention) {
        fixed_[id] = true;
        for (int t : accessedDefs(lg.defs[id]))
          fixed_[t] = true;
      }
    for (size_t id = 0; id < n_; ++id) {
      reads_[id] = readsOf(lg.defs[id], lg.vars);
      for (const Read &r : reads_[id])
        readers_[r.tensor].push_back(static_cast<int>(id));
    }
  }

  /// The convolutions, then (to a fixed point) every candidate that reads
  /// a blocked def at its own channel (epilogues, residual sums, pools,
  /// depthwise convolutions, Concats at block offsets) or that a blocked
  /// def reads aligned (padded copies, the other operand of a residual
  /// sum).
  void grow() {
    for (size_t id = 0; id < n_; ++id)
      if (candidate(id) && convolution(def(id)))
        blocked_[id] = true;
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t id = 0; id < n_; ++id) {
        if (blocked_[id] || !candidate(id))
          continue;
        for (const Read &r : reads_[id])
          if (blocked_[r.tensor] && r.indices.size() == 4 &&
              isVar(r.indices[1], channel_)) {
            blocked_[id] = grew = true;
            break;
          }
      }
      for (size_t id = 0; id < n_; ++id) {
        if (!blocked_[id])
          continue;
        for (const Read &r : reads_[id])
          if (!blocked_[r.tensor] &&
              candidate(static_cast<size_t>(r.tensor)) &&
              alignedRead(def(id), r))
            blocked_[r.tensor] = grew = true;
      }
    }
  }

  /// A blocked def gains from its layout only where something reads it in
  /// blocks: a blocked def, a convolution over its channels (whatever that
  /// convolution's own layout), or a global pool (as cheap as NCHW, one
  /// channel per output). One that only pointwise defs, views or other
  /// reductions outside the region read keeps NCHW: its readers would
  /// otherwise pay the layout change (a convolution whose result the graph
  /// returns, through Relu, would store it blocked and need a kernel to
  /// change it back; a depthwise convolution or pool with an NCHW result
  /// would read its rows of pixels a block apart). So does a def between
  /// two NCHW neighbours, which would only change the layout there and
  /// back. Its producers may then follow, in turn. A global pool gains
  /// from its own blocks: its kernel reads a vector of channels at a time
  /// (one channel a work-item in NCHW, reading a block apart); its
  /// one-pixel result, [N, C/B, 1, 1, B], is NCHW's order, so a Flatten
  /// after it reads it as before. MobileNetV2's 0.042 -> 0.011 ms at batch
  /// 1 and 0.212 -> 0.053 at batch 8 (stop 53).
  void trim() {
    for (bool shrank = true; shrank;) {
      shrank = false;
      for (size_t id = 0; id < n_; ++id) {
        if (!blocked_[id])
          continue;
        bool gains = globalPool(def(id)), linked = false;
        for (int r : readers_[id]) {
          gains |= blocked_[r] || globalPool(def(r)) ||
                   overChannels(r, static_cast<int>(id));
          linked |= blocked_[r];
        }
        for (const Read &r : reads_[id])
          linked |= blocked_[r.tensor];
        if (!gains || !linked) {
          blocked_[id] = false;
          shrank = true;
        }
      }
    }
  }

  /// Re-indexes the blocked defs and every read of them, splits the
  /// channel reductions over them; returns the number of defs blocked.
  int rewrite() {
    int count = 0;
    std::vector<int64_t> blocks(n_, 0);
    for (size_t id = 0; id < n_; ++id)
      blocks[id] = blocked_[id] ? blockOf(id) : 0;
    BlockedReads blockedReads(blocks);
    for (size_t id = 0; id < n_; ++id) {
      TensorDef &d = lg_.defs[id];
      bool readsBlocked = false;
      for (const Read &r : reads_[id])
        readsBlocked |= blocked_[r.tensor];
      if (blocked_[id]) {
        ++count;
        // The def's own index: channel i1 of the old shape is block i1,
        // lane i4 of the new one.
        const int64_t b = blocks[id];
        VarBindings own{{channel_, channel_ * Expr(b) + lg_.vars.idx(4)}};
        d.body = substitute(d.body, own);
        if (d.epilogue.defined())
          d.epilogue = substitute(d.epilogue, own);
        int64_t c = 0;
        d.shape[1].isConst(c);
        d.shape = {d.shape[0], Expr(c / b), d.shape[2], d.shape[3], Expr(b)};
      } else if (!readsBlocked) {
        continue;
      }
      // Which reduction variables run over the channels of a blocked def
      // (found before the rewrite changes the reads).
      // Per such loop, the block of the input it runs over.
      std::map<int, int64_t> channelLoops;
      int64_t inputPixels = 0; // H x W of the largest blocked input read
      for (const Read &r : reads_[id])
        for (size_t k = 0; k < d.reduceExtents.size(); ++k)
          if (blocked_[r.tensor] && r.indices.size() == 4 &&
              overWholeBlocks(d, k, r.indices[1], blocks[r.tensor])) {
            channelLoops[static_cast<int>(k)] = blocks[r.tensor];
            int64_t h = 0, w = 0;
            const TensorDef &in = def(r.tensor);
            if (in.shape.size() >= 4 && in.shape[2].isConst(h) &&
                in.shape[3].isConst(w))
              inputPixels = std::max(inputPixels, h * w);
          }
      // A depthwise convolution's channel i1 + r0, r0 in [0, 1), is i1.
      if (VarBindings unit = unitReductionVars(d, lg_.vars); !unit.empty())
        d.body = substitute(d.body, unit);
      d.body = blockedReads.mutate(d.body);
      if (d.epilogue.defined())
        d.epilogue = blockedReads.mutate(d.epilogue);
      // Channel reductions: c -> cb * B + ci, ci the innermost variable.
      VarBindings split;
      for (const auto &[k, b] : channelLoops) {
        int64_t e = 0;
        d.reduceExtents[k].isConst(e);
        Expr lane = lg_.vars.rvar(static_cast<int>(d.reduceExtents.size()));
        split.push_back({lg_.vars.rvar(k), lg_.vars.rvar(k) * Expr(b) + lane});
        d.reduceExtents[k] = Expr(e / b);
        d.reduceExtents.push_back(Expr(b));
      }
      if (!split.empty())
        d.body = substitute(d.body, split);
      reorderChannelBlocks(d, channelLoops, inputPixels);
      simplifyDef(d);
    }
    return count;
  }

private:
  const TensorDef &def(size_t id) const { return lg_.defs[id]; }

  /// Where the weight is the longer stream, moves the channel-block loops
  /// \p channelLoops (each with its input's block B) of the split def \p d
  /// inside its other reduction loops (a window's kh, kw), just outside the
  /// lanes: (cb, kh, kw, lane) becomes (kh, kw, cb, lane). The weight packed for it, P[co / B, kh, kw,
  /// ci, B] (pack_weights.h), is then read as one sequential stream; in the
  /// old order each (kh, kw) step jumped 64 KB and more, so every 4 KB of
  /// it started cold: ResNet-18's 512-channel 3 x 3 convolutions at batch
  /// 1, which read each 590 KB panel from memory once, took 0.77 ms each,
  /// 0.59 reordered. The input's blocks are then read a channel block
  /// apart at each step, which costs where the input is the longer stream:
  /// per input channel the weight holds taps x B values and the input
  /// \p inputPixels, so only where taps x B is larger (7 x 7 and 14 x 14
  /// maps of 3 x 3 windows: ResNet-18's layer2 took 11-13% longer
  /// reordered, layer3 2-5% less, layer4 22% less). A sum reordered: equal
  /// within rounding.
  void reorderChannelBlocks(TensorDef &d,
                            const std::map<int, int64_t> &channelLoops,
                            int64_t inputPixels) {
    const int total = static_cast<int>(d.reduceExtents.size());
    const int lanes = static_cast<int>(channelLoops.size());
    int64_t block = 0, taps = 1;
    for (const auto &loop : channelLoops)
      block = std::max(block, loop.second);
    for (int k = 0; k < total - lanes; ++k) {
      int64_t e = 0;
      if (channelLoops.count(k))
        continue;
      if (!d.reduceExtents[k].isConst(e))
        return;
      taps *= e;
    }
    if (lanes == 0 || inputPixels <= 0 || taps * block <= inputPixels)
      return;
    std::vector<int> order; // new position -> old position
    for (int k = 0; k < total - lanes; ++k)
      if (!channelLoops.count(k))
        order.push_back(k);
    for (const auto &loop : channelLoops)
      order.push_back(loop.first);
    for (int k = total - lanes; k < total; ++k)
      order.push_back(k);
    bool moved = false;
    for (int k = 0; k < total; ++k)
      moved |= order[k] != k;
    if (!moved)
      return;
    VarBindings perm;
    std::vector<Expr> extents;
    for (int k = 0; k < total; ++k) {
      perm.push_back({lg_.vars.rvar(order[k]), lg_.vars.rvar(k)});
      extents.push_back(d.reduceExtents[order[k]]);
    }
    // The epilogue reads the output index and the accumulator only.
    d.body = substitute(d.body, perm);
    d.reduceExtents = std::move(extents);
  }

  /// The block of def \p id's channels (channelBlockFor): the pass's
  /// block where it divides them, else one vector (MobileNetV2's
  /// 16-channel features.1, whose projection stored one scalar per lane
  /// into NCHW: 0.12 ms at batch 1 against ONNX Runtime's 0.08, 1.03
  /// against 0.56 at batch 8), else 0.
  int64_t blockOf(size_t id) const {
    int64_t c = 0;
    if (!def(id).shape[1].isConst(c))
      return 0;
    return channelBlockFor(c, block_);
  }

  /// A def whose layout may change: computed (not a view, an input, a
  /// constant, an output or a count), of rank 4, channels a multiple of
  /// a block (blockOf), more than one pixel unless it is a global pool
  /// (another one-pixel def gains nothing from blocks).
  bool candidate(size_t id) const {
    const TensorDef &d = def(id);
    int64_t h, w;
    if (fixed_[id] || d.isView || d.rank() != 4 ||
        (d.kind != TensorDef::Kind::Pointwise &&
         d.kind != TensorDef::Kind::Reduction) ||
        blockOf(id) == 0)
      return false;
    return globalPool(d) ||
           !(d.shape[2].isConst(h) && d.shape[3].isConst(w) && h * w == 1);
  }

  /// The static extent of \p d's reduction variable k where \p channel,
  /// read by \p d, is that variable; else nothing.
  std::optional<int64_t> channelLoop(const TensorDef &d, size_t k,
                                     const Expr &channel) const {
    int64_t e = 0;
    if (!isVar(channel, lg_.vars.rvar(static_cast<int>(k))) ||
        !d.reduceExtents[k].isConst(e))
      return std::nullopt;
    return e;
  }

  /// Whether \p channel, read by \p d, is its reduction variable k over
  /// whole blocks of \p block.
  bool overWholeBlocks(const TensorDef &d, size_t k, const Expr &channel,
                       int64_t block) const {
    const std::optional<int64_t> e = channelLoop(d, k, channel);
    return block > 0 && e && *e % block == 0;
  }

  /// Whether reader \p r reads channel-aligned: its index 1 is its own
  /// channel, or one of its reduction variables over whole blocks of the
  /// def read, or over the first channels of a single block (a 1 x 1 Conv
  /// that reads only the valid channels of a padded block, pad_channels.h,
  /// 24 of 32: its loop stays whole, no split, and its reads of the
  /// block's lanes simplify to the channel itself).
  bool alignedRead(const TensorDef &r, const Read &read) const {
    if (read.indices.size() != 4)
      return false;
    if (r.rank() == 4 && isVar(read.indices[1], channel_))
      return true;
    const int64_t block = blockOf(static_cast<size_t>(read.tensor));
    for (size_t k = 0; k < r.reduceExtents.size(); ++k)
      if (const std::optional<int64_t> e = channelLoop(r, k, read.indices[1]);
          block > 0 && e && (*e % block == 0 || *e < block))
        return true;
    return false;
  }

  /// A convolution's reduction over input channels: a Conv's, or the
  /// GEMMs of a Winograd convolution's (lower_winograd.cpp).
  static bool convolution(const TensorDef &d) {
    return d.kind == TensorDef::Kind::Reduction &&
           (d.op == opName(OpKind::Conv) ||
            d.op == opName(OpKind::WinogradConv));
  }

  static bool globalPool(const TensorDef &d) {
    int64_t h, w;
    return d.kind == TensorDef::Kind::Reduction && d.rank() == 4 &&
           d.shape[2].isConst(h) && d.shape[3].isConst(w) && h * w == 1;
  }

  /// Whether reduction \p reader reduces over the channels of \p tensor.
  bool overChannels(int reader, int tensor) const {
    const TensorDef &d = def(reader);
    if (d.kind != TensorDef::Kind::Reduction)
      return false;
    for (const Read &r : reads_[reader])
      if (r.tensor == tensor && alignedRead(d, r) &&
          !isVar(r.indices[1], channel_))
        return true;
    return false;
  }

  /// Simplifies \p d's body and epilogue over its index and reduction
  /// ranges ((B * i1 + i4) / B is i1).
  void simplifyDef(TensorDef &d) const {
    RangeEnv env = defRanges(lg_, d);
    if (d.body.defined())
      d.body = simplify(d.body, env);
    if (d.epilogue.defined())
      d.epilogue = simplify(d.epilogue, env);
  }

  LoweredGraph &lg_;
  const int64_t block_;
  const size_t n_;
  const Expr channel_;
  std::vector<bool> fixed_, blocked_;
  std::vector<std::vector<Read>> reads_;
  std::vector<std::vector<int>> readers_;
};

} // namespace

int64_t channelBlock(const DeviceProfile &target) {
  int lanes = explicitVectorLanes(target);
  return target.family == "cpu" && lanes >= 8 ? 2 * lanes : 0;
}

int blockChannels(LoweredGraph &lg, int64_t block) {
  ChannelBlocks pass(lg, block);
  pass.grow();
  pass.trim();
  return pass.rewrite();
}

} // namespace aotc
