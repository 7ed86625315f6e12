/// \file
/// Builds one Loop IR kernel per materialized def: a parallel loop over the
/// output's elements, producers inlined, accesses to buffers turned into flat
/// Loads, and for reductions an accumulator over serial reduction loops.
#include "compiler/schedule/collapse_dims.h"
#include "compiler/schedule/column_interior.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/split_div_loops.h"

#include "ir/visitor.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace aotc {

namespace {

using Decision = FusionPlan::Decision;

/// Formal index variables of a def -> the indices it is read at.
VarBindings indexBindings(const FormalVars &vars,
                          const std::vector<Expr> &idx) {
  VarBindings b;
  for (size_t k = 0; k < idx.size(); ++k)
    b.emplace_back(vars.idx(static_cast<int>(k)), idx[k]);
  return b;
}

class Inliner : public IRMutator {
public:
  Inliner(const LoweredGraph &lg, const FusionPlan &plan)
      : lg_(lg), plan_(plan) {}

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    if (plan_.decisions[a->tensor] != Decision::Inline)
      return e;
    const TensorDef &d = lg_.defs[a->tensor];
    return mutate(substitute(d.body, indexBindings(lg_.vars, a->indices)));
  }

private:
  const LoweredGraph &lg_;
  const FusionPlan &plan_;
};

/// The reductions computed in a kernel (its own, a fused epilogue producer,
/// a row group's) -> the variables that hold their values there.
using FusedValues = std::map<int, Expr>;

/// Turns accesses to materialized defs into Loads, and accesses to the
/// reductions computed in the kernel into their result variables.
class Materializer : public IRMutator {
public:
  Materializer(const LoweredGraph &lg, const FusedValues &fused)
      : lg_(lg), fused_(fused) {}

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    if (auto it = fused_.find(a->tensor); it != fused_.end())
      return it->second;
    const TensorDef &d = lg_.defs[a->tensor];
    return Load::make(d.dtype, bufferName(lg_, a->tensor), a->indices);
  }

private:
  const LoweredGraph &lg_;
  const FusedValues &fused_;
};

std::string sanitize(const std::string &s, size_t max) {
  std::string out;
  for (char c : s) {
    if (out.size() >= max)
      break;
    out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  }
  return out;
}

/// One work-item per output element of \p nest: a parallel loop per
/// dimension of its (possibly merged) shape around reductionElement (a
/// pointwise nest: its finish).
Stmt untiledNest(const ReductionNest &nest) {
  std::vector<Expr> idx;
  for (size_t k = 0; k < nest.shape.size(); ++k)
    idx.push_back(Var::make("i" + std::to_string(k)));
  Stmt s = nest.term ? reductionElement(nest, idx) : nest.finish(idx, Expr());
  for (size_t k = nest.shape.size(); k-- > 0;)
    s = For::make(idx[k], Expr(0), nest.shape[k], ForKind::Parallel, 0, s);
  return s;
}

/// Buffers a statement reads and writes, in the order the statement first
/// names them (so that kernels of the same code list the same roles in the
/// same places, and codegen/opencl/share_kernels.h can give them one
/// function), with their module shapes or the kernel's view of them
/// (\p views).
Expected<std::vector<KernelBuffer>>
kernelBuffers(const Stmt &s, const LoopModule &m,
              const std::vector<KernelBuffer> &locals,
              const std::vector<KernelBuffer> &privates,
              const std::map<std::string, std::vector<Expr>> &views) {
  struct V : IRVisitor {
    std::vector<KernelBuffer> bufs;
    std::map<std::string, size_t> at;
    KernelBuffer &use(const std::string &name, DType t) {
      auto [it, fresh] = at.emplace(name, bufs.size());
      if (fresh)
        bufs.push_back(KernelBuffer{name, t, false, {}});
      return bufs[it->second];
    }
    void visitLoad(const Load *op) override {
      use(op->buffer, op->type);
      IRVisitor::visitLoad(op);
    }
    void visitVectorLoad(const VectorLoad *op) override {
      use(op->buffer, op->type);
      IRVisitor::visitVectorLoad(op);
    }
    void visitStore(const Store *op) override {
      use(op->buffer, op->value.type()).written = true;
      IRVisitor::visitStore(op);
    }
  } v;
  v.visit(s);
  std::set<std::string> arrays;
  for (const KernelBuffer &l : locals)
    arrays.insert(l.name);
  for (const KernelBuffer &p : privates)
    arrays.insert(p.name);
  std::vector<KernelBuffer> out;
  for (KernelBuffer &b : v.bufs) {
    if (arrays.count(b.name))
      continue;
    const ModuleBuffer *mb = m.findBuffer(b.name);
    if (!mb)
      return makeError("internal error: kernel reads buffer '", b.name,
                       "', which the module does not declare");
    auto view = views.find(b.name);
    b.shape = view != views.end() ? view->second : mb->shape;
    out.push_back(std::move(b));
  }
  return out;
}

