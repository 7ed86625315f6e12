/// \file
/// Chained kernels (chain_kernels.h): the pair test, the footprint proof by
/// enumeration, and the merged kernel.
#include "compiler/schedule/chain_kernels.h"

#include "compiler/schedule/device_profile.h"
#include "compiler/schedule/schedule.h"
#include "ir/indexing.h"
#include "ir/visitor.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace aotc {

namespace {

/// Enumerated points of one side's accesses, at most: a pair whose loops
/// hold more is left alone (a compile-time bound, far above a register
/// tile's few thousand).
constexpr int64_t kMaxPoints = int64_t{1} << 20;

/// The most work-items of the first kernel one merged work-item runs.
constexpr int64_t kMaxFirstTiles = 4;

struct ParallelLoop {
  Expr var, extent;
};

/// The kernel's outer Parallel loops (dimension 0, from 0), outermost
/// first, and the statement inside them; false where a Parallel loop of
/// another dimension or one inside the body exists.
bool peelParallel(const Stmt &body, std::vector<ParallelLoop> &loops,
                  Stmt &inner) {
  Stmt s = body;
  while (const For *f = s.as<For>()) {
    if (f->forKind != ForKind::Parallel)
      break;
    if (f->dim != 0 || !f->min.isConstValue(0))
      return false;
    loops.push_back({f->var, f->extent});
    s = f->body;
  }
  inner = s;
  struct V : IRVisitor {
    bool parallel = false;
    void visitFor(const For *op) override {
      parallel |= op->forKind == ForKind::Parallel;
      IRVisitor::visitFor(op);
    }
  } v;
  v.visit(inner);
  return !loops.empty() && !v.parallel;
}

/// A serial loop around an access: its variable and constant bounds.
struct SerialLoop {
  Expr var;
  int64_t min = 0, extent = 0;
};

/// One store (of the first kernel) or load (of the second) of the chained
/// buffer: its indices with the lets above it substituted, the elements it
/// covers along the last dimension, and its serial loops, outermost first.
struct BufferUse {
  std::vector<Expr> indices;
  int lanes = 1, stride = 1;
  std::vector<SerialLoop> loops;
  /// The conditions of the ifs around it (negated in an else arm), with
  /// the lets above it substituted: the access runs where all hold.
  std::vector<Expr> conditions;
};

/// The stores (\p stores) or the loads of \p buffer in a kernel body, each
/// with the conditions it runs under (a partial tile's rows). `ok` is false
/// where one lies inside a loop whose bounds are not constants, where the
/// first kernel also reads the buffer or the second writes it, or where the
/// body holds what the proof cannot follow (a finite-or-sum's own loop
/// variables, a barrier).
class UseCollector : public IRVisitor {
public:
  UseCollector(std::string buffer, bool stores)
      : buffer_(std::move(buffer)), stores_(stores) {}
  std::vector<BufferUse> uses;
  bool ok = true;

protected:
  void visitFor(const For *op) override {
    int64_t mn = 0, ext = 0;
    if (op->forKind != ForKind::Serial || !op->min.isConst(mn) ||
        !op->extent.isConst(ext)) {
      // A loop without constant bounds is fine where it holds no use
      // (record refuses one inside).
      ++opaque_;
      IRVisitor::visitFor(op);
      --opaque_;
      return;
    }
    loops_.push_back({op->var, mn, ext});
    IRVisitor::visitFor(op);
    loops_.pop_back();
  }
  void visitLetStmt(const LetStmt *op) override {
    visit(op->value);
    lets_.push_back({op->var, op->value});
    visit(op->body);
    lets_.pop_back();
  }
  void visitIfThenElse(const IfThenElse *op) override {
    visit(op->cond);
    conditions_.push_back(withLets(op->cond));
    visit(op->thenCase);
    conditions_.back() = Not::make(conditions_.back());
    if (op->elseCase.defined())
      visit(op->elseCase);
    conditions_.pop_back();
  }
  void visitStore(const Store *op) override {
    if (op->buffer == buffer_) {
      if (stores_)
        record(op->indices, op->value.lanes(), 1);
      else
        ok = false; // the second kernel writes the chained buffer
    }
    IRVisitor::visitStore(op);
  }
  void visitLoad(const Load *op) override {
    if (op->buffer == buffer_) {
      if (stores_)
        ok = false; // the first kernel reads what it writes
      else
        record(op->indices, 1, 1);
    }
    IRVisitor::visitLoad(op);
  }
  void visitVectorLoad(const VectorLoad *op) override {
    if (op->buffer == buffer_) {
      if (stores_)
        ok = false;
      else
        record(op->indices, op->lanes, op->stride);
    }
    IRVisitor::visitVectorLoad(op);
  }
  // A prefetch reads nothing and cannot fault.
  void visitPrefetch(const Prefetch *) override {}
  void visitFiniteOrSum(const FiniteOrSum *) override { ok = false; }
  void visitBarrier(const Barrier *) override { ok = false; }

private:
  /// \p e with the lets above substituted, innermost first (a let's value
  /// may name the lets above it).
  Expr withLets(Expr e) const {
    for (size_t i = lets_.size(); i-- > 0;)
      e = substitute(e, {lets_[i]});
    return e;
  }
  void record(const std::vector<Expr> &indices, int lanes, int stride) {
    if (opaque_ > 0) {
      ok = false;
      return;
    }
    BufferUse u;
    for (const Expr &e : indices)
      u.indices.push_back(withLets(e));
    u.conditions = conditions_;
    for (const Expr &e : u.indices)
      if (hasIndexCheck(e) || readsMemory(e))
        ok = false;
    for (const Expr &c : u.conditions)
      if (hasIndexCheck(c) || readsMemory(c))
        ok = false;
    u.lanes = lanes;
    u.stride = stride;
    u.loops = loops_;
    uses.push_back(std::move(u));
  }

