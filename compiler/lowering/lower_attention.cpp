/// \file
/// Fused attention: MatMul(A, B) -> Add / Sub / Mul / Div by operands that
/// broadcast to the scores (a scale, a mask), Where by a Bool mask that
/// does (a causal mask), Identity and Casts to float32 -> Softmax over the last axis
/// -> MatMul(., V) lowered as one def (TensorDef::attention), whose kernel
/// (compiler/schedule/attention.cpp) computes each query row's softmax
/// online over blocks of keys and never stores the score matrix.
///
/// Matched where it is exact in meaning: float32 throughout, every value
/// between the two MatMuls read by the next op of the chain alone and not a
/// graph output, the chain keeping the scores' shape, the Softmax over the
/// scores' last axis (every opset: with axis = rank - 1 the coerced 2-D
/// softmax of opsets before 13 is the same), and the value depth (V's last
/// dimension) static and at most kMaxValueDepth, since a kernel keeps a row
/// of it in registers, and the keys and the depth at most kMaxSumTerms.
/// Anything else is lowered op by op as before.
#include "compiler/lowering/lowering.h"

#include "ir/simplify.h"

#include <optional>

namespace aotc {

namespace {

/// The longest value row one work-item accumulates.
constexpr int64_t kMaxValueDepth = 256;
/// The most ops between the scores' MatMul and the Softmax.
constexpr size_t kMaxChain = 8;
/// The most keys and the deepest scores fused: the kernel's sums over the
/// keys (the softmax's denominator, the value rows) and over the depth keep
/// one float accumulator each, which holds its precision for this many
/// terms (kSumBlock, compiler/schedule/schedule.h: longer sums elsewhere
/// accumulate in two levels). Symbols' default ranges end here.
constexpr int64_t kMaxSumTerms = 65536;

/// One op of the chain: the chain's value \p op the other operand (or the
/// other operand \p op the chain's value when !chainFirst); for a Where
/// (\p cond set), the chain's value where cond holds (chainFirst) or where
/// it does not, the other operand elsewhere.
struct Step {
  const Node *node = nullptr;
  BinOp op = BinOp::Add;
  const Value *other = nullptr;
  bool chainFirst = true;
  const Value *cond = nullptr;
};

struct Match {
  const Node *scores = nullptr; ///< MatMul(A, B)
  std::vector<Step> steps;      ///< from the scores outwards
  const Node *softmax = nullptr;
};

bool isF32(const Value *v) { return v && v->type().dtype == DType::Float32; }

/// \p v is read by \p reader alone (once) and is not a graph output.
bool onlyFeeds(const Graph &g, const Value *v, const Node *reader) {
  return v->users().size() == 1 && v->users()[0] == reader && !g.isOutput(v);
}

bool sameDims(const std::vector<Expr> &a, const std::vector<Expr> &b,
              const RangeEnv &env) {
  if (a.size() != b.size())
    return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!proveEqual(a[k], b[k], env))
      return false;
  return true;
}

/// \p v broadcasts to \p dims (NumPy, right-aligned) without growing them.
bool broadcastsTo(const Value *v, const std::vector<Expr> &dims,
                  const RangeEnv &env) {
  const std::vector<Expr> &d = v->type().dims;
  if (d.size() > dims.size())
    return false;
  size_t off = dims.size() - d.size();
  for (size_t k = 0; k < d.size(); ++k)
    if (!d[k].isConstValue(1) && !proveEqual(d[k], dims[off + k], env))
      return false;
  return true;
}

std::optional<BinOp> chainOp(OpKind k) {
  switch (k) {
  case OpKind::Add:
    return BinOp::Add;
  case OpKind::Sub:
    return BinOp::Sub;
  case OpKind::Mul:
    return BinOp::Mul;
  case OpKind::Div:
    return BinOp::Div;
  default:
    return std::nullopt;
  }
}

/// An op that returns its float32 input unchanged: Identity, a Cast to
/// float32 (ONNX's Attention function body writes both around its Softmax).
bool isNoOp(const Node *n) {
  return n && n->numInputs() >= 1 && isF32(n->input(0)) &&
         n->outputs().size() == 1 && isF32(n->output(0)) &&
         (n->op() == OpKind::Identity || n->op() == OpKind::Cast);
}

bool continuesChain(const Value *v) {
  const Node *p = v->producer();
  return p && (p->op() == OpKind::MatMul || chainOp(p->op()) || isNoOp(p) ||
               p->op() == OpKind::Where);
}

/// The fewest chain ops (of the scores' shape) from \p v up to a MatMul,
/// at most \p limit; -1 if none is that near.
int stepsToMatMul(const Value *v, const std::vector<Expr> &dims,
                  const RangeEnv &env, size_t limit) {
  const Node *n = v ? v->producer() : nullptr;
  if (!n || !sameDims(v->type().dims, dims, env))
    return -1;
  if (n->op() == OpKind::MatMul)
    return 0;
  const bool where = n->op() == OpKind::Where;
  if (limit == 0 || (!chainOp(n->op()) && !isNoOp(n) && !where))
    return -1;
  int best = -1;
  for (size_t k = where ? 1 : 0; k < n->numInputs() && k < (where ? 3 : 2);
       ++k) {
    int d = stepsToMatMul(n->input(k), dims, env, limit - 1);
    if (d >= 0 && (best < 0 || d + 1 < best))
      best = d + 1;
  }
  return best;
}

std::optional<Match> matchAttention(const Node &pv, const Graph &g,
                                    const RangeEnv &env) {
  if (pv.numInputs() != 2 || pv.outputs().size() != 1)
    return std::nullopt;
  const Value *p = pv.input(0), *v = pv.input(1), *out = pv.output(0);
  if (!isF32(p) || !isF32(v) || !isF32(out) || p->type().rank() < 2 ||
      v->type().rank() < 2)
    return std::nullopt;
  Match m;
  const Node *sm = p->producer();
  const Node *smReader = &pv;
  for (size_t k = 0; isNoOp(sm) && k < kMaxChain; ++k) {
    if (!onlyFeeds(g, p, smReader))
      return std::nullopt;
    smReader = sm;
    p = sm->input(0);
    sm = p->producer();
  }
  if (!sm || sm->op() != OpKind::Softmax || !onlyFeeds(g, p, smReader))
    return std::nullopt;
  const Value *x = sm->input(0);
  int rank = x->type().rank();
  int64_t axis = sm->intAttr("axis");
  if (!isF32(x) || (axis != rank - 1 && axis != -1))
    return std::nullopt;
  m.softmax = sm;
  const std::vector<Expr> &dims = x->type().dims;
  const Value *cur = x;
  const Node *reader = sm;
  for (size_t depth = 0;; ++depth) {
    const Node *n = cur->producer();
    if (!n || depth > kMaxChain || !onlyFeeds(g, cur, reader))
      return std::nullopt;
    if (n->op() == OpKind::MatMul) {
      m.scores = n;
      break;
    }
    if (isNoOp(n)) {
      reader = n;
      cur = n->input(0);
      continue;
    }
    std::optional<BinOp> op = chainOp(n->op());
    const bool where = n->op() == OpKind::Where;
    if ((!op && !where) || n->numInputs() != (where ? 3u : 2u) ||
        !sameDims(n->output(0)->type().dims, dims, env))
      return std::nullopt;
    // Where's condition: a Bool that broadcasts onto the scores.
    const int first = where ? 1 : 0;
    if (where && (n->input(0)->type().dtype != DType::Bool ||
                  !broadcastsTo(n->input(0), dims, env)))
      return std::nullopt;
    // The chain goes on through the operand of the scores' full shape whose
    // producer continues it; the other one broadcasts onto it.
    std::vector<int> options;
    for (int k = first; k < first + 2; ++k) {
      const Value *in = n->input(k), *other = n->input(2 * first + 1 - k);
      if (isF32(in) && isF32(other) && in != other &&
          sameDims(in->type().dims, dims, env) && continuesChain(in) &&
          broadcastsTo(other, dims, env))
        options.push_back(k);
    }
    if (options.size() == 2) {
      // Both could be (a full-shape mask computed by ops of the chain's
      // kinds): the one nearer a MatMul, if one is.
      int d0 = stepsToMatMul(n->input(first), dims, env, kMaxChain);
      int d1 = stepsToMatMul(n->input(first + 1), dims, env, kMaxChain);
      if (d0 == d1)
        return std::nullopt;
      options = {d1 < 0 || (d0 >= 0 && d0 < d1) ? first : first + 1};
    }
    if (options.empty())
      return std::nullopt;
    int k = options[0];
    Step step{n, op.value_or(BinOp::Add), n->input(2 * first + 1 - k),
              k == first, where ? n->input(0) : nullptr};
    m.steps.push_back(step);
    reader = n;
    cur = n->input(k);
  }
  std::reverse(m.steps.begin(), m.steps.end());
  const Node *s = m.scores;
  if (s->numInputs() != 2 || s->input(0)->type().rank() < 2 ||
      s->input(1)->type().rank() < 2 || !isF32(s->input(0)) ||
      !isF32(s->input(1)) || !sameDims(s->output(0)->type().dims, dims, env))
    return std::nullopt;
  auto bounded = [&](const Expr &extent) {
    std::optional<Range> r = boundsOf(extent, env);
    return r && r->max <= kMaxSumTerms;
  };
  if (!bounded(dims.back()) || !bounded(s->input(0)->type().dims.back()))
    return std::nullopt;
  const std::vector<Expr> &vd = v->type().dims;
  int64_t e;
  if (!vd.back().isConst(e) || e < 1 || e > kMaxValueDepth ||
      !proveEqual(vd[vd.size() - 2], dims.back(), env))
    return std::nullopt;
  return m;
}

} // namespace

