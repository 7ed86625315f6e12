// Chained kernels (compiler/schedule/chain_kernels.h): two kernels run as
// one only where each work-item of the second reads nothing but what the
// same work-item of the first stored, under conditions that imply the
// store's. Each refusal below is a kernel pair that would race or read a
// stale element if merged.
#include "compiler/schedule/chain_kernels.h"
#include "compiler/schedule/device_profile.h"
#include "ir/verify.h"

#include <gtest/gtest.h>

using namespace aotc;

namespace {

const DType f32 = DType::Float32;

/// x[rows, 64] -> b[rows, 64] (kernel 1: tiles of 8 rows x 16 columns, one
/// work-item per tile) -> y[rows, 32] (kernel 2: a work-item per tile of 8
/// rows, serial over nothing; two tiles of 16 columns as work-items).
struct Fixture {
  int64_t rows;
  Expr t1 = Var::make("t1"), r1 = Var::make("r1");
  Expr t2 = Var::make("t2"), j2 = Var::make("j2"), r2 = Var::make("r2");
  LoopModule m;

  explicit Fixture(int64_t rows_) : rows(rows_) {
    m.name = "chain";
    ModuleBuffer x, b, y;
    x.name = "x", x.dtype = f32, x.shape = {Expr(rows), Expr(64)};
    x.role = BufferRole::Input, x.index = 0;
    b.name = "b", b.dtype = f32, b.shape = {Expr(rows), Expr(64)};
    b.role = BufferRole::Arena;
    y.name = "y", y.dtype = f32, y.shape = {Expr(rows), Expr(32)};
    y.role = BufferRole::Output, y.index = 0;
    m.buffers = {x, b, y};
  }

  static std::string contraction() {
    KernelConfig c;
    c.templ = "contraction";
    return kernelConfigJson(c);
  }

  /// Kernel 1 stores row 8 t1 + r1, columns 0..15 of b (under \p cond when
  /// given); kernel 2 reads \p read (an expression of t2, j2, r2) and stores
  /// row 8 t2 + r2, columns 16 j2.. of y (its load under \p readCond).
  void build(const Expr &read, Expr cond = Expr(), Expr readCond = Expr(),
             bool firstReadsY = false) {
    Expr row1 = Expr(8) * t1 + r1;
    Expr v = VectorLoad::make(f32, "x", {row1, Expr(0)}, 16);
    if (firstReadsY)
      v = v + VectorLoad::make(f32, "y", {row1, Expr(0)}, 16);
    Stmt store1 = Store::make("b", {row1, Expr(0)}, v);
    if (cond.defined())
      store1 = IfThenElse::make(cond, store1);
    Kernel k1;
    k1.name = "k1_first";
    k1.buffers = {{"x", f32, false, {Expr(rows), Expr(64)}},
                  {"b", f32, true, {Expr(rows), Expr(64)}}};
    if (firstReadsY)
      k1.buffers.push_back({"y", f32, false, {Expr(rows), Expr(32)}});
    k1.body = For::make(t1, 0, Expr(rows / 8), ForKind::Parallel, 0,
                        For::make(r1, 0, 8, ForKind::Serial, 0, store1));
    k1.config = contraction();
    Stmt store2 = Store::make("y", {Expr(8) * t2 + r2, Expr(16) * j2}, read);
    if (readCond.defined())
      store2 = IfThenElse::make(readCond, store2);
    Kernel k2;
    k2.name = "k2_second";
    k2.buffers = {{"b", f32, false, {Expr(rows), Expr(64)}},
                  {"y", f32, true, {Expr(rows), Expr(32)}}};
    k2.body =
        For::make(t2, 0, Expr(rows / 8), ForKind::Parallel, 0,
                  For::make(j2, 0, 2, ForKind::Parallel, 0,
                            For::make(r2, 0, 8, ForKind::Serial, 0, store2)));
    k2.config = contraction();
    m.kernels = {k1, k2};
  }

  /// Row 8 t2 + r2 (plus \p rowShift), columns \p col.. of b, 16 lanes.
  Expr readB(int64_t rowShift = 0, int64_t col = 0) const {
    return VectorLoad::make(
        f32, "b", {Expr(8) * t2 + r2 + Expr(rowShift), Expr(col)}, 16);
  }
};

std::string message(const Status &s) { return s.isOk() ? "ok" : s.message(); }

TEST(ChainKernels, ATileReadingItsOwnRowsRunsInOneKernel) {
  Fixture f(160);
  f.build(f.readB());
  ASSERT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 1);
  ASSERT_EQ(f.m.kernels.size(), 1u);
  const Kernel &k = f.m.kernels[0];
  EXPECT_EQ(k.name, "k1_k2_second");
  ASSERT_EQ(k.chained.size(), 2u);
  EXPECT_EQ(k.chained[0].first, "k1_first");
  EXPECT_EQ(k.chained[1].first, "k2_second");
  EXPECT_TRUE(k.findBuffer("b")->written);
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  // One work-item per tile of rows: the second kernel's column tiles run
  // in a serial loop after the first kernel's rows.
  std::vector<Expr> global = LoopModule::globalSize(k);
  ASSERT_EQ(global.size(), 1u);
  EXPECT_TRUE(simplify(global[0]).isConstValue(20)) << printExpr(global[0]);
  std::string text = printKernel(k);
  EXPECT_NE(text.find("for j2 in [0, 0 + 2)"), std::string::npos) << text;
}

TEST(ChainKernels, AReadOfTheNextTileStaysApart) {
  Fixture f(160);
  f.build(f.readB(/*rowShift=*/1)); // row 8 t + 8: the next work-item's
  EXPECT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 0);
  EXPECT_EQ(f.m.kernels.size(), 2u);
}

TEST(ChainKernels, ColumnsTheFirstDoesNotWriteStayApart) {
  Fixture f(160);
  f.build(f.readB(0, /*col=*/8)); // columns 8..23: 16..23 are never stored
  EXPECT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 0);
}

TEST(ChainKernels, AReadMustRunOnlyWhereTheStoreRan) {
  // A partial last tile: rows from 157 on are not stored.
  auto stored = [](const Fixture &f) {
    return cmp(BinOp::LT, Expr(8) * f.t1 + f.r1, Expr(157));
  };
  {
    Fixture f(160);
    f.build(f.readB(), stored(f));
    EXPECT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 0)
        << "an unconditional read of rows stored under a condition";
  }
  {
    Fixture f(160);
    f.build(f.readB(), stored(f),
            cmp(BinOp::LT, Expr(8) * f.t2 + f.r2, Expr(158)));
    EXPECT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 0)
        << "a read under a weaker condition than the store's";
  }
  {
    Fixture f(160);
    f.build(f.readB(), stored(f),
            cmp(BinOp::LT, Expr(8) * f.t2 + f.r2, Expr(157)));
    EXPECT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 1)
        << "the read runs under the store's own condition";
    EXPECT_EQ(message(verifyModule(f.m)), "ok");
  }
}

TEST(ChainKernels, TheFirstMustNotReadWhatTheSecondWrites) {
  Fixture f(160);
  f.build(f.readB(), Expr(), Expr(), /*firstReadsY=*/true);
  EXPECT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 0);
}

TEST(ChainKernels, FewWorkItemsStayApart) {
  Fixture f(64); // 8 tiles
  f.build(f.readB());
  EXPECT_EQ(minChainWorkItems(0), 16);
  EXPECT_EQ(chainKernels(f.m, RangeEnv(), 0, 8), 0);
  EXPECT_EQ(minChainWorkItems(1), 16);
  EXPECT_EQ(minChainWorkItems(4), 32);
}

} // namespace
