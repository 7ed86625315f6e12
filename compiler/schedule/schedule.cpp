/// \file
/// The scheduler driver: fusion plan, buffers, kernels, memory plan.
#include "compiler/schedule/schedule.h"

namespace aotc {

Expected<LoopModule> scheduleGraph(const Graph &g, LoweredGraph lg,
                                   const LoopPassHook &afterPass) {
  auto passDone = [&](const char *pass, const LoopModule &m) -> Status {
    return afterPass ? afterPass(pass, m) : Status::ok();
  };
  separateOutputs(lg);
  FusionPlan plan = planFusion(lg);

  LoopModule m;
  m.name = g.name.empty() ? "model" : g.name;
  m.symbols = g.symbols();
  m.errors = lg.errors;
  m.assumptions = g.assumptions();

  for (size_t k = 0; k < lg.inputs.size(); ++k) {
    const TensorDef &d = lg.defs[lg.inputs[k]];
    std::string buf = bufferName(lg, lg.inputs[k]);
    m.inputs.push_back(ModuleTensor{d.name, d.dtype, d.shape, buf});
    m.buffers.push_back(ModuleBuffer{buf, d.dtype, d.shape, BufferRole::Input,
                                     static_cast<int>(k), Expr()});
  }
  for (size_t id = 0; id < lg.defs.size(); ++id) {
    const TensorDef &d = lg.defs[id];
    if (d.kind != TensorDef::Kind::Constant ||
        plan.decisions[id] != FusionPlan::Decision::Leaf)
      continue;
    const Value *v = d.constant;
    ModuleConstant c;
    c.name = bufferName(lg, static_cast<int>(id));
    c.onnxName = v->onnxName();
    c.dtype = d.dtype;
    c.shape = v->type().staticDims();
    c.data = v->data();
    c.folded = v->folded();
    c.offset = m.constantsBytes;
    m.constantsBytes += (c.data.size() + LoopModule::kConstantAlignment - 1) /
                        LoopModule::kConstantAlignment *
                        LoopModule::kConstantAlignment;
    m.buffers.push_back(
        ModuleBuffer{c.name, d.dtype, d.shape, BufferRole::Constant,
                     static_cast<int>(m.constants.size()), Expr()});
    m.constants.push_back(std::move(c));
  }
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
  for (int id : plan.kernelOrder) {
    AOTC_ASSIGN_OR_RETURN(
        Kernel k,
        buildKernel(lg, plan, id, static_cast<int>(m.kernels.size()), m));
    m.kernels.push_back(std::move(k));
  }
  // Kernels come out simplified, and with a run-time check on every access
  // the verifier cannot prove (the invariant holds from here on).
  guardUnprovenAccesses(m);
  AOTC_RETURN_IF_ERROR(passDone("build-kernels", m));

  planMemory(m, lg.env);
  AOTC_RETURN_IF_ERROR(passDone("plan-memory", m));
  return m;
}

} // namespace aotc