  std::string buffer_;
  bool stores_;
  std::vector<SerialLoop> loops_;
  VarBindings lets_;
  std::vector<Expr> conditions_;
  int opaque_ = 0;
};

/// An access's flat offset as base + sum of coef * var over the enumerated
/// variables, proven by the simplifier (the remainder simplifies to 0).
struct Affine {
  Expr base;                         ///< at every enumerated variable 0
  std::vector<int64_t> coefficients; ///< one per enumerated variable
};

std::optional<Affine> affineIn(const Expr &flat, const std::vector<Expr> &vars,
                               const RangeEnv &env) {
  VarBindings zero;
  for (const Expr &v : vars)
    zero.emplace_back(v, Expr(int64_t{0}));
  Affine a;
  a.base = simplify(substitute(flat, zero), env);
  Expr rest = flat - a.base;
  for (size_t i = 0; i < vars.size(); ++i) {
    VarBindings at = zero;
    at[i].second = Expr(int64_t{1});
    int64_t c = 0;
    if (!simplify(substitute(flat, at) - a.base, env).isConst(c))
      return std::nullopt;
    a.coefficients.push_back(c);
    rest = rest - Expr(c) * vars[i];
  }
  if (!simplify(rest, env).isConstValue(0))
    return std::nullopt;
  return a;
}

/// Each element offset (from \p base) that \p uses cover, with the sets of
/// conditions (sorted keys of the simplified conjuncts) under which a use
/// covers it: each use's enumerated variables are \p shared (the unmatched
/// work-item variables with their extents, the same for all) and its own
/// serial loops. nullopt where an offset is not a constant or the points
/// exceed kMaxPoints. A condition that simplifies to false at a point
/// drops the point; one that simplifies to true is left out.
using Covered = std::map<int64_t, std::vector<std::vector<std::string>>>;

std::optional<Covered>
covered(const std::vector<BufferUse> &uses, const std::vector<Expr> &shape,
        const std::vector<std::pair<Expr, int64_t>> &shared,
        const VarBindings &matched, const Expr &base, const RangeEnv &env) {
  Covered out;
  int64_t points = 0;
  for (const BufferUse &u : uses) {
    std::vector<Expr> vars;
    std::vector<int64_t> mins, extents;
    for (const auto &[v, ext] : shared) {
      vars.push_back(v);
      mins.push_back(0);
      extents.push_back(ext);
    }
    for (const SerialLoop &l : u.loops) {
      vars.push_back(l.var);
      mins.push_back(l.min);
      extents.push_back(l.extent);
    }
    std::vector<Expr> indices;
    for (const Expr &e : u.indices)
      indices.push_back(substitute(e, matched));
    std::optional<Affine> a = affineIn(linearize(indices, shape), vars, env);
    if (!a)
      return std::nullopt;
    int64_t start = 0;
    if (!simplify(a->base - base, env).isConst(start))
      return std::nullopt;
    // The conditions' variables among the enumerated ones: their values
    // key the simplified conditions (a partial tile's row).
    std::vector<Expr> conditions;
    for (const Expr &c : u.conditions)
      conditions.push_back(substitute(c, matched));
    std::vector<size_t> condVars;
    for (size_t i = 0; i < vars.size(); ++i)
      if (std::any_of(conditions.begin(), conditions.end(), [&](const Expr &c) {
            return usesVar(c, vars[i].as<Var>());
          }))
        condVars.push_back(i);
    std::map<std::vector<int64_t>, std::optional<std::vector<std::string>>>
        keysAt;
    int64_t count = 1;
    for (int64_t e : extents) {
      if (e <= 0)
        count = 0;
      else if (count > kMaxPoints / e)
        return std::nullopt;
      else
        count *= e;
    }
    points += count * u.lanes;
    if (points > kMaxPoints)
      return std::nullopt;
    // Odometer over the variables.
    std::vector<int64_t> at(mins);
    for (int64_t n = 0; n < count; ++n) {
      std::vector<int64_t> condAt;
      for (size_t i : condVars)
        condAt.push_back(at[i]);
      auto it = keysAt.find(condAt);
      if (it == keysAt.end()) {
        std::optional<std::vector<std::string>> keys =
            std::vector<std::string>();
        VarBindings values;
        for (size_t i : condVars)
          values.emplace_back(vars[i], Expr(at[i]));
        for (const Expr &c : conditions) {
          Expr sc = simplify(substitute(c, values), env);
          if (sc.isConstValue(0)) {
            keys = std::nullopt; // never runs here
            break;
          }
          if (!sc.isConstValue(1))
            keys->push_back(exprKey(sc));
        }
        if (keys)
          std::sort(keys->begin(), keys->end());
        it = keysAt.emplace(condAt, keys).first;
      }
      if (it->second) {
        int64_t off = start;
        for (size_t i = 0; i < vars.size(); ++i)
          off += a->coefficients[i] * at[i];
        for (int k = 0; k < u.lanes; ++k) {
          auto &sets = out[off + int64_t{u.stride} * k];
          if (std::find(sets.begin(), sets.end(), *it->second) == sets.end())
            sets.push_back(*it->second);
        }
      }
      for (size_t i = vars.size(); i-- > 0;) {
        if (++at[i] < mins[i] + extents[i])
          break;
        at[i] = mins[i];
      }
    }
  }
  return out;
}

/// True where every element \p read covers, under each set of conditions,
/// is one \p written covers under a subset of those conditions: where the
/// read runs, so did the store.
bool coveredBy(const Covered &read, const Covered &written) {
  for (const auto &[off, readSets] : read) {
    auto w = written.find(off);
    if (w == written.end())
      return false;
    for (const std::vector<std::string> &r : readSets) {
      bool found = false;
      for (const std::vector<std::string> &ws : w->second)
        found |= std::includes(r.begin(), r.end(), ws.begin(), ws.end());
      if (!found)
        return false;
    }
  }
  return true;
}

/// The coefficient of \p var in the flat offset of \p u (other enumerated
/// variables \p others at 0): a constant, or undefined.
std::optional<int64_t> coefficientOf(const BufferUse &u,
                                     const std::vector<Expr> &shape,
                                     const Expr &var,
                                     const std::vector<Expr> &others,
                                     const RangeEnv &env) {
  VarBindings zero;
  for (const Expr &v : others)
    if (!v.sameAs(var))
      zero.emplace_back(v, Expr(int64_t{0}));
  for (const SerialLoop &l : u.loops)
    zero.emplace_back(l.var, Expr(int64_t{0}));
  Expr flat = linearize(u.indices, shape);
  VarBindings at0 = zero, at1 = zero;
  at0.emplace_back(var, Expr(int64_t{0}));
  at1.emplace_back(var, Expr(int64_t{1}));
  int64_t c = 0;
  if (!simplify(substitute(flat, at1) - substitute(flat, at0), env).isConst(c))
    return std::nullopt;
  return c;
}

std::vector<Expr> varsOf(const std::vector<ParallelLoop> &loops) {
  std::vector<Expr> out;
  for (const ParallelLoop &l : loops)
    out.push_back(l.var);
  return out;
}

bool sameShape(const std::vector<Expr> &a, const std::vector<Expr> &b,
               const RangeEnv &env) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!proveEqual(a[i], b[i], env))
      return false;
  return true;
}

