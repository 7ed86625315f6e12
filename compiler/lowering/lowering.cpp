/// \file
/// The lowering driver: leaves for inputs and constants, then each node in
/// topological order through its op family.
#include "compiler/lowering/lowering.h"

#include "ir/scalar_ops.h"
#include "ir/simplify.h"
#include "ir/visitor.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aotc {

int LowerCtx::defOf(const Value *v) const {
  auto it = valueDefs_.find(v);
  return it == valueDefs_.end() ? -1 : it->second;
}

int LowerCtx::add(TensorDef d) {
  if (d.op.empty() && d.kind != TensorDef::Kind::Input &&
      d.kind != TensorDef::Kind::Constant)
    d.op = currentOp_;
  out_.defs.push_back(std::move(d));
  return static_cast<int>(out_.defs.size()) - 1;
}

const Expr &FormalVars::get(std::vector<Expr> &v, const char *prefix, int k,
                            DType t) const {
  AOTC_CHECK(k >= 0, "negative formal variable index");
  while (static_cast<int>(v.size()) <= k)
    v.push_back(Var::make(prefix + std::to_string(v.size()), t));
  return v[k];
}

const Expr &FormalVars::acc(DType t) const {
  auto it = acc_.find(t);
  if (it == acc_.end())
    it = acc_.emplace(t, Var::make("acc", t)).first;
  return it->second;
}

std::vector<Expr> FormalVars::idxVars(int rank) const {
  std::vector<Expr> v;
  for (int k = 0; k < rank; ++k)
    v.push_back(idx(k));
  return v;
}

Expr LowerCtx::read(int id, std::vector<Expr> indices) const {
  AOTC_CHECK(id >= 0, "read of an unlowered value");
  const TensorDef &d = def(id);
  AOTC_CHECK((int)indices.size() == d.rank(),
             "rank mismatch reading " << d.name << ": " << indices.size()
                                      << " vs " << d.rank());
  return Access::make(d.dtype, id, std::move(indices));
}

Expr LowerCtx::readBroadcast(int id, const std::vector<Expr> &outShape,
                             const std::vector<Expr> &outIdx) const {
  const TensorDef &d = def(id);
  int off = static_cast<int>(outShape.size()) - d.rank();
  AOTC_CHECK(off >= 0, "broadcast of " << d.name << " to a lower rank");
  std::vector<Expr> in;
  for (int k = 0; k < d.rank(); ++k)
    in.push_back(
        broadcastIndex(d.shape[k], outShape[off + k], outIdx[off + k], env()));
  return read(id, in);
}

int LowerCtx::addPointwise(const Value *out, Expr body, bool isView) {
  TensorDef d;
  d.kind = TensorDef::Kind::Pointwise;
  d.name = out->name();
  d.dtype = out->type().dtype;
  d.shape = out->type().dims;
  d.body = std::move(body);
  d.isView = isView;
  AOTC_CHECK(d.body.type() == d.dtype, "pointwise body type "
                                           << dtypeName(d.body.type())
                                           << " != " << dtypeName(d.dtype)
                                           << " for " << out->name());
  int id = add(std::move(d));
  bind(out, id);
  return id;
}

int LowerCtx::addError(std::string message) {
  out_.errors.push_back(std::move(message));
  return static_cast<int>(out_.errors.size()) - 1;
}

int LowerCtx::copyOf(const Value *v, const std::string &key,
                     const std::function<int()> &make) {
  auto [it, added] = copies_.try_emplace({v, key}, -1);
  if (added)
    it->second = make();
  return it->second;
}

Expr declaredSymbol(const LowerCtx &ctx, const Node &n,
                    const Expr &definition) {
  const Symbol *s = ctx.graph().findDerivedSymbol(definition);
  AOTC_CHECK(s, n.describe() << ": shape inference declared no size for "
                             << printExpr(definition));
  return s->var;
}

Expr literal(DType t, double v) {
  if (isFloat(t))
    return FloatImm::make(v, t);
  // A float attribute (Pad's value, LeakyRelu's alpha, ...) converted to an
  // integer type like Cast does (ir/scalar_ops.h).
  return IntImm::make(scalar::fromFloat(t, v), t);
}

Expr lowestValue(DType t) {
  switch (t) {
  case DType::Float32:
  case DType::Float64:
  case DType::Float16:
  case DType::BFloat16:
    return FloatImm::make(-std::numeric_limits<double>::infinity(), t);
  default:
    return IntImm::make(scalar::minOf(t), t);
  }
}

Expr highestValue(DType t) {
  switch (t) {
  case DType::Float32:
  case DType::Float64:
  case DType::Float16:
  case DType::BFloat16:
    return FloatImm::make(std::numeric_limits<double>::infinity(), t);
  default:
    return IntImm::make(scalar::maxOf(t), t);
  }
}

