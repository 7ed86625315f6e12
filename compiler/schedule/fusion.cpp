/// \file
/// Fusion decisions: which defs get a buffer, which are inlined into their
/// consumers, and which reductions run inside their consumer's kernel.
///
/// Rules (after Inductor's): views are inlined (pure index math), except
/// one that a contraction reads along its N but that reads its source with
/// a stride there (layoutForContraction);
/// pointwise defs are inlined unless they are outputs, feed a contraction
/// (which would recompute them per read; a narrow integer read and widened
/// is inlined there too), have more than two consumers
/// (unless they are small and those consumers all end in one kernel), grow
/// too large when inlined, or are computed from one reduction alone and
/// read by a window that reads each element more than once (they become
/// that reduction's epilogue); reductions are materialized, except that a
/// reduction whose only kernel-level consumer is a pointwise def of the same
/// shape reading it at the same index is computed in that consumer's kernel
/// (an epilogue: Gemm + bias + GELU is one kernel); and on CPU-style
/// targets, reductions that a pointwise def reads once per row (softmax's
/// max and sum, a normalization's statistics) are computed in its kernel,
/// one work-item per row (a row group, row_reduction.cpp).
#include "compiler/schedule/schedule.h"

#include "ir/scalar_ops.h"
#include "ir/visitor.h"

#include <map>
#include <set>

