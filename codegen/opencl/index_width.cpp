/// \file
/// 32-bit index math where the declared ranges prove that it fits
/// (index_width.h).
#include "codegen/opencl/index_width.h"

#include "ir/visitor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace aotc {

namespace {

/// The long helpers of cl_scalar.h that compute a plain operation, the
/// operation (whose bounds boundsOf knows) and their int twins. aotc_div_l
/// (truncating division) has no bounds there and is left out: a kernel that
/// divides so keeps 64 bits.
struct LongHelper {
  BinOp op;
  const char *narrow;
};
const std::map<std::string, LongHelper> &longHelpers() {
  static const std::map<std::string, LongHelper> m = {
      {"aotc_add_l", {BinOp::Add, "aotc_add_i"}},
      {"aotc_sub_l", {BinOp::Sub, "aotc_sub_i"}},
      {"aotc_mul_l", {BinOp::Mul, "aotc_mul_i"}},
      {"aotc_floordiv_l", {BinOp::FloorDiv, "aotc_floordiv_i"}},
      {"aotc_floormod_l", {BinOp::Mod, "aotc_floormod_i"}},
  };
  return m;
}

/// Visits every node (the mutator hands each one over as an Expr, which
/// boundsOf takes) and clears ok at the first Int64 value not proven
/// inside int.
class Int32Prover : public IRMutator {
public:
  explicit Int32Prover(const RangeEnv &env) : env_(env) {}
  bool ok = true;

protected:
#define AOTC_X(n)                                                              \
  Expr mutate##n(const n *op, const Expr &self) override {                     \
    if (ok)                                                                    \
      check(self);                                                             \
    return ok ? IRMutator::mutate##n(op, self) : self;                         \
  }
  AOTC_FOR_EACH_EXPR(AOTC_X)
#undef AOTC_X

private:
  void check(const Expr &e) {
    if (e.type() != DType::Int64)
      return;
    if (e.lanes() != 1) {
      ok = false;
      return;
    }
    Expr value = e;
    if (const Call *c = e.as<Call>()) {
      auto it = longHelpers().find(c->name);
      if (it == longHelpers().end() || c->args.size() != 2) {
        ok = false; // an index check, a float conversion, a bit operation
        return;
      }
      value = Binary::make(it->second.op, c->args[0], c->args[1]);
    }
    auto r = boundsOf(value, env_);
    ok = r && rangeFitsInt32(*r);
  }
  const RangeEnv &env_;
};

/// Rebuilds with Int32 for Int64 where the type is printed (casts, helper
/// names). Binary and Select nodes are rebuilt as they are, without make()'s
/// checks: one operand may be narrowed before the other is (an Int64 cast
/// beside an Int64 variable), and both print the same.
class Narrower : public IRMutator {
public:
  explicit Narrower(ClHelpers &used) : used_(used) {}

protected:
  Expr mutateBinary(const Binary *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.sameAs(op->a) && b.sameAs(op->b))
      return self;
    DType t = op->type == DType::Int64 ? DType::Int32 : op->type;
    return Expr(std::make_shared<Binary>(t, op->op, a, b));
  }
  Expr mutateSelect(const Select *op, const Expr &self) override {
    Expr c = mutate(op->cond), t = mutate(op->trueValue),
         f = mutate(op->falseValue);
    if (c.sameAs(op->cond) && t.sameAs(op->trueValue) &&
        f.sameAs(op->falseValue))
      return self;
    return Expr(std::make_shared<Select>(c, t, f));
  }
  Expr mutateCast(const Cast *op, const Expr &self) override {
    Expr v = mutate(op->value);
    if (op->type == DType::Int64 && op->lanes == 1)
      return Cast::make(DType::Int32, v);
    return v.sameAs(op->value) ? self : Cast::make(op->type, v);
  }
  Expr mutateCall(const Call *op, const Expr &self) override {
    std::vector<Expr> args;
    bool changed = mutateAll(op->args, args);
    auto it = longHelpers().find(op->name);
    if (it != longHelpers().end() && op->type == DType::Int64) {
      used_.erase(op->name);
      used_.insert(it->second.narrow);
      return Call::make(DType::Int32, it->second.narrow, std::move(args));
    }
    return changed ? Call::make(op->type, op->name, std::move(args)) : self;
  }

private:
  ClHelpers &used_;
};

} // namespace

bool rangeFitsInt32(const Range &r) {
  return r.min >= INT32_MIN && r.max <= INT32_MAX;
}

bool fitsInt32(const Expr &e, const RangeEnv &env) {
  if (!e.defined())
    return true;
  Int32Prover p(env);
  p.mutate(e);
  return p.ok;
}

Expr narrowToInt32(const Expr &e, ClHelpers &used) {
  return e.defined() ? Narrower(used).mutate(e) : e;
}

} // namespace aotc
