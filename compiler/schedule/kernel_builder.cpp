/// \file
/// Builds one Loop IR kernel per materialized def: a parallel loop over the
/// output's elements, producers inlined, accesses to buffers turned into flat
/// Loads, and for reductions an accumulator over serial reduction loops.
#include "compiler/schedule/schedule.h"

#include "ir/indexing.h"

#include "ir/visitor.h"

#include <cctype>
#include <map>

namespace aotc {

namespace {

using Decision = FusionPlan::Decision;

std::vector<std::pair<std::string, Expr>>
indexBindings(const std::vector<Expr> &idx) {
  std::vector<std::pair<std::string, Expr>> b;
  for (size_t k = 0; k < idx.size(); ++k)
    b.emplace_back("i" + std::to_string(k), idx[k]);
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
    return mutate(substitute(d.body, indexBindings(a->indices)));
  }

private:
  const LoweredGraph &lg_;
  const FusionPlan &plan_;
};

/// Turns accesses to materialized defs into Loads, and accesses to the fused
/// reduction into its result variable.
class Materializer : public IRMutator {
public:
  Materializer(const LoweredGraph &lg, int fused, Expr fusedValue)
      : lg_(lg), fused_(fused), fusedValue_(std::move(fusedValue)) {}
  std::string error;

protected:
  Expr mutateAccess(const Access *op, const Expr &self) override {
    Expr e = IRMutator::mutateAccess(op, self);
    const Access *a = e.as<Access>();
    if (a->tensor == fused_)
      return fusedValue_;
    const TensorDef &d = lg_.defs[a->tensor];
    return Load::make(d.dtype, bufferName(lg_, a->tensor),
                      linearize(a->indices, d.shape));
  }

private:
  const LoweredGraph &lg_;
  int fused_;
  Expr fusedValue_;
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

/// max/min that propagate NaN like NumPy and PyTorch: v wins when it is
/// NaN, so once the accumulator is NaN it stays NaN.
Expr pickIf(BinOp better, const Expr &acc, const Expr &v) {
  Expr take = Binary::make(better, v, acc);
  if (isFloat(v.type()))
    take = Binary::make(BinOp::Or, take, Call::make(DType::Bool, "isnan", {v}));
  return Select::make(take, v, acc);
}

Expr combine(Combiner c, const Expr &acc, const Expr &v) {
  switch (c) {
  case Combiner::Sum:
    return Binary::make(BinOp::Add, acc, v);
  case Combiner::Max:
    return pickIf(BinOp::GT, acc, v);
  case Combiner::Min:
    return pickIf(BinOp::LT, acc, v);
  }
  return acc;
}

Expr initial(Combiner c, DType t) {
  switch (c) {
  case Combiner::Sum:
    return literal(t, 0);
  case Combiner::Max:
    return lowestValue(t);
  case Combiner::Min:
    return highestValue(t);
  }
  return Expr();
}

/// Buffers a statement reads and writes, sorted by name.
std::vector<KernelBuffer> kernelBuffers(const Stmt &s) {
  struct V : IRVisitor {
    std::map<std::string, KernelBuffer> bufs;
    void visitLoad(const Load *op) override {
      bufs.emplace(op->buffer, KernelBuffer{op->buffer, op->type, false});
      IRVisitor::visitLoad(op);
    }
    void visitStore(const Store *op) override {
      auto &b = bufs.emplace(op->buffer,
                             KernelBuffer{op->buffer, op->value.type(), true})
                    .first->second;
      b.written = true;
      IRVisitor::visitStore(op);
    }
  } v;
  v.visit(s);
  std::vector<KernelBuffer> out;
  for (auto &[k, b] : v.bufs)
    out.push_back(b);
  return out;
}

std::vector<std::string> kernelSymbols(const Stmt &s,
                                       const std::set<std::string> &symbols) {
  struct V : IRVisitor {
    std::set<std::string> names;
    void visitVar(const Var *op) override { names.insert(op->name); }
  } v;
  v.visit(s);
  std::vector<std::string> out;
  for (const std::string &n : v.names)
    if (symbols.count(n))
      out.push_back(n);
  return out;
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
                             int def, int kernelIndex,
                             const std::set<std::string> &symbols) {
  const TensorDef &d = lg.defs[def];
  int red =
      d.kind == TensorDef::Kind::Reduction ? def : plan.fusedReduction[def];
  Expr x = Var::make("x");
  Expr total = simplify(product(d.shape), lg.env);
  std::vector<Expr> idx = delinearize(x, d.shape);
  auto bindings = indexBindings(idx);
  std::string out = bufferName(lg, def);

  Stmt body;
  if (red < 0) {
    Expr v = substitute(inlineProducers(lg, plan, d.body), bindings);
    v = Materializer(lg, -1, Expr()).mutate(v);
    body = Store::make(out, x, v);
  } else {
    const TensorDef &rd = lg.defs[red];
    Expr acc = Var::make("acc", rd.dtype);
    Expr term = substitute(inlineProducers(lg, plan, rd.body), bindings);
    term = Materializer(lg, -1, Expr()).mutate(term);
    Stmt loop = LocalAssign::make("acc", combine(rd.combiner, acc, term));
    for (int k = static_cast<int>(rd.reduceExtents.size()) - 1; k >= 0; --k)
      loop = For::make("r" + std::to_string(k), Expr(0), rd.reduceExtents[k],
                       ForKind::Serial, 0, loop);
    Expr result = acc;
    if (rd.epilogue.defined()) {
      result = substitute(inlineProducers(lg, plan, rd.epilogue), bindings);
      result = Materializer(lg, -1, Expr()).mutate(result);
    }
    Stmt finish;
    if (red == def) {
      finish = Store::make(out, x, result);
    } else {
      Expr v = substitute(inlineProducers(lg, plan, d.body), bindings);
      v = Materializer(lg, red, Var::make("red", rd.dtype)).mutate(v);
      finish = LetStmt::make("red", result, Store::make(out, x, v));
    }
    body = LocalDecl::make("acc", rd.dtype, initial(rd.combiner, rd.dtype),
                           Block::make({loop, finish}));
  }
  Stmt s = For::make("x", Expr(0), total, ForKind::Parallel, 0, body);
  s = simplify(s, lg.env);

  Kernel k;
  k.name = "k" + std::to_string(kernelIndex) + "_" + sanitize(d.name, 32);
  k.body = s;
  k.buffers = kernelBuffers(s);
  k.symbols = kernelSymbols(s, symbols);
  k.wideIndex = true;
  return k;
}

} // namespace aotc