Expr combineWith(Combiner c, const Expr &acc, const Expr &v) {
  auto pickIf = [&](BinOp better) {
    Expr take = Binary::make(better, v, acc);
    if (isFloat(v.type()))
      take =
          Binary::make(BinOp::Or, take, Call::make(DType::Bool, "isnan", {v}));
    return Select::make(take, v, acc);
  };
  switch (c) {
  case Combiner::Sum:
    return Binary::make(BinOp::Add, acc, v);
  case Combiner::Prod:
    return Binary::make(BinOp::Mul, acc, v);
  case Combiner::Max:
    return pickIf(BinOp::GT);
  case Combiner::Min:
    return pickIf(BinOp::LT);
  }
  return acc;
}

Expr combinerIdentity(Combiner c, DType t) {
  switch (c) {
  case Combiner::Sum:
    return literal(t, 0);
  case Combiner::Prod:
    return literal(t, 1);
  case Combiner::Max:
    return lowestValue(t);
  case Combiner::Min:
    return highestValue(t);
  }
  return Expr();
}

int addAxisReduction(LowerCtx &ctx, const std::string &name, DType dtype,
                     const std::vector<Expr> &inShape,
                     const std::vector<int> &axes, bool keepdims,
                     Combiner combiner,
                     const std::function<Expr(const std::vector<Expr> &)> &term,
                     Expr epilogue) {
  TensorDef d;
  d.kind = TensorDef::Kind::Reduction;
  d.name = name;
  d.dtype = dtype;
  d.combiner = combiner;
  std::vector<Expr> inIdx;
  int outPos = 0, r = 0;
  for (int k = 0; k < (int)inShape.size(); ++k) {
    bool reduced = std::find(axes.begin(), axes.end(), k) != axes.end();
    if (reduced) {
      inIdx.push_back(ctx.rvar(r++));
      d.reduceExtents.push_back(inShape[k]);
      if (keepdims) {
        d.shape.push_back(Expr(1));
        ++outPos;
      }
    } else {
      inIdx.push_back(ctx.idx(outPos++));
      d.shape.push_back(inShape[k]);
    }
  }
  d.body = term(inIdx);
  d.epilogue = std::move(epilogue);
  return ctx.add(std::move(d));
}

namespace {

/// A value whose elements are all known at compile time (shape arithmetic)
/// becomes a select chain over its elements: no kernel reads data for it.
bool lowerKnownValue(const Value *v, LowerCtx &ctx) {
  const auto &sym = v->symbolicData();
  if (!sym || v->type().rank() > 1 || isFloat(v->type().dtype))
    return false;
  DType t = v->type().dtype;
  const std::vector<Expr> &elems = *sym;
  if (v->type().rank() == 1 &&
      !v->type().dims[0].isConstValue((int64_t)elems.size()))
    return false;
  if (elems.empty()) { // the shape of a scalar: no element to compute
    if (v->type().rank() != 1)
      return false;
    ctx.addPointwise(v, literal(t, 0));
    return true;
  }
  Expr body = Cast::make(t, elems.back());
  for (int k = (int)elems.size() - 2; k >= 0; --k)
    body = Select::make(cmp(BinOp::EQ, ctx.idx(0), Expr(k)),
                        Cast::make(t, elems[k]), body);
  if (v->type().rank() == 0)
    body = Cast::make(t, elems[0]);
  ctx.addPointwise(v, body);
  return true;
}

Status lowerNode(const Node &n, LowerCtx &ctx) {
  switch (opFamily(n.op())) {
  case OpFamily::Elementwise:
    return lowerElementwise(n, ctx);
  case OpFamily::Contraction:
    return lowerContraction(n, ctx);
  case OpFamily::Reduction:
    return lowerReduction(n, ctx);
  case OpFamily::DataMovement:
    return lowerShapeOp(n, ctx);
  case OpFamily::DataDependent:
    return lowerDataDependent(n, ctx);
  }
  return makeError(n.describe(), ": no lowering");
}

} // namespace

Expected<LoweredGraph> lowerGraph(const Graph &g, const LowerOptions &opts) {
  LoweredGraph out;
  out.env = g.rangeEnv();
  LowerCtx ctx(g, out, opts);
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value *v = g.inputs()[i];
    TensorDef d;
    d.kind = TensorDef::Kind::Input;
    d.name = v->name();
    d.dtype = v->type().dtype;
    d.shape = v->type().dims;
    d.inputIndex = static_cast<int>(i);
    int id = ctx.add(std::move(d));
    ctx.bind(v, id);
    out.inputs.push_back(id);
  }
  for (const Value *v : g.constants()) {
    TensorDef d;
    d.kind = TensorDef::Kind::Constant;
    d.name = v->name();
    d.dtype = v->type().dtype;
    d.shape = v->type().dims;
    d.constant = v;
    ctx.bind(v, ctx.add(std::move(d)));
  }
  for (const auto &node : g.nodes()) {
    bool dead = true;
    for (const Value *o : node->outputs())
      dead &= o->users().empty() && !g.isOutput(o);
    if (dead)
      continue; // nothing reads its results
    bool folded = true;
    for (const Value *o : node->outputs())
      folded &= lowerKnownValue(o, ctx);
    if (folded)
      continue;
    ctx.setCurrentOp(opName(node->op()));
    AOTC_RETURN_IF_ERROR(lowerNode(*node, ctx));
  }
  for (const Value *v : g.outputs()) {
    int id = ctx.defOf(v);
    if (id < 0)
      return makeError("output '", v->name(), "' has no definition");
    out.outputs.push_back(id);
    out.outputNames.push_back(v->name());
  }
  return out;
}