namespace aotc {

namespace {

using Decision = FusionPlan::Decision;

int nodeCount(const Expr &e) {
  struct V : IRVisitor {
    int n = 0;
    void visitAccess(const Access *op) override {
      ++n;
      IRVisitor::visitAccess(op);
    }
    void visitBinary(const Binary *op) override {
      ++n;
      IRVisitor::visitBinary(op);
    }
    void visitCall(const Call *op) override {
      ++n;
      IRVisitor::visitCall(op);
    }
    void visitSelect(const Select *op) override {
      ++n;
      IRVisitor::visitSelect(op);
    }
  } v;
  v.visit(e);
  return v.n;
}

/// The graph's ranges with the index variables of \p d ranging over its
/// shape; the last one over the elements that have a next one when
/// \p lastHasNext.
RangeEnv indexRanges(const LoweredGraph &lg, const TensorDef &d,
                     bool lastHasNext = false) {
  RangeEnv env = lg.env;
  for (int k = 0; k < d.rank(); ++k) {
    int64_t end = lastHasNext && k + 1 == d.rank() ? 2 : 1;
    if (auto b = boundsOf(d.shape[k], lg.env); b && b->max >= end)
      env.set(lg.vars.idx(k), Range{0, b->max - end});
  }
  return env;
}

/// True if every access to \p r in \p e reads the element at the output
/// index i0, i1, ... of \p consumer, except along the axes in \p rowAxis
/// (when given), where it reads index 0: the row of a row group.
bool readsAtIdentity(const LoweredGraph &lg, const Expr &e, int r,
                     const TensorDef &consumer,
                     const std::vector<bool> &rowAxis = {}) {
  RangeEnv env = indexRanges(lg, consumer);
  int rank = consumer.rank();
  struct V : IRVisitor {
    int r, rank;
    const RangeEnv *env;
    const FormalVars *vars;
    const std::vector<bool> *rowAxis;
    bool ok = true;
    void visitAccess(const Access *op) override {
      if (op->tensor == r) {
        if ((int)op->indices.size() != rank)
          ok = false;
        for (int k = 0; ok && k < rank; ++k) {
          Expr i = simplify(op->indices[k], *env);
          ok = !rowAxis->empty() && (*rowAxis)[k]
                   ? i.isConstValue(0)
                   : structurallyEqual(i, vars->idx(k));
        }
      }
      IRVisitor::visitAccess(op);
    }
  } v;
  v.r = r;
  v.rank = rank;
  v.env = &env;
  v.vars = &lg.vars;
  v.rowAxis = &rowAxis;
  v.visit(e);
  return v.ok;
}

/// The element \p e reads, where \p e is one element of a def, an integer,
/// widened (a cast to a wider integer of an Access); else null.
const Access *widenedAccess(const Expr &e) {
  const Cast *c = e.as<Cast>();
  const Access *a = c ? c->value.as<Access>() : nullptr;
  return a && scalar::widensInteger(a->type, c->type) ? a : nullptr;
}

/// True if \p body (a def's value, its producers inlined) reads one
/// element of an integer weight or input and widens it, plus or minus a literal (an
/// int8 weight cast to int32 less its zero point: MatMulInteger's B,
/// fold_program.cpp). A contraction that reads it computes it per read, a
/// conversion that the load does (vpmovsxbd), instead of reading a buffer
/// of the wide values, four times the bytes.
bool widensNarrowRead(const LoweredGraph &lg, const FusionPlan &plan,
                      const Expr &body) {
  Expr e = body;
  if (const Binary *b = e.as<Binary>();
      b && (b->op == BinOp::Add || b->op == BinOp::Sub) && b->b.as<IntImm>())
    e = b->a;
  const Access *a = widenedAccess(e);
  // Of a weight or input: a value a kernel computes would be computed
  // again per read (ConvInteger's activations, quantized by the kernel
  // before: their QuantizeLinear was repeated for each of a 3 x 3
  // window's reads).
  // Or of a value materialized narrow for this read (storesNarrow).
  return a && (lg.defs[a->tensor].kind == TensorDef::Kind::Constant ||
               lg.defs[a->tensor].kind == TensorDef::Kind::Input ||
               plan.decisions[a->tensor] == FusionPlan::Decision::Materialize);
}

constexpr int kMaxInlineSize = 400;
/// The largest def (nodes, its inlined producers included) inlined into
/// more than two consumers when they all end in one kernel.
constexpr int kMaxSharedInlineSize = 16;

/// True if view \p v should get its own buffer in its own layout for the
/// contraction that reads it: the contraction reads v's last dimension
/// along its own last output dimension (its N: v is a B operand that the
/// register tile wants contiguous along N), but v's inlined body reads its
/// source with a stride along that dimension (attention's K^T, a Transpose
/// of the key projection: without a copy the tile stays scalar). The copy
/// is one read and write of v; the tile rereads it per row of outputs.
bool layoutForContraction(const LoweredGraph &lg, const FusionPlan &plan,
                          int v, const std::vector<int> &consumers) {
  const TensorDef &vd = lg.defs[v];
  if (vd.rank() < 2)
    return false;
  bool readAlongN = false;
  for (int c : consumers) {
    const TensorDef &cd = lg.defs[c];
    if (cd.kind != TensorDef::Kind::Reduction || !cd.rereadsInputs ||
        cd.rank() < 1)
      return false;
    // What the consumer's vectors run along: a contraction's N (its last
    // output dimension) in its body; a fused attention's also its keys
    // (r0) in its score, whose block of keys is one vector.
    std::vector<std::pair<Expr, Expr>> along = {
        {cd.body, lg.vars.idx(cd.rank() - 1)}};
    if (cd.attention)
      along.push_back({cd.attention->score, lg.vars.rvar(0)});
    bool anyRead = false;
    for (const auto &[expr, nvar] : along) {
      struct Reads : IRVisitor {
        int v;
        Expr nvar;
        bool any = false, alongN = true;
        void visitAccess(const Access *op) override {
          if (op->tensor == v) {
            any = true;
            alongN &= !op->indices.empty() &&
                      structurallyEqual(op->indices.back(), nvar);
          }
          IRVisitor::visitAccess(op);
        }
      } reads;
      reads.v = v;
      reads.nvar = nvar;
      reads.visit(expr);
      if (reads.any && !reads.alongN)
        return false;
      anyRead |= reads.any;
    }
    if (!anyRead)
      return false;
    readAlongN = true;
  }
  if (!readAlongN)
    return false;
  // Stepping the last index from every element that has a next one.
  RangeEnv env = indexRanges(lg, vd, /*lastHasNext=*/true);
  const Expr last = lg.vars.idx(vd.rank() - 1);
  // Constants are left alone: their layout for the tile is chosen at
  // compile time (pack_weights.h: a panel view reads a packed copy).
  struct Strided : IRVisitor {
    const LoweredGraph *lg;
    const Expr *last;
    const RangeEnv *env;
    bool strided = false;
    void visitAccess(const Access *op) override {
      if (lg->defs[op->tensor].kind != TensorDef::Kind::Constant)
        strided |= !stepsByOne(op->indices, *last, *env);
      IRVisitor::visitAccess(op);
    }
  } s;
  s.lg = &lg;
  s.last = &last;
  s.env = &env;
  s.visit(inlineProducers(lg, plan, vd.body));
  return s.strided;
}

/// The row axes of reduction \p r in a row group of \p p: where r has
/// extent 1 and p does not; elsewhere their extents must be equal. Empty
/// when r cannot join: another rank, an unequal extent, or p's last
/// dimension not a row axis (the row would be walked with a stride, while
/// apart, p's kernel runs along its contiguous last dimension in vectors).
std::vector<bool> rowAxesOf(const LoweredGraph &lg, int r, int p) {
  const TensorDef &rd = lg.defs[r], &pd = lg.defs[p];
  if (rd.rank() != pd.rank())
    return {};
  std::vector<bool> axes(rd.rank(), false);
  bool any = false;
  for (int k = 0; k < rd.rank(); ++k) {
    if (rd.shape[k].isConstValue(1) && !pd.shape[k].isConstValue(1)) {
      axes[k] = any = true;
      continue;
    }
    if (!proveEqual(rd.shape[k], pd.shape[k], lg.env))
      return {};
  }
  return any && axes.back() ? axes : std::vector<bool>();
}

/// True if a row group over \p axes of \p p leaves enough rows to run
/// one per work-item (opts.minRows), or its rows are short.
bool enoughRows(const LoweredGraph &lg, int p, const std::vector<bool> &axes,
                const FusionOptions &opts) {
  const TensorDef &pd = lg.defs[p];
  int64_t rows = 1, length = 1;
  for (int k = 0; k < pd.rank(); ++k) {
    int64_t e;
    if (!pd.shape[k].isConst(e))
      return true; // symbolic: assumed large
    (axes[k] ? length : rows) *= e;
  }
  return rows >= opts.minRows || length <= kMaxSerialRow;
}

/// The most border stores per element a padded store makes
/// (paddedBorderCount): 8 for a 3x3 window's padding of 1, 24 for a 5x5's
/// of 2; a wider padding keeps its copy.
constexpr int64_t kMaxBorderStores = 24;

/// Padded copy \p m (\p body: its value with its producers inlined) as a
/// padded store of reduction \p r (padded_stores.h): the copy pads a value
/// of r's shape that reads r at its own index, the padding is not along
/// the innermost dimension (the lanes of a vector store share their
/// border conditions), and it is narrow enough.
std::optional<PaddedCopy> paddedStoreOf(const LoweredGraph &lg, int m, int r,
                                        const Expr &body) {
  std::optional<PaddedCopy> pc = matchPaddedCopy(lg, m);
  const TensorDef &rd = lg.defs[r];
  if (!pc || rd.attention || pc->before.back() != 0 || pc->after.back() != 0 ||
      paddedBorderCount(*pc) > kMaxBorderStores)
    return std::nullopt;
  const TensorDef &x = lg.defs[pc->source];
  if (x.rank() != rd.rank())
    return std::nullopt;
  for (int k = 0; k < rd.rank(); ++k)
    if (!proveEqual(x.shape[k], rd.shape[k], lg.env))
      return std::nullopt;
  // The copy's value at i + before reads r at i.
  Expr inner = simplify(
      substitute(body, interiorBindings(lg.vars.idxVars(rd.rank()), *pc)),
      defRanges(lg, rd));
  if (!readsAtIdentity(lg, inner, r, rd))
    return std::nullopt;
  return pc;
}

/// Makes the row group of pointwise def \p p (FusionPlan::rowReductions):
/// the reductions its kernel reads, and those they read, that have extent 1
/// along the same row axes of p, are read by nothing but p and each other,
/// at the row; nothing when there are none.
void planRowGroup(const LoweredGraph &lg, const FusionOptions &opts, int p,
                  const std::vector<Expr> &inlined,
                  const std::vector<Expr> &inlinedEpilogue,
                  const std::vector<std::vector<int>> &kernelReads,
                  const std::map<int, std::vector<int>> &kernelConsumers,
                  const std::vector<bool> &isOutput, FusionPlan &plan) {
  const TensorDef &pd = lg.defs[p];
  if (plan.decisions[p] != Decision::Materialize ||
      pd.kind != TensorDef::Kind::Pointwise || plan.fusedReduction[p] >= 0)
    return;
  // Candidates: reductions read by p's kernel, then by theirs.
  std::vector<bool> axes;
  std::vector<int> group, stack = kernelReads[p];
  std::set<int> seen;
  while (!stack.empty()) {
    int r = stack.back();
    stack.pop_back();
    if (!seen.insert(r).second)
      continue;
    const TensorDef &rd = lg.defs[r];
    if (plan.decisions[r] != Decision::Materialize ||
        rd.kind != TensorDef::Kind::Reduction || rd.rereadsInputs ||
        isOutput[r])
      continue;
    std::vector<bool> a = rowAxesOf(lg, r, p);
    if (a.empty() || (!axes.empty() && a != axes))
      continue;
    axes = a;
    group.push_back(r);
    stack.insert(stack.end(), kernelReads[r].begin(), kernelReads[r].end());
  }
  if (group.empty() || !enoughRows(lg, p, axes, opts))
    return;
  // Members read elsewhere, or not at the row, leave (and then so may the
  // members they read).
  // (A member has extent 1 along the row axes: its own index is 0 there.)
  auto readsAtRow = [&](int c, int r) {
    const TensorDef &cd = lg.defs[c];
    return readsAtIdentity(lg, inlined[c], r, cd, axes) &&
           (!inlinedEpilogue[c].defined() ||
            readsAtIdentity(lg, inlinedEpilogue[c], r, cd, axes));
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < group.size(); ++k) {
      int r = group[k];
      bool ok = true;
      for (int c : kernelConsumers.at(r)) // r is read: it is a key
        ok &= (c == p || std::count(group.begin(), group.end(), c) > 0) &&
              readsAtRow(c, r);
      if (!ok) {
        group.erase(group.begin() + static_cast<std::ptrdiff_t>(k));
        changed = true;
        break;
      }
    }
  }
  if (group.empty())
    return;
  std::sort(group.begin(), group.end()); // defs are in topological order
  for (int r : group)
    plan.decisions[r] = Decision::FuseIntoConsumer;
  plan.rowReductions[p] = group;
  plan.rowAxes[p] = axes;
}

} // namespace

