/// \file
/// The symbolic-interval prover of bounds.h.
#include "ir/bounds.h"

#include "ir/scalar_ops.h"
#include "ir/status.h"
#include "ir/visitor.h"

#include <algorithm>
#include <climits>
#include <map>
#include <numeric>
#include <set>

namespace aotc {

namespace {

bool isIndexType(DType t) { return t == DType::Int64 || t == DType::Int32; }


/// `a op b` (op a comparison, holding as \p holds) as facts f >= 0.
void comparisonFacts(BinOp op, const Expr &a, const Expr &b, bool holds,
                     std::vector<Expr> &out) {
  if (!holds) {
    switch (op) {
    case BinOp::LT:
      op = BinOp::GE;
      break;
    case BinOp::LE:
      op = BinOp::GT;
      break;
    case BinOp::GT:
      op = BinOp::LE;
      break;
    case BinOp::GE:
      op = BinOp::LT;
      break;
    case BinOp::EQ:
      op = BinOp::NE;
      break;
    case BinOp::NE:
      op = BinOp::EQ;
      break;
    default:
      return;
    }
  }
  switch (op) {
  case BinOp::LT: // b - a - 1 >= 0
    out.push_back(b - a - Expr(1));
    return;
  case BinOp::LE:
    out.push_back(b - a);
    return;
  case BinOp::GT:
    out.push_back(a - b - Expr(1));
    return;
  case BinOp::GE:
    out.push_back(a - b);
    return;
  case BinOp::EQ:
    out.push_back(a - b);
    out.push_back(b - a);
    return;
  default:
    return;
  }
}

/// \p e as sum(coef * var) + constant, if it is linear in integer variables
/// with constant coefficients (no overflow checks: the coefficients of index
/// facts are small).
bool linearForm(const Expr &e, int64_t scale,
                std::map<uint64_t, std::pair<const Var *, int64_t>> &terms,
                int64_t &constant) {
  if (const IntImm *i = e.as<IntImm>()) {
    constant += scale * i->value;
    return true;
  }
  if (const Var *v = e.as<Var>()) {
    auto &t = terms[v->id];
    t.first = v;
    t.second += scale;
    return true;
  }
  if (const Cast *c = e.as<Cast>())
    return scalar::isInteger(c->value.type()) &&
           linearForm(c->value, scale, terms, constant);
  const Binary *b = e.as<Binary>();
  if (!b)
    return false;
  switch (b->op) {
  case BinOp::Add:
    return linearForm(b->a, scale, terms, constant) &&
           linearForm(b->b, scale, terms, constant);
  case BinOp::Sub:
    return linearForm(b->a, scale, terms, constant) &&
           linearForm(b->b, -scale, terms, constant);
  case BinOp::Mul: {
    int64_t k;
    if (b->a.isConst(k))
      return linearForm(b->b, scale * k, terms, constant);
    if (b->b.isConst(k))
      return linearForm(b->a, scale * k, terms, constant);
    return false;
  }
  default:
    return false;
  }
}

/// A linear fact sum(c_j * v_j) + k >= 0 over integers whose coefficients
/// share a factor g > 1, as sum(c_j / g * v_j) + floor(k / g) >= 0 (the
/// same integer points): a GEMM view's tile check `32 * gn + 4 * lx < 4 *
/// n` (over flattened pixels, 4 a batch) is `8 * gn + lx < n`, which
/// proves the store into batch row 8 * gn + lx. Other facts as they are.
Expr tightenByGcd(const Expr &fact) {
  std::map<uint64_t, std::pair<const Var *, int64_t>> terms;
  int64_t k = 0;
  if (!linearForm(fact, 1, terms, k))
    return fact;
  int64_t g = 0;
  for (const auto &[id, t] : terms)
    g = std::gcd(g, t.second < 0 ? -t.second : t.second);
  if (g <= 1 || k < -(int64_t{1} << 60) || k > (int64_t{1} << 60))
    return fact;
  // floor(k / g) for either sign of k.
  int64_t q = k / g - (k % g != 0 && k < 0 ? 1 : 0);
  Expr out(q);
  for (const Expr &v : freeVars(fact)) {
    auto it = terms.find(v.as<Var>()->id);
    if (it == terms.end())
      return fact; // a variable outside the linear terms
    if (it->second.second != 0)
      out = Expr(it->second.second / g) *
                (v.type() == DType::Int64 ? v : Cast::make(DType::Int64, v)) +
            out;
  }
  return simplify(out);
}

/// \p e with every `k * (y floordiv d)` term whose constant k is a multiple
/// of the constant d replaced by a lower bound of it as it appears (\p sign
/// is the sign \p e appears with): (k / d) * (y - (d - 1)) where the term
/// counts positively, so that `256 * ((x + 123) floordiv 256) + 132 - x >=
/// 0`, a rounded-up arena, is proven; and, with \p negativeToo, (k / d) * y
/// where it counts negatively, so that a strided Slice's reads `3 * i +
/// start`, with i below its count `(end - start + 2) floordiv 3`, are below
/// end (floor division is opaque to the symbolic intervals). Without it a
/// negative term stays whole, to cancel against the same division inside a
/// positive one's bound: an arena of 256 * ((96 * f + 63) floordiv 256) +
/// 256 bytes holds 96 * f + 64 of them, f = (x + 2) floordiv 3 (fuzz seed
/// 20261142).
Expr floorDivLowerBound(const Expr &e, int64_t sign, bool negativeToo) {
  const Binary *b = e.as<Binary>();
  if (!b)
    return e;
  switch (b->op) {
  case BinOp::Add:
    return floorDivLowerBound(b->a, sign, negativeToo) +
           floorDivLowerBound(b->b, sign, negativeToo);
  case BinOp::Sub:
    return floorDivLowerBound(b->a, sign, negativeToo) -
           floorDivLowerBound(b->b, -sign, negativeToo);
  case BinOp::Mul: {
    int64_t k;
    const Expr *other = nullptr;
    if (b->a.isConst(k))
      other = &b->b;
    else if (b->b.isConst(k))
      other = &b->a;
    if (!other || k == 0)
      return e;
    const Binary *f = other->as<Binary>();
    int64_t d;
    if (f && f->op == BinOp::FloorDiv && f->b.isConst(d) && d > 0 &&
        k % d == 0) {
      if ((k > 0) == (sign > 0))
        return Expr(k / d) * (f->a - Expr(d - 1));
      if (negativeToo)
        return Expr(k / d) * f->a;
    }
    return Expr(k) *
           floorDivLowerBound(*other, k > 0 ? sign : -sign, negativeToo);
  }
  default:
    return e;
  }
}

/// a mod d where \p e is a - (a floordiv d) * d (or d * (a floordiv d)),
/// else undefined: Tile's index into a symbolic dimension
/// (lower_shape.cpp), which the sums of terms below would take apart.
Expr asRemainder(const Expr &e) {
  const Binary *b = e.as<Binary>();
  const Binary *q = b && b->op == BinOp::Sub ? b->b.as<Binary>() : nullptr;
  if (!q || q->op != BinOp::Mul)
    return Expr();
  for (int k = 0; k < 2; ++k) {
    const Binary *fd = (k == 0 ? q->a : q->b).as<Binary>();
    const Expr &d = k == 0 ? q->b : q->a;
    if (fd && fd->op == BinOp::FloorDiv && structurallyEqual(fd->a, b->a) &&
        structurallyEqual(fd->b, d))
      return Binary::make(BinOp::Mod, b->a, d);
  }
  return Expr();
}

/// \p e with every a - (a floordiv d) * d in it written a mod d.
Expr foldRemainders(const Expr &e) {
  struct Fold : IRMutator {
    Expr mutateBinary(const Binary *op, const Expr &self) override {
      Expr m = IRMutator::mutateBinary(op, self);
      Expr r = asRemainder(m);
      return r.defined() ? r : m;
    }
  };
  return Fold().mutate(e);
}

/// True if \p e has a min, a max or a floor division (what the rules after
/// the facts in proveNonNegative take apart).
bool hasMinMaxOrFloorDiv(const Expr &e) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitBinary(const Binary *op) override {
      if (op->op == BinOp::Min || op->op == BinOp::Max ||
          op->op == BinOp::FloorDiv)
        found = true;
      else
        IRVisitor::visitBinary(op);
    }
  } f;
  f.visit(e);
  return f.found;
}

