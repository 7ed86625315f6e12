/// \file
/// Register tiling of reduction kernels (unroll-and-jam in the Loop IR).
///
/// The naive kernel gives each work-item one output element and a serial
/// reduction loop: every operand element is loaded once per output that uses
/// it, and nothing is left for the CPU's vector units (PoCL does not
/// vectorize across work-items when the kernel has an inner loop). A tiled
/// kernel gives each work-item a TM x TN block of outputs along two output
/// dimensions, N (the innermost, contiguous) and M (one whose operands do not
/// depend on N): TM*TN accumulators in registers, one reduction loop whose
/// body updates all of them, so a load that does not depend on N is shared by
/// the TN outputs of a row and one that does not depend on M by the TM rows,
/// and the TN independent chains over contiguous addresses are what LLVM's
/// vectorizers turn into vector FMAs. Every statement is ordinary Loop IR
/// (scalar locals, loops, stores), so epilogues and fused consumers are
/// instantiated per element exactly as in the naive kernel, and the verifier
/// proves every access of a full tile from the tile's bounds check.
///
/// Pointwise kernels get the same treatment with rows of innermost elements
/// (ReductionNest without a term): the index arithmetic is paid once per row.
///
/// A tile that sticks out of the output (sizes not multiples of the tile, or
/// symbolic) runs the naive nest for each of its elements that exist.
#include "compiler/schedule/schedule.h"

#include "ir/visitor.h"

#include <set>