/// Rewrites every access of \p buffer to one index into its flat shape.
class Flatten : public IRMutator {
public:
  Flatten(std::string buffer, std::vector<Expr> shape)
      : buffer_(std::move(buffer)), shape_(std::move(shape)) {}

protected:
  Expr mutateLoad(const Load *op, const Expr &self) override {
    Expr e = IRMutator::mutateLoad(op, self);
    const Load *l = e.as<Load>();
    if (l->buffer != buffer_)
      return e;
    return Load::make(l->type, l->buffer, {linearize(l->indices, shape_)});
  }
  Expr mutateVectorLoad(const VectorLoad *op, const Expr &self) override {
    Expr e = IRMutator::mutateVectorLoad(op, self);
    const VectorLoad *l = e.as<VectorLoad>();
    if (l->buffer != buffer_)
      return e;
    return VectorLoad::make(l->type, l->buffer, {linearize(l->indices, shape_)},
                            l->lanes, l->stride);
  }
  Stmt mutateStore(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::mutateStore(op, self);
    const Store *st = s.as<Store>();
    if (st->buffer != buffer_)
      return s;
    return Store::make(st->buffer, {linearize(st->indices, shape_)}, st->value);
  }
  Stmt mutatePrefetch(const Prefetch *op, const Stmt &self) override {
    if (op->buffer != buffer_)
      return self;
    return Prefetch::make(op->buffer, {linearize(op->indices, shape_)});
  }

private:
  std::string buffer_;
  std::vector<Expr> shape_;
};

