/// \file
/// The integer simplifier: canonical linear forms, floordiv/mod splitting,
/// delinearize/relinearize recombination, and range-based proofs.
#include "ir/simplify.h"

#include "ir/scalar_ops.h"
#include "ir/status.h"
#include "ir/visitor.h"

#include <algorithm>
#include <numeric>
#include <climits>
#include <map>

namespace aotc {

namespace {

bool isIntType(DType t) { return !isFloat(t) && t != DType::Bool; }

int64_t floorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

// Saturating arithmetic for bounds.
int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return (a > 0) ? INT64_MAX : INT64_MIN;
  return r;
}
int64_t satSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return (a >= 0) ? INT64_MAX : INT64_MIN;
  return r;
}
int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return ((a > 0) == (b > 0)) ? INT64_MAX : INT64_MIN;
  return r;
}

} // namespace

namespace {
std::optional<Range> boundsOfRaw(const Expr &e, const RangeEnv &env);
} // namespace

namespace {

/// a as g*x + k for every value of its variables (factorAndOffset): g 0
/// for a constant; g 1, k 0 where nothing is known.
struct FactorAndOffset {
  int64_t g, k;
};

FactorAndOffset factorAndOffset(const Expr &e, int depth = 0) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  auto small = [&](int64_t v) { return v > -kLimit && v < kLimit; };
  if (int64_t v; e.isConst(v))
    return small(v) ? FactorAndOffset{0, v} : FactorAndOffset{1, 0};
  const Binary *b = e.as<Binary>();
  if (!b || depth > 16 || !isIntType(e.type()))
    return {1, 0};
  switch (b->op) {
  case BinOp::Add:
  case BinOp::Sub: {
    FactorAndOffset x = factorAndOffset(b->a, depth + 1),
                    y = factorAndOffset(b->b, depth + 1);
    int64_t k = b->op == BinOp::Add ? x.k + y.k : x.k - y.k;
    return small(k) ? FactorAndOffset{std::gcd(x.g, y.g), k}
                    : FactorAndOffset{1, 0};
  }
  case BinOp::Mul: {
    int64_t c;
    const Expr *other = b->b.isConst(c) ? &b->a : b->a.isConst(c) ? &b->b
                                                                   : nullptr;
    if (!other || !small(c))
      return {1, 0};
    FactorAndOffset x = factorAndOffset(*other, depth + 1);
    int64_t g, k;
    if (__builtin_mul_overflow(x.g, c < 0 ? -c : c, &g) ||
        __builtin_mul_overflow(x.k, c, &k) || !small(g) || !small(k))
      return {1, 0};
    return {g, k};
  }
  default:
    return {1, 0};
  }
}

} // namespace

std::optional<Range> modRangeByFactor(const Expr &a, int64_t c) {
  if (c <= 1)
    return std::nullopt;
  FactorAndOffset fo = factorAndOffset(a);
  // g 0: a is the constant k.
  int64_t f = fo.g == 0 ? c : std::gcd(fo.g, c);
  if (f <= 1)
    return std::nullopt;
  int64_t k = fo.k - floorDivInt(fo.k, f) * f; // k mod f, in [0, f)
  return Range{k, c - f + k};
}

std::optional<Range> boundsOf(const Expr &e, const RangeEnv &env) {
  std::optional<Range> r = boundsOfRaw(e, env);
  if (!r || !e.defined() || !isIntType(e.type()))
    return r;
  // Values wrap to their type (scalar_ops.h): a range that leaves the type,
  // or that may have saturated, says nothing.
  DType t = e.type();
  if (r->min < scalar::minOf(t) || r->max > scalar::maxOf(t) ||
      r->min == INT64_MIN || r->max == INT64_MAX)
    return Range{scalar::minOf(t), scalar::maxOf(t)};
  return r;
}

