/// \file
/// The work-group attention kernel (the GPU style of issue 9; the per-row
/// kernel is attention.cpp). A work-group of G x P work-items (P = 8 per
/// row) takes R = G x RB query rows of one (batch, head), RB rows per
/// work-item (rows r, r + G, ...); the keys go in blocks of KB = 32. Before
/// the first block the group copies its query rows (R x D) into tileQ.
/// Then, for each block:
///
///   1. the block's key operand (KB x D) is stored into tileKV, consecutive
///      work-items on consecutive global addresses (K^T: along the keys);
///      barrier. The next block's keys are then loaded into registers, in
///      flight while this block is computed;
///   2. scores: work-item (r, p) computes the scores of its rows with keys
///      p, p + P, ... (KB / P of them, each a D-long dot product out of
///      local memory, float4 reads where D and E are multiples of 4; each
///      key read once for the work-item's rows), applies the scale and
///      mask (scoreFinish) and writes them to tileS (-inf past the last key
///      or query); barrier;
///   3. the block's value rows (KB x E) are stored over the keys in tileKV
///      (every key read is done), the next block's values loaded; each
///      work-item takes its rows' block maximum, the online softmax's
///      correction exp(m - m') of its running sum and value sums, and the
///      weights exp(s - m') of its own keys (each exponential computed once
///      in the group) into tileP; barrier;
///   4. the value sums: each work-item's column groups p, p + P, ... (W
///      columns each: a warp's reads of a value row are consecutive) add
///      weight x value over all the block's keys; barrier.
///
/// Each row's sum is the sum of its P work-items' shares (through tileS).
/// Then acc / l is stored (0 with no keys, NaN for a row whose every key
/// is -inf, as attention.cpp). The scores never reach global memory, and
/// each key and value element is read from global memory once per group
/// instead of once per query row.
///
/// Local rows have an odd number of W-groups (bank-conflict free reads of
/// 8 consecutive rows); all arrays must fit the device's local memory.
/// Every work-item runs the same loops and barriers; rows past the last
/// query stage zeros and store nothing.
#include "compiler/schedule/schedule.h"

#include "ir/visitor.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace aotc {

namespace {

/// Work-items per query row (the columns and keys of a row are split
/// among them) and keys per block.
constexpr int64_t kPartsPerRow = 8;
constexpr int64_t kKeysPerBlock = 32;
/// The deepest score sum staged (its key block and query rows in local
/// memory: (R + KB) x D floats).
constexpr int64_t kMaxDepth = 256;
/// The widest value row (its block in local memory, E / P accumulators
/// per work-item).
constexpr int64_t kMaxColumns = 256;
/// The most key and value elements a work-item holds in registers for the
/// next block (BERT's 64-deep heads: 16 + 16).
constexpr int64_t kMaxStagedRegisters = 32;

Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

Expr call(const std::string &name, std::vector<Expr> args) {
  DType t = args[0].type();
  return Call::make(t, name, std::move(args));
}

Expr mulAll(const std::vector<Expr> &fs) {
  Expr out;
  for (const Expr &f : fs)
    out = out.defined() ? bin(BinOp::Mul, out, f) : f;
  return out;
}

/// The shape of a work-group attention kernel of \p groupSize work-items
/// with \p rowsPerItem rows each, for a depth and value width.
struct Layout {
  int64_t G, R;  ///< work-items sharing a row's columns; rows per group
  int W;         ///< local reads W elements wide (float4 or scalar)
  int64_t U;     ///< column groups of W per work-item
  /// Local rows: of tileQ, of the shared key / value block, of the score
  /// and weight blocks. Each a multiple of W whose count of W-groups is
  /// odd, so that work-items reading one W-group of consecutive rows hit
  /// distinct banks (a float4 read of 8 rows: 8 distinct 16-byte slots of
  /// the 32 banks), and float4 rows stay 16-byte aligned.
  int64_t qWidth, kvWidth, sWidth;
  int64_t bytes; ///< local memory
};
/// The row of at least \p n elements for reads \p w wide (Layout).
int64_t rowWidth(int64_t n, int w) {
  int64_t r = ceilDiv(n, w) * w;
  return (r / w) % 2 == 0 ? r + w : r;
}
Layout layoutOf(int64_t depth, int64_t columns, DType t, int64_t groupSize,
                int64_t rowsPerItem) {
  Layout l;
  l.G = groupSize / kPartsPerRow;
  l.R = l.G * rowsPerItem;
  // Local reads in float4s where the depth and the value width are
  // multiples of 4 (a warp's work-items of one part read one key row or
  // value group: 128 bytes a read instead of 32).
  l.W = t == DType::Float32 && depth % 4 == 0 && columns % 4 == 0 ? 4 : 1;
  l.U = ceilDiv(columns, l.W * kPartsPerRow);
  l.qWidth = rowWidth(depth, l.W);
  l.kvWidth = rowWidth(std::max(depth, l.U * kPartsPerRow * l.W), l.W);
  l.sWidth = rowWidth(kKeysPerBlock, l.W);
  // tileQ [R][qWidth], tileKV [KB][kvWidth], tileS and tileP [R][sWidth].
  l.bytes = static_cast<int64_t>(dtypeSize(t)) *
            (l.R * l.qWidth + kKeysPerBlock * l.kvWidth +
             2 * l.R * l.sWidth);
  return l;
}

/// The nest's depth and value width where both are static and within the
/// kernel's limits (its local arrays hold a block of D and one of E);
/// false otherwise, or for a nest of fewer than 2 dimensions.
bool staticSizes(const AttentionNest &nest, int64_t &depth,
                 int64_t &columns) {
  return nest.shape.size() >= 2 && nest.depth.isConst(depth) && depth >= 1 &&
         depth <= kMaxDepth && nest.shape.back().isConst(columns) &&
         columns >= 1 && columns <= kMaxColumns;
}

/// The local memory a group may take on \p target (local_tile.cpp's
/// default where the profile does not say).
int64_t localBudget(const DeviceProfile &target) {
  return target.localMemBytes > 0 ? target.localMemBytes : 32 * 1024;
}

} // namespace