void separateOutputs(LoweredGraph &lg) {
  std::vector<bool> taken(lg.defs.size(), false);
  for (size_t k = 0; k < lg.outputs.size(); ++k) {
    int id = lg.outputs[k];
    const TensorDef src = lg.defs[id];
    bool leaf = src.kind == TensorDef::Kind::Input ||
                src.kind == TensorDef::Kind::Constant;
    if (leaf || taken[id]) {
      TensorDef copy;
      copy.kind = TensorDef::Kind::Pointwise;
      copy.name = lg.outputNames[k];
      copy.op = "Copy";
      copy.dtype = src.dtype;
      copy.shape = src.shape;
      copy.body = Access::make(src.dtype, id, lg.vars.idxVars(src.rank()));
      lg.defs.push_back(std::move(copy));
      id = static_cast<int>(lg.defs.size()) - 1;
      lg.outputs[k] = id;
      taken.push_back(false);
    }
    taken[id] = true;
  }
}

/// Whether the reduction \p c reads the elements of \p d more than once
/// each on average (a window over overlapping pixels: a 3 x 3 MaxPool of
/// stride 2 reads each 2.25 times), its steps static, the elements counted
/// with the symbols at 1.
bool rereadsWindow(const LoweredGraph &lg, const TensorDef &c, int d) {
  if (c.kind != TensorDef::Kind::Reduction || c.rereadsInputs)
    return false;
  const int64_t steps = staticTerms(c.reduceExtents);
  const int64_t in = plannedExtent(simplify(product(lg.defs[d].shape)));
  return steps >= 0 && steps * plannedExtent(simplify(product(c.shape))) > in;
}

