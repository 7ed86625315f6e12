/// \file
/// The fused attention kernel (AttentionNest, TensorDef::attention): one
/// work-item per query row walks the keys once with an online softmax
/// (flash attention's recurrence), keeping the row's running maximum m,
/// its sum of exponentials l and its weighted sum of value rows acc:
///
///   s     = scores of a block of keys (a vector, one key per lane)
///   m'    = max(m, max over the lanes of s)
///   c     = exp(m - m'),  p = exp(s - m')
///   l     = l * c + sum of p,  acc = acc * c + sum over lanes k of p[k] * V[k]
///
/// and stores acc / l. The scores never reach memory. A block's scores are
/// one vector (its keys' elements of the key matrix read contiguously, the
/// fusion planner's layout for contractions gives K^T that layout), the
/// value row a few vectors; where either does not vectorize, or for the
/// keys after the last whole block, one key at a time. A maximum of -inf
/// (every key so far masked out) is taken as 0 in the exponentials, so a
/// masked block contributes nothing instead of NaN; a row whose every key
/// is -inf ends 0 / 0 = NaN, as Softmax gives. With no keys the result is
/// 0, as the unfused MatMul's empty sum.
///
/// On GPUs the query rows are the innermost work-items, so a warp's
/// neighbours read the same keys and values (broadcast loads).
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/vectorize.h"

#include "ir/visitor.h"

#include <limits>
#include <map>

namespace aotc {

namespace {

/// The deepest score sum unrolled (its query elements then held per row).
constexpr int64_t kMaxUnrolledDepth = 128;

/// One vector (or scalar) chunk of the value row: columns c0 .. c0+width-1.
struct Chunk {
  int64_t c0;
  int width;
  Expr acc;
};

Expr call(const std::string &name, std::vector<Expr> args) {
  DType t = args[0].type();
  return Call::make(t, name, std::move(args));
}

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

/// \p s as a vector of \p lanes (a scalar broadcast).
Expr widen(const Expr &s, int lanes) {
  return lanes > 1 && s.lanes() == 1 ? Broadcast::make(s, lanes) : s;
}

/// The lanes of \p v folded by \p name (fmax) or added (empty name).
Expr across(const Expr &v, const std::string &name) {
  if (v.lanes() == 1)
    return v;
  std::vector<Expr> parts;
  for (int k = 0; k < v.lanes(); ++k)
    parts.push_back(Lane::make(v, k));
  // A balanced tree: fewer dependent steps than a chain.
  while (parts.size() > 1) {
    std::vector<Expr> next;
    for (size_t k = 0; k + 1 < parts.size(); k += 2)
      next.push_back(name.empty() ? bin(BinOp::Add, parts[k], parts[k + 1])
                                  : call(name, {parts[k], parts[k + 1]}));
    if (parts.size() % 2)
      next.push_back(parts.back());
    parts = std::move(next);
  }
  return parts[0];
}

class Builder {
public:
  Builder(const AttentionNest &nest, const RangeEnv &env)
      : nest_(nest), t_(nest.type) {
    int rank = static_cast<int>(nest.shape.size());
    for (int k = 0; k < rank; ++k)
      idx_.push_back(Var::make("i" + std::to_string(k)));
    ranges_ = env;
    setStaticRanges(ranges_, idx_, nest.shape);
    m_ = Var::make("rmax", t_);
    l_ = Var::make("rsum", t_);
  }

  /// The output index at column \p col.
  std::vector<Expr> at(const Expr &col) const {
    std::vector<Expr> a = idx_;
    a.back() = col;
    return a;
  }

  /// The value row's chunks: vectors of up to \p lanes where the value
  /// vectorizes along the columns, else scalars.
  void planChunks(int64_t columns, int lanes) {
    Expr key = Var::make("j");
    RangeEnv env = ranges_;
    setStaticRanges(env, {key}, {nest_.keys});
    for (int64_t c = 0; c < columns;) {
      int w = lanes >= 4 ? groupWidth(c, columns, lanes) : 1;
      if (w > 1) {
        Expr lane = Var::make("lane");
        env.set(lane, Range{0, w - 1});
        if (!vectorizeLanes(nest_.value(at(Expr(c) + lane), key), lane, w, env)
                 .defined())
          w = 1;
      }
      chunks_.push_back(Chunk{c, w, Var::make("acc", t_, w)});
      c += w;
    }
  }

  /// The score term at depth \p d for the key \p key, its factors that
  /// do not read \p keyVar or \p lane (the query's element) read once
  /// per row into a hoisted local where the depth loop is unrolled.
  Expr scoreTerm(const std::vector<Expr> &row, const Expr &key,
                 const Expr &d, const Expr &keyVar, const Expr &lane,
                 bool hoist) {
    Expr term = nest_.score(row, key, d);
    if (!hoist)
      return term;
    std::vector<Expr> fs;
    collectFactors(term, fs);
    Expr invariant, varying;
    for (const Expr &f : fs) {
      Expr &side = usesVar(f, keyVar.as<Var>()) || usesVar(f, lane.as<Var>()) ? varying
                                                               : invariant;
      side = side.defined() ? bin(BinOp::Mul, side, f) : f;
    }
    if (!invariant.defined() || !varying.defined() ||
        invariant.as<FloatImm>())
      return term;
    const std::string key0 = exprKey(invariant);
    auto it = hoistedByKey_.find(key0);
    if (it == hoistedByKey_.end()) {
      Expr v = Var::make("q", t_);
      hoisted_.push_back({v, invariant});
      it = hoistedByKey_.emplace(key0, v).first;
    }
    return bin(BinOp::Mul, it->second, varying);
  }

