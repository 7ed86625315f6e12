// The expand-fallbacks step (compiler/schedule/expand_fallbacks.cpp): a
// FiniteOrSum in a stored, assigned or bound value becomes a test of its
// value's lanes and, in the else arm (marked rare), loops that sum its body;
// the kernel then verifies.
#include "compiler/schedule/schedule.h"
#include "ir/verify.h"

#include <gtest/gtest.h>

using namespace aotc;

namespace {

const DType f32 = DType::Float32;

/// Input a[8, 16], weight w[16, 3], output y[8, 16]; one kernel over
/// i < 8 whose body is \p inner.
struct Fixture {
  Expr i = Var::make("i");
  LoopModule m;

  Fixture() {
    m.name = "fallbacks";
    ModuleBuffer a, w, y;
    a.name = "a", a.dtype = f32, a.shape = {8, 16}, a.role = BufferRole::Input;
    w.name = "w", w.dtype = f32, w.shape = {16, 3},
    w.role = BufferRole::Constant;
    y.name = "y", y.dtype = f32, y.shape = {8, 16},
    y.role = BufferRole::Output;
    a.index = 0, w.index = 0, y.index = 0;
    m.buffers = {a, w, y};
  }

  void kernel(const Stmt &inner) {
    Kernel k{"k",
             {{"a", f32, false, {8, 16}},
              {"w", f32, false, {16, 3}},
              {"y", f32, true, {8, 16}}},
             {},
             For::make(i, 0, Expr(8), ForKind::Parallel, 0, inner),
             false};
    m.kernels = {k};
  }

  /// a[i, c] * 2 where finite, else the sum over r < 3 of w[c, r] (c the
  /// column \p c, or the vector's lane \p lane added to it).
  Expr fallback(const Expr &value, const Expr &c, const Expr &lane = Expr()) {
    Expr r = Var::make("r");
    Expr col = lane.defined() ? c + lane : c;
    return FiniteOrSum::make(value, Load::make(f32, "w", {col, r}), {r},
                             {Expr(3)}, lane);
  }
};

std::string message(const Status &s) { return s.isOk() ? "ok" : s.message(); }

TEST(ExpandFallbacks, ScalarStoreBranchesOnItsValue) {
  Fixture f;
  Expr v = Binary::make(BinOp::Mul, Load::make(f32, "a", {f.i, Expr(5)}),
                        FloatImm::make(2.0));
  // Read twice (a Relu's condition and arm): one test, one sum.
  Expr fb = f.fallback(v, Expr(5));
  Expr relu = Select::make(cmp(BinOp::LT, fb, FloatImm::make(0.0)),
                           FloatImm::make(0.0), fb);
  f.kernel(Store::make("y", {f.i, Expr(5)}, relu));
  EXPECT_NE(message(verifyModule(f.m)).find("finite-or-sum left"),
            std::string::npos);
  EXPECT_EQ(expandFallbacks(f.m), 1);
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  std::string text = printKernel(f.m.kernels[0]);
  EXPECT_NE(text.find("if (isfinite(wv"), std::string::npos) << text;
  EXPECT_NE(text.find("} else (rare) {"), std::string::npos) << text;
  EXPECT_NE(text.find("w[5, r"), std::string::npos) << text;
  EXPECT_EQ(text.find("finite_or_sum"), std::string::npos) << text;
  // One loop over r: the two reads were one sum.
  size_t first = text.find("for r");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("for r", first + 1), std::string::npos) << text;
}

TEST(ExpandFallbacks, VectorStoreSumsLaneByLaneIntoAPrivateArray) {
  Fixture f;
  Expr lane = Var::make("lane");
  Expr v = VectorLoad::make(f32, "a", {f.i, Expr(0)}, 16);
  f.kernel(Store::make("y", {f.i, Expr(0)}, f.fallback(v, Expr(0), lane)));
  EXPECT_EQ(expandFallbacks(f.m), 1);
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  const Kernel &k = f.m.kernels[0];
  ASSERT_EQ(k.privates.size(), 1u);
  EXPECT_EQ(k.privates[0].name, "wsum0");
  std::string text = printKernel(k);
  // Every lane tested; the else arm loads the private array as a vector.
  EXPECT_NE(text.find("isfinite(wv"), std::string::npos) << text;
  EXPECT_NE(text.find(".lane15)"), std::string::npos) << text;
  EXPECT_NE(text.find("load16(wsum0[0])"), std::string::npos) << text;
  EXPECT_NE(text.find("for wlane"), std::string::npos) << text;
}

TEST(ExpandFallbacks, AValueReadInOneSelectArmIsReadOnlyUnderIt) {
  // A Concat of a and a Winograd-like value over columns c < 16: the value
  // indexes its columns by c - 8, valid only in the arm c >= 8. Bound
  // before the select without its arm's condition, it read a[i, -8..-1]
  // and w[-8..-1, r] (squeezenet1_1's k39_cat_6, stop 65).
  Fixture f;
  Expr c = Var::make("c");
  Expr v = Binary::make(BinOp::Mul, Load::make(f32, "a", {f.i, c - Expr(8)}),
                        FloatImm::make(2.0));
  Expr fb = f.fallback(v, c - Expr(8));
  Expr relu = Select::make(cmp(BinOp::LT, fb, FloatImm::make(0.0)),
                           FloatImm::make(0.0), fb);
  Expr cat = Select::make(cmp(BinOp::LT, c, Expr(8)),
                          Load::make(f32, "a", {f.i, c}), relu);
  f.kernel(For::make(c, 0, Expr(16), ForKind::Serial, 0,
                     Store::make("y", {f.i, c}, cat)));
  EXPECT_EQ(expandFallbacks(f.m), 1);
  // Every access is proven in bounds: the reads at c - 8 happen only where
  // c >= 8, in the bound value and in the sum.
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  std::string text = printKernel(f.m.kernels[0]);
  EXPECT_EQ(text.find("finite_or_sum"), std::string::npos) << text;
  size_t let = text.find("let wv");
  ASSERT_NE(let, std::string::npos) << text;
  EXPECT_NE(text.find("!((c < 8))", let), std::string::npos) << text;
  size_t rare = text.find("} else (rare) {");
  ASSERT_NE(rare, std::string::npos) << text;
  size_t guard = text.find("if (!((c < 8)))", rare);
  ASSERT_NE(guard, std::string::npos) << text;
  EXPECT_LT(guard, text.find("for r", rare)) << text;
}

TEST(ExpandFallbacks, LetsAndAssignmentsOfAValueExpandToo) {
  Fixture f;
  Expr x = Var::make("x", f32), acc = Var::make("acc", f32);
  Expr v = Load::make(f32, "a", {f.i, Expr(1)});
  Stmt body = LocalDecl::make(
      acc, FloatImm::make(0.0),
      Block::make({LocalAssign::make(acc, f.fallback(v, Expr(1))),
                   LetStmt::make(x, f.fallback(v, Expr(2)),
                                 Store::make("y", {f.i, Expr(1)},
                                             Binary::make(BinOp::Add, x,
                                                          acc)))}));
  f.kernel(body);
  EXPECT_EQ(expandFallbacks(f.m), 2);
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  std::string text = printKernel(f.m.kernels[0]);
  EXPECT_NE(text.find("wlet"), std::string::npos) << text;
  EXPECT_EQ(text.find("finite_or_sum"), std::string::npos) << text;
}

} // namespace