/// The terms of \p e as a sum, each with its constant coefficient (times
/// \p sign): a + 2 * b - c is {(1, a), (2, b), (-1, c)}.
void sumTerms(const Expr &e, int64_t sign,
              std::vector<std::pair<int64_t, Expr>> &out) {
  const Binary *b = e.as<Binary>();
  if (b && b->op == BinOp::Add) {
    sumTerms(b->a, sign, out);
    sumTerms(b->b, sign, out);
    return;
  }
  if (b && b->op == BinOp::Sub) {
    sumTerms(b->a, sign, out);
    sumTerms(b->b, -sign, out);
    return;
  }
  int64_t k;
  if (b && b->op == BinOp::Mul && (b->a.isConst(k) || b->b.isConst(k))) {
    out.push_back({sign * k, b->a.isConst(k) ? b->b : b->a});
    return;
  }
  out.push_back({sign, e});
}

int64_t floorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

} // namespace

size_t ProofCache::proofs() const {
  size_t n = 0;
  for (const auto &s : stores_)
    n += s->proven.size();
  return n;
}

ProofCache::Store &ProofCache::storeFor(const RangeEnv &symbols) {
  for (const auto &s : stores_)
    if (s->symbols == symbols)
      return *s;
  stores_.push_back(std::make_unique<Store>());
  stores_.back()->symbols = symbols;
  return *stores_.back();
}

BoundsProver::BoundsProver(RangeEnv symbols, ProofCache *cache)
    : symbols_(std::move(symbols)), env_(symbols_), cache_(cache) {
  if (cache_)
    store_ = &cache_->storeFor(symbols_);
}

void BoundsProver::release(size_t mark) {
  if (mark >= scope_.size())
    return;
  scope_.resize(mark);
  if (scopeIds_.size() > mark)
    scopeIds_.resize(mark);
  rebuildEnv();
}