namespace aotc {

namespace {

/// Loads of \p e with the ids of the index variables each one reads.
std::vector<std::set<uint64_t>> loadDependences(const Expr &e,
                                                const std::vector<Expr> &idx) {
  struct V : IRVisitor {
    std::vector<std::set<uint64_t>> loads;
    std::set<uint64_t> idx;
    void visitLoad(const Load *op) override {
      std::set<uint64_t> deps;
      for (const Expr &i : op->indices)
        for (const Expr &v : freeVars(i))
          if (idx.count(v.as<Var>()->id))
            deps.insert(v.as<Var>()->id);
      loads.push_back(std::move(deps));
      IRVisitor::visitLoad(op);
    }
  } v;
  for (const Expr &i : idx)
    v.idx.insert(i.as<Var>()->id);
  v.visit(e);
  return v.loads;
}

/// The first of \p sizes (the preferred one first) that divides a static
/// \p extent, the extent itself when it is smaller, else the preferred size.
int64_t tileSize(const Expr &extent, std::initializer_list<int64_t> sizes) {
  int64_t e, preferred = *sizes.begin();
  if (!extent.isConst(e))
    return preferred;
  if (e <= preferred)
    return e;
  for (int64_t t : sizes)
    if (e % t == 0)
      return t;
  return preferred;
}

} // namespace

Stmt reductionElement(const ReductionNest &nest,
                      const std::vector<Expr> &idx) {
  if (!nest.term)
    return nest.finish(idx, Expr());
  Expr acc = Var::make("acc", nest.accType);
  std::vector<Expr> rvars;
  for (size_t k = 0; k < nest.reduceExtents.size(); ++k)
    rvars.push_back(Var::make("r" + std::to_string(k)));
  Stmt loop = LocalAssign::make(acc, nest.combine(acc, nest.term(idx, rvars)));
  for (int k = static_cast<int>(rvars.size()) - 1; k >= 0; --k)
    loop = For::make(rvars[k], Expr(0), nest.reduceExtents[k],
                     ForKind::Serial, 0, loop);
  return LocalDecl::make(acc, nest.init,
                         Block::make({loop, nest.finish(idx, acc)}));
}

RegisterTile chooseRegisterTile(const ReductionNest &nest) {
  RegisterTile t;
  int rank = static_cast<int>(nest.shape.size());
  if (!nest.term) {
    // A pointwise kernel: a row of up to 16 innermost elements per
    // work-item, so the index arithmetic (a division per dimension) is paid
    // once per row and the stores are contiguous, which LLVM vectorizes.
    if (rank < 1)
      return t;
    int64_t tn = tileSize(nest.shape[rank - 1], {16, 8, 15, 14, 13, 12, 11, 10, 9, 7, 6, 5, 4});
    if (tn < 4)
      return t;
    t.n = rank - 1;
    t.tn = tn;
    return t;
  }
  // Only contractions reread their operands across outputs; a plain
  // reduction (ReduceSum, pooling) has nothing to share between them.
  if (!nest.contraction || rank < 1 || nest.reduceExtents.empty())
    return t;
  std::vector<Expr> idx, r;
  for (int k = 0; k < rank; ++k)
    idx.push_back(Var::make("i" + std::to_string(k)));
  for (size_t k = 0; k < nest.reduceExtents.size(); ++k)
    r.push_back(Var::make("r" + std::to_string(k)));
  std::vector<std::set<uint64_t>> loads =
      loadDependences(nest.term(idx, r), idx);
  auto dependsOn = [&](const std::set<uint64_t> &deps, int d) {
    return deps.count(idx[d].as<Var>()->id) > 0;
  };
  int n = rank - 1;
  // M: an output dimension some operand does not depend on (that operand is
  // shared by the tile's rows) while every operand that depends on it is
  // shared along N; the innermost such dimension.
  int m = -1;
  for (int d = rank - 2; d >= 0 && m < 0; --d) {
    bool shared = false, separable = true;
    for (const auto &deps : loads) {
      if (!dependsOn(deps, d))
        shared = true;
      else if (dependsOn(deps, n))
        separable = false;
    }
    if (shared && separable)
      m = d;
  }
  bool sharedAlongN = false;
  for (const auto &deps : loads)
    sharedAlongN |= !dependsOn(deps, n);
  if (!sharedAlongN && m < 0)
    return t;
  // Up to 6 x 16 accumulators: 12 AVX2 or 6 AVX-512 registers, room left
  // for the operands (measured on PoCL, docs/PERFORMANCE.md). A static
  // extent gets a tile that divides it where one is near that size (a
  // partial tile runs the naive nest), so 7 x 7 feature maps or 64 channels
  // still run whole tiles only.
  int64_t tn = tileSize(nest.shape[n], {16, 8, 15, 14, 13, 12, 11, 10, 9, 7, 6, 5, 4});
  int64_t tm = m < 0 ? 1 : tileSize(nest.shape[m], {6, 4, 5, 3, 2});
  if (tn < 1 || tm < 1 || tn * tm < 4)
    return t;
  t.m = tm > 1 ? m : -1;
  t.n = n;
  t.tm = tm;
  t.tn = tn;
  return t;
}

Stmt registerTiledNest(const ReductionNest &nest, const RegisterTile &t) {
  int rank = static_cast<int>(nest.shape.size());
  // Loop variables: the tile numbers along M and N, the index elsewhere.
  std::vector<Expr> loopVars, extents, base;
  for (int d = 0; d < rank; ++d) {
    bool tiled = d == t.m || d == t.n;
    int64_t size = d == t.m ? t.tm : d == t.n ? t.tn : 1;
    Expr v = Var::make(tiled ? "t" + std::to_string(d) : "i" + std::to_string(d));
    loopVars.push_back(v);
    extents.push_back(tiled ? floorDiv(nest.shape[d] + Expr(size - 1), Expr(size))
                            : nest.shape[d]);
    // One tile covers the whole extent: its base is 0, not 16 * t.
    base.push_back(!tiled ? v
                   : nest.shape[d].isConstValue(size) ? Expr(0)
                                                      : v * Expr(size));
  }
  auto at = [&](int64_t a, int64_t b) {
    std::vector<Expr> idx = base;
    if (t.m >= 0)
      idx[t.m] = idx[t.m] + Expr(a);
    idx[t.n] = idx[t.n] + Expr(b);
    return idx;
  };
  int64_t tm = t.m >= 0 ? t.tm : 1;

  // The full tile: one accumulator per element, one reduction loop.
  std::vector<Expr> accs;
  std::vector<Expr> rvars;
  for (size_t k = 0; k < nest.reduceExtents.size(); ++k)
    rvars.push_back(Var::make("r" + std::to_string(k)));
  std::vector<Stmt> updates, finishes;
  for (int64_t a = 0; a < tm; ++a)
    for (int64_t b = 0; b < t.tn; ++b) {
      std::vector<Expr> idx = at(a, b);
      if (!nest.term) {
        finishes.push_back(nest.finish(idx, Expr()));
        continue;
      }
      Expr acc = Var::make("acc", nest.accType);
      accs.push_back(acc);
      updates.push_back(
          LocalAssign::make(acc, nest.combine(acc, nest.term(idx, rvars))));
      finishes.push_back(nest.finish(idx, acc));
    }
  std::vector<Stmt> seq;
  if (nest.term) {
    Stmt loop = Block::make(updates);
    for (int k = static_cast<int>(rvars.size()) - 1; k >= 0; --k)
      loop = For::make(rvars[k], Expr(0), nest.reduceExtents[k],
                       ForKind::Serial, 0, loop);
    seq.push_back(loop);
  }
  seq.insert(seq.end(), finishes.begin(), finishes.end());
  Stmt full = Block::make(seq);
  for (int k = static_cast<int>(accs.size()) - 1; k >= 0; --k)
    full = LocalDecl::make(accs[k], nest.init, full);

  // Whether the tile lies inside the output along M and N: statically so when
  // the extent is a multiple of the tile.
  Expr inside;
  auto fits = [&](int d, int64_t size) {
    int64_t e;
    if (nest.shape[d].isConst(e) && e % size == 0)
      return;
    inside = logicalAnd(inside, cmp(BinOp::LE, base[d] + Expr(size),
                                    nest.shape[d]));
  };
  if (t.m >= 0)
    fits(t.m, t.tm);
  fits(t.n, t.tn);
  Stmt body = full;
  if (inside.defined()) {
    // A partial tile: each existing element, the naive way.
    Expr a = Var::make("a"), b = Var::make("b");
    std::vector<Expr> idx = base;
    Expr exists = cmp(BinOp::LT, base[t.n] + b, nest.shape[t.n]);
    idx[t.n] = base[t.n] + b;
    if (t.m >= 0) {
      idx[t.m] = base[t.m] + a;
      exists = logicalAnd(cmp(BinOp::LT, base[t.m] + a, nest.shape[t.m]),
                          exists);
    }
    Stmt partial = IfThenElse::make(exists, reductionElement(nest, idx));
    partial = For::make(b, Expr(0), Expr(t.tn), ForKind::Serial, 0, partial);
    if (t.m >= 0)
      partial = For::make(a, Expr(0), Expr(t.tm), ForKind::Serial, 0, partial);
    body = IfThenElse::make(inside, full, partial);
  }
  for (int d = rank - 1; d >= 0; --d)
    body = For::make(loopVars[d], Expr(0), extents[d], ForKind::Parallel, 0,
                     body);
  return body;
}

} // namespace aotc