AttentionGroup chooseAttentionGroup(const AttentionNest &nest,
                                    const DeviceProfile &target,
                                    int64_t symbolsAt) {
  if (target.family != "gpu")
    return {};
  int64_t depth = 0, columns = 0;
  if (!staticSizes(nest, depth, columns))
    return {};
  // Groups of 16 x 8 work-items: a warp holds 4 rows' work-items, whose
  // score reads of the key block are broadcasts across the rows and
  // consecutive (padded) rows across the parts. Each with 2 rows (a group
  // of 32) where that still leaves two groups per compute unit: the local
  // reads per multiply-add are then fewer (on the H200, BERT's attention
  // at batch 8 took 0.026 ms a layer with 2 rows and 0.041 with 1, against
  // 0.038 for the three separate kernels; at batch 1, 48 groups of 32 rows
  // took 0.014 ms and 96 of 16 0.012; docs/PERFORMANCE.md).
  // Either only where its local arrays fit the device's local memory.
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < nest.shape.size(); ++d)
    rows *= plannedExtent(nest.shape[d], symbolsAt);
  const int64_t units = target.computeUnits > 0 ? target.computeUnits : 132;
  const int64_t size = 16 * kPartsPerRow;
  const Layout two = layoutOf(depth, columns, nest.type, size, 2);
  if (rows / two.R >= 2 * units && two.bytes <= localBudget(target))
    return {size, 2};
  if (layoutOf(depth, columns, nest.type, size, 1).bytes <=
      localBudget(target))
    return {size, 1};
  return {};
}