/// \p inner inside serial loops over \p loops (outermost first), each a
/// former work-item variable with a constant extent; one of extent 1 is
/// replaced by 0.
Stmt serialNest(Stmt inner,
                const std::vector<std::pair<Expr, int64_t>> &loops) {
  for (size_t i = loops.size(); i-- > 0;) {
    const auto &[var, extent] = loops[i];
    if (extent == 1)
      inner = substitute(inner, {{var, Expr(int64_t{0})}});
    else
      inner = For::make(var, Expr(int64_t{0}), Expr(extent), ForKind::Serial, 0,
                        inner);
  }
  return inner;
}

bool isContraction(const Kernel &k) {
  Expected<KernelConfig> c = parseKernelConfig(k.config);
  return c && c->templ == "contraction";
}

/// The merged kernel of \p k1 and \p k2, or nullopt where they may not (or
/// should not) run as one.
std::optional<Kernel> chainPair(const Kernel &k1, const Kernel &k2,
                                const RangeEnv &env, int64_t minItems,
                                Expr &workItemsOut) {
  if (k1.workGroupSize || k2.workGroupSize || !k1.locals.empty() ||
      !k2.locals.empty() || k1.launchIf.defined() || k2.launchIf.defined() ||
      !k1.function.empty() || !k2.function.empty() ||
      k1.indexBits != k2.indexBits || !isContraction(k1) || !isContraction(k2))
    return std::nullopt;
  // The first kernel writes one buffer, which the second reads and does
  // not write; the first reads nothing the second writes.
  std::string chained;
  for (const KernelBuffer &b : k1.buffers)
    if (b.written) {
      if (!chained.empty())
        return std::nullopt;
      chained = b.name;
    }
  const KernelBuffer *b1 = k1.findBuffer(chained);
  const KernelBuffer *b2 = chained.empty() ? nullptr : k2.findBuffer(chained);
  if (!b1 || !b2 || b2->written)
    return std::nullopt;
  for (const KernelBuffer &b : k2.buffers)
    if (b.written && k1.findBuffer(b.name))
      return std::nullopt;
  for (const KernelBuffer &p : k2.privates)
    if (k1.findPrivate(p.name))
      return std::nullopt;

  std::vector<ParallelLoop> p1, p2;
  Stmt inner1, inner2;
  if (!peelParallel(k1.body, p1, inner1) || !peelParallel(k2.body, p2, inner2))
    return std::nullopt;
  UseCollector stores(chained, true), loads(chained, false);
  stores.visit(inner1);
  loads.visit(inner2);
  if (!stores.ok || !loads.ok || stores.uses.empty() || loads.uses.empty())
    return std::nullopt;

  // Match the second kernel's work-item variables that its reads of the
  // buffer depend on with the first kernel's of the same extent and the
  // same coefficient (in flat offsets); every other one runs serially.
  std::vector<Expr> vars1 = varsOf(p1), vars2 = varsOf(p2);
  VarBindings matched; // first kernel's variable -> second's
  std::vector<bool> used1(p1.size(), false), isMatched2(p2.size(), false);
  for (size_t j = 0; j < p2.size(); ++j) {
    std::optional<int64_t> c2 =
        coefficientOf(loads.uses[0], b2->shape, p2[j].var, vars2, env);
    if (!c2)
      return std::nullopt;
    if (*c2 == 0)
      continue;
    for (size_t i = 0; i < p1.size() && !isMatched2[j]; ++i) {
      if (used1[i] || !proveEqual(p1[i].extent, p2[j].extent, env))
        continue;
      std::optional<int64_t> c1 =
          coefficientOf(stores.uses[0], b1->shape, p1[i].var, vars1, env);
      if (c1 && *c1 == *c2) {
        used1[i] = isMatched2[j] = true;
        matched.emplace_back(p1[i].var, p2[j].var);
      }
    }
    if (!isMatched2[j])
      return std::nullopt;
  }
  if (matched.empty())
    return std::nullopt;
  // The unmatched work-item variables become serial loops: constant
  // extents only.
  std::vector<std::pair<Expr, int64_t>> serial1, serial2;
  for (size_t i = 0; i < p1.size(); ++i) {
    if (used1[i])
      continue;
    int64_t e = 0;
    if (!simplify(p1[i].extent, env).isConst(e))
      return std::nullopt;
    serial1.emplace_back(p1[i].var, e);
  }
  // The first kernel's other tiles all run in each work-item, which reads
  // all of that kernel's weights: a narrow projection (1-3 tiles of 32
  // channels in MobileNetV2), not a transformer's 3072-wide GEMM (96).
  int64_t serialTiles = 1;
  for (const auto &[v, e] : serial1)
    serialTiles *= e;
  if (serialTiles > kMaxFirstTiles)
    return std::nullopt;
  Expr workItems = Expr(int64_t{1});
  for (size_t j = 0; j < p2.size(); ++j) {
    if (isMatched2[j]) {
      workItems = workItems * p2[j].extent;
      continue;
    }
    int64_t e = 0;
    if (!simplify(p2[j].extent, env).isConst(e))
      return std::nullopt;
    serial2.emplace_back(p2[j].var, e);
  }
  // At the planned sizes (each symbol at 1).
  workItems = simplify(workItems, env);
  if (plannedExtent(workItems, 1) < minItems)
    return std::nullopt;
  workItemsOut = workItems;

  // The proof: every element a work-item of the second kernel reads is one
  // the same work-item of the first stores.
  VarBindings none;
  std::vector<Expr> storeIdx;
  for (const Expr &e : stores.uses[0].indices)
    storeIdx.push_back(substitute(e, matched));
  VarBindings zero;
  for (const auto &[v, e] : serial1)
    zero.emplace_back(v, Expr(int64_t{0}));
  for (const SerialLoop &l : stores.uses[0].loops)
    zero.emplace_back(l.var, Expr(int64_t{0}));
  Expr base = simplify(substitute(linearize(storeIdx, b1->shape), zero), env);
  std::optional<Covered> written =
      covered(stores.uses, b1->shape, serial1, matched, base, env);
  std::optional<Covered> read =
      covered(loads.uses, b2->shape, serial2, none, base, env);
  if (!written || !read || !coveredBy(*read, *written))
    return std::nullopt;

  // The merged kernel: the second kernel's matched work-item loops around
  // the first kernel's body (its other tiles serial), then the second's.
  Stmt first = serialNest(substitute(inner1, matched), serial1);
  Stmt second = serialNest(inner2, serial2);
  Kernel k;
  k.name = kernelNumber(k1.name) + "_" + k2.name;
  k.buffers = k1.buffers;
  for (const KernelBuffer &b : k2.buffers) {
    auto it =
        std::find_if(k.buffers.begin(), k.buffers.end(),
                     [&](const KernelBuffer &x) { return x.name == b.name; });
    if (it == k.buffers.end()) {
      k.buffers.push_back(b);
      continue;
    }
    it->written |= b.written;
    if (sameShape(it->shape, b.shape, env))
      continue;
    // The two kernels view the buffer in different shapes (collapsed
    // dimensions): both index it flat.
    if (!proveEqual(product(it->shape), product(b.shape), env))
      return std::nullopt;
    first = Flatten(b.name, it->shape).mutate(first);
    second = Flatten(b.name, b.shape).mutate(second);
    it->shape = {simplify(product(b.shape), env)};
  }
  Stmt body = Block::make({first, second});
  for (size_t j = p2.size(); j-- > 0;)
    if (isMatched2[j])
      body = For::make(p2[j].var, Expr(int64_t{0}), p2[j].extent,
                       ForKind::Parallel, 0, body);
  k.body = body;
  k.symbols = k1.symbols;
  for (const Expr &s : k2.symbols)
    if (std::none_of(k.symbols.begin(), k.symbols.end(),
                     [&](const Expr &x) { return x.sameAs(s); }))
      k.symbols.push_back(s);
  k.indexBits = k1.indexBits;
  k.reportsErrors = k1.reportsErrors || k2.reportsErrors;
  k.summary = k1.summary + ", then " + k2.summary;
  k.config = k2.config;
  k.privates = k1.privates;
  k.privates.insert(k.privates.end(), k2.privates.begin(), k2.privates.end());
  // Neither is a chain itself: a chain writes two buffers (never a first
  // kernel) and is never visited as a second (chainKernels moves past it).
  k.chained = {{k1.name, k1.config}, {k2.name, k2.config}};
  return k;
}

} // namespace

