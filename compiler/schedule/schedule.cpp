/// \file
/// The scheduler driver: fusion plan, buffers, kernels, memory plan.
#include "compiler/schedule/schedule.h"

#include "compiler/schedule/chain_kernels.h"
#include "compiler/schedule/persistent_kernels.h"

#include <algorithm>
#include <map>
#include <set>

namespace aotc {

void layoutConstants(LoopModule &m) {
  // Updatable constants (initializers not compiled in, and the packed copies
  // made from them) go last, so that a weightless .so stores only the
  // prefix before them. Computed ones (the folding program's) take no room.
  std::set<std::string> frozen;
  for (const auto &f : m.frozen)
    frozen.insert(f.first);
  std::vector<bool> updatable(m.constants.size(), false);
  for (size_t i = 0; i < m.constants.size(); ++i) {
    const ModuleConstant &c = m.constants[i];
    updatable[i] =
        !c.folded && !c.onnxName.empty() && !frozen.count(c.onnxName);
  }
  for (const LoopModule::Fold &f : m.folds)
    if (!frozen.count(f.source))
      updatable[f.target] = true;
  uint64_t offset = 0;
  for (bool pass : {false, true}) {
    if (pass)
      m.constantsStoredBytes = offset;
    for (size_t i = 0; i < m.constants.size(); ++i) {
      if (updatable[i] != pass)
        continue;
      ModuleConstant &c = m.constants[i];
      c.offset = c.computed ? 0 : offset;
      offset += (c.data.size() + LoopModule::kConstantAlignment - 1) /
                LoopModule::kConstantAlignment *
                LoopModule::kConstantAlignment;
    }
  }
  m.constantsBytes = offset;
}

namespace {

/// The sync after each count's kernel (LoweredGraph::syncs), and the arena
/// size planned for each buffer whose size depends on a count: its size at
/// the counts' bounds.
Status placeSyncs(const LoweredGraph &lg, const FusionPlan &plan,
                  const std::vector<int> &lastKernelOfStep, LoopModule &m) {
  for (const LoweredGraph::Sync &s : lg.syncs) {
    auto at = std::find(plan.kernelOrder.begin(), plan.kernelOrder.end(),
                        s.def);
    if (at == plan.kernelOrder.end())
      return makeError("the count '", lg.defs[s.def].name,
                       "' has no kernel of its own");
    LoopModule::Sync sync;
    sync.afterKernel = lastKernelOfStep[at - plan.kernelOrder.begin()];
    sync.buffer = bufferName(lg, s.def);
    for (size_t i = 0; i < m.symbols.size(); ++i)
      if (m.symbols[i].var.as<Var>()->id == s.symbol.as<Var>()->id)
        sync.symbol = static_cast<int>(i);
    if (sync.symbol < 0)
      return makeError("the count '", lg.defs[s.def].name,
                       "' binds no symbol of the module");
    m.syncs.push_back(sync);
  }
  std::sort(m.syncs.begin(), m.syncs.end(),
            [](const LoopModule::Sync &a, const LoopModule::Sync &b) {
              return a.afterKernel < b.afterKernel;
            });
  for (ModuleBuffer &b : m.buffers) {
    if (b.role != BufferRole::Arena || m.syncOf(b.bytes()) < 0)
      continue;
    AOTC_ASSIGN_OR_RETURN(
        b.capacity, boundDataSymbols(b.bytes(), m.symbols, lg.env,
                                     "the size of '" + b.name + "'"));
  }
  return Status::ok();
}

} // namespace

Expected<LoopModule> scheduleGraph(const Graph &g, LoweredGraph lg,
                                   const LoopPassHook &afterPass,
                                   const ScheduleOptions &opts) {
  auto passDone = [&](const char *pass, const LoopModule &m) -> Status {
    return afterPass ? afterPass(pass, m) : Status::ok();
  };
  separateOutputs(lg);
  FusionOptions fusion;
  // Row groups: one work-item per row on CPUs (rowKernel), a work-group
  // per row on GPUs (groupRowKernel), which any number of rows fills.
  fusion.rowGroups = opts.registerTiling;
  fusion.paddedStores = opts.registerTiling && opts.paddedStores;
  fusion.minRows = opts.profile.family == "gpu"
                       ? 1
                       : std::max<int64_t>(1, opts.profile.computeUnits);
  FusionPlan plan = planFusion(lg, fusion);

  LoopModule m;
  m.name = g.name.empty() ? "model" : g.name;
  m.symbols = g.symbols();
  m.errors = lg.errors;
  m.assumptions = g.assumptions();
  m.frozen.assign(g.frozenInitializers().begin(),
                  g.frozenInitializers().end());

  for (size_t k = 0; k < lg.inputs.size(); ++k) {
    const TensorDef &d = lg.defs[lg.inputs[k]];
    std::string buf = bufferName(lg, lg.inputs[k]);
    m.inputs.push_back(ModuleTensor{d.name, d.dtype, d.shape, buf});
    m.buffers.push_back(ModuleBuffer{buf, d.dtype, d.shape, BufferRole::Input,
                                     static_cast<int>(k), Expr()});
  }
  std::map<const Value *, int> constantIndex;
  auto addConstant = [&](const Value *v, const std::string &name) {
    ModuleConstant c;
    c.name = name;
    c.onnxName = v->onnxName();
    c.valueName = v->name();
    c.dtype = v->type().dtype;
    c.shape = v->type().staticDims();
    c.data = v->data();
    c.folded = v->folded();
    c.computed = v->computedAtLoad();
    c.offset = m.constantsBytes;
    m.constantsBytes += (c.data.size() + LoopModule::kConstantAlignment - 1) /
                        LoopModule::kConstantAlignment *
                        LoopModule::kConstantAlignment;
    constantIndex[v] = static_cast<int>(m.constants.size());
    m.constants.push_back(std::move(c));
    return static_cast<int>(m.constants.size()) - 1;
  };
  for (size_t id = 0; id < lg.defs.size(); ++id) {
    const TensorDef &d = lg.defs[id];
    if (d.kind != TensorDef::Kind::Constant ||
        plan.decisions[id] != FusionPlan::Decision::Leaf)
      continue;
    const Value *v = d.constant;
    int index = addConstant(v, bufferName(lg, static_cast<int>(id)));
    m.buffers.push_back(ModuleBuffer{m.constants[index].name, d.dtype, d.shape,
                                     BufferRole::Constant, index, Expr()});
  }
  // The inputs in ONNX order when some are defaults (initializers listed as
  // inputs): every default is a constant of the module, read by kernels (the
  // caller may override it per run) or not.
  bool anyDefault = false;
  for (const Value *v : g.onnxInputs())
    anyDefault |= v->isConstant();
  for (const Value *v : anyDefault ? g.onnxInputs() : std::vector<Value *>()) {
    ModuleInputSlot slot;
    slot.name = v->name();
    if (!v->isConstant()) {
      const auto &ins = g.inputs();
      slot.input = static_cast<int>(std::find(ins.begin(), ins.end(), v) -
                                     ins.begin());
    } else {
      auto it = constantIndex.find(v);
      slot.readByKernels = it != constantIndex.end();
      slot.constant = slot.readByKernels
                          ? it->second
                          : addConstant(v, "default_" + std::to_string(
                                                            m.inputSlots.size()));
      // Small integer constants may have been used as shape data at compile
      // time: they stay what they are.
      slot.foldedIn = v->symbolicData().has_value();
    }
    m.inputSlots.push_back(slot);
  }
  for (const Graph::FoldRecipe &r : g.foldRecipes()) {
    auto it = constantIndex.find(r.target);
    if (it == constantIndex.end())
      continue; // the packed copy is not read by any kernel
    m.folds.push_back(LoopModule::Fold{r.source, r.dtype, r.sourceShape,
                                       it->second, r.perm, r.splitDim,
                                       r.split});
  }
  layoutConstants(m);
  for (size_t k = 0; k < lg.outputs.size(); ++k) {
    const TensorDef &d = lg.defs[lg.outputs[k]];
    std::string buf = bufferName(lg, lg.outputs[k]);
    m.outputs.push_back(ModuleTensor{lg.outputNames[k], d.dtype, d.shape, buf});
    m.buffers.push_back(ModuleBuffer{buf, d.dtype, d.shape, BufferRole::Output,
                                     static_cast<int>(k), Expr()});
  }
  for (int id : plan.kernelOrder) {
    std::string buf = bufferName(lg, id);
    if (m.findBuffer(buf))
      continue;
    const TensorDef &d = lg.defs[id];
    m.buffers.push_back(
        ModuleBuffer{buf, d.dtype, d.shape, BufferRole::Arena, -1, Expr()});
  }
  // A kernel per materialized def, or two size variants of it; kernels
  // are numbered by def (a variant shares its number).
  std::vector<int> lastKernelOfStep;
  for (size_t step = 0; step < plan.kernelOrder.size(); ++step) {
    AOTC_ASSIGN_OR_RETURN(
        std::vector<Kernel> ks,
        buildSizeVariants(lg, plan, plan.kernelOrder[step],
                          static_cast<int>(step), m, opts));
    for (Kernel &k : ks)
      m.kernels.push_back(std::move(k));
    lastKernelOfStep.push_back(static_cast<int>(m.kernels.size()) - 1);
  }
  AOTC_RETURN_IF_ERROR(placeSyncs(lg, plan, lastKernelOfStep, m));
  // Every configuration given by name was used: a name from another model
  // or an older compile would otherwise be ignored silently.
  for (const auto &[name, config] : opts.kernelConfigs) {
    bool found = false;
    for (const Kernel &k : m.kernels)
      found |= k.name == name;
    if (!found) {
      std::string names;
      for (size_t i = 0; i < m.kernels.size() && i < 8; ++i)
        names += (i ? ", " : "") + m.kernels[i].name;
      if (m.kernels.size() > 8)
        names += ", ...";
      return makeError("--kernel-configs: no kernel named '", name,
                       "' (this model's kernels: ", names,
                       "; `aotc compile --emit=kernel-configs` lists them)");
    }
  }
  // Consecutive CPU contractions whose work-items read only what the same
  // work-item of the kernel before wrote run as one (chain_kernels.h).
  // Verified with the rest after the passes below (a kernel is verifiable
  // only once its finite-or-sums are expanded and its accesses guarded).
  if (opts.chainKernels && opts.registerTiling && opts.profile.family == "cpu")
    chainKernels(m, lg.env, opts.profile.computeUnits, opts.sizeVariantAt);
  // Kernels come out with their finite-or-sums as branches, simplified,
  // their select-arm loads read up front where that is proven safe, each
  // repeated value bound once, and with a run-time check on every access
  // the verifier cannot prove (the invariant holds from here on).
  expandFallbacks(m);
  speculateSelectLoads(m, opts.proofs);
  bindCommonSubexpressions(m);
  guardUnprovenAccesses(m, opts.proofs);
  AOTC_RETURN_IF_ERROR(passDone("build-kernels", m));

  // In place on CPUs only: a GPU's stores do not read their lines first,
  // and its compilers may read an input they see as constant through a
  // cache that a store to the same place does not update.
  planMemory(m, lg.env, opts.inPlace && opts.profile.family == "cpu");
  AOTC_RETURN_IF_ERROR(passDone("plan-memory", m));
  estimateKernelCosts(m, lg.env);
  // The last step: launches, not kernels, change.
  if (opts.persistentKernels && opts.registerTiling &&
      opts.profile.family == "cpu") {
    std::vector<int> classes;
    if (opts.kernelClasses)
      classes = opts.kernelClasses(m);
    persistentKernels(m, classes.empty() ? nullptr : &classes);
    AOTC_RETURN_IF_ERROR(passDone("persistent-kernels", m));
  }
  return m;
}

} // namespace aotc
