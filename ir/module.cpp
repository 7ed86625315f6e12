/// \file
/// LoopModule helpers and printer.
#include "ir/module.h"

#include <algorithm>
#include <map>

namespace aotc {

const ModuleBuffer *LoopModule::findBuffer(const std::string &name) const {
  for (const ModuleBuffer &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

std::vector<Expr> LoopModule::globalSize(const Kernel &k) {
  std::map<int, Expr> dims;
  Stmt s = k.body;
  while (s.defined()) {
    if (const LetStmt *l = s.as<LetStmt>()) {
      s = l->body;
      continue;
    }
    const For *f = s.as<For>();
    if (!f || f->forKind != ForKind::Parallel)
      break;
    // Loops that share a dimension are flattened onto it.
    auto it = dims.find(f->dim);
    if (it == dims.end())
      dims.emplace(f->dim, f->extent);
    else
      it->second = it->second * f->extent;
    s = f->body;
  }
  std::vector<Expr> out;
  for (auto &d : dims)
    out.push_back(d.second);
  return out;
}

static const char *roleName(BufferRole r) {
  switch (r) {
  case BufferRole::Input:
    return "input";
  case BufferRole::Output:
    return "output";
  case BufferRole::Constant:
    return "constant";
  case BufferRole::Arena:
    return "arena";
  }
  return "?";
}

std::vector<std::pair<const Kernel *, const LoopModule *>>
LoopModule::allKernels() const {
  std::vector<std::pair<const Kernel *, const LoopModule *>> all;
  for (const Kernel &k : kernels)
    all.emplace_back(&k, this);
  if (foldProgram)
    for (const Kernel &k : foldProgram->kernels)
      all.emplace_back(&k, foldProgram.get());
  return all;
}

std::string LoopModule::print() const {
  std::string out = "module " + name + "\n";
  for (const Symbol &s : symbols)
    out += "symbol " + s.name + " in [" + std::to_string(s.range.min) + ", " +
           std::to_string(s.range.max) + "]\n";
  for (const ModuleBuffer &b : buffers) {
    out += "buffer " + b.name + ": " + roleName(b.role) + " " +
           dtypeName(b.dtype) + "[" + printExprs(b.shape) + "]";
    if (b.role == BufferRole::Arena)
      out += " @ " + printExpr(b.arenaOffset);
    out += "\n";
  }
  out += "arena bytes = " + printExpr(arenaBytes) + "\n";
  for (size_t i = 0; i < errors.size(); ++i)
    out += "error #" + std::to_string(i) + ": " + errors[i] + "\n";
  for (const Kernel &k : kernels) {
    if (!k.summary.empty())
      out += "// " + k.name + ": " + k.summary + "\n";
    if (k.flops.defined() && k.bytes.defined())
      out += "// flops " + printExpr(k.flops) + ", bytes " +
             printExpr(k.bytes) + "\n";
    out += printKernel(k);
  }
  if (foldProgram) {
    out += "folding program\n";
    for (const ModuleBuffer &b : foldProgram->buffers)
      if (b.role == BufferRole::Constant && b.index >= 0 &&
          b.index < static_cast<int>(constants.size()))
        out += "// " + b.name + " is constant '" + constants[b.index].name +
               "'" + (constants[b.index].computed ? " (computed)" : "") +
               "\n";
    out += foldProgram->print();
  }
  return out;
}

} // namespace aotc