Expected<bool> lowerFusedAttention(const Node &n, LowerCtx &ctx) {
  if (!ctx.options().fuseAttention)
    return false;
  std::optional<Match> m = matchAttention(n, ctx.graph(), ctx.env());
  if (!m)
    return false;
  const Value *out = n.output(0), *v = n.input(1);
  const Value *a = m->scores->input(0), *b = m->scores->input(1);
  const std::vector<Expr> &od = out->type().dims;
  const std::vector<Expr> &sd = m->scores->output(0)->type().dims;
  int ro = static_cast<int>(od.size());
  std::vector<Expr> o = ctx.idxVars(ro);
  const Expr q = o[ro - 2], key = ctx.rvar(0), depth = ctx.rvar(1);
  // The scores' index at query q, key j: their batch dims under the
  // output's.
  std::vector<Expr> outBatch(od.begin(), od.end() - 2);
  std::vector<Expr> outBatchIdx(o.begin(), o.end() - 2);
  std::vector<Expr> sIdx =
      matMulBatchIndex(sd, outBatch, outBatchIdx, ctx.env());
  std::vector<Expr> sBatch(sd.begin(), sd.end() - 2);
  std::vector<Expr> ai =
      matMulBatchIndex(a->type().dims, sBatch, sIdx, ctx.env());
  ai.push_back(q);
  ai.push_back(depth);
  std::vector<Expr> bi =
      matMulBatchIndex(b->type().dims, sBatch, sIdx, ctx.env());
  bi.push_back(depth);
  bi.push_back(key);
  sIdx.push_back(q);
  sIdx.push_back(key);

  TensorDef d;
  d.kind = TensorDef::Kind::Reduction;
  d.name = out->name();
  d.dtype = DType::Float32;
  d.shape = od;
  d.combiner = Combiner::Sum;
  d.rereadsInputs = true;
  d.reduceExtents = {sd.back()};
  std::vector<Expr> vi =
      matMulBatchIndex(v->type().dims, outBatch, outBatchIdx, ctx.env());
  vi.push_back(key);
  vi.push_back(o[ro - 1]);
  d.body = ctx.readValue(v, vi);
  TensorDef::Attention att;
  att.score = Binary::make(BinOp::Mul, ctx.readValue(a, ai),
                           ctx.readValue(b, bi));
  att.depth = a->type().dims.back();
  std::string ops = "MatMul";
  if (!m->steps.empty()) {
    Expr e = ctx.acc(DType::Float32);
    for (const Step &s : m->steps) {
      Expr other = ctx.readBroadcast(ctx.defOf(s.other), sd, sIdx);
      if (s.cond) {
        Expr c = ctx.readBroadcast(ctx.defOf(s.cond), sd, sIdx);
        e = s.chainFirst ? Select::make(c, e, other)
                         : Select::make(c, other, e);
      } else {
        e = s.chainFirst ? Binary::make(s.op, e, other)
                         : Binary::make(s.op, other, e);
      }
      ops += std::string("+") + opName(s.node->op());
    }
    att.scoreEpilogue = e;
  }
  d.attention = std::move(att);
  ctx.setCurrentOp(ops + "+Softmax+MatMul");
  ctx.bind(out, ctx.add(std::move(d)));
  return true;
}

} // namespace aotc