namespace {

/// Appends the \p bytes of a plain value to \p out.
template <typename T> void appendRaw(std::string &out, const T &value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// The cache's spelling of index math, written as bytes rather than printed
/// (printing the questions' text took about a tenth of ResNet-50's compile,
/// as much as the proofs it saved). Every node is its kind, type and lanes,
/// then its fields, then its operands, a fixed number for each kind: so no
/// two different expressions have the same bytes. A variable is \p place's
/// answer (its scope entry, >= 0) or else its identity. Kinds that index
/// math does not hold (loads, calls, floats) are spelled as exprKeyRenamed
/// prints them, with their length in front.
class QuestionWriter {
public:
  QuestionWriter(std::string &out, const std::function<int64_t(const Var &)> &place,
                 const VarNamer &namer)
      : out_(out), place_(place), namer_(namer) {}

  void write(const Expr &e) {
    if (!e.defined()) {
      out_.push_back('U');
      return;
    }
    out_.push_back(static_cast<char>(e.kind()));
    out_.push_back(static_cast<char>(e.type()));
    appendRaw(out_, static_cast<int32_t>(e.lanes()));
    switch (e.kind()) {
    case ExprKind::IntImm:
      appendRaw(out_, e.as<IntImm>()->value);
      return;
    case ExprKind::Var: {
      const Var &v = *e.as<Var>();
      const int64_t at = place_(v);
      out_.push_back(at >= 0 ? 's' : 'v');
      appendRaw(out_, at >= 0 ? static_cast<uint64_t>(at) : v.id);
      return;
    }
    case ExprKind::Binary: {
      const Binary *b = e.as<Binary>();
      out_.push_back(static_cast<char>(b->op));
      write(b->a);
      write(b->b);
      return;
    }
    case ExprKind::Not:
      write(e.as<Not>()->a);
      return;
    case ExprKind::Select: {
      const Select *s = e.as<Select>();
      write(s->cond);
      write(s->trueValue);
      write(s->falseValue);
      return;
    }
    case ExprKind::Cast:
      write(e.as<Cast>()->value);
      return;
    default: {
      const std::string text = exprKeyRenamed(e, namer_);
      appendRaw(out_, static_cast<uint64_t>(text.size()));
      out_ += text;
      return;
    }
    }
  }

private:
  std::string &out_;
  const std::function<int64_t(const Var &)> &place_;
  const VarNamer &namer_;
};

} // namespace

std::string BoundsProver::canonical(const Expr &e, size_t prefix) const {
  // The variables bound by the first \p prefix entries by their places; a
  // symbol (the same in every kernel of the module), or a variable the
  // prover does not know, by identity.
  const std::function<int64_t(const Var &)> place = [&](const Var &v) {
    for (size_t i = prefix; i-- > 0;)
      if (scope_[i].kind != Entry::Fact && scope_[i].var.as<Var>()->id == v.id)
        return static_cast<int64_t>(i);
    return int64_t{-1};
  };
  const VarNamer namer = [&](const Var &v) {
    const int64_t at = place(v);
    return at >= 0 ? "$" + std::to_string(at)
                   : v.name + "#" + std::to_string(v.id);
  };
  std::string out;
  QuestionWriter(out, place, namer).write(e);
  return out;
}

std::string BoundsProver::questionKey(const Expr &e) {
  for (size_t i = scopeIds_.size(); i < scope_.size(); ++i) {
    const Entry &x = scope_[i];
    std::string key;
    switch (x.kind) {
    case Entry::Loop:
      key = "L" + std::string(1, static_cast<char>(x.var.type())) +
            canonical(x.lo, i) + canonical(x.hi, i);
      break;
    case Entry::Let:
      key = "T" + std::string(1, static_cast<char>(x.var.type())) +
            canonical(x.value, i);
      break;
    case Entry::Fact:
      key = "F" + canonical(x.fact, i);
      break;
    }
    const int before = i == 0 ? 0 : scopeIds_[i - 1];
    auto it = store_->scopes
                  .emplace(std::make_pair(before, std::move(key)),
                           static_cast<int>(store_->scopes.size()) + 1)
                  .first;
    scopeIds_.push_back(it->second);
  }
  std::string key;
  appendRaw(key, static_cast<int32_t>(scope_.empty() ? 0 : scopeIds_.back()));
  return key + canonical(e, scope_.size());
}

void BoundsProver::rebuildEnv() {
  env_ = symbols_;
  for (const Entry &e : scope_)
    learnConstRange(e);
}

void BoundsProver::learnConstRange(const Entry &e) {
  switch (e.kind) {
  case Entry::Loop: {
    auto lo = boundsOf(e.lo, env_), hi = boundsOf(e.hi, env_);
    if (lo && hi && lo->min <= hi->max)
      env_.set(e.var, Range{lo->min, hi->max});
    // The loop runs, so its extent (hi - lo + 1) is at least 1: symbols
    // that are factors of a product extent are at least 1 there.
    std::vector<Expr> stack = {simplify(e.hi - e.lo + Expr(1), env_)};
    while (!stack.empty()) {
      Expr x = stack.back();
      stack.pop_back();
      if (const Binary *b = x.as<Binary>(); b && b->op == BinOp::Mul) {
        auto ra = boundsOf(b->a, env_), rb = boundsOf(b->b, env_);
        if (ra && rb && ra->min >= 0 && rb->min >= 0) {
          stack.push_back(b->a);
          stack.push_back(b->b);
        }
        continue;
      }
      const Var *v = x.as<Var>();
      if (!v)
        continue;
      if (const Range *r = env_.find(v); r && r->min < 1 && r->max >= 1)
        env_.set(v, Range{1, r->max});
    }
    return;
  }
  case Entry::Let: {
    if (e.lo.defined()) {
      auto lo = boundsOf(e.lo, env_), hi = boundsOf(e.hi, env_);
      if (lo && hi && lo->min <= hi->max)
        env_.set(e.var, Range{lo->min, hi->max});
    }
    return;
  }
  case Entry::Fact: {
    // A linear fact sum(c_j * v_j) + k >= 0 bounds each of its variables
    // by the others' ranges: v with c > 0 is at least
    // ceil(-(k + max of the rest) / c), v with c < 0 at most
    // floor((k + max of the rest) / -c). The last tile's check
    // `6 * t + 6 <= 28` gives t <= 3, which proves `12 * t + 10 < 56` (a
    // stride-2 read) where comparing with the fact term by term cannot; a
    // vector tile's check `48 - (32 * i1 + 16 * t3) >= 0`, t3 in [0, 1],
    // gives i1 <= 1 (a channel Concat over blocked channels).
    std::map<uint64_t, std::pair<const Var *, int64_t>> terms;
    int64_t k = 0;
    if (!linearForm(e.fact, 1, terms, k))
      return;
    std::vector<std::pair<const Var *, int64_t>> vars;
    for (const auto &[id, t] : terms)
      if (t.second != 0)
        vars.push_back(t);
    if (vars.empty() || vars.size() > 4 || k < -(int64_t{1} << 60) ||
        k > (int64_t{1} << 60))
      return;
    // The largest value of c * v over v's range, if known.
    auto maxTerm = [&](const Var *v, int64_t c) -> std::optional<int64_t> {
      const Range *r = env_.find(v);
      if (!r || r->min < -(int64_t{1} << 40) || r->max > (int64_t{1} << 40) ||
          c < -(int64_t{1} << 20) || c > (int64_t{1} << 20))
        return std::nullopt;
      return c > 0 ? c * r->max : c * r->min;
    };
    for (const auto &[v, c] : vars) {
      int64_t rest = k;
      bool known = true;
      for (const auto &[u, cu] : vars)
        if (u != v) {
          std::optional<int64_t> m = maxTerm(u, cu);
          if (!m) {
            known = false;
            break;
          }
          rest += *m;
        }
      const Range *r = env_.find(v);
      if (!known || !r)
        continue;
      Range n = *r;
      if (c > 0)
        n.min = std::max(n.min, -floorDivInt(rest, c)); // v >= ceil(-rest / c)
      else
        n.max = std::min(n.max, floorDivInt(rest, -c)); // v <= floor(rest / -c)
      if (n.min <= n.max)
        env_.set(v, n);
    }
    return;
  }
  }
}

void BoundsProver::addLoop(const Expr &var, const Expr &min,
                           const Expr &extent) {
  Entry e;
  e.kind = Entry::Loop;
  e.var = var;
  e.lo = simplify(min, env_);
  e.hi = simplify(min + extent - Expr(1), env_);
  scope_.push_back(e);
  learnConstRange(scope_.back());
  // \p x >= 0 as a fact while the loop runs.
  auto fact = [&](const Expr &x) {
    Entry f;
    f.kind = Entry::Fact;
    f.fact = simplify(x, env_);
    scope_.push_back(f);
  };
  // extent >= 1 as a fact, for bounds that divide by it.
  fact(extent - Expr(1));
  // An extent min(a, b) (a block of a long sum: min(kSumBlock, n - start))
  // bounds the variable by each: var <= min + a - 1 and var <= min + b - 1,
  // facts that cancel against an index start + var < n.
  auto boundBy = [&](const Expr &bound) {
    fact(min + bound - Expr(1) - var);
  };
  const Binary *m = extent.as<Binary>();
  if (m && m->op == BinOp::Min) {
    boundBy(m->a);
    boundBy(m->b);
  }
  // An extent max(a, c) with a constant c <= 0 (a count clamped at zero: a
  // Slice's max((end - start + step - 1) floordiv step, 0)) runs only where
  // a >= 1, and then is a: var <= min + a - 1.
  int64_t c;
  if (m && m->op == BinOp::Max) {
    if (m->b.isConst(c) && c <= 0)
      boundBy(m->a);
    else if (m->a.isConst(c) && c <= 0)
      boundBy(m->b);
  }
  // An extent that is a product of non-negative factors (2 * d: Tile's
  // repeats of a symbolic dimension) runs only where each factor is >= 1:
  // one fact per factor that is not a constant, for the divisions and
  // remainders by it (i - (i floordiv d) * d over [0, 2 d)).
  std::vector<Expr> factors;
  collectFactors(simplify(extent, env_), factors);
  bool allNonNegative = factors.size() > 1;
  for (const Expr &x : factors)
    allNonNegative = allNonNegative && constNonNegative(x);
  if (allNonNegative)
    for (const Expr &x : factors)
      if (!x.isConst(c))
        fact(x - Expr(1));
}

void BoundsProver::addLet(const Expr &var, const Expr &value) {
  Entry e;
  e.kind = Entry::Let;
  e.var = var;
  if (isIndexType(value.type()) && !hasIndexCheck(value)) {
    e.value = value;
    if (auto iv = interval(value)) {
      e.lo = iv->first;
      e.hi = iv->second;
    }
  }
  scope_.push_back(e);
  learnConstRange(scope_.back());
}

void BoundsProver::addFact(const Expr &cond, bool holds) {
  if (!cond.defined() || cond.type() != DType::Bool)
    return;
  std::vector<Expr> parts;
  // A true conjunction makes every conjunct true; a false disjunction makes
  // every disjunct false.
  if (holds)
    conjuncts(cond, parts);
  else
    disjuncts(cond, parts);
  for (const Expr &p : parts) {
    if (const Not *n = p.as<Not>()) {
      if (n->a.as<Binary>())
        addFact(n->a, !holds);
      continue;
    }
    const Binary *b = p.as<Binary>();
    if (!b || !isComparison(b->op) || !scalar::isInteger(b->a.type()))
      continue;
    // In i64: exact for every integer type.
    std::vector<Expr> facts;
    comparisonFacts(b->op, Cast::make(DType::Int64, b->a),
                    Cast::make(DType::Int64, b->b), holds, facts);
    for (const Expr &f : facts) {
      // The fact as it is (proofs take multiples of it) and, where its
      // coefficients share a factor, divided by it.
      Expr fact = simplify(f, env_);
      Expr tight = tightenByGcd(fact);
      const int forms = structurallyEqual(tight, fact) ? 1 : 2;
      for (int k = 0; k < forms; ++k) {
        const Expr &x = k == 0 ? fact : tight;
        Entry e;
        e.kind = Entry::Fact;
        e.fact = x;
        scope_.push_back(e);
        learnConstRange(scope_.back());
      }
    }
  }
}

const BoundsProver::Entry *BoundsProver::findVar(const Var *v) const {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
    if (it->kind != Entry::Fact && it->var.as<Var>()->id == v->id)
      return &*it;
  return nullptr;
}

bool BoundsProver::onlySymbols(const Expr &e) const {
  for (const Expr &v : freeVars(e))
    if (findVar(v.as<Var>()))
      return false;
  return true;
}

bool BoundsProver::constNonNegative(const Expr &e) {
  auto r = boundsOf(simplify(e, env_), env_);
  return r && r->min >= 0;
}

bool BoundsProver::provePositive(const Expr &e) {
  if (constNonNegative(e - Expr(1)))
    return true;
  Expr want = simplify(e - Expr(1), env_);
  for (const Entry &f : scope_)
    if (f.kind == Entry::Fact && structurallyEqual(f.fact, want))
      return true;
  return false;
}

std::optional<std::pair<Expr, Expr>> BoundsProver::interval(const Expr &e) {
  auto r = intervalOf(e);
  if (!r)
    return r;
  // The ends are i64 whatever the expression's index type: an int32 index
  // term (a literal, a narrowed value) combines with i64 ones.
  auto widen = [&](const Expr &x) -> Expr {
    if (x.type() == DType::Int64)
      return x;
    int64_t v;
    if (x.isConst(v))
      return Expr(v);
    return simplify(Cast::make(DType::Int64, x), env_);
  };
  return std::make_pair(widen(r->first), widen(r->second));
}

std::optional<std::pair<Expr, Expr>> BoundsProver::intervalOf(const Expr &e) {
  if (!e.defined() || !isIndexType(e.type()) || depth_ > 64)
    return std::nullopt;
  struct Depth {
    int &d;
    explicit Depth(int &x) : d(x) { ++d; }
    ~Depth() { --d; }
  } guard(depth_);
  auto pair = [&](Expr lo, Expr hi) {
    return std::make_optional(
        std::make_pair(simplify(lo, env_), simplify(hi, env_)));
  };
  switch (e.kind()) {
  case ExprKind::IntImm:
    return std::make_pair(e, e);
  case ExprKind::Var: {
    const Entry *s = findVar(e.as<Var>());
    if (!s) // a symbol (or a variable the prover does not know): itself
      return std::make_pair(e, e);
    if (!s->lo.defined())
      return std::nullopt;
    return std::make_pair(s->lo, s->hi);
  }
  case ExprKind::Cast: {
    const Cast *c = e.as<Cast>();
    if (!isIndexType(c->value.type()))
      return std::nullopt;
    auto in = interval(c->value);
    if (!in)
      return std::nullopt;
    if (c->type == DType::Int32) {
      // Narrowing: only if the value provably fits.
      auto lo = boundsOf(in->first, env_), hi = boundsOf(in->second, env_);
      if (!lo || !hi || lo->min < INT32_MIN || hi->max > INT32_MAX)
        return std::nullopt;
    }
    return in;
  }
  case ExprKind::Call: {
    // clamp(v, lo, hi) lies in [lo, hi] whatever v is (an index computed
    // from data, a Resize's neighbour), where lo <= hi is proven.
    const Call *c = e.as<Call>();
    if (c->name != "clamp" || c->args.size() != 3)
      return std::nullopt;
    auto lo = interval(c->args[1]), hi = interval(c->args[2]);
    if (!lo || !hi || !proveNonNegative(simplify(hi->first - lo->second, env_)))
      return std::nullopt;
    return pair(lo->first, hi->second);
  }
  case ExprKind::Select: {
    const Select *s = e.as<Select>();
    size_t m = mark();
    addFact(s->cond, true);
    auto t = interval(s->trueValue);
    release(m);
    addFact(s->cond, false);
    auto f = interval(s->falseValue);
    release(m);
    if (!t || !f)
      return std::nullopt;
    return pair(minExpr(t->first, f->first), maxExpr(t->second, f->second));
  }
  case ExprKind::IndexCheck: {
    // In range, or 0 after recording the error: [0, extent - 1] when
    // extent >= 1.
    const Expr &n = e.as<IndexCheck>()->extent;
    if (!provePositive(n))
      return std::nullopt;
    return pair(Expr(0), n - Expr(1));
  }
  case ExprKind::Binary:
    break;
  default:
    return std::nullopt;
  }
  const Binary *b = e.as<Binary>();
  if (isComparison(b->op) || b->op == BinOp::And || b->op == BinOp::Or)
    return std::nullopt;
  if (Expr r = asRemainder(e); r.defined())
    return intervalOf(r);
  auto x = interval(b->a);
  auto y = interval(b->b);
  if (!x || !y)
    return std::nullopt;
  auto nonNeg = [&](const Expr &lo) { return constNonNegative(lo); };
  switch (b->op) {
  case BinOp::Add:
    return pair(x->first + y->first, x->second + y->second);
  case BinOp::Sub:
    return pair(x->first - y->second, x->second - y->first);
  case BinOp::Mul: {
    int64_t c;
    // m * (a floordiv d) with d | m, m > 0: between (m/d) * (a - (d - 1))
    // and (m/d) * a (round-up alignment: 256 * ((n + 255) floordiv 256)).
    if (b->a.isConst(c) || b->b.isConst(c)) {
      const Binary *fd = (b->a.isConst(c) ? b->b : b->a).as<Binary>();
      int64_t d;
      if (c > 0 && fd && fd->op == BinOp::FloorDiv && fd->b.isConst(d) &&
          d > 0 && c % d == 0) {
        if (auto a = interval(fd->a))
          return pair(Expr(c / d) * (a->first - Expr(d - 1)),
                      Expr(c / d) * a->second);
      }
    }
    if (b->a.isConst(c) || b->b.isConst(c)) {
      const auto &v = b->a.isConst(c) ? *y : *x;
      if (c >= 0)
        return pair(v.first * Expr(c), v.second * Expr(c));
      return pair(v.second * Expr(c), v.first * Expr(c));
    }
    if (nonNeg(x->first) && nonNeg(y->first))
      return pair(x->first * y->first, x->second * y->second);
    return std::nullopt;
  }
  case BinOp::FloorDiv: {
    // Monotonic in the numerator for a positive divisor that is exactly
    // known (a constant or a symbol expression).
    if (!structurallyEqual(y->first, y->second) || !provePositive(y->first))
      return std::nullopt;
    return pair(floorDiv(x->first, y->first), floorDiv(x->second, y->first));
  }
  case BinOp::Mod: {
    if (!structurallyEqual(y->first, y->second) || !provePositive(y->first))
      return std::nullopt;
    const Expr &d = y->first;
    if (nonNeg(x->first) && constNonNegative(d - Expr(1) - x->second))
      return x;
    int64_t c;
    if (d.isConst(c))
      if (auto f = modRangeByFactor(b->a, c))
        return pair(Expr(f->min), Expr(f->max));
    return pair(Expr(0), d - Expr(1));
  }
  case BinOp::Min:
    return pair(minExpr(x->first, y->first), minExpr(x->second, y->second));
  case BinOp::Max:
    return pair(maxExpr(x->first, y->first), maxExpr(x->second, y->second));
  default:
    return std::nullopt;
  }
}

BoundsProver::Mono BoundsProver::monotonicity(const Expr &e, const Var *v) {
  if (!usesVar(e, v))
    return Mono::Const;
  auto flip = [](Mono m) {
    return m == Mono::Inc ? Mono::Dec : m == Mono::Dec ? Mono::Inc : m;
  };
  auto both = [](Mono a, Mono b) {
    if (a == Mono::Const)
      return b;
    if (b == Mono::Const || a == b)
      return a;
    return Mono::Unknown;
  };
  switch (e.kind()) {
  case ExprKind::Var:
    return e.as<Var>()->id == v->id ? Mono::Inc : Mono::Const;
  case ExprKind::Cast: {
    const Cast *c = e.as<Cast>();
    if (c->type != DType::Int64 || !isIndexType(c->value.type()))
      return Mono::Unknown;
    return monotonicity(c->value, v);
  }
  case ExprKind::Binary:
    break;
  default:
    return Mono::Unknown;
  }
  const Binary *b = e.as<Binary>();
  Mono x = monotonicity(b->a, v), y = monotonicity(b->b, v);
  switch (b->op) {
  case BinOp::Add:
  case BinOp::Min:
  case BinOp::Max:
    return both(x, y);
  case BinOp::Sub:
    return both(x, flip(y));
  case BinOp::Mul: {
    // One factor must not depend on v; its sign decides.
    const Expr &k = x == Mono::Const ? b->a : b->b;
    Mono m = x == Mono::Const ? y : y == Mono::Const ? x : Mono::Unknown;
    if (m == Mono::Unknown)
      return m;
    if (constNonNegative(k))
      return m;
    if (constNonNegative(Expr(0) - k))
      return flip(m);
    return Mono::Unknown;
  }
  case BinOp::FloorDiv:
    if (y == Mono::Const && provePositive(b->b))
      return x;
    return Mono::Unknown;
  default:
    return Mono::Unknown;
  }
}

Expr BoundsProver::inlineLets(const Expr &e) {
  Expr g = e;
  bool changed = false;
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
    if (it->kind == Entry::Let && it->value.defined() &&
        usesVar(g, it->var.as<Var>())) {
      g = substitute(g, {{it->var, it->value}});
      changed = true;
    }
  return changed ? simplify(g, env_) : g;
}

Expr BoundsProver::minimizeOverLoops(const Expr &e) {
  Expr g = e;
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
    if (it->kind == Entry::Fact)
      continue;
    const Var *v = it->var.as<Var>();
    if (!usesVar(g, v))
      continue;
    if (it->kind == Entry::Let)
      return Expr(); // inlineLets() left it: its value is not an index
    Mono m = monotonicity(g, v);
    if (m == Mono::Unknown)
      return Expr();
    if (m == Mono::Const)
      continue;
    g = simplify(substitute(g, {{it->var, m == Mono::Inc ? it->lo : it->hi}}),
                 env_);
  }
  return g;
}