namespace {

std::optional<Range> boundsOfRaw(const Expr &e, const RangeEnv &env) {
  if (!e.defined())
    return std::nullopt;
  switch (e.kind()) {
  case ExprKind::IntImm: {
    int64_t v = e.as<IntImm>()->value;
    return Range{v, v};
  }
  case ExprKind::Var: {
    if (const Range *r = env.find(e.as<Var>()))
      return *r;
    return std::nullopt;
  }
  case ExprKind::Cast: {
    if (isFloat(e.type()) || isFloat(e.as<Cast>()->value.type()))
      return std::nullopt;
    if (e.type() == DType::Bool)
      return Range{0, 1};
    auto in = boundsOf(e.as<Cast>()->value, env);
    // Narrowing wraps: the bounds survive only if they fit (boundsOf then
    // widens an out-of-range result to the whole type).
    return in;
  }
  case ExprKind::Select: {
    auto *s = e.as<Select>();
    auto a = boundsOf(s->trueValue, env), b = boundsOf(s->falseValue, env);
    if (!a || !b)
      return std::nullopt;
    return Range{std::min(a->min, b->min), std::max(a->max, b->max)};
  }
  case ExprKind::Binary:
    break;
  default:
    return std::nullopt;
  }
  auto *b = e.as<Binary>();
  if (!isIntType(b->a.type()))
    return std::nullopt;
  auto x = boundsOf(b->a, env);
  auto y = boundsOf(b->b, env);
  switch (b->op) {
  case BinOp::Add:
    if (!x || !y)
      return std::nullopt;
    return Range{satAdd(x->min, y->min), satAdd(x->max, y->max)};
  case BinOp::Sub:
    if (!x || !y)
      return std::nullopt;
    return Range{satSub(x->min, y->max), satSub(x->max, y->min)};
  case BinOp::Mul: {
    if (!x || !y)
      return std::nullopt;
    int64_t c[4] = {satMul(x->min, y->min), satMul(x->min, y->max),
                    satMul(x->max, y->min), satMul(x->max, y->max)};
    return Range{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  case BinOp::FloorDiv: {
    if (!x || !y || y->min <= 0)
      return std::nullopt;
    if (y->min == y->max)
      return Range{floorDivInt(x->min, y->min), floorDivInt(x->max, y->min)};
    if (x->min >= 0)
      return Range{0, x->max / y->min};
    return std::nullopt;
  }
  case BinOp::Mod: {
    if (!y || y->min <= 0)
      return std::nullopt;
    if (x && x->min >= 0 && x->max < y->min)
      return *x;
    // A range within one period of a single divisor: its remainders in
    // order (a single value's remainder: evaluate() of (3 * x) mod 2 at one
    // x, which simplifies to x mod 2).
    if (x && y->min == y->max) {
      const int64_t q = floorDivInt(x->min, y->min);
      if (q == floorDivInt(x->max, y->min))
        return Range{x->min - q * y->min, x->max - q * y->min};
    }
    // Where a stays inside its type (a value that wrapped is not g*x + k).
    if (y->min == y->max && x && x->min > scalar::minOf(b->a.type()) &&
        x->max < scalar::maxOf(b->a.type()))
      if (auto f = modRangeByFactor(b->a, y->min))
        return f;
    return Range{0, y->max - 1};
  }
  case BinOp::Min:
    if (!x || !y)
      return std::nullopt;
    return Range{std::min(x->min, y->min), std::min(x->max, y->max)};
  case BinOp::Max:
    if (!x || !y)
      return std::nullopt;
    return Range{std::max(x->min, y->min), std::max(x->max, y->max)};
  default:
    return std::nullopt;
  }
}

/// sum(coef * atom) + constant, terms sorted by the atom's key (exprKey)
/// so the order is deterministic. A sorted vector, not a map: linear forms
/// are built and dropped by the million while proving bounds.
struct Linear {
  struct Term {
    Expr atom;
    int64_t coef;
    const std::string *key; // exprKeyRef(atom), alive as long as atom
  };
  std::vector<Term> terms;
  int64_t constant = 0;
  DType type = DType::Int64;

  // Coefficients and the constant are values of `type`: the arithmetic
  // wraps (scalar_ops.h), which is exact for the ring operations + - *.
  void addTerm(const Expr &atom, int64_t coef) {
    coef = scalar::wrapSigned(type, coef);
    if (coef == 0)
      return;
    const std::string &key = exprKeyRef(atom);
    auto it = std::lower_bound(
        terms.begin(), terms.end(), key,
        [](const Term &t, const std::string &k) { return *t.key < k; });
    if (it == terms.end() || *it->key != key) {
      terms.insert(it, Term{atom, coef, &key});
      return;
    }
    it->coef = scalar::add(type, it->coef, coef);
    if (it->coef == 0)
      terms.erase(it);
  }
  void add(const Linear &o, int64_t scale) {
    constant =
        scalar::add(type, constant, scalar::mul(type, o.constant, scale));
    for (const Term &t : o.terms)
      addTerm(t.atom, scalar::mul(type, t.coef, scale));
  }
};

class Simplifier {
public:
  explicit Simplifier(const RangeEnv &env) : env_(env) {}

  Expr simplify(const Expr &e) {
    if (!e.defined())
      return e;
    switch (e.kind()) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::Var:
      return e;
    case ExprKind::Binary:
      return simplifyBinary(e);
    case ExprKind::Not: {
      Expr a = simplify(e.as<Not>()->a);
      int64_t v;
      if (a.isConst(v))
        return IntImm::make(!v, DType::Bool);
      if (const Not *n = a.as<Not>())
        return n->a;
      return Not::make(a);
    }
    case ExprKind::Select: {
      auto *s = e.as<Select>();
      Expr c = simplify(s->cond);
      Expr t = simplify(s->trueValue), f = simplify(s->falseValue);
      int64_t v;
      if (c.isConst(v))
        return v ? t : f;
      if (structurallyEqual(t, f))
        return t;
      return Select::make(c, t, f);
    }
    case ExprKind::Cast: {
      auto *c = e.as<Cast>();
      Expr v = simplify(c->value);
      if (const Cast *inner = v.as<Cast>()) {
        // int widening chains: i64(i32(x)) where x is i64 and fits.
        if (isIntType(c->type) && isIntType(inner->type) &&
            inner->value.type() == c->type) {
          auto r = boundsOf(inner->value, env_);
          if (r && r->min >= INT32_MIN && r->max <= INT32_MAX)
            return inner->value;
        }
      }
      return Cast::make(c->type, v);
    }
    case ExprKind::Call: {
      auto *c = e.as<Call>();
      std::vector<Expr> args;
      for (const Expr &a : c->args)
        args.push_back(simplify(a));
      return Call::make(c->type, c->name, args);
    }
    case ExprKind::Load: {
      auto *l = e.as<Load>();
      std::vector<Expr> idx;
      for (const Expr &i : l->indices)
        idx.push_back(simplify(i));
      return Load::make(l->type, l->buffer, idx);
    }
    case ExprKind::Access: {
      auto *a = e.as<Access>();
      std::vector<Expr> idx;
      for (const Expr &i : a->indices)
        idx.push_back(simplify(i));
      return Access::make(a->type, a->tensor, idx);
    }
    case ExprKind::IndexCheck: {
      auto *c = e.as<IndexCheck>();
      return IndexCheck::make(simplify(c->value), simplify(c->extent), c->code,
                              c->wrapNegative);
    }
    case ExprKind::Broadcast:
      return Broadcast::make(simplify(e.as<Broadcast>()->value), e.lanes());
    case ExprKind::VectorLoad: {
      auto *l = e.as<VectorLoad>();
      std::vector<Expr> idx;
      for (const Expr &i : l->indices)
        idx.push_back(simplify(i));
      return VectorLoad::make(l->type, l->buffer, idx, l->lanes, l->stride);
    }
    case ExprKind::Lane:
      return Lane::make(simplify(e.as<Lane>()->vector), e.as<Lane>()->lane);
    case ExprKind::FiniteOrSum: {
      // The body with what is known outside it (its own variables have no
      // range here).
      auto *f = e.as<FiniteOrSum>();
      std::vector<Expr> extents;
      for (const Expr &x : f->extents)
        extents.push_back(simplify(x));
      return FiniteOrSum::make(simplify(f->value), simplify(f->body), f->vars,
                               extents, f->lane);
    }
    }
    return e;
  }

private:
  Linear toLinear(const Expr &e) {
    Linear l;
    l.type = e.type();
    int64_t v;
    if (e.isConst(v)) {
      l.constant = v;
      return l;
    }
    if (const Binary *b = e.as<Binary>()) {
      if (b->op == BinOp::Add || b->op == BinOp::Sub) {
        l.add(toLinear(b->a), 1);
        l.add(toLinear(b->b), b->op == BinOp::Add ? 1 : -1);
        return l;
      }
      if (b->op == BinOp::Mul) {
        int64_t c;
        if (b->a.isConst(c)) {
          l.add(toLinear(b->b), c);
          return l;
        }
        if (b->b.isConst(c)) {
          l.add(toLinear(b->a), c);
          return l;
        }
      }
    }
    l.addTerm(e, 1);
    return l;
  }

  /// Rewrites k*c*(x floordiv c) + k*(x mod c) -> k*x,
  /// k*c*((x floordiv c) mod m) + k*(x mod c) -> k*(x mod (c*m)), and
  /// k*x - k*c*(x floordiv c) -> k*(x mod c) for an atom x (a symbol or a
  /// variable: the rest of a whole number of blocks of c, whose bounds
  /// [0, c - 1] the prover knows, where the difference has none).
  bool recombine(Linear &l) {
    for (size_t i = 0; i < l.terms.size(); ++i) {
      const Binary *fd = l.terms[i].atom.as<Binary>();
      int64_t c;
      if (!fd || fd->op != BinOp::FloorDiv || !fd->b.isConst(c) || c <= 1)
        continue;
      const Expr x = fd->a;
      if (!x.as<Var>() || l.terms[i].coef % c != 0)
        continue;
      const int64_t k = -l.terms[i].coef / c;
      const std::string &key = exprKeyRef(x);
      for (size_t j = 0; j < l.terms.size(); ++j) {
        if (j == i || *l.terms[j].key != key || l.terms[j].coef != k)
          continue;
        l.terms.erase(l.terms.begin() + std::max(i, j));
        l.terms.erase(l.terms.begin() + std::min(i, j));
        l.addTerm(simplifyMod(x, IntImm::make(c, x.type())), k);
        return true;
      }
    }
    for (size_t i = 0; i < l.terms.size(); ++i) {
      const Linear::Term &t = l.terms[i];
      const Binary *m = t.atom.as<Binary>();
      int64_t c;
      if (!m || m->op != BinOp::Mod || !m->b.isConst(c) || c <= 0)
        continue;
      // Held by value: the terms (and the nodes they own) are erased below.
      const Expr x = m->a;
      const int64_t k = t.coef;
      for (size_t j = 0; j < l.terms.size(); ++j) {
        const Linear::Term &t2 = l.terms[j];
        if (j == i || t2.coef != k * c)
          continue;
        const Binary *o = t2.atom.as<Binary>();
        if (!o)
          continue;
        int64_t c2;
        auto eraseBoth = [&] {
          l.terms.erase(l.terms.begin() + std::max(i, j));
          l.terms.erase(l.terms.begin() + std::min(i, j));
        };
        if (o->op == BinOp::FloorDiv && o->b.isConst(c2) && c2 == c &&
            structurallyEqual(o->a, x)) {
          eraseBoth();
          l.add(toLinear(x), k);
          return true;
        }
        const Binary *fd = o->op == BinOp::Mod ? o->a.as<Binary>() : nullptr;
        int64_t mm;
        if (fd && fd->op == BinOp::FloorDiv && fd->b.isConst(c2) && c2 == c &&
            o->b.isConst(mm) && structurallyEqual(fd->a, x)) {
          eraseBoth();
          l.addTerm(simplifyMod(x, IntImm::make(c * mm, x.type())), k);
          return true;
        }
      }
    }
    return false;
  }

  Expr fromLinear(Linear l) {
    while (recombine(l)) {
    }
    DType t = l.type;
    Expr pos, neg;
    auto termExpr = [&](const Linear::Term &term, int64_t coef) {
      return coef == 1 ? term.atom : IntImm::make(coef, t) * term.atom;
    };
    for (const Linear::Term &term : l.terms) {
      if (term.coef > 0) {
        Expr x = termExpr(term, term.coef);
        pos = pos.defined() ? Binary::make(BinOp::Add, pos, x) : x;
      } else {
        Expr x = termExpr(term, scalar::neg(t, term.coef));
        neg = neg.defined() ? Binary::make(BinOp::Add, neg, x) : x;
      }
    }
    Expr r = pos;
    if (!r.defined()) {
      r = IntImm::make(l.constant, t);
      if (neg.defined())
        r = Binary::make(BinOp::Sub, r, neg);
      return r;
    }
    if (neg.defined())
      r = Binary::make(BinOp::Sub, r, neg);
    if (l.constant > 0)
      r = Binary::make(BinOp::Add, r, IntImm::make(l.constant, t));
    else if (l.constant < 0)
      r = Binary::make(BinOp::Sub, r,
                       IntImm::make(scalar::neg(t, l.constant), t));
    return r;
  }

  Expr simplifyFloorDiv(const Expr &a, const Expr &b) {
    int64_t c;
    if (b.isConst(c) && c > 0) {
      if (c == 1)
        return a;
      int64_t av;
      if (a.isConst(av))
        return IntImm::make(floorDivInt(av, c), a.type());
      // (x floordiv a) floordiv c -> x floordiv (a*c)
      if (const Binary *in = a.as<Binary>()) {
        int64_t c1;
        if (in->op == BinOp::FloorDiv && in->b.isConst(c1) && c1 > 0)
          return simplifyFloorDiv(in->a, IntImm::make(c1 * c, a.type()));
        // (x mod (c*m)) floordiv c -> (x floordiv c) mod m
        if (in->op == BinOp::Mod && in->b.isConst(c1) && c1 > 0 && c1 % c == 0)
          return simplifyMod(simplifyFloorDiv(in->a, b),
                             IntImm::make(c1 / c, a.type()));
      }
      Linear l = toLinear(a), q, r;
      q.type = r.type = a.type();
      for (const Linear::Term &t : l.terms) {
        if (t.coef % c == 0)
          q.addTerm(t.atom, t.coef / c);
        else
          r.addTerm(t.atom, t.coef);
      }
      q.constant = floorDivInt(l.constant, c);
      r.constant = l.constant - q.constant * c;
      if (q.terms.empty() && q.constant == 0)
        return divRest(r, b, c);
      Linear sum = q;
      Expr rest = divRest(r, b, c);
      sum.add(toLinear(rest), 1);
      return fromLinear(sum);
    }
    int64_t av;
    if (a.isConst(av) && av == 0)
      return a;
    if (Expr split = splitBySymbol(a, b, /*mod=*/false); split.defined())
      return split;
    auto ra = boundsOf(a, env_);
    if (ra && ra->min >= 0 && proveLT(a, b))
      return IntImm::make(0, a.type());
    if (structurallyEqual(a, b)) {
      auto rb = boundsOf(b, env_);
      if (rb && rb->min > 0)
        return IntImm::make(1, a.type());
    }
    return Binary::make(BinOp::FloorDiv, a, b);
  }

  /// floordiv(r, c) of the remainder part of a split.
  Expr divRest(const Linear &r, const Expr &b, int64_t c) {
    Expr re = fromLinear(r);
    if (auto br = boundsOf(re, env_)) {
      int64_t lo = floorDivInt(br->min, c), hi = floorDivInt(br->max, c);
      if (lo == hi)
        return IntImm::make(lo, re.type());
    }
    // (g*x + rest) floordiv c -> x floordiv (c/g) for g | c, 0 <= rest < g.
    Linear rest;
    int64_t g;
    if (Expr inner = byFactor(r, c, BinOp::FloorDiv, rest, g); inner.defined())
      return inner;
    return Binary::make(BinOp::FloorDiv, re, b);
  }

  /// x floordiv (c/g) or x mod (c/g) (\p op) of r = g*x + rest split by
  /// splitByFactor, where that drops a term of r or the inner division
  /// simplifies; undefined otherwise: (6*t + 4) floordiv 56 stays, rather
  /// than (3*t + 2) floordiv 28 beside the (6*t + 4) mod 56 it pairs with,
  /// and (6*t + 2) mod 128 rather than 2 * ((3*t + 1) mod 64).
  Expr byFactor(const Linear &r, int64_t c, BinOp op, Linear &rest,
                int64_t &g) {
    Linear x;
    g = splitByFactor(r, c, x, rest);
    if (!g)
      return Expr();
    Expr divisor = IntImm::make(c / g, r.type);
    Expr inner = op == BinOp::FloorDiv
                     ? simplifyFloorDiv(fromLinear(x), divisor)
                     : simplifyMod(fromLinear(x), divisor);
    const Binary *in = inner.as<Binary>();
    if (rest.terms.empty() && in && in->op == op)
      return Expr();
    return inner;
  }

  /// Writes \p r as g*x + rest for the largest g, 1 < g < c, that divides
  /// \p c and a coefficient of r, where x keeps the terms whose coefficient
  /// g divides (over g) and rest the others with the constant mod g, when
  /// rest's bounds put it in [0, g): then floor(r / c) = floor(x / (c/g))
  /// and r mod c = g * (x mod (c/g)) + rest, for any integer x. Returns g,
  /// or 0 if none does (a 64-wide panel's column 16*j + l, l < 16, over
  /// tiles of 32 columns: (16*j + l) floordiv 32 = j floordiv 2).
  int64_t splitByFactor(const Linear &r, int64_t c, Linear &x, Linear &rest) {
    std::vector<int64_t> factors;
    for (const Linear::Term &t : r.terms) {
      if (t.coef == INT64_MIN)
        continue;
      int64_t g = std::gcd(t.coef < 0 ? -t.coef : t.coef, c);
      if (g > 1 && g < c)
        factors.push_back(g);
    }
    std::sort(factors.rbegin(), factors.rend());
    factors.erase(std::unique(factors.begin(), factors.end()), factors.end());
    for (int64_t g : factors) {
      x = Linear();
      rest = Linear();
      x.type = rest.type = r.type;
      for (const Linear::Term &t : r.terms) {
        if (t.coef % g == 0)
          x.addTerm(t.atom, t.coef / g);
        else
          rest.addTerm(t.atom, t.coef);
      }
      x.constant = floorDivInt(r.constant, g);
      rest.constant = r.constant - x.constant * g;
      auto br = boundsOf(fromLinear(rest), env_);
      if (br && br->min >= 0 && br->max < g)
        return g;
    }
    return 0;
  }

  Expr simplifyMod(const Expr &a, const Expr &b) {
    int64_t c;
    if (b.isConst(c) && c > 0) {
      if (c == 1)
        return IntImm::make(0, a.type());
      Linear l = toLinear(a), r;
      r.type = a.type();
      for (const Linear::Term &t : l.terms) {
        int64_t m = t.coef % c;
        if (m != 0)
          r.addTerm(t.atom, m);
      }
      r.constant = l.constant % c;
      if (r.constant < 0)
        r.constant += c;
      Expr re = fromLinear(r);
      int64_t v;
      if (re.isConst(v))
        return IntImm::make(((v % c) + c) % c, a.type());
      if (auto br = boundsOf(re, env_))
        if (br->min >= 0 && br->max < c)
          return re;
      // (x mod (c*m)) mod c -> x mod c
      if (const Binary *in = re.as<Binary>()) {
        int64_t c1;
        if (in->op == BinOp::Mod && in->b.isConst(c1) && c1 > 0 && c1 % c == 0)
          return simplifyMod(in->a, b);
      }
      // (g*x + rest) mod c -> g * (x mod (c/g)) + rest for g | c,
      // 0 <= rest < g.
      Linear rest;
      int64_t g;
      if (Expr inner = byFactor(r, c, BinOp::Mod, rest, g); inner.defined()) {
        rest.add(toLinear(inner), g);
        return fromLinear(rest);
      }
      return Binary::make(BinOp::Mod, re, b);
    }
    if (Expr split = splitBySymbol(a, b, /*mod=*/true); split.defined())
      return split;
    auto ra = boundsOf(a, env_);
    if (ra && ra->min >= 0 && proveLT(a, b))
      return a;
    return Binary::make(BinOp::Mod, a, b);
  }

  /// (q*s + r) floordiv s -> q + (r floordiv s) and (q*s + r) mod s ->
  /// r mod s for a divisor s that is a variable with s >= 1, when r's
  /// constant bounds decide r floordiv s: 0 for 0 <= r < min(s), -1 for
  /// -min(s) <= r < 0. Returns an undefined Expr otherwise.
  Expr splitBySymbol(const Expr &a, const Expr &b, bool isMod) {
    const Var *s = b.as<Var>();
    auto rb = s ? boundsOf(b, env_) : std::nullopt;
    if (!rb || rb->min < 1)
      return Expr();
    Linear l = toLinear(a), q, r;
    q.type = r.type = a.type();
    bool any = false;
    for (const Linear::Term &t : l.terms) {
      const Binary *m = t.atom.as<Binary>();
      Expr other;
      if (t.atom.as<Var>() && t.atom.as<Var>()->id == s->id)
        other = IntImm::make(1, a.type());
      else if (m && m->op == BinOp::Mul && m->a.as<Var>() &&
               m->a.as<Var>()->id == s->id)
        other = m->b;
      else if (m && m->op == BinOp::Mul && m->b.as<Var>() &&
               m->b.as<Var>()->id == s->id)
        other = m->a;
      if (other.defined()) {
        q.add(toLinear(other), t.coef);
        any = true;
      } else {
        r.addTerm(t.atom, t.coef);
      }
    }
    r.constant = l.constant;
    if (!any)
      return Expr();
    Expr re = fromLinear(r);
    auto br = boundsOf(re, env_);
    if (!br)
      return Expr();
    int64_t rq;
    if (br->min >= 0 && br->max < rb->min)
      rq = 0;
    else if (br->min >= -rb->min && br->max < 0)
      rq = -1;
    else
      return Expr();
    if (isMod)
      return rq == 0 ? re : fromLinear([&] {
        Linear x = r;
        x.add(toLinear(b), 1);
        return x;
      }());
    q.constant = scalar::add(q.type, q.constant, rq);
    return fromLinear(q);
  }

public:
  bool proveLT(const Expr &a, const Expr &b) {
    Expr d = fromLinear(diff(b, a));
    auto r = boundsOf(d, env_);
    return r && r->min >= 1;
  }

  Linear diff(const Expr &a, const Expr &b) {
    return diffSimplified(simplify(a), simplify(b));
  }

  /// a - b for simplified a and b.
  Linear diffSimplified(const Expr &a, const Expr &b) {
    Linear l = toLinear(a);
    l.add(toLinear(b), -1);
    return l;
  }

private:
  /// Adds scale * e to \p l: sums and products by a literal are walked
  /// without building their simplified forms, whose linear forms would be
  /// taken apart again; everything else is simplified and added.
  void addLinear(Linear &l, const Expr &e, int64_t scale) {
    if (const Binary *b = e.as<Binary>(); b && isIntType(b->type)) {
      int64_t c;
      switch (b->op) {
      case BinOp::Add:
      case BinOp::Sub:
        addLinear(l, b->a, scale);
        addLinear(l, b->b,
                  b->op == BinOp::Add ? scale : scalar::neg(l.type, scale));
        return;
      case BinOp::Mul:
        if (b->a.isConst(c)) {
          addLinear(l, b->b, scalar::mul(l.type, scale, c));
          return;
        }
        if (b->b.isConst(c)) {
          addLinear(l, b->a, scalar::mul(l.type, scale, c));
          return;
        }
        break;
      default:
        break;
      }
    }
    l.add(toLinear(simplify(e)), scale);
  }

  Expr simplifyBinary(const Expr &e) {
    auto *b = e.as<Binary>();
    // Integer vectors (a quantized row's wrapping differences, an integer
    // contraction's sums): operands only. The linear forms below are of
    // scalars (their coefficients multiply a term).
    if (e.lanes() > 1 && isIntType(b->type))
      return Binary::make(b->op, simplify(b->a), simplify(b->b));
    if ((b->op == BinOp::Add || b->op == BinOp::Sub) && isIntType(b->type)) {
      Linear l;
      l.type = b->type;
      addLinear(l, e, 1);
      return fromLinear(l);
    }
    Expr x = simplify(b->a), y = simplify(b->b);
    DType t = x.type();
    if (!isIntType(t) && t != DType::Bool)
      return Binary::make(b->op, x, y);
    switch (b->op) {
    case BinOp::Add:
    case BinOp::Sub: {
      Linear l = toLinear(x);
      l.add(toLinear(y), b->op == BinOp::Add ? 1 : -1);
      return fromLinear(l);
    }
    case BinOp::Mul: {
      int64_t c;
      if (x.isConst(c) || y.isConst(c)) {
        Linear l;
        l.type = t;
        l.add(toLinear(x.isConst(c) ? y : x), c);
        return fromLinear(l);
      }
      // Distribute over a sum: (a + b - 1) * m -> a*m + b*m - m, so that
      // products of sizes cancel like any other term.
      Linear lx = toLinear(x), ly = toLinear(y);
      bool sumX = lx.terms.size() + (lx.constant != 0) > 1;
      bool sumY = ly.terms.size() + (ly.constant != 0) > 1;
      if (sumX != sumY && t == DType::Int64) {
        const Linear &sum = sumX ? lx : ly;
        const Expr &atom = sumX ? y : x;
        Linear out;
        out.type = t;
        out.add(toLinear(atom), sum.constant);
        for (const Linear::Term &term : sum.terms)
          out.add(toLinear(simplifyBinary(
                      Binary::make(BinOp::Mul, term.atom, atom))),
                  term.coef);
        return fromLinear(out);
      }
      if (exprKeyRef(y) < exprKeyRef(x))
        std::swap(x, y);
      return Binary::make(BinOp::Mul, x, y);
    }
    case BinOp::FloorDiv:
      return simplifyFloorDiv(x, y);
    case BinOp::Mod:
      return simplifyMod(x, y);
    case BinOp::Min:
    case BinOp::Max: {
      bool isMin = b->op == BinOp::Min;
      auto d = boundsOf(fromLinear(diffSimplified(y, x)), env_);
      if (d && d->min >= 0)
        return isMin ? x : y; // x <= y
      if (d && d->max <= 0)
        return isMin ? y : x;
      return Binary::make(b->op, x, y);
    }
    case BinOp::EQ:
    case BinOp::NE:
    case BinOp::LT:
    case BinOp::LE:
    case BinOp::GT:
    case BinOp::GE: {
      if (t == DType::Bool)
        return Binary::make(b->op, x, y);
      auto d = boundsOf(fromLinear(diffSimplified(x, y)), env_); // x - y
      std::optional<bool> v;
      if (d) {
        switch (b->op) {
        case BinOp::LT:
          if (d->max < 0)
            v = true;
          else if (d->min >= 0)
            v = false;
          break;
        case BinOp::LE:
          if (d->max <= 0)
            v = true;
          else if (d->min > 0)
            v = false;
          break;
        case BinOp::GT:
          if (d->min > 0)
            v = true;
          else if (d->max <= 0)
            v = false;
          break;
        case BinOp::GE:
          if (d->min >= 0)
            v = true;
          else if (d->max < 0)
            v = false;
          break;
        case BinOp::EQ:
          if (d->min == 0 && d->max == 0)
            v = true;
          else if (d->min > 0 || d->max < 0)
            v = false;
          break;
        case BinOp::NE:
          if (d->min == 0 && d->max == 0)
            v = false;
          else if (d->min > 0 || d->max < 0)
            v = true;
          break;
        default:
          break;
        }
      }
      if (v)
        return IntImm::make(*v ? 1 : 0, DType::Bool);
      return Binary::make(b->op, x, y);
    }
    case BinOp::And:
    case BinOp::Or: {
      int64_t c;
      bool isAnd = b->op == BinOp::And;
      if (x.isConst(c))
        return (c != 0) == isAnd ? y : x;
      if (y.isConst(c))
        return (c != 0) == isAnd ? x : y;
      return Binary::make(b->op, x, y);
    }
    default:
      return Binary::make(b->op, x, y);
    }
  }

  const RangeEnv &env_;
};

class StmtSimplifier : public IRMutator {
public:
  explicit StmtSimplifier(RangeEnv env) : env_(std::move(env)) {}

protected:
  Expr mutateBinary(const Binary *, const Expr &self) override {
    return run(self);
  }
  Expr mutateSelect(const Select *, const Expr &self) override {
    return run(self);
  }
  Expr mutateCast(const Cast *, const Expr &self) override { return run(self); }
  Expr mutateLoad(const Load *, const Expr &self) override { return run(self); }
  Expr mutateIndexCheck(const IndexCheck *, const Expr &self) override {
    return run(self);
  }
  Expr mutateCall(const Call *, const Expr &self) override { return run(self); }
  Expr mutateNot(const Not *, const Expr &self) override { return run(self); }

  Stmt mutateFor(const For *op, const Stmt &self) override {
    Expr mn = run(op->min), ext = run(op->extent);
    auto rm = boundsOf(mn, env_), re = boundsOf(ext, env_);
    RangeEnv saved = env_;
    if (rm && re && re->max >= 1)
      env_.set(op->var, Range{rm->min, satAdd(rm->max, re->max - 1)});
    Stmt body = mutate(op->body);
    env_ = saved;
    if (mn.sameAs(op->min) && ext.sameAs(op->extent) && body.sameAs(op->body))
      return self;
    return For::make(op->var, mn, ext, op->forKind, op->dim, body);
  }

  Stmt mutateLetStmt(const LetStmt *op, const Stmt &self) override {
    Expr v = run(op->value);
    RangeEnv saved = env_;
    if (auto r = boundsOf(v, env_))
      env_.set(op->var, *r);
    Stmt body = mutate(op->body);
    env_ = saved;
    if (v.sameAs(op->value) && body.sameAs(op->body))
      return self;
    return LetStmt::make(op->var, v, body);
  }

  /// A condition that simplifies to a constant keeps only the branch that
  /// runs (a register-tiled kernel's full tile is statically never or
  /// always inside a small output).
  Stmt mutateIfThenElse(const IfThenElse *op, const Stmt &self) override {
    Expr c = run(op->cond);
    int64_t v;
    if (c.isConst(v)) {
      if (v)
        return mutate(op->thenCase);
      return op->elseCase.defined() ? mutate(op->elseCase) : Block::make({});
    }
    RangeEnv saved = env_;
    learn(c, true);
    Stmt t = mutate(op->thenCase);
    env_ = saved;
    learn(c, false);
    Stmt e = op->elseCase.defined() ? mutate(op->elseCase) : Stmt();
    env_ = saved;
    if (c.sameAs(op->cond) && t.sameAs(op->thenCase) &&
        (!e.defined() || e.sameAs(op->elseCase)))
      return self;
    return IfThenElse::make(c, t, e, op->rareElse);
  }

private:
  Expr run(const Expr &e) { return Simplifier(env_).simplify(e); }

  /// Narrows the range of a variable that \p cond (known to be \p holds)
  /// bounds on its own: inside `if (6 * t + 6 <= 128)`, t <= 20 (a
  /// register tile's full-tile branch, whose index arithmetic then loses
  /// its wrap-arounds).
  void learn(const Expr &cond, bool holds) {
    if (const Not *n = cond.as<Not>())
      return learn(n->a, !holds);
    const Binary *b = cond.as<Binary>();
    if (!b)
      return;
    if ((b->op == BinOp::And && holds) || (b->op == BinOp::Or && !holds)) {
      learn(b->a, holds);
      learn(b->b, holds);
      return;
    }
    if (!isComparison(b->op) || b->a.type() != DType::Int64)
      return;
    BinOp op = b->op;
    if (!holds) {
      switch (op) {
      case BinOp::LT: op = BinOp::GE; break;
      case BinOp::LE: op = BinOp::GT; break;
      case BinOp::GT: op = BinOp::LE; break;
      case BinOp::GE: op = BinOp::LT; break;
      case BinOp::EQ: op = BinOp::NE; break;
      default: op = BinOp::EQ; break;
      }
    }
    Simplifier s(env_);
    // Each d with d >= 0.
    auto atLeast = [&](const Expr &x, const Expr &y, int64_t slack) {
      Linear d = s.diff(x, y); // x - y - slack >= 0
      d.constant -= slack;
      bound(d);
    };
    switch (op) {
    case BinOp::LE: atLeast(b->b, b->a, 0); break;
    case BinOp::LT: atLeast(b->b, b->a, 1); break;
    case BinOp::GE: atLeast(b->a, b->b, 0); break;
    case BinOp::GT: atLeast(b->a, b->b, 1); break;
    case BinOp::EQ:
      atLeast(b->b, b->a, 0);
      atLeast(b->a, b->b, 0);
      break;
    default:
      break;
    }
  }

  /// From a * v + c >= 0, with v a variable of known range.
  void bound(const Linear &d) {
    if (d.terms.size() != 1 || d.type != DType::Int64)
      return;
    const Var *v = d.terms[0].atom.as<Var>();
    const int64_t a = d.terms[0].coef, c = d.constant;
    const Range *r = v ? env_.find(v) : nullptr;
    if (!r || a == 0 || c == INT64_MIN)
      return;
    Range n = *r;
    if (a > 0)
      n.min = std::max(n.min, -floorDivInt(c, a)); // v >= ceil(-c / a)
    else if (a != INT64_MIN)
      n.max = std::min(n.max, floorDivInt(c, -a)); // v <= floor(c / -a)
    if (n.min <= n.max)
      env_.set(v, n);
  }

  RangeEnv env_;
};

} // namespace

Expr simplify(const Expr &e, const RangeEnv &env) {
  return Simplifier(env).simplify(e);
}

Stmt simplify(const Stmt &s, const RangeEnv &env) {
  return StmtSimplifier(env).mutate(s);
}

void setStaticRanges(RangeEnv &env, const std::vector<Expr> &vars,
                     const std::vector<Expr> &extents) {
  for (size_t k = 0; k < vars.size() && k < extents.size(); ++k) {
    int64_t e;
    if (extents[k].isConst(e) && e >= 1)
      env.set(vars[k], Range{0, e - 1});
  }
}

bool stepsBy(const std::vector<Expr> &indices, const Expr &var,
             int64_t stride, const RangeEnv &env) {
  VarBindings next{{var, var + Expr(1)}};
  for (size_t k = 0; k < indices.size(); ++k) {
    Expr step = simplify(substitute(indices[k], next) - indices[k], env);
    if (!step.isConstValue(k + 1 == indices.size() ? stride : 0))
      return false;
  }
  return true;
}

bool stepsByOne(const std::vector<Expr> &indices, const Expr &var,
                const RangeEnv &env) {
  return stepsBy(indices, var, 1, env);
}

Expr minProven(const Expr &a, const Expr &b, const RangeEnv &env) {
  if (proveLE(a, b, env))
    return a;
  if (proveLE(b, a, env))
    return b;
  return minExpr(a, b);
}

Expr maxProven(const Expr &a, const Expr &b, const RangeEnv &env) {
  if (proveLE(a, b, env))
    return b;
  if (proveLE(b, a, env))
    return a;
  return maxExpr(a, b);
}

bool proveLE(const Expr &a, const Expr &b, const RangeEnv &env) {
  int64_t x, y;
  if (a.isConst(x) && b.isConst(y)) // b - a may not fit in 64 bits
    return x <= y;
  Simplifier s(env);
  Expr d = simplify(b - a, env);
  auto r = boundsOf(d, env);
  return r && r->min >= 0;
}

bool proveEqual(const Expr &a, const Expr &b, const RangeEnv &env) {
  if (structurallyEqual(a, b))
    return true;
  if (a.type() != b.type() || isFloat(a.type()))
    return false;
  Expr d = simplify(a - b, env);
  return d.isConstValue(0);
}

void RangeEnv::set(const Expr &var, Range r) {
  const Var *v = var.as<Var>();
  AOTC_CHECK(v, "range of something that is not a variable");
  set(v, r);
}

std::optional<int64_t>
evaluate(const Expr &e, const std::vector<std::pair<Expr, int64_t>> &values) {
  RangeEnv env;
  for (const auto &[k, v] : values)
    env.set(k, Range{v, v});
  Expr s = simplify(e, env);
  int64_t v;
  if (s.isConst(v))
    return v;
  if (auto r = boundsOf(s, env); r && r->min == r->max)
    return r->min;
  return std::nullopt;
}

namespace {

/// interpret's walk; \p values binds Vars by id.
std::optional<int64_t>
interpretNode(const Expr &e,
              const std::vector<std::pair<uint64_t, int64_t>> &values) {
  const DType t = e.type();
  if (e.lanes() != 1 ||
      (t != DType::Int64 && t != DType::Int32 && t != DType::Bool))
    return std::nullopt;
  // A result of e's type, or nullopt where the type cannot hold it.
  auto fits = [t](int64_t v) -> std::optional<int64_t> {
    if (t == DType::Int32 && (v < INT32_MIN || v > INT32_MAX))
      return std::nullopt;
    return v;
  };
  switch (e.kind()) {
  case ExprKind::IntImm:
    return fits(e.as<IntImm>()->value);
  case ExprKind::Var: {
    const uint64_t id = e.as<Var>()->id;
    for (const auto &[var, v] : values)
      if (var == id)
        return fits(v);
    return std::nullopt;
  }
  case ExprKind::Not: {
    std::optional<int64_t> a = interpretNode(e.as<Not>()->a, values);
    if (!a)
      return std::nullopt;
    return *a == 0;
  }
  case ExprKind::Select: {
    const Select *s = e.as<Select>();
    std::optional<int64_t> c = interpretNode(s->cond, values);
    if (!c)
      return std::nullopt;
    return interpretNode(*c ? s->trueValue : s->falseValue, values);
  }
  case ExprKind::Binary: {
    const Binary *b = e.as<Binary>();
    std::optional<int64_t> x = interpretNode(b->a, values);
    if (!x)
      return std::nullopt;
    // And and Or read their second operand only where it decides.
    if (b->op == BinOp::And && *x == 0)
      return 0;
    if (b->op == BinOp::Or && *x != 0)
      return 1;
    std::optional<int64_t> y = interpretNode(b->b, values);
    if (!y)
      return std::nullopt;
    int64_t r = 0;
    switch (b->op) {
    case BinOp::Add:
      if (__builtin_add_overflow(*x, *y, &r))
        return std::nullopt;
      return fits(r);
    case BinOp::Sub:
      if (__builtin_sub_overflow(*x, *y, &r))
        return std::nullopt;
      return fits(r);
    case BinOp::Mul:
      if (__builtin_mul_overflow(*x, *y, &r))
        return std::nullopt;
      return fits(r);
    case BinOp::FloorDiv:
      if (*y <= 0)
        return std::nullopt;
      return fits(floorDivInt(*x, *y));
    case BinOp::Mod:
      if (*y <= 0)
        return std::nullopt;
      return fits(*x - floorDivInt(*x, *y) * *y);
    case BinOp::Min:
      return std::min(*x, *y);
    case BinOp::Max:
      return std::max(*x, *y);
    case BinOp::EQ:
      return *x == *y;
    case BinOp::NE:
      return *x != *y;
    case BinOp::LT:
      return *x < *y;
    case BinOp::LE:
      return *x <= *y;
    case BinOp::GT:
      return *x > *y;
    case BinOp::GE:
      return *x >= *y;
    case BinOp::And:
    case BinOp::Or:
      return *y != 0;
    case BinOp::Div:
    case BinOp::Pow:
      return std::nullopt;
    }
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

} // namespace

std::optional<int64_t>
interpret(const Expr &e, const std::vector<std::pair<Expr, int64_t>> &values) {
  if (!e.defined())
    return std::nullopt;
  std::vector<std::pair<uint64_t, int64_t>> byId;
  for (const auto &[var, v] : values) {
    const Var *x = var.as<Var>();
    if (!x)
      return std::nullopt;
    byId.emplace_back(x->id, v);
  }
  return interpretNode(e, byId);
}

} // namespace aotc