  /// The update by the keys j0 .. j0 + lanes - 1 (one key when lanes is
  /// 1; j0 reads the loop variable \p keyVar); undefined where the
  /// block's scores do not vectorize.
  Stmt keyBlock(const Expr &j0, const Expr &keyVar, int lanes,
                const RangeEnv &outer) {
    Expr lane = Var::make("lane"), d = Var::make("d");
    RangeEnv env = outer;
    setStaticRanges(env, {d}, {nest_.depth});
    Expr key = j0;
    if (lanes > 1) {
      env.set(lane, Range{0, lanes - 1});
      key = j0 + lane;
    }
    std::vector<Expr> row = at(Expr(0));
    Expr dot = Var::make("dot", t_, lanes);
    // A static depth up to kMaxUnrolledDepth: unrolled, the query's
    // elements read once per row (a GPU's work-items each read their own
    // row, uncoalesced) instead of once per key block. Measured, it moved
    // little: 0.138 against 0.146 ms per BERT layer on the H200 (a loop:
    // 0.135), 1.25 against 1.27 ms on this CPU (docs/PERFORMANCE.md).
    int64_t depth = 0;
    const bool unroll = nest_.depth.isConst(depth) && depth >= 1 &&
                        depth <= kMaxUnrolledDepth;
    std::vector<Expr> depths;
    if (unroll)
      for (int64_t k = 0; k < depth; ++k)
        depths.push_back(Expr(k));
    else
      depths.push_back(d);
    std::vector<Stmt> steps;
    for (const Expr &dk : depths) {
      Expr term = scoreTerm(row, key, dk, keyVar, lane, unroll);
      if (lanes > 1) {
        term = vectorizeLanes(term, lane, lanes, env);
        if (!term.defined())
          return Stmt();
        term = widen(term, lanes);
      }
      steps.push_back(LocalAssign::make(dot, bin(BinOp::Add, dot, term)));
    }
    Stmt sum = unroll ? Block::make(steps)
                      : For::make(d, Expr(0), nest_.depth, ForKind::Serial, 0,
                                  steps[0]);
    Expr x = Var::make("x", t_);
    Expr scored = nest_.scoreFinish(row, key, x);
    if (lanes > 1) {
      scored = vectorizeLanes(scored, lane, lanes, env,
                              {{x.as<Var>()->id, dot}});
      if (!scored.defined())
        return Stmt();
      scored = widen(scored, lanes);
    } else {
      scored = substitute(scored, {{x, dot}});
    }
    Expr s = Var::make("score", t_, lanes);
    Expr mNew = Var::make("mnew", t_), mSafe = Var::make("msafe", t_);
    Expr c = Var::make("corr", t_), p = Var::make("p", t_, lanes);
    const Expr ninf = literal(t_, -std::numeric_limits<double>::infinity());
    std::vector<Stmt> update;
    update.push_back(LocalAssign::make(
        l_, bin(BinOp::Add, bin(BinOp::Mul, l_, c), across(p, ""))));
    for (const Chunk &ch : chunks_) {
      Expr acc = bin(BinOp::Mul, ch.acc, widen(c, ch.width));
      for (int k = 0; k < lanes; ++k) {
        Expr kk = lanes > 1 ? j0 + Expr(k) : j0;
        Expr pk = lanes > 1 ? Lane::make(p, k) : p;
        Expr v;
        if (ch.width > 1) {
          Expr vl = Var::make("lane");
          RangeEnv venv = outer;
          venv.set(vl, Range{0, ch.width - 1});
          v = vectorizeLanes(nest_.value(at(Expr(ch.c0) + vl), kk), vl,
                             ch.width, venv);
          if (!v.defined())
            return Stmt();
          v = widen(v, ch.width);
        } else {
          v = nest_.value(at(Expr(ch.c0)), kk);
        }
        acc = bin(BinOp::Add, acc, bin(BinOp::Mul, widen(pk, ch.width), v));
      }
      update.push_back(LocalAssign::make(ch.acc, acc));
    }
    update.push_back(LocalAssign::make(m_, mNew));
    Stmt body = Block::make(update);
    body = LetStmt::make(
        p, call("exp", {bin(BinOp::Sub, s, widen(mSafe, lanes))}), body);
    body = LetStmt::make(c, call("exp", {bin(BinOp::Sub, m_, mSafe)}), body);
    body = LetStmt::make(
        mSafe, Select::make(bin(BinOp::EQ, mNew, ninf), literal(t_, 0), mNew),
        body);
    body = LetStmt::make(mNew, call("fmax", {m_, across(s, "fmax")}), body);
    body = LetStmt::make(s, scored, body);
    return LocalDecl::make(dot, widen(literal(t_, 0), lanes),
                           Block::make({sum, body}));
  }

