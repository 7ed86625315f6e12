/// \file
/// Channel-blocked activations (channel_blocks.h).
#include "compiler/schedule/channel_blocks.h"

#include "ir/simplify.h"
#include "ir/visitor.h"

#include <set>

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
/// c % B).
class BlockedReads : public IRMutator {
public:
  BlockedReads(const std::vector<bool> &blocked, int64_t lanes)
      : blocked_(blocked), lanes_(lanes) {}

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    if (!blocked_[a->tensor] || a->indices.size() != 4)
      return e;
    const std::vector<Expr> &i = a->indices;
    return Access::make(a->type, a->tensor,
                        {i[0], floorDiv(i[1], Expr(lanes_)), i[2], i[3],
                         mod(i[1], Expr(lanes_))});
  }

private:
  const std::vector<bool> &blocked_;
  int64_t lanes_;
};

bool isVar(const Expr &e, const Expr &var) { return structurallyEqual(e, var); }

} // namespace

int64_t channelBlock(const DeviceProfile &target) {
  int lanes = explicitVectorLanes(target);
  return target.family == "cpu" && lanes >= 8 ? 2 * lanes : 0;
}

int blockChannels(LoweredGraph &lg, int64_t lanes) {
  const size_t n = lg.defs.size();
  std::vector<bool> fixed(n, false);
  for (int o : lg.outputs)
    fixed[o] = true; // the caller's buffer has the caller's layout
  for (const LoweredGraph::Sync &s : lg.syncs)
    fixed[s.def] = true;
  auto candidate = [&](size_t id) {
    const TensorDef &d = lg.defs[id];
    int64_t c, h, w;
    if (fixed[id] || d.isView || d.rank() != 4 ||
        (d.kind != TensorDef::Kind::Pointwise &&
         d.kind != TensorDef::Kind::Reduction) ||
        !d.shape[1].isConst(c) || c <= 0 || c % lanes != 0)
      return false;
    // A map of one pixel (a global pool's result) gains nothing and would
    // make its readers (a Flatten into a Gemm) divide.
    return !(d.shape[2].isConst(h) && d.shape[3].isConst(w) && h * w == 1);
  };

  std::vector<std::vector<Read>> reads(n);
  for (size_t id = 0; id < n; ++id)
    reads[id] = readsOf(lg.defs[id], lg.vars);
  const Expr &channel = lg.vars.idx(1);
  // Whether reader \p r reads channel-aligned: its index 1 is its own
  // channel, or one of its reduction variables over whole blocks.
  auto alignedRead = [&](const TensorDef &r, const Read &read) {
    if (read.indices.size() != 4)
      return false;
    const Expr &c = read.indices[1];
    if (r.rank() == 4 && isVar(c, channel))
      return true;
    for (size_t k = 0; k < r.reduceExtents.size(); ++k) {
      int64_t e;
      if (isVar(c, lg.vars.rvar(static_cast<int>(k))) &&
          r.reduceExtents[k].isConst(e) && e % lanes == 0)
        return true;
    }
    return false;
  };

  // The region: the convolutions, then (to a fixed point) every candidate
  // that reads a blocked def at its own channel (epilogues, residual sums,
  // pools) or that a blocked def reads aligned (padded copies, the other
  // operand of a residual sum).
  std::vector<bool> blocked(n, false);
  int count = 0;
  for (size_t id = 0; id < n; ++id)
    if (candidate(id) && lg.defs[id].op == "Conv" &&
        lg.defs[id].kind == TensorDef::Kind::Reduction) {
      blocked[id] = true;
      ++count;
    }
  if (count == 0)
    return 0;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t id = 0; id < n; ++id) {
      if (blocked[id])
        continue;
      // As a reader.
      bool join = false;
      if (candidate(id))
        for (const Read &r : reads[id])
          join |= blocked[r.tensor] && r.indices.size() == 4 &&
                  isVar(r.indices[1], channel);
      if (!join)
        continue;
      blocked[id] = true;
      ++count;
      grew = true;
    }
    for (size_t id = 0; id < n; ++id) {
      if (!blocked[id])
        continue;
      // As a producer of a blocked reader.
      for (const Read &r : reads[id])
        if (!blocked[r.tensor] && candidate(static_cast<size_t>(r.tensor)) &&
            alignedRead(lg.defs[id], r)) {
          blocked[r.tensor] = true;
          ++count;
          grew = true;
        }
    }
  }

  // A blocked def gains from its layout only where something reads it in
  // blocks: a blocked def, a convolution over its channels (whatever that
  // convolution's own layout), or a global pool (as cheap as NCHW, one
  // channel per output). One that only pointwise defs, views or other
  // reductions outside the region read keeps NCHW: its readers would
  // otherwise pay the layout change (a convolution whose result the graph
  // returns, through Relu, would store it blocked and need a kernel to
  // change it back; a depthwise convolution or pool with an NCHW result
  // would read its rows of pixels a block apart). So does a def between
  // two NCHW neighbours, which would only change the layout there and
  // back. Its producers may then follow, in turn.
  std::vector<std::vector<int>> readers(n);
  for (size_t id = 0; id < n; ++id)
    for (const Read &r : reads[id])
      readers[r.tensor].push_back(static_cast<int>(id));
  auto globalPool = [](const TensorDef &d) {
    int64_t h, w;
    return d.kind == TensorDef::Kind::Reduction && d.rank() == 4 &&
           d.shape[2].isConst(h) && d.shape[3].isConst(w) && h * w == 1;
  };
  auto overChannels = [&](int reader, int def) {
    const TensorDef &d = lg.defs[reader];
    if (d.kind != TensorDef::Kind::Reduction)
      return false;
    for (const Read &r : reads[reader])
      if (r.tensor == def && alignedRead(d, r) && !isVar(r.indices[1], channel))
        return true;
    return false;
  };
  for (bool shrank = true; shrank;) {
    shrank = false;
    for (size_t id = 0; id < n; ++id) {
      if (!blocked[id])
        continue;
      bool gains = false, linked = false;
      for (int r : readers[id]) {
        gains |= blocked[r] || globalPool(lg.defs[r]) ||
                 overChannels(r, static_cast<int>(id));
        linked |= blocked[r];
      }
      for (const Read &r : reads[id])
        linked |= blocked[r.tensor];
      if (!gains || !linked) {
        blocked[id] = false;
        --count;
        shrank = true;
      }
    }
  }
  if (count == 0)
    return 0;

  // Reductions over the channels of a blocked def: which variables split.
  std::vector<std::set<int>> splits(n);
  for (size_t id = 0; id < n; ++id)
    for (const Read &r : reads[id]) {
      if (!blocked[r.tensor] || r.indices.size() != 4)
        continue;
      const TensorDef &d = lg.defs[id];
      for (size_t k = 0; k < d.reduceExtents.size(); ++k) {
        int64_t e;
        if (isVar(r.indices[1], lg.vars.rvar(static_cast<int>(k))) &&
            d.reduceExtents[k].isConst(e) && e % lanes == 0)
          splits[id].insert(static_cast<int>(k));
      }
    }

  BlockedReads rewrite(blocked, lanes);
  for (size_t id = 0; id < n; ++id) {
    TensorDef &d = lg.defs[id];
    if (blocked[id]) {
      // The def's own index: channel i1 of the old shape is block i1, lane
      // i4 of the new one.
      VarBindings own{{channel, channel * Expr(lanes) + lg.vars.idx(4)}};
      d.body = substitute(d.body, own);
      if (d.epilogue.defined())
        d.epilogue = substitute(d.epilogue, own);
      int64_t c = 0;
      d.shape[1].isConst(c);
      d.shape = {d.shape[0], Expr(c / lanes),
                 d.shape[2], d.shape[3], Expr(lanes)};
    }
    bool readsBlocked = false;
    for (const Read &r : reads[id])
      readsBlocked |= blocked[r.tensor];
    if (!blocked[id] && !readsBlocked)
      continue;
    // A depthwise convolution's channel i1 + r0, r0 in [0, 1), is i1.
    if (VarBindings unit = unitReductionVars(d, lg.vars); !unit.empty())
      d.body = substitute(d.body, unit);
    d.body = rewrite.mutate(d.body);
    if (d.epilogue.defined())
      d.epilogue = rewrite.mutate(d.epilogue);
    // Channel reductions: c -> cb * B + ci, ci the innermost variable.
    VarBindings split;
    for (int k : splits[id]) {
      int64_t e = 0;
      d.reduceExtents[k].isConst(e);
      Expr lane = lg.vars.rvar(static_cast<int>(d.reduceExtents.size()));
      split.push_back({lg.vars.rvar(k), lg.vars.rvar(k) * Expr(lanes) + lane});
      d.reduceExtents[k] = Expr(e / lanes);
      d.reduceExtents.push_back(Expr(lanes));
    }
    if (!split.empty())
      d.body = substitute(d.body, split);
    RangeEnv env = lg.env;
    setStaticRanges(env, lg.vars.idxVars(d.rank()), d.shape);
    std::vector<Expr> rvars;
    for (size_t k = 0; k < d.reduceExtents.size(); ++k)
      rvars.push_back(lg.vars.rvar(static_cast<int>(k)));
    setStaticRanges(env, rvars, d.reduceExtents);
    if (d.body.defined())
      d.body = simplify(d.body, env);
    if (d.epilogue.defined())
      d.epilogue = simplify(d.epilogue, env);
  }
  return count;
}

} // namespace aotc