Expected<GroupTiledKernel> groupAttentionKernel(const AttentionNest &nest,
                                                int64_t groupSize,
                                                int64_t rowsPerItem,
                                                const DeviceProfile &target,
                                                const RangeEnv &env) {
  const int rank = static_cast<int>(nest.shape.size());
  int64_t depth = 0, columns = 0;
  if (!staticSizes(nest, depth, columns))
    return makeError("the work-group attention kernel needs a static depth "
                     "of 1 to ",
                     kMaxDepth, " and a static value width of 1 to ",
                     kMaxColumns);
  const int64_t P = kPartsPerRow, KB = kKeysPerBlock;
  if (groupSize < P || groupSize % P != 0 || groupSize > 1024)
    return makeError("the work-group attention kernel's group size ",
                     groupSize, " is not a multiple of ", P,
                     " work-items per row up to 1024");
  if (rowsPerItem < 1 || rowsPerItem > 4)
    return makeError("the work-group attention kernel's rows per work-item ",
                     rowsPerItem, " is not 1 to 4");
  // RB rows per work-item: rows r, r + G, ... of the group's R = G * RB,
  // where G = wg / P work-items share the columns of a row.
  const DType t = nest.type;
  const Layout lay = layoutOf(depth, columns, t, groupSize, rowsPerItem);
  if (lay.bytes > localBudget(target))
    return makeError("the work-group attention kernel's local arrays take ",
                     lay.bytes, " bytes, more than the ", localBudget(target),
                     " of the device's local memory");
  const int64_t RB = rowsPerItem, G = lay.G, R = lay.R, wg = groupSize;
  const int W = lay.W;
  const int64_t U = lay.U;
  const Expr ninf = literal(t, -std::numeric_limits<double>::infinity());
  const Expr zero = literal(t, 0);
  auto vload = [&](const std::string &arr, std::vector<Expr> at) {
    return W == 1 ? Load::make(t, arr, std::move(at))
                  : VectorLoad::make(t, arr, std::move(at), W);
  };
  auto widen = [&](const Expr &e) {
    return W == 1 ? e : Broadcast::make(e, W);
  };
  auto lane = [&](const Expr &v, int j) {
    return W == 1 ? v : Lane::make(v, j);
  };

  std::vector<Expr> idx;
  for (int k = 0; k < rank; ++k)
    idx.push_back(Var::make("i" + std::to_string(k)));
  Expr gq = Var::make("gq"), lid = Var::make("lid");
  Expr r = Var::make("lr"), p = Var::make("lp");
  Expr jb = Var::make("jb");
  const Expr &rowVar = idx[rank - 2];
  // This work-item's query rows: local rows r + G * i, global rows
  // gq * R + r + G * i.
  std::vector<Expr> lrow, row;
  for (int64_t i = 0; i < RB; ++i) {
    lrow.push_back(r + Expr(i * G));
    row.push_back(gq * Expr(R) + r + Expr(i * G));
  }
  auto at = [&](const Expr &q, const Expr &col) {
    std::vector<Expr> a = idx;
    a[rank - 2] = q;
    a[rank - 1] = col;
    return a;
  };
  const Expr &queries = nest.shape[rank - 2];

  // The score term split into its factors along the query row and along
  // the key (both may read the depth; a factor of neither, a constant,
  // goes with the query).
  Expr keyVar = Var::make("j"), dVar = Var::make("d");
  std::vector<Expr> factors;
  collectFactors(nest.score(at(rowVar, Expr(0)), keyVar, dVar), factors);
  std::vector<Expr> alongQ, alongK;
  for (const Expr &f : factors) {
    bool q = usesVar(f, rowVar.as<Var>()), k = usesVar(f, keyVar.as<Var>());
    if (q && k)
      return makeError("the attention's score term has a factor that reads "
                       "both the query row and the key");
    (k ? alongK : alongQ).push_back(f);
  }
  if (alongK.empty())
    alongK.push_back(literal(t, 1));
  if (alongQ.empty())
    alongQ.push_back(literal(t, 1));
  const Expr qFactor = mulAll(alongQ), kFactor = mulAll(alongK);
  if (usesVar(nest.value(at(rowVar, Expr(0)), keyVar), rowVar.as<Var>()))
    return makeError("the attention's value reads the query row");

  GroupTiledKernel out;
  out.workGroupSize = wg;
  const std::string qName = "tileQ", kvName = "tileKV", sName = "tileS";
  // The key block and then (after the scores) the value block share one
  // array, rows of the wider of the two (Layout: the work-items of a row
  // read keys p, p + P, ... at one depth in distinct banks).
  out.locals = {KernelBuffer{qName, t, true, {Expr(R), Expr(lay.qWidth)}},
                KernelBuffer{kvName, t, true, {Expr(KB), Expr(lay.kvWidth)}},
                KernelBuffer{sName, t, true, {Expr(R), Expr(lay.sWidth)}}};

  // A block copied into a local array by the group: element e = s * wg +
  // lid of the flat order (outer, inner), \p inner elements per outer
  // index; \p store(outer, inner) gives the Store. Either a loop, or
  // (\p unrolled) each element a work-item copies loaded into a register
  // (loads, for the values with their block variable) and then stored
  // (stores), so that the loads are in flight together.
  struct Copy {
    Stmt loop;
    std::vector<std::pair<Expr, Expr>> loads; // register, value
    std::vector<Stmt> stores;
  };
  auto copyBlock = [&](int64_t outer, int64_t inner, bool unrolled,
                       const std::function<Stmt(const Expr &, const Expr &)>
                           &store) {
    const int64_t count = outer * inner, per = ceilDiv(count, wg);
    Copy c;
    if (!unrolled) {
      Expr s = Var::make("s");
      Expr e = s * Expr(wg) + lid;
      Stmt body = store(floorDiv(e, Expr(inner)), mod(e, Expr(inner)));
      if (count % wg != 0)
        body = IfThenElse::make(cmp(BinOp::LT, e, Expr(count)), body);
      c.loop = For::make(s, Expr(0), Expr(per), ForKind::Serial, 0, body);
      return c;
    }
    for (int64_t si = 0; si < per; ++si) {
      Expr e = Expr(si * wg) + lid;
      Stmt st = store(floorDiv(e, Expr(inner)), mod(e, Expr(inner)));
      const Store *sp = st.as<Store>();
      Expr reg = Var::make("st", t);
      Expr value = sp->value;
      Stmt put = Store::make(sp->buffer, sp->indices, reg);
      if ((si + 1) * wg > count) { // the last round: some work-items idle
        Expr inside = cmp(BinOp::LT, e, Expr(count));
        value = Select::make(inside, value, zero);
        put = IfThenElse::make(inside, put);
      }
      c.loads.push_back({reg, value});
      c.stores.push_back(put);
    }
    return c;
  };

  // Copies a rows x cols block into a local array, consecutive work-items
  // along the columns, or along the rows where \p alongRows (the operand
  // is contiguous along them in global memory: K^T's keys).
  auto stage = [&](int64_t rows, int64_t cols, bool alongRows, bool unrolled,
                   const std::function<Stmt(const Expr &, const Expr &)>
                       &store) {
    if (!alongRows)
      return copyBlock(rows, cols, unrolled, store);
    return copyBlock(cols, rows, unrolled,
                     [&](const Expr &c, const Expr &rr) { return store(rr, c); });
  };
  // The key blocks' copies are unrolled and loaded one block ahead (in
  // registers while the block before is computed) where that takes at
  // most kMaxStagedRegisters registers per work-item.
  const bool ahead = ceilDiv(KB * depth, wg) + ceilDiv(KB * U * P * W, wg) <=
                     kMaxStagedRegisters;
  auto rowsContiguous = [&](const Expr &e, const Expr &rowV,
                            const Expr &colV) {
    return contiguousAlong(e, rowV) && !contiguousAlong(e, colV);
  };

  // The query rows, once: tileQ[r][d] (0 past the last row).
  Copy stageQ = stage(
      R, depth, rowsContiguous(qFactor, rowVar, dVar),
      ceilDiv(R * depth, wg) <= kMaxStagedRegisters,
      [&](const Expr &rr, const Expr &d) {
        Expr q = gq * Expr(R) + rr;
        Expr v = substitute(qFactor, {{rowVar, q}, {dVar, d}});
        v = Select::make(cmp(BinOp::LT, q, queries), v, zero);
        return Store::make(qName, {rr, d}, v);
      });
  // The key block, tileKV[k][d], and then the value block, tileKV[k][c]
  // (0 past the last key and the last column).
  Expr key0 = jb * Expr(KB);
  Copy stageK = stage(
      KB, depth, rowsContiguous(kFactor, keyVar, dVar), ahead,
      [&](const Expr &k, const Expr &d) {
        Expr key = key0 + k;
        Expr v = substitute(kFactor, {{keyVar, key}, {dVar, d}});
        v = Select::make(cmp(BinOp::LT, key, nest.keys), v, zero);
        return Store::make(kvName, {k, d}, v);
      });
  Expr colVar = Var::make("c");
  Copy stageV = stage(
      KB, U * P * W,
      rowsContiguous(nest.value(at(Expr(0), colVar), keyVar), keyVar, colVar),
      ahead,
      [&](const Expr &k, const Expr &c) {
        Expr key = key0 + k;
        Expr v = nest.value(at(Expr(0), c), key);
        Expr inside = cmp(BinOp::LT, key, nest.keys);
        if (U * P * W != columns)
          inside = logicalAnd(inside, cmp(BinOp::LT, c, Expr(columns)));
        return Store::make(kvName, {k, c}, Select::make(inside, v, zero));
      });

  // Scores: keys p + P * u of rows r + G * i, W depths a step (each key
  // read once for the work-item's rows).
  Stmt scores;
  {
    Expr d = Var::make("dd");
    std::vector<std::vector<Expr>> dots(RB);
    std::vector<Expr> qs, ks;
    std::vector<Stmt> steps;
    for (int64_t i = 0; i < RB; ++i)
      qs.push_back(Var::make("qd", t, W));
    for (int64_t u = 0; u < KB / P; ++u)
      ks.push_back(Var::make("kd", t, W));
    for (int64_t i = 0; i < RB; ++i)
      for (int64_t u = 0; u < KB / P; ++u) {
        Expr dot = Var::make("dot", t, W);
        dots[i].push_back(dot);
        steps.push_back(LocalAssign::make(
            dot, bin(BinOp::Add, dot, bin(BinOp::Mul, qs[i], ks[u]))));
      }
    Stmt step = Block::make(steps);
    for (int64_t u = KB / P; u-- > 0;)
      step = LetStmt::make(ks[u], vload(kvName, {p + Expr(u * P), d * Expr(W)}),
                           step);
    for (int64_t i = RB; i-- > 0;)
      step = LetStmt::make(qs[i], vload(qName, {lrow[i], d * Expr(W)}), step);
    Stmt loop = For::make(d, Expr(0), Expr(depth / W), ForKind::Serial, 0,
                          step);
    std::vector<Stmt> writes;
    for (int64_t i = 0; i < RB; ++i)
      for (int64_t u = 0; u < KB / P; ++u) {
        Expr k = p + Expr(u * P), key = key0 + k;
        Expr sum = lane(dots[i][u], 0);
        for (int j = 1; j < W; ++j)
          sum = bin(BinOp::Add, sum, lane(dots[i][u], j));
        // The scale and mask read at the key (a mask of [queries, keys]):
        // only for keys that exist and rows that exist.
        Expr finished = nest.scoreFinish(at(row[i], Expr(0)), key, sum);
        Expr inside = logicalAnd(cmp(BinOp::LT, key, nest.keys),
                                 cmp(BinOp::LT, row[i], queries));
        writes.push_back(Store::make(sName, {lrow[i], k},
                                     Select::make(inside, finished, ninf)));
      }
    Stmt sc = Block::make({loop, Block::make(writes)});
    for (int64_t i = RB; i-- > 0;)
      for (size_t u = dots[i].size(); u-- > 0;)
        sc = LocalDecl::make(dots[i][u], widen(zero), sc);
    scores = sc;
  }

  // Per row: its running maximum and sum, and the value sums of column
  // groups p + P * u.
  std::vector<Expr> m, l;
  std::vector<std::vector<Expr>> acc(RB);
  for (int64_t i = 0; i < RB; ++i) {
    m.push_back(Var::make("rmax", t));
    l.push_back(Var::make("rsum", t));
    for (int64_t u = 0; u < U; ++u)
      acc[i].push_back(Var::make("acc", t, W));
  }
  // Weights: every work-item of row r takes the row's block maximum, then
  // exp(s - m) of its own keys p + P * u (each exponential computed once)
  // into tileP and its share of the row's sum; barrier; then the value sum
  // over all the block's keys, W weights at a time, each value read once
  // for the work-item's rows.
  Stmt weights, values;
  const std::string pName = "tileP";
  out.locals.push_back(
      KernelBuffer{pName, t, true, {Expr(R), Expr(lay.sWidth)}});
  {
    std::vector<Stmt> rows;
    for (int64_t i = 0; i < RB; ++i) {
      Expr km = Var::make("km"), bmax = Var::make("bmax", t);
      Expr sm = Var::make("sm", t, W);
      Expr maxOf = bmax;
      for (int j = 0; j < W; ++j)
        maxOf = call("fmax", {maxOf, lane(sm, j)});
      Stmt maxLoop = For::make(
          km, Expr(0), Expr(KB / W), ForKind::Serial, 0,
          LetStmt::make(sm, vload(sName, {lrow[i], km * Expr(W)}),
                        LocalAssign::make(bmax, maxOf)));
      Expr mNew = Var::make("mnew", t), mSafe = Var::make("msafe", t);
      Expr c = Var::make("corr", t);
      std::vector<Stmt> scale{
          LocalAssign::make(l[i], bin(BinOp::Mul, l[i], c))};
      for (int64_t u = 0; u < U; ++u)
        scale.push_back(LocalAssign::make(
            acc[i][u], bin(BinOp::Mul, acc[i][u], widen(c))));
      for (int64_t u = 0; u < KB / P; ++u) {
        Expr k = p + Expr(u * P), pk = Var::make("pk", t);
        scale.push_back(LetStmt::make(
            pk,
            call("exp", {bin(BinOp::Sub, Load::make(t, sName, {lrow[i], k}),
                             mSafe)}),
            Block::make({Store::make(pName, {lrow[i], k}, pk),
                         LocalAssign::make(l[i], bin(BinOp::Add, l[i], pk))})));
      }
      scale.push_back(LocalAssign::make(m[i], mNew));
      Stmt body = Block::make(scale);
      body =
          LetStmt::make(c, call("exp", {bin(BinOp::Sub, m[i], mSafe)}), body);
      // A maximum of -inf (every key so far masked) is taken as 0 in the
      // exponentials: the block adds nothing instead of NaN.
      body = LetStmt::make(
          mSafe, Select::make(bin(BinOp::EQ, mNew, ninf), zero, mNew), body);
      body = LetStmt::make(mNew, call("fmax", {m[i], bmax}), body);
      rows.push_back(LocalDecl::make(bmax, ninf, Block::make({maxLoop, body})));
    }
    weights = Block::make(rows);

    Expr k = Var::make("kk");
    std::vector<Expr> pw;
    for (int64_t i = 0; i < RB; ++i)
      pw.push_back(Var::make("pw", t, W));
    std::vector<Stmt> per;
    for (int j = 0; j < W; ++j) {
      std::vector<Stmt> uses;
      std::vector<Expr> vj;
      for (int64_t u = 0; u < U; ++u)
        vj.push_back(Var::make("vk", t, W));
      for (int64_t i = 0; i < RB; ++i)
        for (int64_t u = 0; u < U; ++u)
          uses.push_back(LocalAssign::make(
              acc[i][u], bin(BinOp::Add, acc[i][u],
                             bin(BinOp::Mul, widen(lane(pw[i], j)), vj[u]))));
      Stmt use = Block::make(uses);
      for (int64_t u = U; u-- > 0;)
        use = LetStmt::make(vj[u],
                            vload(kvName, {k * Expr(W) + Expr(j),
                                          (p + Expr(u * P)) * Expr(W)}),
                            use);
      per.push_back(use);
    }
    Stmt step = Block::make(per);
    for (int64_t i = RB; i-- > 0;)
      step = LetStmt::make(pw[i], vload(pName, {lrow[i], k * Expr(W)}), step);
    values = For::make(k, Expr(0), Expr(KB / W), ForKind::Serial, 0, step);
  }

  // Per block: the keys stored, barrier, the scores, barrier, the values
  // stored over the keys (every key read is done), the weights, barrier,
  // the value sums, barrier.
  const Expr blocks = floorDiv(nest.keys + Expr(KB - 1), Expr(KB));
  Stmt blockLoop;
  if (ahead) {
    // Block 0's loads before the loop; block jb + 1's keys after block
    // jb's keys are stored, its values after its values are: in flight
    // while the scores and the value sums are computed.
    auto assign = [&](const Copy &c, const Expr &block) {
      std::vector<Stmt> out;
      for (const auto &[reg, value] : c.loads)
        out.push_back(LocalAssign::make(reg, substitute(value, {{jb, block}})));
      return Block::make(out);
    };
    const Expr more = cmp(BinOp::LT, jb + Expr(1), blocks);
    Stmt loop = For::make(
        jb, Expr(0), blocks, ForKind::Serial, 0,
        Block::make({Block::make(stageK.stores), Barrier::make(),
                     IfThenElse::make(more, assign(stageK, jb + Expr(1))),
                     scores, Barrier::make(), Block::make(stageV.stores),
                     IfThenElse::make(more, assign(stageV, jb + Expr(1))),
                     weights, Barrier::make(), values, Barrier::make()}));
    blockLoop = Block::make(
        {IfThenElse::make(cmp(BinOp::GT, blocks, Expr(0)),
                          Block::make({assign(stageK, Expr(0)),
                                       assign(stageV, Expr(0))})),
         loop});
    for (const Copy *c : {&stageV, &stageK})
      for (size_t i = c->loads.size(); i-- > 0;)
        blockLoop = LocalDecl::make(c->loads[i].first, zero, blockLoop);
  } else {
    blockLoop = For::make(
        jb, Expr(0), blocks, ForKind::Serial, 0,
        Block::make({stageK.loop, Barrier::make(), scores, Barrier::make(),
                     stageV.loop, weights, Barrier::make(), values,
                     Barrier::make()}));
  }
  // The query rows: loaded, then stored (or a loop), then the barrier
  // before the first scores is the block loop's.
  Stmt queryRows = stageQ.loop;
  if (!queryRows.defined()) {
    std::vector<Stmt> put;
    for (const auto &[reg, value] : stageQ.loads)
      put.push_back(LocalAssign::make(reg, value));
    put.insert(put.end(), stageQ.stores.begin(), stageQ.stores.end());
    queryRows = Block::make(put);
    for (size_t i = stageQ.loads.size(); i-- > 0;)
      queryRows = LocalDecl::make(stageQ.loads[i].first, zero, queryRows);
  }

  // Each row's sum: the shares of its P work-items (through tileS, free
  // after the last block's barrier).
  std::vector<Stmt> shares, totals;
  for (int64_t i = 0; i < RB; ++i) {
    Expr total = Load::make(t, sName, {lrow[i], Expr(0)});
    for (int64_t j = 1; j < P; ++j)
      total = bin(BinOp::Add, total, Load::make(t, sName, {lrow[i], Expr(j)}));
    shares.push_back(Store::make(sName, {lrow[i], p}, l[i]));
    totals.push_back(LocalAssign::make(l[i], total));
  }
  Stmt rowSum = Block::make(
      {Block::make(shares), Barrier::make(), Block::make(totals)});

  // The stores: acc / l of the rows' columns that exist.
  bool keysMayBeZero = true;
  if (auto b = boundsOf(nest.keys, env); b && b->min >= 1)
    keysMayBeZero = false;
  std::vector<Stmt> stores;
  for (int64_t i = 0; i < RB; ++i)
    for (int64_t u = 0; u < U; ++u)
      for (int j = 0; j < W; ++j) {
        Expr col = (p + Expr(u * P)) * Expr(W) + Expr(j);
        Expr v = bin(BinOp::Div, lane(acc[i][u], j), l[i]);
        if (keysMayBeZero)
          v = Select::make(bin(BinOp::GT, nest.keys, Expr(0)), v, zero);
        Stmt st = nest.finish(at(row[i], col), v);
        Expr inside = cmp(BinOp::LT, row[i], queries);
        if (U * P * W != columns)
          inside = logicalAnd(inside, cmp(BinOp::LT, col, Expr(columns)));
        stores.push_back(IfThenElse::make(inside, st));
      }

  Stmt body = Block::make(
      {queryRows, blockLoop, rowSum, Block::make(stores)});
  for (int64_t i = RB; i-- > 0;) {
    for (size_t u = acc[i].size(); u-- > 0;)
      body = LocalDecl::make(acc[i][u], widen(zero), body);
    body = LocalDecl::make(l[i], zero, body);
    body = LocalDecl::make(m[i], ninf, body);
  }
  body = LetStmt::make(r, floorDiv(lid, Expr(P)),
                       LetStmt::make(p, mod(lid, Expr(P)), body));
  body = For::make(lid, Expr(0), Expr(wg), ForKind::Parallel, 0, body);
  body = For::make(gq, Expr(0), floorDiv(queries + Expr(R - 1), Expr(R)),
                   ForKind::Parallel, 0, body);
  for (int d = rank - 3; d >= 0; --d)
    body = For::make(idx[d], Expr(0), nest.shape[d], ForKind::Parallel, 0,
                     body);
  out.body = body;
  return out;
}

} // namespace aotc