  /// The keys [from, from + count) one at a time; undefined where the
  /// value row does not vectorize as planChunks found.
  Stmt singleKeys(const Expr &from, const Expr &count) {
    Expr j = Var::make("j");
    RangeEnv env = ranges_;
    setStaticRanges(env, {j}, {nest_.keys});
    Stmt step = keyBlock(j, j, 1, env);
    if (!step.defined())
      return Stmt();
    return For::make(j, from, count, ForKind::Serial, 0, step);
  }

  /// The keys in blocks of \p lanes, the rest one at a time; undefined
  /// where a block does not vectorize.
  Stmt blockedKeys(int lanes) {
    Expr jb = Var::make("jb");
    Expr blocks = floorDiv(nest_.keys, Expr(lanes));
    RangeEnv env = ranges_;
    if (auto b = boundsOf(blocks, ranges_); b && b->max >= 1)
      env.set(jb, Range{0, b->max - 1});
    Stmt block = keyBlock(jb * Expr(lanes), jb, lanes, env);
    if (!block.defined())
      return Stmt();
    Expr whole = blocks * Expr(lanes);
    Stmt rest = singleKeys(whole, nest_.keys - whole);
    if (!rest.defined())
      return Stmt();
    return Block::make(
        {For::make(jb, Expr(0), blocks, ForKind::Serial, 0, block), rest});
  }

  /// The row's stores: acc / l per chunk (0 where there are no keys).
  Stmt stores() {
    std::vector<Stmt> out;
    bool keysMayBeZero = true;
    if (auto b = boundsOf(nest_.keys, ranges_); b && b->min >= 1)
      keysMayBeZero = false;
    for (const Chunk &ch : chunks_) {
      Expr v = bin(BinOp::Div, ch.acc, widen(l_, ch.width));
      if (keysMayBeZero)
        v = Select::make(bin(BinOp::GT, nest_.keys, Expr(0)), v,
                         widen(literal(t_, 0), ch.width));
      if (ch.width > 1) {
        // One vector store where the finish vectorizes, else lane by lane.
        Expr value = Var::make("row", t_, ch.width);
        Stmt vs = vectorFinish(
            nest_.finish, t_, [&](const Expr &col) { return at(col); },
            Expr(ch.c0), value, ch.width, ranges_);
        if (!vs.defined()) {
          std::vector<Stmt> lanes;
          for (int k = 0; k < ch.width; ++k)
            lanes.push_back(
                nest_.finish(at(Expr(ch.c0 + k)), Lane::make(value, k)));
          vs = Block::make(lanes);
        }
        out.push_back(LetStmt::make(value, v, vs));
        continue;
      }
      out.push_back(nest_.finish(at(Expr(ch.c0)), v));
    }
    return Block::make(out);
  }

  Stmt build(int keyLanes, bool *vectorized) {
    int64_t columns = 0;
    nest_.shape.back().isConst(columns);
    planChunks(columns, 16);
    Stmt keys;
    if (keyLanes > 1 && isVectorWidth(keyLanes))
      keys = blockedKeys(keyLanes);
    *vectorized = keys.defined();
    if (!keys.defined())
      keys = singleKeys(Expr(0), nest_.keys);
    if (!keys.defined())
      return Stmt();
    Stmt s = Block::make({keys, stores()});
    for (size_t k = hoisted_.size(); k-- > 0;)
      s = LetStmt::make(hoisted_[k].first, hoisted_[k].second, s);
    for (const Chunk &ch : chunks_)
      s = LocalDecl::make(ch.acc, widen(literal(t_, 0), ch.width), s);
    s = LocalDecl::make(l_, literal(t_, 0), s);
    s = LocalDecl::make(
        m_, literal(t_, -std::numeric_limits<double>::infinity()), s);
    int rank = static_cast<int>(idx_.size());
    for (int k = rank - 2; k >= 0; --k)
      s = For::make(idx_[k], Expr(0), nest_.shape[k], ForKind::Parallel, 0, s);
    return s;
  }

private:
  const AttentionNest &nest_;
  const DType t_;
  std::vector<Expr> idx_;
  RangeEnv ranges_;
  Expr m_, l_;
  std::vector<Chunk> chunks_;
  /// The query's elements read once per row: (local, value) in order.
  std::vector<std::pair<Expr, Expr>> hoisted_;
  std::map<std::string, Expr> hoistedByKey_;
};

} // namespace

Stmt attentionKernel(const AttentionNest &nest, int keyLanes,
                     const RangeEnv &env, bool *vectorized) {
  bool used = false;
  Stmt s = Builder(nest, env).build(keyLanes, &used);
  if (vectorized)
    *vectorized = used;
  return s;
}

int attentionKeyLanes(const DeviceProfile &target) {
  // GPUs: 8 keys per block (a warp reads them as one broadcast each).
  if (target.family == "gpu")
    return 8;
  int lanes = explicitVectorLanes(target);
  return lanes >= 4 ? lanes : 0;
}

} // namespace aotc
