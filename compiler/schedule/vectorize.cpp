/// \file
/// Explicit vectors from scalar Loop IR expressions (see vectorize.h).
#include "compiler/schedule/vectorize.h"

#include "ir/scalar_ops.h"
#include "ir/visitor.h"

#include <set>

namespace aotc {

bool isLanewiseBuiltin(const std::string &name) {
  static const std::set<std::string> names = {
      "exp", "log", "sqrt", "erf", "tanh", "fabs", "floor", "ceil",
      "sin", "cos", "fma", "fmin", "fmax", "log1p", "expm1", "rsqrt"};
  return names.count(name) > 0;
}

namespace {

/// True if 1 / \p d is a normal number or zero, infinity or NaN, whatever
/// \p d's operands (a float32 or float64 scalar): a square root, whose
/// magnitude lies in [2^-75, 2^64] when it is finite and not zero, so that
/// x * (1 / d) is within 1.5 ulp of x / d (OpenCL allows a float division
/// 2.5) and the same for zeros, infinities and NaNs. A decomposed
/// LayerNormalization divides each element of a row by sqrt(var + eps):
/// the row kernel then computes the reciprocal once (its operand does not
/// change along the row) and multiplies each vector by it, where a vector
/// division costs 10-16 cycles.
bool reciprocalIsNormal(const Expr &d) {
  if (d.type() != DType::Float32 && d.type() != DType::Float64)
    return false;
  const Call *c = d.as<Call>();
  return c && c->name == "sqrt";
}

} // namespace

Expr vectorizeLanes(const Expr &e, const Expr &lane, int lanes,
                    const RangeEnv &ranges,
                    const std::map<uint64_t, Expr> &vectors) {
  const Var *lv = lane.as<Var>();
  // Whether \p x differs between lanes: it reads the lane or a vector.
  auto variesByLane = [&](const Expr &x) {
    if (usesVar(x, lv))
      return true;
    for (const Expr &f : freeVars(x))
      if (vectors.count(f.as<Var>()->id))
        return true;
    return false;
  };
  if (!variesByLane(e))
    return e;
  if (const Var *v = e.as<Var>()) {
    auto it = vectors.find(v->id);
    return it != vectors.end() && it->second.lanes() == lanes ? it->second
                                                              : Expr();
  }
  auto widen = [&](const Expr &x) {
    return x.lanes() == 1 ? Broadcast::make(x, lanes) : x;
  };
  switch (e.kind()) {
  case ExprKind::Load: {
    const Load *l = e.as<Load>();
    if (l->indices.empty())
      return Expr();
    // Lane by lane (the lane below its last value), the last index steps
    // by one and the others stay: plain rows and aligned panels alike.
    RangeEnv env = ranges;
    env.set(lane, Range{0, lanes - 2});
    VarBindings first{{lane, Expr(0)}};
    std::vector<Expr> base;
    for (const Expr &i : l->indices) {
      if (hasIndexCheck(i))
        return Expr();
      base.push_back(simplify(substitute(i, first), ranges));
    }
    if (stepsByOne(l->indices, lane, env))
      return VectorLoad::make(l->type, l->buffer, base, lanes);
    // Every other element of a row (a stride-2 convolution's window or a
    // Slice with step 2): two contiguous loads, their even/odd halves.
    if (l->type != DType::Bool && VectorLoad::allowsStride(l->type, 2) &&
        stepsBy(l->indices, lane, 2, env))
      return VectorLoad::make(l->type, l->buffer, base, lanes, 2);
    return Expr();
  }
  case ExprKind::Binary: {
    const Binary *b = e.as<Binary>();
    // Integers: the wrapping sum, difference and product (an integer
    // contraction's term, printed as aotc_mul_i16 and the like).
    const bool intArith =
        scalar::isInteger(b->type) &&
        (b->op == BinOp::Add || b->op == BinOp::Sub || b->op == BinOp::Mul);
    if (!intArith &&
        (!isFloat(b->type) ||
         !(b->op == BinOp::Add || b->op == BinOp::Sub || b->op == BinOp::Mul ||
           b->op == BinOp::Div || b->op == BinOp::Min || b->op == BinOp::Max)))
      return Expr();
    Expr x = vectorizeLanes(b->a, lane, lanes, ranges, vectors);
    Expr y = vectorizeLanes(b->b, lane, lanes, ranges, vectors);
    if (!x.defined() || !y.defined())
      return Expr();
    if (b->op == BinOp::Div && x.lanes() > 1 && y.lanes() == 1 &&
        reciprocalIsNormal(y))
      return Binary::make(
          BinOp::Mul, x,
          Broadcast::make(Binary::make(BinOp::Div,
                                       FloatImm::make(1.0, y.type()), y),
                          lanes));
    return Binary::make(b->op, widen(x), widen(y));
  }
  case ExprKind::Call: {
    const Call *c = e.as<Call>();
    if (!isFloat(c->type) || !isLanewiseBuiltin(c->name))
      return Expr();
    std::vector<Expr> args;
    for (const Expr &a : c->args) {
      Expr v = vectorizeLanes(a, lane, lanes, ranges, vectors);
      if (!v.defined() || !isFloat(v.type()))
        return Expr();
      args.push_back(widen(v));
    }
    return Call::make(c->type, c->name, args);
  }
  case ExprKind::Cast: {
    // The conversions plain OpenCL C does exactly (convert_int16 of a
    // char16: an int8 weight read by an int32 contraction).
    const Cast *c = e.as<Cast>();
    if (!scalar::exactVectorCast(c->value.type(), c->type))
      return Expr();
    Expr v = vectorizeLanes(c->value, lane, lanes, ranges, vectors);
    if (!v.defined())
      return Expr();
    return Cast::make(c->type, widen(v));
  }
  case ExprKind::FiniteOrSum: {
    // The value as a vector; the sum stays scalar, lane k of it its body
    // at lane = k (expand_fallbacks.cpp computes it lane by lane).
    const FiniteOrSum *f = e.as<FiniteOrSum>();
    if (f->lane.defined())
      return Expr();
    Expr v = vectorizeLanes(f->value, lane, lanes, ranges, vectors);
    if (!v.defined())
      return Expr();
    return FiniteOrSum::make(widen(v), f->body, f->vars, f->extents, lane);
  }
  case ExprKind::Select: {
    const Select *sel = e.as<Select>();
    Expr cond = sel->cond;
    bool maskLoad = false;
    if (variesByLane(cond)) {
      // A comparison of float vectors selects lane by lane (a Clip or a
      // ReLU of a vector, or of an accumulator: OpenCL's ?: on a vector
      // condition); so does a vector of bools loaded from memory (a Where
      // on a mask), between float32 vectors.
      const Binary *c = cond.as<Binary>();
      if (cond.as<Load>() && cond.type() == DType::Bool) {
        cond = vectorizeLanes(cond, lane, lanes, ranges, vectors);
        if (!cond.defined())
          return Expr();
        maskLoad = true;
      } else {
        if (!c || !isComparison(c->op) || !isFloat(c->a.type()))
          return Expr();
        Expr x = vectorizeLanes(c->a, lane, lanes, ranges, vectors);
        Expr y = vectorizeLanes(c->b, lane, lanes, ranges, vectors);
        if (!x.defined() || !y.defined())
          return Expr();
        cond = Binary::make(c->op, widen(x), widen(y));
      }
    }
    Expr t = vectorizeLanes(sel->trueValue, lane, lanes, ranges, vectors);
    Expr f = vectorizeLanes(sel->falseValue, lane, lanes, ranges, vectors);
    if (!t.defined() || !f.defined() || !isFloat(t.type()) ||
        (maskLoad && t.type() != DType::Float32))
      return Expr();
    return Select::make(cond, widen(t), widen(f));
  }
  default:
    return Expr();
  }
}

int groupWidth(int64_t c, int64_t cols, int limit) {
  for (int cand : {16, 8, 4})
    if (cand <= limit && c + cand <= cols)
      return cand;
  return 1;
}

Stmt vectorStore(const std::string &buffer, const std::vector<Expr> &indices,
                 const Expr &value, const Expr &lane, int width,
                 const RangeEnv &ranges,
                 const std::map<uint64_t, Expr> &vectors) {
  if (width < 2 || !isFloat(value.type()))
    return Stmt();
  RangeEnv env = ranges;
  env.set(lane, Range{0, width - 2});
  if (!stepsByOne(indices, lane, env))
    return Stmt();
  Expr v = vectorizeLanes(value, lane, width, ranges, vectors);
  if (!v.defined())
    return Stmt();
  if (v.lanes() == 1)
    v = Broadcast::make(v, width);
  VarBindings first{{lane, Expr(0)}};
  std::vector<Expr> base;
  for (const Expr &i : indices)
    base.push_back(simplify(substitute(i, first), ranges));
  return Store::make(buffer, base, v);
}

} // namespace aotc
