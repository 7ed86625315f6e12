/// \file
/// LoopModule helpers and printer.
#include "ir/module.h"

#include "ir/visitor.h"

#include <algorithm>
#include <map>
#include <set>

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

int LoopModule::syncOfSymbol(int i) const {
  const Symbol &s = symbols.at(static_cast<size_t>(i));
  if (s.isData()) {
    for (size_t k = 0; k < syncs.size(); ++k)
      if (syncs[k].symbol == i)
        return static_cast<int>(k);
    return static_cast<int>(syncs.size()); // never synced: never known
  }
  return s.isDerived() ? syncOf(s.definition) : -1;
}

int LoopModule::syncOf(const Expr &e) const {
  int sync = -1;
  for (const Expr &v : freeVars(e))
    for (size_t i = 0; i < symbols.size(); ++i)
      if (symbols[i].var.as<Var>()->id == v.as<Var>()->id)
        sync = std::max(sync, syncOfSymbol(static_cast<int>(i)));
  return sync;
}

namespace {

/// True if \p e cannot decrease when any Var of \p grows increases (every
/// other variable fixed), for values in \p env.
bool nonDecreasingIn(const Expr &e, const std::set<uint64_t> &grows,
                     const RangeEnv &env) {
  bool reads = false;
  for (const Expr &v : freeVars(e))
    reads |= grows.count(v.as<Var>()->id) > 0;
  if (!reads)
    return true;
  if (e.as<Var>())
    return true;
  if (const Cast *c = e.as<Cast>())
    return !isFloat(e.type()) && nonDecreasingIn(c->value, grows, env);
  if (const Select *s = e.as<Select>()) {
    for (const Expr &v : freeVars(s->cond))
      if (grows.count(v.as<Var>()->id))
        return false;
    return nonDecreasingIn(s->trueValue, grows, env) &&
           nonDecreasingIn(s->falseValue, grows, env);
  }
  const Binary *b = e.as<Binary>();
  if (!b)
    return false;
  auto nonNegative = [&](const Expr &x) {
    std::optional<Range> r = boundsOf(x, env);
    return r && r->min >= 0;
  };
  switch (b->op) {
  case BinOp::Add:
  case BinOp::Max:
  case BinOp::Min:
    return nonDecreasingIn(b->a, grows, env) && nonDecreasingIn(b->b, grows, env);
  case BinOp::Mul:
    return nonNegative(b->a) && nonNegative(b->b) &&
           nonDecreasingIn(b->a, grows, env) && nonDecreasingIn(b->b, grows, env);
  case BinOp::FloorDiv: {
    int64_t d = 0;
    return b->b.isConst(d) && d > 0 && nonDecreasingIn(b->a, grows, env);
  }
  default:
    return false;
  }
}

} // namespace

Expected<Expr> boundDataSymbols(const Expr &e, const std::vector<Symbol> &symbols,
                                const RangeEnv &env, const std::string &what) {
  // Expand the derived symbols that read a data symbol, newest first (a
  // definition reads only symbols declared before it).
  std::set<uint64_t> data;
  std::vector<bool> dependent(symbols.size(), false);
  for (size_t i = 0; i < symbols.size(); ++i) {
    const Symbol &s = symbols[i];
    if (s.isData()) {
      dependent[i] = true;
      data.insert(s.var.as<Var>()->id);
      continue;
    }
    if (!s.isDerived())
      continue;
    for (const Expr &v : freeVars(s.definition))
      for (size_t k = 0; k < i; ++k)
        if (dependent[k] && symbols[k].var.as<Var>()->id == v.as<Var>()->id)
          dependent[i] = true;
  }
  Expr out = e;
  for (size_t i = symbols.size(); i-- > 0;)
    if (dependent[i] && symbols[i].isDerived())
      out = substitute(out, {{symbols[i].var, symbols[i].definition}});
  out = simplify(out, env);
  if (!nonDecreasingIn(out, data, env))
    return makeError(what, " (", printExpr(out),
                     ") may shrink as a count computed from data grows, so "
                     "its largest size cannot be planned");
  for (size_t i = symbols.size(); i-- > 0;)
    if (symbols[i].isData())
      out = substitute(out, {{symbols[i].var, symbols[i].dataBound}});
  return simplify(out, env);
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

size_t LoopModule::numFunctions() const {
  size_t n = 0;
  for (const Launch &l : launches())
    n += l.group >= 0 ? persistent[l.group].function.empty()
                      : kernels[l.kernel].function.empty();
  // Each persistent kernel's parts as kernels of their own too.
  for (const Persistent &p : persistent)
    for (int k = p.first; k <= p.last; ++k)
      n += kernels[k].function.empty();
  if (foldProgram)
    for (const Kernel &k : foldProgram->kernels)
      n += k.function.empty();
  return n;
}

std::vector<LoopModule::Launch> LoopModule::launches() const {
  // Groups are in kernel order and disjoint (the verifier checks it).
  std::vector<Launch> out;
  size_t g = 0;
  for (int k = 0; k < static_cast<int>(kernels.size()); ++k) {
    if (g < persistent.size() && persistent[g].first == k) {
      out.push_back({k, static_cast<int>(g)});
      k = persistent[g++].last;
    } else {
      out.push_back({k, -1});
    }
  }
  return out;
}

int LoopModule::groupOf(int k) const {
  for (size_t g = 0; g < persistent.size(); ++g)
    if (persistent[g].first <= k && k <= persistent[g].last)
      return static_cast<int>(g);
  return -1;
}

Kernel LoopModule::persistentSignature(int g) const {
  const Persistent &p = persistent.at(static_cast<size_t>(g));
  Kernel sig;
  sig.name = p.name;
  for (int i = p.first; i <= p.last; ++i) {
    const Kernel &k = kernels.at(static_cast<size_t>(i));
    for (const KernelBuffer &b : k.buffers) {
      auto it =
          std::find_if(sig.buffers.begin(), sig.buffers.end(),
                       [&](const KernelBuffer &x) { return x.name == b.name; });
      if (it == sig.buffers.end())
        sig.buffers.push_back(b);
      else
        it->written |= b.written;
    }
    sig.reportsErrors |= k.reportsErrors;
    for (const Expr &s : k.symbols)
      if (std::none_of(sig.symbols.begin(), sig.symbols.end(),
                       [&](const Expr &x) {
                         return x.as<Var>()->id == s.as<Var>()->id;
                       }))
        sig.symbols.push_back(s);
  }
  return sig;
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
    if (b.capacity.defined())
      out += " (planned " + printExpr(b.capacity) + " bytes)";
    out += "\n";
  }
  for (const Sync &s : syncs)
    out += "sync after kernel " + std::to_string(s.afterKernel) + ": " +
           symbols.at(static_cast<size_t>(s.symbol)).name + " = " + s.buffer +
           "[0]\n";
  out += "arena bytes = " + printExpr(arenaBytes) + "\n";
  for (size_t i = 0; i < errors.size(); ++i)
    out += "error #" + std::to_string(i) + ": " + errors[i] + "\n";
  for (const Persistent &p : persistent)
    out += "persistent " + p.name + ": kernels " + std::to_string(p.first) +
           ".." + std::to_string(p.last) + ", counters @ " +
           std::to_string(p.counterOffset) + "\n";
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