std::string kernelNumber(const std::string &name) {
  size_t end = 1;
  while (end < name.size() &&
         std::isdigit(static_cast<unsigned char>(name[end])))
    ++end;
  return name.substr(0, end);
}

int chainKernels(LoopModule &m, const RangeEnv &env, int64_t units,
                 int64_t sizeVariantAt) {
  const int64_t minItems = minChainWorkItems(units);
  int merged = 0;
  for (size_t i = 0; i + 1 < m.kernels.size();) {
    bool syncAfterFirst = std::any_of(
        m.syncs.begin(), m.syncs.end(), [&](const LoopModule::Sync &s) {
          return s.afterKernel == static_cast<int>(i);
        });
    Expr items;
    std::optional<Kernel> k =
        syncAfterFirst
            ? std::nullopt
            : chainPair(m.kernels[i], m.kernels[i + 1], env, minItems, items);
    if (!k) {
      ++i;
      continue;
    }
    ++merged;
    const int64_t lo = plannedExtent(items, 1);
    const int64_t hi =
        sizeVariantAt > 1 ? plannedExtent(items, sizeVariantAt) : lo;
    if (hi <= lo) {
      // As many work-items at every size: the chain replaces the pair.
      m.kernels[i] = std::move(*k);
      m.kernels.erase(m.kernels.begin() + static_cast<long>(i) + 1);
      for (LoopModule::Sync &s : m.syncs)
        if (s.afterKernel > static_cast<int>(i))
          --s.afterKernel;
      // The chain writes two buffers, which the pair test refuses as a
      // first kernel: go on with the next pair.
      ++i;
      continue;
    }
    // Size variants (size_variants.cpp): the chain where the work-items are
    // fewer than the geometric mean of their counts at the two planning
    // points (a batch of 1 or 2, where launches weigh), the pair apart
    // from there on (a batch of 8 ran MobileNetV2 5-20% slower chained:
    // the pair's own parallelism and its in-place stores pay there).
    const Expr threshold(geometricMeanCeil(lo, hi));
    k->launchIf = cmp(BinOp::LT, items, threshold);
    k->summary += ", launched when " + printExpr(k->launchIf);
    for (size_t j : {i, i + 1}) {
      Kernel &apart = m.kernels[j];
      apart.launchIf = cmp(BinOp::GE, items, threshold);
      apart.summary += ", launched when " + printExpr(apart.launchIf);
    }
    m.kernels.insert(m.kernels.begin() + static_cast<long>(i), std::move(*k));
    for (LoopModule::Sync &s : m.syncs)
      if (s.afterKernel >= static_cast<int>(i))
        ++s.afterKernel;
    i += 3;
  }
  return merged;
}

} // namespace aotc