bool BoundsProver::lowerEndNonNegative(const Expr &e) {
  // e and what minimizeOverLoops returns are simplified already: their
  // constant bounds are read directly (simplifying again is the prover's
  // main cost).
  auto boundsNonNegative = [&](const Expr &x) {
    auto r = boundsOf(x, env_);
    return r && r->min >= 0;
  };
  if (boundsNonNegative(e))
    return true;
  if (Expr m = minimizeOverLoops(inlineLets(e));
      m.defined() && boundsNonNegative(m))
    return true;
  auto iv = interval(e);
  return iv && constNonNegative(iv->first);
}

namespace {

/// \p e expanded into monomials: each a sorted list of atom keys (printed
/// non-polynomial subexpressions: symbols, loop variables, divisions) with
/// its integer coefficient; \p atoms maps keys back. False where the
/// expansion has more than \p limit monomials or a coefficient overflows.
using Monomials = std::map<std::vector<std::string>, int64_t>;
bool expandProducts(const Expr &e, Monomials &out,
                    std::map<std::string, Expr> &atoms, size_t limit) {
  out.clear();
  int64_t v;
  if (e.isConst(v)) {
    if (v != 0)
      out[{}] = v;
    return true;
  }
  const Binary *b = e.as<Binary>();
  if (b && (b->op == BinOp::Add || b->op == BinOp::Sub || b->op == BinOp::Mul)) {
    Monomials x, y;
    if (!expandProducts(b->a, x, atoms, limit) ||
        !expandProducts(b->b, y, atoms, limit))
      return false;
    if (b->op == BinOp::Mul) {
      for (const auto &[mx, cx] : x)
        for (const auto &[my, cy] : y) {
          std::vector<std::string> m = mx;
          m.insert(m.end(), my.begin(), my.end());
          std::sort(m.begin(), m.end());
          int64_t c;
          if (__builtin_mul_overflow(cx, cy, &c) ||
              __builtin_add_overflow(out[m], c, &out[m]))
            return false;
        }
    } else {
      out = std::move(x);
      for (const auto &[my, cy] : y) {
        if (b->op == BinOp::Sub && cy == INT64_MIN)
          return false;
        const int64_t c = b->op == BinOp::Add ? cy : -cy;
        if (__builtin_add_overflow(out[my], c, &out[my]))
          return false;
      }
    }
    for (auto it = out.begin(); it != out.end();)
      it = it->second == 0 ? out.erase(it) : std::next(it);
    return out.size() <= limit;
  }
  std::string key = printExpr(e);
  atoms.emplace(key, e);
  out[{key}] = 1;
  return true;
}

} // namespace