/// The module symbols a kernel reads (in its body or in the shapes of its
/// buffers, which its index arithmetic uses), in module order.
std::vector<Expr> kernelSymbols(const Stmt &s,
                                const std::vector<KernelBuffer> &buffers,
                                const std::vector<Symbol> &symbols) {
  struct V : IRVisitor {
    std::set<uint64_t> ids;
    void visitVar(const Var *op) override { ids.insert(op->id); }
  } v;
  v.visit(s);
  for (const KernelBuffer &b : buffers)
    for (const Expr &d : b.shape)
      v.visit(d);
  std::vector<Expr> out;
  for (const Symbol &sym : symbols)
    if (v.ids.count(sym.var.as<Var>()->id))
      out.push_back(sym.var);
  return out;
}

/// The ONNX ops a kernel computes: those of \p def, the reductions fused
/// into its kernel (\p fused) and every def inlined into them, producers
/// first, each op named once.
std::string kernelOps(const LoweredGraph &lg, const FusionPlan &plan, int def,
                      const std::vector<int> &fused) {
  std::vector<std::string> ops;
  std::vector<bool> seen(lg.defs.size(), false);
  std::function<void(int)> visit = [&](int d) {
    if (seen[d])
      return;
    seen[d] = true;
    const TensorDef &td = lg.defs[d];
    for (int t : accessedDefs(td))
      if (std::count(fused.begin(), fused.end(), t) ||
          plan.decisions[t] == FusionPlan::Decision::Inline)
        visit(t);
    if (!td.op.empty() &&
        std::find(ops.begin(), ops.end(), td.op) == ops.end())
      ops.push_back(td.op);
  };
  for (int r : fused)
    visit(r);
  visit(def);
  std::string s;
  for (const std::string &op : ops)
    s += (s.empty() ? "" : "+") + op;
  return s.empty() ? "Copy" : s;
}

} // namespace

Expr inlineProducers(const LoweredGraph &lg, const FusionPlan &plan,
                     const Expr &e) {
  if (!e.defined())
    return e;
  return Inliner(lg, plan).mutate(e);
}

std::string bufferName(const LoweredGraph &lg, int def) {
  const TensorDef &d = lg.defs[def];
  if (d.kind == TensorDef::Kind::Input)
    return "in" + std::to_string(d.inputIndex);
  if (d.kind == TensorDef::Kind::Constant)
    return "c" + std::to_string(def);
  for (size_t k = 0; k < lg.outputs.size(); ++k)
    if (lg.outputs[k] == def)
      return "out" + std::to_string(k);
  return "t" + std::to_string(def);
}