std::vector<int> accessedDefs(const Expr &e) {
  struct V : IRVisitor {
    std::vector<int> ids;
    void visitAccess(const Access *op) override {
      if (std::find(ids.begin(), ids.end(), op->tensor) == ids.end())
        ids.push_back(op->tensor);
      IRVisitor::visitAccess(op);
    }
  } v;
  if (e.defined())
    v.visit(e);
  return v.ids;
}

std::vector<int> accessedDefs(const TensorDef &d) {
  std::vector<int> ids;
  forEachExpr(d, [&](const Expr &e) {
    for (int t : accessedDefs(e))
      if (std::find(ids.begin(), ids.end(), t) == ids.end())
        ids.push_back(t);
  });
  return ids;
}

namespace {

/// forEachExpr for a const or a mutable def (Def is TensorDef or const
/// TensorDef, F takes its Expr by reference).
template <typename Def, typename F> void eachExprOf(Def &d, const F &f) {
  auto visit = [&](auto &e) {
    if (e.defined())
      f(e);
  };
  visit(d.body);
  visit(d.epilogue);
  if (d.attention) {
    visit(d.attention->score);
    visit(d.attention->scoreEpilogue);
  }
}

} // namespace

void forEachExpr(const TensorDef &d,
                 const std::function<void(const Expr &)> &f) {
  eachExprOf(d, f);
}

void forEachExpr(TensorDef &d, const std::function<void(Expr &)> &f) {
  eachExprOf(d, f);
}

std::vector<Expr> matMulBatchIndex(const std::vector<Expr> &dims,
                                   const std::vector<Expr> &outDims,
                                   const std::vector<Expr> &outIdx,
                                   const RangeEnv &env) {
  std::vector<Expr> idx;
  size_t nb = dims.size() - 2, onb = outIdx.size();
  for (size_t k = 0; k < nb; ++k) {
    size_t o = onb - nb + k;
    idx.push_back(broadcastIndex(dims[k], outDims[o], outIdx[o], env));
  }
  return idx;
}

Expr broadcastIndex(const Expr &dim, const Expr &outDim, const Expr &outIdx,
                    const RangeEnv &env) {
  int64_t c;
  if (dim.isConstValue(1) && !outDim.isConstValue(1))
    return Expr(0);
  if (dim.isConst(c) || proveEqual(dim, outDim, env))
    return outIdx;
  return minExpr(outIdx, dim - Expr(1));
}

RangeEnv defRanges(const LoweredGraph &lg, const TensorDef &d) {
  RangeEnv env = lg.env;
  setStaticRanges(env, lg.vars.idxVars(d.rank()), d.shape);
  std::vector<Expr> rvars;
  for (size_t k = 0; k < d.reduceExtents.size(); ++k)
    rvars.push_back(lg.vars.rvar(static_cast<int>(k)));
  setStaticRanges(env, rvars, d.reduceExtents);
  if (d.attention)
    setStaticRanges(env, {lg.vars.rvar(1)}, {d.attention->depth});
  return env;
}

std::string LoweredGraph::print() const {
  std::string s;
  for (size_t i = 0; i < defs.size(); ++i) {
    const TensorDef &d = defs[i];
    s += "%t" + std::to_string(i) + " " + d.name + ": " + dtypeName(d.dtype) +
         "[" + printExprs(d.shape) + "] = ";
    switch (d.kind) {
    case TensorDef::Kind::Input:
      s += "input " + std::to_string(d.inputIndex);
      break;
    case TensorDef::Kind::Constant:
      s += "constant";
      break;
    case TensorDef::Kind::Pointwise:
      s += std::string(d.isView ? "view " : "pointwise ") + printExpr(d.body);
      break;
    case TensorDef::Kind::Reduction:
      s += std::string(d.combiner == Combiner::Sum    ? "sum"
                       : d.combiner == Combiner::Prod ? "prod"
                       : d.combiner == Combiner::Max  ? "max"
                                                      : "min") +
           "(r in [" + printExprs(d.reduceExtents) + "]) " + printExpr(d.body);
      if (d.attention)
        s += " weighted by softmax over r0 of (sum(r1 in [" +
             printExpr(d.attention->depth) + "]) " +
             printExpr(d.attention->score) + ")" +
             (d.attention->scoreEpilogue.defined()
                  ? " then " + printExpr(d.attention->scoreEpilogue)
                  : std::string());
      if (d.epilogue.defined())
        s += " then " + printExpr(d.epilogue);
      break;
    }
    s += "\n";
  }
  return s;
}

} // namespace aotc