bool BoundsProver::proveNonNegative(const Expr &e) {
  // Questions asked from the top only: inside a proof the depths change
  // what is tried.
  if (!cache_ || depth_ != 0 || minMaxDepth_ != 0 || residualDepth_ != 0)
    return proveFresh(e);
  std::string key = questionKey(e);
  if (store_->proven.count(key)) {
    ++cache_->hits_;
    return true;
  }
  if (!proveFresh(e))
    return false;
  store_->proven.insert(std::move(key));
  return true;
}

bool BoundsProver::proveFresh(const Expr &e) {
  Expr s = simplify(foldRemainders(e), env_);
  if (lowerEndNonNegative(s))
    return true;
  // From a fact f >= 0: e = f + (e - f) >= 0 when e - f >= 0. (The facts
  // are copied: proving may push and pop scope entries.)
  // A fact that shares no variable with e cannot cancel any of its terms:
  // e - k * f is no easier than e itself, and it is not tried.
  std::vector<Expr> facts;
  const std::vector<Expr> vars = freeVars(s);
  auto sharesVar = [&](const Expr &f) {
    for (const Expr &v : vars)
      if (usesVar(f, v.as<Var>()))
        return true;
    return false;
  };
  for (const Entry &f : scope_)
    if (residualDepth_ == 0 && f.kind == Entry::Fact && sharesVar(f.fact))
      facts.push_back(f.fact);
  // And from a multiple of one: a tile of 8 outputs read at stride 2 is in
  // bounds by twice its tile check (16 * t + 14 < 2 * n from 8 * t + 8 <= n);
  // and by the multiple that cancels a variable both read: the rows
  // 12 * (42 * g + i) + r of a tile in a partial row group are in bounds by
  // 12 times its group's tile check 42 * g + i < 167 (register_tile.cpp).
  // Facts over symbols only (the run-time checks of a graph's assumptions:
  // GatherElements' q <= m) are added to each combination too: a tile's
  // 16 t + 16 <= q and q <= m make 16 t + 15 < m.
  std::vector<Expr> symbolFacts;
  for (const Expr &f : facts)
    if (onlySymbols(f))
      symbolFacts.push_back(f);
  std::vector<std::pair<int64_t, Expr>> sTerms;
  sumTerms(s, 1, sTerms);
  for (const Expr &f : facts) {
    std::vector<int64_t> ks = {1, 2, 3, 4, 8};
    std::vector<std::pair<int64_t, Expr>> fTerms;
    sumTerms(f, 1, fTerms);
    for (const auto &[cs, ts] : sTerms)
      for (const auto &[cf, tf] : fTerms)
        if (cf != 0 && cs % cf == 0 && cs / cf > 0 && ts.as<Var>() &&
            structurallyEqual(ts, tf) &&
            std::find(ks.begin(), ks.end(), cs / cf) == ks.end())
          ks.push_back(cs / cf);
    for (int64_t k : ks) {
      Expr r = simplify(s - Expr(k) * f, env_);
      if (lowerEndNonNegative(r))
        return true;
      for (const Expr &g : symbolFacts)
        if (!g.sameAs(f) && lowerEndNonNegative(simplify(r - g, env_)))
          return true;
      // What is left after the fact may need the rules below (a floor
      // division's bound, a min or max arm by arm): a Slice's count
      // max(((end - start + 2) floordiv 3), 0) bounds its reads
      // 3 * i + start only through both (fuzz seeds 40279, 60044, 60128).
      // Tried where the fact took every loop variable away, from the top
      // only (not inside a min or max arm), and without combining the facts
      // again: the search stays linear in the facts.
      if (residualDepth_ == 0 && minMaxDepth_ == 0 &&
          hasMinMaxOrFloorDiv(r) && onlySymbols(r) && proveWithoutFacts(r))
        return true;
    }
  }
  // s >= its floor divisions' bound, which may need the rules below too
  // (each step removes the divisions it bounds, so the recursion ends; the
  // facts are not combined again there). A bound equal to what was tried
  // already (s itself, or the first form where no division counts
  // negatively) is not tried again.
  Expr tried = s;
  for (bool negativeToo : {false, true}) {
    Expr bound = floorDivLowerBound(s, 1, negativeToo);
    if (bound.sameAs(s))
      continue; // no sum or product: nothing bounded, nothing to simplify
    Expr b = simplify(bound, env_);
    if (structurallyEqual(b, tried))
      continue;
    tried = b;
    if (lowerEndNonNegative(b) ||
        (hasMinMaxOrFloorDiv(b) && proveWithoutFacts(b)))
      return true;
  }
  // A min or max term, each arm in turn: -c * min(a, b) >= -c * a (and
  // -c * b), so one arm proving the rest suffices; -c * max(a, b) is one of
  // -c * a and -c * b, so both must (and the same for +c * max and +c *
  // min). A clamped window index min(max(x, 0), max(n - 1, 0)) is below n
  // where a fact gives n >= 1: a vector tile's `8 * t + 8 <= n` (a depthwise
  // convolution over a symbolic width, inline_padding.cpp, found by the
  // fuzzer). Each step removes one min or max, so the recursion ends.
  if (minMaxDepth_ < kMaxMinMaxDepth)
    for (const auto &[coef, t] : sTerms) {
      const Binary *mm = t.as<Binary>();
      if (!mm || (mm->op != BinOp::Min && mm->op != BinOp::Max) ||
          !isIndexType(mm->type))
        continue;
      ++minMaxDepth_;
      const int64_t c = coef; // a copy: C++17 lambdas cannot capture bindings
      Expr rest = s - Expr(c) * t;
      auto arm = [&](const Expr &x) {
        return proveNonNegative(rest + Expr(c) * x);
      };
      const bool either = (c < 0) == (mm->op == BinOp::Min);
      const bool proven =
          either ? arm(mm->a) || arm(mm->b) : arm(mm->a) && arm(mm->b);
      --minMaxDepth_;
      if (proven)
        return true;
    }
  // Products of symbols expanded: a kernel's view of a buffer, 6 d2 d4 +
  // 2 d2 elements, against the buffer's d2 * 2 * (3 d4 + 1) (the
  // verifier's view check; found by the fuzzer, seeds 20261234, 40004,
  // 40165, 40290, 60080). Every monomial with a non-negative coefficient
  // over atoms that are each non-negative makes a non-negative sum.
  {
    Monomials poly;
    std::map<std::string, Expr> atoms;
    if (expandProducts(s, poly, atoms, 64)) {
      bool ok = true;
      std::set<std::string> checked;
      for (const auto &[mono, coef] : poly) {
        ok = coef > 0;
        for (size_t i = 0; ok && i < mono.size(); ++i)
          if (checked.insert(mono[i]).second)
            ok = lowerEndNonNegative(simplify(atoms.at(mono[i]), env_));
        if (!ok)
          break;
      }
      if (ok)
        return true;
    }
  }
  // X - (a floordiv c) >= 0 exactly when c * X + c - 1 - a >= 0 (c > 0):
  // an image number p floordiv 81 is below n where p < 81 * n is known (a
  // GEMM view's column unflattened, gemm_view.cpp). Each step removes one
  // division, so the recursion ends.
  for (const auto &[coef, t] : sTerms) {
    const Binary *fd = t.as<Binary>();
    int64_t c;
    if (coef != -1 || !fd || fd->op != BinOp::FloorDiv || !fd->b.isConst(c) ||
        c <= 0)
      continue;
    Expr x = simplify(s + t, env_);
    if (proveNonNegative(Expr(c) * x + Expr(c - 1) - fd->a))
      return true;
  }
  // Last, each variable whose range is one value (a symbol that a node
  // requires to be a constant: shape inference's narrowToConstant) as that
  // value, so that the terms over it combine: 12 * (12 n d6) - 96 n is
  // 336 n where d6 is 3, and never negative, which its intervals alone
  // cannot show (n appears twice; fuzz seed 95707). Only as a last try:
  // put first, it took apart the sums that the facts cancel (a vector
  // load's 16 t0 against its tile check; fuzz seeds 96154, 97025, 98018).
  // The retry has no such variable left, so it does not come back here.
  VarBindings fixed;
  for (const Expr &v : freeVars(s))
    if (const Range *r = env_.find(v.as<Var>());
        r && r->min == r->max && isIndexType(v.type()))
      fixed.push_back({v, IntImm::make(r->min, v.type())});
  if (!fixed.empty())
    return proveNonNegative(substitute(s, fixed));
  return false;
}

bool BoundsProver::proveWithoutFacts(const Expr &e) {
  ++residualDepth_;
  const bool proven = proveNonNegative(e);
  --residualDepth_;
  return proven;
}

bool BoundsProver::proveInRange(const Expr &index, const Expr &extent) {
  return proveNonNegative(index) && proveNonNegative(extent - Expr(1) - index);
}

} // namespace aotc
