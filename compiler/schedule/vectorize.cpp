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
      "sin", "cos", "fma", "fmin", "fmax", "log1p", "expm1", "rsqrt",
      "rint", "trunc", "round"};
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

/// The bits of each lane of the mask that vector condition \p c gives in
/// OpenCL C (a float32 comparison or isnan: an int vector, -1 or 0; their
/// logic keeps it), 0 where unknown. A vector select's arms must have
/// elements of that size.
int maskBits(const Expr &c) {
  if (const Binary *b = c.as<Binary>()) {
    if (isComparison(b->op))
      return isFloat(b->a.type()) ? 8 * dtypeSize(b->a.type()) : 0;
    if (b->op == BinOp::And || b->op == BinOp::Or) {
      const int x = maskBits(b->a);
      return x == maskBits(b->b) ? x : 0;
    }
    return 0;
  }
  if (const Call *k = c.as<Call>())
    if (k->name == "isnan" && k->args.size() == 1 && isFloat(k->args[0].type()))
      return 8 * dtypeSize(k->args[0].type());
  return 0;
}

/// A value a vector may hold lane by lane (not a bool: those are masks).
bool vectorValue(DType t) { return isFloat(t) || scalar::isInteger(t); }

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
    // The logic of lane conditions, both of them lane by lane (a
    // quantization's `(x < lo) | isnan(x)`): masks of one width.
    if ((b->op == BinOp::And || b->op == BinOp::Or) &&
        b->a.type() == DType::Bool) {
      Expr x = vectorizeLanes(b->a, lane, lanes, ranges, vectors);
      Expr y = vectorizeLanes(b->b, lane, lanes, ranges, vectors);
      if (!x.defined() || !y.defined() || x.lanes() != lanes ||
          y.lanes() != lanes)
        return Expr();
      Expr r = Binary::make(b->op, x, y);
      return maskBits(r) ? r : Expr();
    }
    // Float comparisons: a lane condition (a select's, or an operand of
    // the logic above).
    if (isComparison(b->op) && isFloat(b->a.type())) {
      Expr x = vectorizeLanes(b->a, lane, lanes, ranges, vectors);
      Expr y = vectorizeLanes(b->b, lane, lanes, ranges, vectors);
      if (!x.defined() || !y.defined())
        return Expr();
      return Binary::make(b->op, widen(x), widen(y));
    }
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
    // isnan of a float vector: a lane condition (an int mask in OpenCL C).
    if (c->name == "isnan" && c->args.size() == 1 &&
        isFloat(c->args[0].type())) {
      Expr v = vectorizeLanes(c->args[0], lane, lanes, ranges, vectors);
      if (!v.defined())
        return Expr();
      return Call::make(DType::Bool, "isnan", {widen(v)});
    }
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
    // The conversions that OpenCL C does lane by lane as the scalar ones
    // (scalar::vectorCast): convert_int16 of a char16 (an int8 weight read
    // by an int32 contraction), an integer narrowing (the low bits), a
    // float to an integer (a quantization's rounded value to uint8,
    // through aotc_f2l_f16).
    const Cast *c = e.as<Cast>();
    if (!scalar::vectorCast(c->value.type(), c->type))
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
    int bits = 0; // the lane condition's mask bits; 0: a scalar condition
    if (variesByLane(cond)) {
      // A lane condition selects lane by lane (OpenCL's ?: on a vector
      // condition): a float comparison, isnan and their logic (a Clip or
      // a ReLU of a vector, or of an accumulator; a quantization's
      // saturation), between arms whose elements have the mask's size; so
      // does a vector of bools loaded from memory (a Where on a mask),
      // between float32 vectors.
      if (cond.as<Load>() && cond.type() == DType::Bool) {
        cond = vectorizeLanes(cond, lane, lanes, ranges, vectors);
        if (!cond.defined())
          return Expr();
        maskLoad = true;
      } else {
        cond = vectorizeLanes(cond, lane, lanes, ranges, vectors);
        if (!cond.defined() || cond.lanes() != lanes ||
            !(bits = maskBits(cond)))
          return Expr();
      }
    }
    Expr t = vectorizeLanes(sel->trueValue, lane, lanes, ranges, vectors);
    Expr f = vectorizeLanes(sel->falseValue, lane, lanes, ranges, vectors);
    if (!t.defined() || !f.defined() || !vectorValue(t.type()) ||
        (maskLoad && t.type() != DType::Float32) ||
        (bits && 8 * dtypeSize(t.type()) != bits))
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
  if (width < 2 || !vectorValue(value.type()))
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