/// Whether pointwise def \p d, whose kernel-level consumers are \p eff, is
/// better computed once as its reduction's epilogue than at every read: it
/// reads one reduction alone (and constants), at its own index, that
/// nothing else reads, and its one consumer is a window that reads each
/// element more than once (rereadsWindow). ResNet's stem MaxPool (3 x 3 of
/// stride 2) applied the stem's Relu 9 times per output, 2.25 per element.
bool epilogueOfWindow(const LoweredGraph &lg, int d, const std::vector<int> &eff,
                      const std::vector<std::vector<int>> &consumers,
                      const std::vector<bool> &isOutput) {
  const TensorDef &def = lg.defs[d];
  if (eff.size() != 1 || !rereadsWindow(lg, lg.defs[eff[0]], d))
    return false;
  int reduction = -1, others = 0;
  for (int t : accessedDefs(def.body)) {
    const TensorDef &td = lg.defs[t];
    if (td.kind == TensorDef::Kind::Reduction && reduction < 0)
      reduction = t;
    else if (td.kind != TensorDef::Kind::Constant)
      ++others;
  }
  return reduction >= 0 && others == 0 && consumers[reduction].size() == 1 &&
         !isOutput[reduction] && readsAtIdentity(lg, def.body, reduction, def);
}

FusionPlan planFusion(const LoweredGraph &lg, const FusionOptions &opts) {
  size_t n = lg.defs.size();
  FusionPlan plan;
  plan.decisions.assign(n, Decision::Unused);
  plan.fusedReduction.assign(n, -1);
  plan.paddedStore.assign(n, std::nullopt);
  plan.rowReductions.assign(n, {});
  plan.rowAxes.assign(n, {});

  // Liveness from the outputs, and consumer lists.
  std::vector<bool> live(n, false), isOutput(n, false);
  std::vector<int> stack(lg.outputs.begin(), lg.outputs.end());
  for (int o : lg.outputs)
    isOutput[o] = true;
  // A count the run reads back is a root with a kernel of its own.
  for (const LoweredGraph::Sync &s : lg.syncs) {
    stack.push_back(s.def);
    isOutput[s.def] = true;
  }
  while (!stack.empty()) {
    int d = stack.back();
    stack.pop_back();
    if (live[d])
      continue;
    live[d] = true;
    for (int t : accessedDefs(lg.defs[d]))
      stack.push_back(t);
  }
  std::vector<std::vector<int>> consumers(n);
  for (size_t d = 0; d < n; ++d)
    if (live[d])
      for (int t : accessedDefs(lg.defs[d]))
        consumers[t].push_back(static_cast<int>(d));

  // Consumers seen through inlined views.
  std::function<void(int, std::vector<int> &)> effective =
      [&](int d, std::vector<int> &out) {
        for (int c : consumers[d]) {
          const TensorDef &cd = lg.defs[c];
          if (cd.kind == TensorDef::Kind::Pointwise && cd.isView &&
              !isOutput[c])
            effective(c, out);
          else
            out.push_back(c);
        }
      };

  // Whether pointwise def d is a narrow integer whose every consumer is a
  // widening read of it (its own body, producers not inlined: an int16
  // activation less its zero point read as int32 by a quantized
  // contraction, expand_quantized_matmul.cpp) that feeds contractions only.
  // (A value of constants alone, a weight's packed view, is left to the
  // folding program and the packing.)
  std::vector<int8_t> ofConstants(n, -1);
  std::function<bool(int)> constantsOnly = [&](int d) {
    if (ofConstants[d] < 0) {
      const TensorDef &def = lg.defs[d];
      bool only = def.kind == TensorDef::Kind::Constant;
      if (def.kind == TensorDef::Kind::Pointwise ||
          def.kind == TensorDef::Kind::Reduction) {
        only = true;
        for (int t : accessedDefs(def))
          only = only && constantsOnly(t);
      }
      ofConstants[d] = only ? 1 : 0;
    }
    return ofConstants[d] == 1;
  };
  auto storesNarrow = [&](int d) {
    const TensorDef &def = lg.defs[d];
    if (def.isView || def.layoutCopy || !scalar::isInteger(def.dtype) ||
        dtypeSize(def.dtype) >= 4 || constantsOnly(d))
      return false;
    std::vector<int> eff;
    effective(d, eff);
    if (eff.empty())
      return false;
    for (int c : eff) {
      const TensorDef &cd = lg.defs[c];
      const Access *read = widenedAccess(cd.body);
      if (cd.kind != TensorDef::Kind::Pointwise || isOutput[c] || !read ||
          read->tensor != d)
        return false;
      std::vector<int> readers;
      effective(c, readers);
      if (readers.empty())
        return false;
      for (int r : readers)
        if (lg.defs[r].kind != TensorDef::Kind::Reduction ||
            !lg.defs[r].rereadsInputs)
          return false;
    }
    return true;
  };

  std::vector<int> inlinedSize(n, 0);
  // Whether a pointwise def reads a reduction, directly or through
  // pointwise defs (inlined or not: one materialized for its many
  // consumers may be inlined again below).
  std::vector<bool> readsReduction(n, false);
  std::vector<bool> manyConsumers(n, false);
  for (size_t d = 0; d < n; ++d) {
    if (!live[d])
      continue;
    const TensorDef &def = lg.defs[d];
    switch (def.kind) {
    case TensorDef::Kind::Input:
    case TensorDef::Kind::Constant:
      plan.decisions[d] = Decision::Leaf;
      continue;
    case TensorDef::Kind::Reduction:
      plan.decisions[d] = Decision::Materialize;
      continue;
    case TensorDef::Kind::Pointwise:
      break;
    }
    int size = nodeCount(def.body);
    for (int t : accessedDefs(def.body)) {
      if (plan.decisions[t] == Decision::Inline)
        size += inlinedSize[t];
      readsReduction[d] = readsReduction[d] || readsReduction[t] ||
                          lg.defs[t].kind == TensorDef::Kind::Reduction;
    }
    inlinedSize[d] = size;
    if (isOutput[d] || def.materialize) {
      plan.decisions[d] = Decision::Materialize;
      continue;
    }
    // A narrow integer that only widening reads feeding contractions
    // consume is stored narrow (the reads widen it as they load: half or
    // a quarter of the bytes, and a contraction that sees 16-bit factors
    // multiplies them in pairs, register_tile.cpp), not stored wide by
    // each reader's kernel.
    if (storesNarrow(static_cast<int>(d))) {
      plan.decisions[d] = Decision::Materialize;
      continue;
    }
    if (def.isView) {
      plan.decisions[d] =
          layoutForContraction(lg, plan, static_cast<int>(d), consumers[d])
              ? Decision::Materialize
              : Decision::Inline;
      continue;
    }
    std::vector<int> eff;
    effective(static_cast<int>(d), eff);
    bool feedsContraction = false;
    // A layout copy (TensorDef::layoutCopy) walks its value in another
    // order than the kernel that computes it: a value that other kernels
    // read too (a LayerNormalization's output, also the residual's) or
    // that is a reduction's epilogue (GELU after a GEMM) is materialized
    // by its own kernel, whose fusion it keeps, and copied; a chain over
    // inputs or materialized values is computed in the copy.
    const bool widensRead =
        widensNarrowRead(lg, plan, inlineProducers(lg, plan, def.body));
    for (int c : eff) {
      const TensorDef &cd = lg.defs[c];
      feedsContraction |=
          (cd.kind == TensorDef::Kind::Reduction && cd.rereadsInputs &&
           !widensRead) ||
          (cd.layoutCopy && (eff.size() > 1 || readsReduction[d]));
    }
    bool tooBig = eff.size() > 1 && size > kMaxInlineSize;
    bool ofWindow = epilogueOfWindow(lg, static_cast<int>(d), eff, consumers,
                                     isOutput);
    plan.decisions[d] =
        (feedsContraction || eff.size() > 2 || tooBig || ofWindow)
            ? Decision::Materialize
            : Decision::Inline;
    manyConsumers[d] = !feedsContraction && !tooBig && eff.size() > 2;
  }

  // A small def materialized only for its many consumers, all of which are
  // inlined into one pointwise kernel, is inlined there too: it is computed
  // in that kernel either way, and a value read more than once is bound
  // once (bind_common.h). GELU's tanh form reads x = MatMul + bias three
  // times (x^3, x + 0.044715 x^3, 0.5 x): GPT-2's fc GEMM and its GELU were
  // two kernels, the second a pass over the [128, 3072] activations. Last
  // def first, so that each def sees its consumers' final decisions.
  for (size_t d = n; d-- > 0;) {
    if (!manyConsumers[d] || inlinedSize[d] > kMaxSharedInlineSize)
      continue;
    std::set<int> kernels, seen;
    bool ok = true;
    std::function<void(int)> reach = [&](int v) {
      std::vector<int> eff;
      effective(v, eff);
      for (int c : eff) {
        if (plan.decisions[c] == Decision::Inline) {
          if (seen.insert(c).second)
            reach(c);
        } else if (plan.decisions[c] == Decision::Materialize &&
                 lg.defs[c].kind == TensorDef::Kind::Pointwise)
          kernels.insert(c);
        else
          ok = false;
      }
    };
    reach(static_cast<int>(d));
    if (ok && kernels.size() == 1)
      plan.decisions[d] = Decision::Inline;
  }

  // Kernel-level consumers: materialized defs whose inlined code reads each
  // materialized reduction.
  std::map<int, std::vector<int>> kernelConsumers;
  std::vector<Expr> inlined(n), inlinedEpilogue(n);
  std::vector<std::vector<int>> kernelReads(n);
  for (size_t d = 0; d < n; ++d) {
    if (plan.decisions[d] != Decision::Materialize)
      continue;
    // What the kernel reads: every expression of the def (a fused
    // attention's score too), its producers inlined; the body's and the
    // epilogue's inlined forms kept for the identity tests below.
    const TensorDef &def = lg.defs[d];
    std::vector<int> reads;
    forEachExpr(def, [&](const Expr &e) {
      Expr in = inlineProducers(lg, plan, e);
      if (&e == &def.body)
        inlined[d] = in;
      else if (&e == &def.epilogue)
        inlinedEpilogue[d] = in;
      for (int t : accessedDefs(in))
        if (std::find(reads.begin(), reads.end(), t) == reads.end())
          reads.push_back(t);
    });
    for (int t : reads)
      kernelConsumers[t].push_back(static_cast<int>(d));
    kernelReads[d] = std::move(reads);
  }
  for (size_t r = 0; r < n; ++r) {
    const TensorDef &rd = lg.defs[r];
    if (plan.decisions[r] != Decision::Materialize ||
        rd.kind != TensorDef::Kind::Reduction || isOutput[r])
      continue;
    const std::vector<int> &kc = kernelConsumers[static_cast<int>(r)];
    if (kc.size() != 1)
      continue;
    int m = kc[0];
    const TensorDef &md = lg.defs[m];
    if (md.kind != TensorDef::Kind::Pointwise || plan.fusedReduction[m] >= 0 ||
        md.rank() != rd.rank())
      continue;
    bool sameShape = true;
    for (int k = 0; k < md.rank(); ++k)
      sameShape &= proveEqual(md.shape[k], rd.shape[k], lg.env);
    if (!sameShape ||
        !readsAtIdentity(lg, inlined[m], static_cast<int>(r), md)) {
      if (opts.paddedStores)
        plan.paddedStore[m] =
            paddedStoreOf(lg, m, static_cast<int>(r), inlined[m]);
      if (!plan.paddedStore[m])
        continue;
    }
    plan.decisions[r] = Decision::FuseIntoConsumer;
    plan.fusedReduction[m] = static_cast<int>(r);
  }

  if (opts.rowGroups)
    for (size_t p = 0; p < n; ++p)
      planRowGroup(lg, opts, static_cast<int>(p), inlined, inlinedEpilogue,
                   kernelReads, kernelConsumers, isOutput, plan);

  for (size_t d = 0; d < n; ++d)
    if (plan.decisions[d] == Decision::Materialize)
      plan.kernelOrder.push_back(static_cast<int>(d));
  return plan;
}

} // namespace aotc