Expected<Kernel> buildKernel(const LoweredGraph &lg, const FusionPlan &plan,
                             int def, int kernelIndex, const LoopModule &m,
                             const ScheduleOptions &opts) {
  const TensorDef &d = lg.defs[def];
  int red =
      d.kind == TensorDef::Kind::Reduction ? def : plan.fusedReduction[def];
  std::string out = bufferName(lg, def);
  auto instantiate = [&](const Expr &e, const VarBindings &b,
                         const FusedValues &fused = {}) {
    Expr v = substitute(inlineProducers(lg, plan, e), b);
    return Materializer(lg, fused).mutate(v);
  };
  const std::vector<int> &rowGroup = plan.rowReductions[def];

  // A size variant (ScheduleOptions::sizeVariantAt) says what its
  // heuristic planned the symbols at.
  const std::string name =
      "k" + std::to_string(kernelIndex) + "_" + sanitize(d.name, 32) +
      (opts.planSymbolsAt > 1 ? "_at" + std::to_string(opts.planSymbolsAt)
                              : std::string());
  KernelConfig config;
  config.templ = !rowGroup.empty()             ? "row"
                 : red < 0                     ? "pointwise"
                 : lg.defs[red].attention      ? "attention"
                 : lg.defs[red].rereadsInputs ? "contraction"
                                               : "reduction";
  // The configuration given for this kernel by name (--kernel-configs),
  // if any, once it is of this kernel's template.
  const KernelConfig *given = nullptr;
  if (auto it = opts.kernelConfigs.find(name);
      it != opts.kernelConfigs.end()) {
    given = &it->second;
    if (!given->templ.empty() && given->templ != config.templ)
      return makeError("--kernel-configs: kernel '", name, "' is a ",
                       config.templ, ", not a ", given->templ);
  }
  // The tile: the heuristic's for this device, or the given one (checked
  // against the kernel first).
  auto pickTile = [&](const ReductionNest &nest) -> Expected<RegisterTile> {
    RegisterTile t;
    if (given) {
      int rank = static_cast<int>(nest.shape.size());
      if (given->m >= rank || given->n >= rank)
        return makeError("--kernel-configs: kernel '", name, "' has ", rank,
                         " output dimensions; m = ", given->m,
                         ", n = ", given->n);
      t.m = given->m;
      t.n = given->n;
      t.tm = given->tm;
      t.tn = given->tn;
      t.vectorLanes = given->lanes;
      t.groupM = given->groupM;
      t.groupN = given->groupN;
      t.bk = given->bk;
      t.splitK = given->splitK;
      t.groupReduce = given->groupReduce;
      t.gemmView = given->gemmView;
      t.prefetch = given->prefetch;
      t.rowLoop = given->rowLoop;
      t.rowBlock = given->rowBlock;
      t.prefetchNext = given->prefetchNext;
      if (t.prefetchNext) {
        std::string why =
            opts.profile.family == "gpu"
                ? "it is for CPUs"
                : nextSliceProblem(nest, t, opts.profile.cacheBytes);
        if (!why.empty())
          return makeError("--kernel-configs: kernel '", name,
                           "': prefetch_next: ", why);
      }
      t.unroll = given->unroll;
      if (t.unroll > 1)
        if (std::string why = unrollProblem(nest, t); !why.empty())
          return makeError("--kernel-configs: kernel '", name, "': unroll ",
                           t.unroll, ": ", why);
      if (t.rowLoop >= 0)
        if (std::string why = rowLoopProblem(nest, t); !why.empty())
          return makeError("--kernel-configs: kernel '", name,
                           "': row_loop ", t.rowLoop, ", row_block ",
                           t.rowBlock, ": ", why);
      if (t.gemmView && (t.m < 0 || t.n != gemmViewColumn(rank, t.m)))
        return makeError("--kernel-configs: kernel '", name,
                         "': a GEMM view takes for n the last output "
                         "dimension other than m; m = ", t.m, ", n = ", t.n);
    } else if (opts.registerTiling) {
      t = chooseRegisterTile(nest, opts.profile, opts.planSymbolsAt);
    }
    // CPUs walk a panel's rows in neighbouring work-items, GPUs its
    // columns (RegisterTile::mInnermost).
    t.mInnermost = opts.profile.family != "gpu";
    t.cacheBytes = opts.profile.cacheBytes;
    return t;
  };
  // A nest that reads through a padding's selects along its columns (a
  // padded copy): its interior columns tiled without the column
  // conditions, the border columns one by one (column_interior.h). CPU
  // tiles only (1 x tn along the columns); \p ci is reset where the tile
  // chosen for the interior is not one.
  auto tileWithInterior =
      [&](const ReductionNest &nest,
          std::optional<ColumnInterior> &ci) -> Expected<RegisterTile> {
    if (opts.profile.family != "gpu" && opts.registerTiling)
      ci = columnInterior(nest);
    if (ci) {
      AOTC_ASSIGN_OR_RETURN(RegisterTile t, pickTile(ci->interior));
      if (t.m < 0 && t.n == ci->n && t.groupM == 0 && t.groupReduce == 0 &&
          t.rowLoop < 0)
        return t;
      ci.reset();
    }
    return pickTile(nest);
  };
  auto record = [&](const RegisterTile &t) {
    config.m = t.n >= 0 ? t.m : -1;
    config.n = t.n;
    config.tm = t.n >= 0 && t.m >= 0 ? t.tm : 1;
    config.tn = t.n >= 0 ? t.tn : 1;
    config.lanes = t.n >= 0 ? t.vectorLanes : 0;
    config.groupM = t.groupM;
    config.groupN = t.groupN;
    config.bk = t.bk;
    config.splitK = t.splitK;
    config.groupReduce = t.groupReduce;
    config.gemmView = t.gemmView;
    config.prefetch = t.n >= 0 && t.m >= 0 ? t.prefetch : 0;
    config.rowLoop = t.n >= 0 ? t.rowLoop : -1;
    config.rowBlock = t.n >= 0 && t.rowLoop >= 0 ? t.rowBlock : 0;
    config.prefetchNext = t.n >= 0 && t.m >= 0 && t.prefetchNext;
    config.unroll = t.n >= 0 && t.m >= 0 ? t.unroll : 1;
  };
  GroupTiledKernel grouped; // a work-group tile's local arrays and size
  std::vector<KernelBuffer> privates; // a row loop's accumulators
  // Tiled kernels merge neighbouring output dimensions that every access
  // reads as one (collapse_dims.h); the naive reference keeps the nest.
  std::map<std::string, std::vector<Expr>> views;
  auto collapse = [&](const ReductionNest &nest) {
    if (!opts.registerTiling && !given)
      return nest;
    CollapsedNest c = collapseDims(nest, m);
    views = std::move(c.views);
    return c.nest;
  };

  // The accumulation of reduction \p r at an output index (its finish is
  // left to the caller), reading the row group's earlier results
  // \p fused.
  auto reductionNest = [&](int r, const FusedValues &fused) {
    const TensorDef &rd = lg.defs[r];
    ReductionNest nest;
    nest.shape = rd.shape;
    nest.accType = rd.dtype;
    nest.init = combinerIdentity(rd.combiner, rd.dtype);
    nest.reduceExtents = rd.reduceExtents;
    nest.contraction = rd.rereadsInputs;
    nest.blockedSum = rd.combiner == Combiner::Sum && isFloat(rd.dtype);
    nest.term = [&, r, fused](const std::vector<Expr> &at,
                              const std::vector<Expr> &rv) {
      VarBindings rb = indexBindings(lg.vars, at);
      for (size_t k = 0; k < rv.size(); ++k)
        rb.emplace_back(lg.vars.rvar(static_cast<int>(k)), rv[k]);
      return instantiate(lg.defs[r].body, rb, fused);
    };
    nest.combine = [&, r](const Expr &acc, const Expr &term) {
      return combineWith(lg.defs[r].combiner, acc, term);
    };
    return nest;
  };
  // The value of reduction \p r at \p at from its accumulator: its
  // epilogue applied.
  auto finished = [&](int r, const std::vector<Expr> &at, const Expr &acc,
                      const FusedValues &fused) {
    const TensorDef &rd = lg.defs[r];
    if (!rd.epilogue.defined())
      return acc;
    VarBindings eb = indexBindings(lg.vars, at);
    eb.emplace_back(lg.vars.acc(rd.dtype), acc);
    return instantiate(rd.epilogue, eb, fused);
  };

  // The output element at \p at from the value \p v of the kernel's
  // reduction: stored, or first read by the def's own pointwise body (a
  // consumer fused into the reduction's kernel).
  auto storeReduced = [&](const std::vector<Expr> &at,
                          const Expr &v) -> Stmt {
    if (red == def)
      return Store::make(out, at, v);
    Expr redVar = Var::make("red", lg.defs[red].dtype);
    if (const std::optional<PaddedCopy> &pc = plan.paddedStore[def]) {
      // A padded store (padded_stores.h): the value the copy pads, at the
      // reduction's index, stored shifted; the border elements this one
      // is nearest to, filled.
      const TensorDef &x = lg.defs[pc->source];
      Expr value = instantiate(Access::make(x.dtype, pc->source,
                                            lg.vars.idxVars(x.rank())),
                               indexBindings(lg.vars, at), {{red, redVar}});
      std::vector<Stmt> stores{
          Store::make(out, shiftedIndices(at, pc->before), value)};
      Stmt border = paddedBorderStores(
          *pc, lg.defs[red].shape, at, [&](const std::vector<Expr> &idx) {
            return Store::make(out, idx, pc->fill);
          });
      if (border.defined())
        stores.push_back(border);
      return LetStmt::make(redVar, v, Block::make(std::move(stores)));
    }
    Expr value =
        instantiate(d.body, indexBindings(lg.vars, at), {{red, redVar}});
    return LetStmt::make(redVar, v, Store::make(out, at, value));
  };

  Stmt s;
  if (red >= 0 && lg.defs[red].attention) {
    // Fused attention (attention.cpp): its value row per work-item, the
    // keys in blocks of the heuristic's lanes or the given ones.
    const TensorDef &rd = lg.defs[red];
    const TensorDef::Attention &att = *rd.attention;
    if (given && (given->m >= 0 || given->n >= 0 || given->groupM > 0 ||
                  given->splitK > 1))
      return makeError("--kernel-configs: kernel '", name,
                       "' is an attention kernel, which takes lanes (a "
                       "work-item per query row) or group_reduce and tm (a "
                       "work-group of 8 work-items per row, tm rows each) "
                       "only");
    AttentionNest nest;
    nest.shape = d.shape;
    nest.type = rd.dtype;
    nest.keys = rd.reduceExtents[0];
    nest.depth = att.depth;
    auto bindings = [&](const std::vector<Expr> &at, const Expr &key) {
      VarBindings b = indexBindings(lg.vars, at);
      b.emplace_back(lg.vars.rvar(0), key);
      return b;
    };
    nest.score = [&](const std::vector<Expr> &at, const Expr &key,
                     const Expr &depth) {
      VarBindings b = bindings(at, key);
      b.emplace_back(lg.vars.rvar(1), depth);
      return instantiate(att.score, b);
    };
    nest.scoreFinish = [&](const std::vector<Expr> &at, const Expr &key,
                           const Expr &dot) {
      if (!att.scoreEpilogue.defined())
        return dot;
      VarBindings b = bindings(at, key);
      b.emplace_back(lg.vars.acc(rd.dtype), dot);
      return instantiate(att.scoreEpilogue, b);
    };
    nest.value = [&](const std::vector<Expr> &at, const Expr &key) {
      return instantiate(rd.body, bindings(at, key));
    };
    nest.finish = storeReduced;
    // GPUs: a work-group per block of query rows (group_attention.cpp)
    // where the depth and value width are static; else, and where a
    // configuration gives lanes, a work-item per row (attention.cpp).
    AttentionGroup group =
        given ? AttentionGroup{given->groupReduce, given->tm}
              : chooseAttentionGroup(nest, opts.profile, opts.planSymbolsAt);
    if (group.size > 0) {
      Expected<GroupTiledKernel> g =
          groupAttentionKernel(nest, group.size, group.rowsPerItem,
                               opts.profile, lg.env);
      if (!g)
        return g.status().withContext("kernel '" + name + "'");
      grouped = std::move(*g);
      s = grouped.body;
      config.groupReduce = group.size;
      config.tm = group.rowsPerItem;
    } else {
      int lanes = given ? given->lanes : attentionKeyLanes(opts.profile);
      bool vectorized = false;
      s = attentionKernel(nest, lanes, lg.env, &vectorized);
      if (!s.defined())
        return makeError("internal error: kernel '", name,
                         "': the attention's value row does not vectorize "
                         "as planned");
      config.lanes = vectorized || given ? lanes : 0;
    }
  } else if (!rowGroup.empty()) {
    // A row group: each reduction per row into a local, then the row.
    RowNest rows;
    rows.shape = d.shape;
    rows.rowAxis = plan.rowAxes[def];
    FusedValues results;
    for (int r : rowGroup) {
      ReductionNest stage = reductionNest(r, results);
      Expr result = Var::make("stat", lg.defs[r].dtype);
      stage.finish = [&, r, result, before = results](
                         const std::vector<Expr> &at, const Expr &acc) {
        return LocalAssign::make(result, finished(r, at, acc, before));
      };
      rows.stages.push_back(std::move(stage));
      rows.results.push_back(result);
      results[r] = result;
    }
    rows.store = [&, results](const std::vector<Expr> &at) {
      return Store::make(
          out, at, instantiate(d.body, indexBindings(lg.vars, at), results));
    };
    // (Row groups form only for register-tiled kernels: fusion.cpp.)
    // GPUs: a work-group per row (groupRowKernel); else one work-item per
    // row with explicit vectors.
    int lanes = explicitVectorLanes(opts.profile);
    int64_t groupSize = groupRowSize(rows, opts.profile);
    if (given) {
      if (given->m >= 0 || given->n >= 0)
        return makeError("--kernel-configs: kernel '", name,
                         "' is a row kernel, which takes no register tile "
                         "(m = ", given->m, ", n = ", given->n, ")");
      lanes = given->lanes;
      groupSize = given->groupReduce;
    }
    if (groupSize > 0) {
      Expected<GroupTiledKernel> g = groupRowKernel(rows, groupSize);
      if (!g)
        return g.status().withContext("kernel '" + name + "'");
      grouped = std::move(*g);
      s = grouped.body;
      config.groupReduce = groupSize;
    } else {
      // The heuristic's lanes are recorded where they were used; a given
      // configuration is recorded as given.
      bool vectorized = false;
      s = rowKernel(rows, lanes, lg.env, &vectorized, &privates);
      config.lanes = vectorized || given ? lanes : 0;
    }
  } else if (red < 0) {
    ReductionNest rows;
    rows.shape = d.shape;
    rows.finish = [&](const std::vector<Expr> &at, const Expr &) {
      return Store::make(out, at,
                         instantiate(d.body, indexBindings(lg.vars, at)));
    };
    rows = collapse(rows);
    std::optional<ColumnInterior> ci;
    AOTC_ASSIGN_OR_RETURN(RegisterTile tile, tileWithInterior(rows, ci));
    record(tile);
    if (tile.groupM > 0 || tile.groupReduce > 0)
      return makeError("--kernel-configs: kernel '", name,
                       "' is pointwise, which takes no work-group tile");
    if (ci) {
      s = tiledWithBorderColumns(rows, *ci, tile);
    } else {
      s = tile.n >= 0 ? registerTiledNest(rows, tile, nullptr, &privates)
                      : untiledNest(rows);
    }
  } else {
    ReductionNest nest = reductionNest(red, {});
    // A padded store walks the reduction's elements (reductionNest's
    // shape); any other fused consumer has that shape too.
    if (!plan.paddedStore[def])
      nest.shape = d.shape;
    nest.finishDivides = plan.paddedStore[def].has_value();
    nest.finish = [&](const std::vector<Expr> &at, const Expr &acc) {
      return storeReduced(at, finished(red, at, acc, {}));
    };
    nest = collapse(nest);
    std::optional<ColumnInterior> ci;
    AOTC_ASSIGN_OR_RETURN(RegisterTile tile, tileWithInterior(nest, ci));
    record(tile);
    if (ci) {
      s = tiledWithBorderColumns(nest, *ci, tile);
    } else if (tile.groupReduce > 0) {
      Expected<GroupTiledKernel> g = groupReductionNest(nest, tile.groupReduce);
      if (!g)
        return g.status().withContext("kernel '" + name + "'");
      grouped = std::move(*g);
      s = grouped.body;
    } else if (tile.groupM > 0) {
      Expected<GroupTiledKernel> g = groupTiledNest(nest, tile);
      if (!g)
        return g.status().withContext("kernel '" + name + "'");
      grouped = std::move(*g);
      s = grouped.body;
    } else if (tile.n >= 0) {
      s = registerTiledNest(nest, tile, nullptr, &privates);
    } else if (Stmt v = nest.shape.empty() && !nest.contraction
                            ? vectorStage(nest, {}, tile.vectorLanes, lg.env)
                            : Stmt();
               v.defined()) {
      // A reduction to one value (a dynamic quantization's ReduceMin and
      // ReduceMax over a whole activation): one work-item, its innermost
      // loop in vectors. Scalar, ResNet-18's took 0.30 ms for 200k floats.
      s = v;
      config.lanes = tile.vectorLanes;
    } else {
      s = untiledNest(nest);
    }
  }
  s = simplify(s, lg.env);
  s = splitDivModLoops(s, lg.env);

  if (given)
    config.indexBits = given->indexBits;
  Kernel k;
  k.name = name;
  k.config = kernelConfigJson(config);
  k.indexBits = config.indexBits;
  k.body = s;
  std::vector<int> fused = rowGroup;
  if (red >= 0)
    fused.push_back(red);
  k.summary = kernelOps(lg, plan, def, fused) + " -> " + dtypeName(d.dtype) +
              "[" + printExprs(d.shape) + "]";
  k.locals = grouped.locals;
  k.workGroupSize = grouped.workGroupSize;
  k.privates = privates;
  AOTC_ASSIGN_OR_RETURN(k.buffers,
                        kernelBuffers(s, m, k.locals, k.privates, views));
  k.symbols = kernelSymbols(s, k.buffers, m.symbols);
  struct Finder : IRVisitor {
    bool found = false;
    void visitIndexCheck(const IndexCheck *) override { found = true; }
  } finder;
  finder.visit(s);
  k.reportsErrors = finder.found;
  return k;
}

} // namespace aotc
