// Loop IR: construction, printing, mutation sharing and statement
// simplification.
#include "ir/simplify.h"
#include "ir/visitor.h"

#include <gtest/gtest.h>

using namespace aotc;

namespace {

TEST(LoopIR, PrintsKernelStably) {
  Expr i = Var::make("i"), n = Var::make("n");
  Stmt body = Store::make("out", {i},
                          Call::make(DType::Float32, "exp",
                                     {Load::make(DType::Float32, "in", {i})}));
  Stmt loop = For::make(i, 0, n, ForKind::Parallel, 0, body);
  Kernel k{
      "k0",
      {{"in", DType::Float32, false, {n}}, {"out", DType::Float32, true, {n}}},
      {n},
      loop,
      false};
  EXPECT_EQ(printKernel(k), "kernel k0(in: f32[n], out: out f32[n], n: i64) {\n"
                            "  parallel<0> i in [0, 0 + n) {\n"
                            "    out[i] = exp(in[i])\n"
                            "  }\n"
                            "}\n");
}

TEST(LoopIR, MutatorSharesUnchangedSubtrees) {
  Expr i = Var::make("i");
  Expr load = Load::make(DType::Float32, "a", {i * 2});
  Stmt s =
      Block::make({Store::make("b", {i}, load), Store::make("c", {i}, load)});
  IRMutator identity;
  EXPECT_TRUE(identity.mutate(s).sameAs(s));
  Stmt sub = substitute(s, {{i, Var::make("j")}});
  EXPECT_FALSE(sub.sameAs(s));
  EXPECT_EQ(printStmt(sub), "b[j] = a[(j * 2)]\nc[j] = a[(j * 2)]\n");
  // Substitution is by identity: another variable named "i" is untouched.
  Expr other = Var::make("i");
  Stmt t = Store::make("b", {other}, load);
  EXPECT_EQ(printStmt(substitute(t, {{i, Expr(7)}})), "b[i] = a[(7 * 2)]\n");
}

TEST(LoopIR, StmtSimplifyUsesLoopRanges) {
  Expr i = Var::make("i");
  // for i in [0,16): out[i mod 16 + 16 * (i floordiv 16)] -> out[i]
  Stmt s = For::make(i, 0, 16, ForKind::Serial, 0,
                     Store::make("out", {mod(i, 16) + floorDiv(i, 16) * 16},
                                 FloatImm::make(1.0)));
  EXPECT_EQ(printStmt(simplify(s)),
            "for i in [0, 0 + 16) {\n  out[i] = 1.0\n}\n");
}

TEST(LoopIR, VisitorCountsLoads) {
  struct Counter : IRVisitor {
    int loads = 0;
    void visitLoad(const Load *op) override {
      ++loads;
      IRVisitor::visitLoad(op);
    }
  } c;
  Expr x = Load::make(DType::Float32, "a", {Expr(0)});
  c.visit(Store::make("b", {Expr(0)}, Binary::make(BinOp::Add, x, x)));
  EXPECT_EQ(c.loads, 2);
}

// OpenCL's && and || branch: a condition with nothing to guard is printed
// with & and | (both sides evaluated, vectorizable); one whose side reads
// memory or divides integers keeps the short circuit (the other side may be
// what keeps the read in bounds or the divisor non-zero).
TEST(LoopIR, OpenClAndOrShortCircuitOnlyWhereItGuards) {
  Expr i = Var::make("i"), d = Var::make("d");
  Expr v = Var::make("v", DType::Float32);
  VarNamer namer = [](const Var &x) { return x.name; };
  auto cl = [&](const Expr &e) {
    return printExpr(e, PrintDialect::OpenCL, &namer);
  };
  Expr pure = Binary::make(BinOp::Or, cmp(BinOp::GT, v, FloatImm::make(1.0)),
                           Call::make(DType::Bool, "isnan", {v}));
  EXPECT_EQ(cl(pure), "((v > 1.0f) | isnan(v))");
  Expr load = Load::make(DType::Float32, "x", {i});
  Expr guardedRead = logicalAnd(cmp(BinOp::LT, i, Expr(4)),
                                cmp(BinOp::GT, load, FloatImm::make(0.0)));
  EXPECT_EQ(cl(guardedRead), "((i < 4) && (x[i] > 0.0f))");
  Expr guardedDiv = logicalAnd(cmp(BinOp::NE, d, Expr(0)),
                               cmp(BinOp::GT, floorDiv(i, d), Expr(2)));
  EXPECT_NE(cl(guardedDiv).find("&&"), std::string::npos);
  EXPECT_EQ(printExpr(pure), "((v > 1.0) || isnan(v))"); // Text keeps ||
}

} // namespace
