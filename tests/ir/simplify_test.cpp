// Unit tests for the symbolic simplifier: check(input, expected) pairs in the
// Halide style, plus range-based proofs and evaluation.
#include "ir/simplify.h"
#include "ir/stmt.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>

using namespace aotc;

namespace {

/// One variable per name for the whole test (variables are objects: two
/// Var::make calls give two variables).
Expr v(const char *n) {
  static std::map<std::string, Expr> vars;
  auto it = vars.find(n);
  if (it == vars.end())
    it = vars.emplace(n, Var::make(n)).first;
  return it->second;
}

RangeEnv env() {
  RangeEnv e;
  e.set(v("batch"), Range{1, 64});
  e.set(v("i"), Range{0, 15});
  e.set(v("j"), Range{0, 3});
  e.set(v("n"), Range{0, 1000});
  return e;
}

void check(const Expr &in, const std::string &expected) {
  EXPECT_EQ(printExpr(simplify(in, env())), expected) << printExpr(in);
}

TEST(Simplify, VariablesAreObjectsNotNames) {
  // Two variables that share a name are still two variables.
  Expr x1 = Var::make("x"), x2 = Var::make("x");
  EXPECT_FALSE(structurallyEqual(x1, x2));
  EXPECT_FALSE(simplify(x1 - x2).isConstValue(0));
  EXPECT_TRUE(simplify(x1 - x1).isConstValue(0));
  EXPECT_FALSE(proveEqual(x1, x2));
  RangeEnv e;
  e.set(x1, Range{0, 3});
  EXPECT_TRUE(boundsOf(x1, e).has_value());
  EXPECT_FALSE(boundsOf(x2, e).has_value());
  EXPECT_NE(exprKey(x1), exprKey(x2));
}

TEST(Simplify, KeysAreCachedPerNodeAndStructural) {
  Expr x = Var::make("x"), y = Var::make("y");
  Expr a = floorDiv(x * 3 + y, Expr(4)), b = floorDiv(x * 3 + y, Expr(4));
  // Computed once per node: the same text object on the second request.
  const std::string &k = exprKeyRef(a);
  EXPECT_EQ(&k, &exprKeyRef(a));
  // Distinct nodes of the same structure have equal keys, others differ.
  EXPECT_NE(&k, &exprKeyRef(b));
  EXPECT_EQ(k, exprKeyRef(b));
  EXPECT_EQ(k, exprKey(a));
  EXPECT_NE(k, exprKeyRef(floorDiv(x * 3 + y, Expr(5))));
  EXPECT_NE(k, exprKeyRef(floorDiv(Var::make("x") * 3 + y, Expr(4))));
}

TEST(Simplify, NestedSumsFlattenInOnePass) {
  // A sum of sums, differences and literal multiples of sums: one linear
  // form, like terms combined, whatever the nesting.
  Expr x = v("x"), y = v("y"), z = v("z");
  check(((x + y) - (y - z)) * 2 + (z + x) * 3 - (x * 5 + z), "(4 * z)");
  check((x + 1) * 4 - ((x + 2) * 2 + (x * 2 - 1)), "1");
  check(((x - y) + (y - z)) + ((z - x) + 7), "7");
}

TEST(Simplify, UsesVarAndIndexChecksLookEverywhere) {
  Expr x = Var::make("x"), y = Var::make("y");
  const Var *xv = x.as<Var>();
  EXPECT_TRUE(usesVar(x, xv));
  EXPECT_FALSE(usesVar(y, xv));
  EXPECT_TRUE(usesVar(Select::make(cmp(BinOp::LT, y, Expr(3)), y, x + 1), xv));
  EXPECT_TRUE(usesVar(Cast::make(DType::Int32, minExpr(y, x * 2)), xv));
  EXPECT_FALSE(usesVar(Cast::make(DType::Int32, minExpr(y, y * 2)), xv));
  Expr check = IndexCheck::make(y, x, 1, false);
  EXPECT_TRUE(usesVar(check, xv));
  EXPECT_TRUE(hasIndexCheck(y + check * 2));
  EXPECT_FALSE(hasIndexCheck(y + x * 2));
  std::vector<Expr> vars = freeVars(x * y + floorDiv(y, Expr(3)));
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_TRUE(vars[0].sameAs(x));
  EXPECT_TRUE(vars[1].sameAs(y));
}

TEST(Simplify, ConstantsAndIdentities) {
  check(Expr(3) + Expr(4), "7");
  check(v("x") + 0, "x");
  check((v("x") + 3) + 4, "(x + 7)");
  check(v("x") * 2 + v("x") * 3, "(5 * x)");
  check(v("x") - v("x"), "0");
  check((v("x") + v("y")) - v("y"), "x");
  check(v("y") + v("x"), "(x + y)");
}

TEST(Simplify, FloorDivAndModByConstants) {
  check(floorDiv(v("x") * 8 + 4, 4), "((2 * x) + 1)");
  check(mod(v("x") * 8 + 5, 4), "1");
  check(floorDiv(v("i"), 16), "0"); // i in [0,15]
  check(mod(v("i"), 16), "i");
  check(floorDiv(v("j") + 4 * v("n"), 4), "n"); // j in [0,3]
  check(mod(v("j") + 4 * v("n"), 4), "j");
  check(floorDiv(floorDiv(v("x"), 4), 8), "(x floordiv 32)");
  check(mod(mod(v("x"), 32), 8), "(x mod 8)");
  check(floorDiv(mod(v("x"), 32), 8), "((x floordiv 8) mod 4)");
}

// a mod c where a's terms share a factor f with c takes only the values
// k mod f + multiples of f: (32*x + 4*y) mod 56 <= 52, (8*x + 3) mod 12 in
// {3, 7, 11}.
TEST(Simplify, ModBoundsKeepTheFactorOfTheTerms) {
  auto range = [](const Expr &e) {
    auto r = boundsOf(e, env());
    return r ? std::to_string(r->min) + ".." + std::to_string(r->max)
             : std::string("none");
  };
  EXPECT_EQ(range(mod(v("n") * 32 + v("i") * 4, 56)), "0..52");
  EXPECT_EQ(range(mod(v("n") * 8 + 3, 12)), "3..11");
  EXPECT_EQ(range(mod(v("n") * 8 - 3, 12)), "1..9"); // -3 mod 4 = 1
  EXPECT_EQ(range(mod((v("n") * 4 + 2) * 3, 24)), "6..18");
  EXPECT_EQ(range(mod(v("n") * 24 + 5, 12)), "5..5");
  EXPECT_EQ(range(mod(v("n") * 3 + 1, 8)), "0..7");  // no common factor
  EXPECT_EQ(range(mod(v("n") * v("i") * 4, 8)), "0..4"); // (n*i) * 4
  // Nor where a is not known to stay inside its type.
  EXPECT_EQ(range(mod(v("x") * 8, 12)), "0..11");
  // Every value agrees.
  for (int64_t x = -50; x < 50; ++x) {
    int64_t a = 8 * x - 3, m = ((a % 12) + 12) % 12;
    EXPECT_TRUE(m >= 1 && m <= 9 && (m - 1) % 4 == 0) << x;
  }
}

// (g*x + r) floordiv c = x floordiv (c/g) and (g*x + r) mod c = g * (x mod
// (c/g)) + r where g divides c and 0 <= r < g: a 32-column tile's column
// 16*j + i (i < 16) over 64-wide panels, once its 64s are split off.
TEST(Simplify, FactorsOfTheDivisorSplitOffABoundedRest) {
  check(floorDiv(v("j") * 16 + v("i"), 32), "(j floordiv 2)");
  check(floorDiv(v("x") * 16 + v("i"), 32), "(x floordiv 2)");
  check(floorDiv(v("x") * 48 + v("i") + 64 * v("n"), 32),
        "(((3 * x) floordiv 2) + (2 * n))");
  check(mod(v("x") * 16 + v("i"), 32), "((16 * (x mod 2)) + i)");
  check(mod(v("j") * 16 + v("i"), 64), "(i + (16 * j))");
  // The constant splits too: 16*x + 3 + j is 16*x + (3 + j), 3 + j < 16.
  check(floorDiv(v("x") * 16 + v("j") + 3, 32), "(x floordiv 2)");
  // Not where the rest may reach g: i + j up to 18 >= 16.
  check(floorDiv(v("x") * 16 + v("i") + v("j"), 32),
        "(((i + j) + (16 * x)) floordiv 32)");
  // Nor where the rest may be negative.
  check(floorDiv(v("x") * 16 - v("j"), 32), "(((16 * x) - j) floordiv 32)");
  // A mod that only moves a factor out stays as it was.
  check(mod(v("x") * 6 + 2, 128), "(((6 * x) + 2) mod 128)");
  // Every value of x in [-200, 200), i in [0, 16): the rules agree with
  // floor division.
  for (int64_t x = -200; x < 200; ++x)
    for (int64_t i = 0; i < 16; i += 5) {
      Expr fd = simplify(floorDiv(v("x") * 48 + v("i"), 32), env());
      Expr md = simplify(mod(v("x") * 48 + v("i"), 32), env());
      std::vector<std::pair<Expr, int64_t>> at{{v("x"), x}, {v("i"), i}};
      int64_t y = 48 * x + i;
      int64_t q = y >= 0 ? y / 32 : -((-y + 31) / 32);
      EXPECT_EQ(interpret(fd, at), std::optional<int64_t>(q)) << x << " " << i;
      EXPECT_EQ(interpret(md, at), std::optional<int64_t>(y - 32 * q))
          << x << " " << i;
    }
}

TEST(Simplify, RelinearizeUndoesDelinearize) {
  Expr x = v("x");
  // A reshape [N,64] -> [N,4,16] read back as flat: 64*(x/64) + 16*((x/16)%4) +
  // x%16
  Expr flat = floorDiv(x, 64) * 64 + mod(floorDiv(x, 16), 4) * 16 + mod(x, 16);
  check(flat, "x");
  check(floorDiv(x, 16) * 16 + mod(x, 16), "x");
  check(mod(floorDiv(x, 16), 4) * 16 + mod(x, 16), "(x mod 64)");
}

TEST(Simplify, SymbolicRangeProofs) {
  RangeEnv e = env();
  EXPECT_TRUE(proveLE(v("i"), Expr(15), e));
  EXPECT_FALSE(proveLE(v("i"), Expr(14), e));
  EXPECT_TRUE(proveLE(v("batch"), v("batch") * 2, e));
  EXPECT_TRUE(proveEqual(v("batch") * 12, v("batch") * 3 * 4, e));
  EXPECT_FALSE(proveEqual(v("batch"), v("n"), e));
  check(minExpr(v("i"), Expr(20)), "i");
  check(maxExpr(v("i"), Expr(20)), "20");
  check(cmp(BinOp::LT, v("i"), Expr(16)), "1");
  check(cmp(BinOp::GE, v("i"), Expr(0)), "1");
}

TEST(Simplify, Evaluate) {
  Expr e = floorDiv(v("batch") * 3 + 7, 2);
  EXPECT_EQ(evaluate(e, {{v("batch"), 5}}), 11);
  EXPECT_EQ(evaluate(mod(Expr(-3), Expr(4)), {}), 1);
  EXPECT_EQ(evaluate(floorDiv(Expr(-3), Expr(4)), {}), -1);
  EXPECT_FALSE(evaluate(v("unbound") + 1, {}).has_value());
}

TEST(Simplify, InterpretKnowsIndexMathAndNothingElse) {
  Expr e = floorDiv(v("batch") * 3 + 7, 2);
  EXPECT_EQ(interpret(e, {{v("batch"), 5}}), 11);
  EXPECT_EQ(interpret(Binary::make(BinOp::Mod, Expr(-3), Expr(4)), {}), 1);
  EXPECT_EQ(interpret(Binary::make(BinOp::FloorDiv, Expr(-3), Expr(4)), {}),
            -1);
  EXPECT_EQ(
      interpret(Binary::make(BinOp::Mod, v("i"), Expr(4)), {{v("i"), -5}}), 3);
  EXPECT_FALSE(interpret(v("unbound") + 1, {}).has_value());
  // A divisor that is not positive, C division, floats: not index math.
  EXPECT_FALSE(interpret(Binary::make(BinOp::FloorDiv, v("i"), v("j")),
                         {{v("i"), 3}, {v("j"), 0}})
                   .has_value());
  EXPECT_FALSE(
      interpret(Binary::make(BinOp::Div, v("i"), Expr(2)), {{v("i"), 3}})
          .has_value());
  EXPECT_FALSE(interpret(FloatImm::make(1.5), {}).has_value());
  // Results the type cannot hold.
  Expr big = Var::make("big", DType::Int32);
  EXPECT_EQ(interpret(Cast::make(DType::Int32, v("i")), {{v("i"), 7}}),
            std::nullopt); // a Cast is not interpreted
  Expr i32 = Binary::make(BinOp::Mul, big, big);
  EXPECT_EQ(interpret(i32, {{big, 46340}}), 46340 * 46340);
  EXPECT_FALSE(interpret(i32, {{big, 46341}}).has_value());
  EXPECT_FALSE(interpret(Binary::make(BinOp::Mul, v("n"), v("n")),
                         {{v("n"), int64_t(1) << 40}})
                   .has_value());
  // And and Or decide by their first operand where it does.
  Expr unknown = cmp(BinOp::LT, v("unbound"), Expr(3));
  EXPECT_EQ(interpret(Binary::make(BinOp::And, cmp(BinOp::LT, v("i"), Expr(2)),
                                   unknown),
                      {{v("i"), 5}}),
            0);
  EXPECT_EQ(interpret(Binary::make(BinOp::Or, cmp(BinOp::LT, v("i"), Expr(2)),
                                   unknown),
                      {{v("i"), 1}}),
            1);
  // Select reads the arm it takes only.
  EXPECT_EQ(interpret(Select::make(cmp(BinOp::GE, v("i"), Expr(2)), v("i") - 2,
                                   v("unbound")),
                      {{v("i"), 5}}),
            3);
}

// Random index expressions and conditions (the register tiles' tests of
// their rows and columns) agree with evaluate, which simplifies, wherever
// that knows them; interpret knows every one of them.
TEST(Simplify, InterpretAgreesWithEvaluateOnRandomIndexMath) {
  std::mt19937 rng(1234);
  const Expr vars[] = {v("i"), v("j"), v("n")};
  std::function<Expr(int)> intExpr, boolExpr;
  intExpr = [&](int depth) -> Expr {
    int pick = static_cast<int>(rng() % (depth > 0 ? 10 : 2));
    auto sub = [&] { return intExpr(depth - 1); };
    switch (pick) {
    case 0:
      return vars[rng() % 3];
    case 1:
      return Expr(static_cast<int64_t>(rng() % 41) - 20);
    case 2:
      return Binary::make(BinOp::Add, sub(), sub());
    case 3:
      return Binary::make(BinOp::Sub, sub(), sub());
    case 4:
      return Binary::make(BinOp::Mul, sub(), sub());
    case 5:
      return Binary::make(BinOp::FloorDiv, sub(),
                          Expr(static_cast<int64_t>(rng() % 7) + 1));
    case 6:
      return Binary::make(BinOp::Mod, sub(),
                          Expr(static_cast<int64_t>(rng() % 7) + 1));
    case 7:
      return Binary::make(rng() % 2 ? BinOp::Min : BinOp::Max, sub(), sub());
    default:
      return Select::make(boolExpr(depth - 1), sub(), sub());
    }
  };
  boolExpr = [&](int depth) -> Expr {
    int pick = static_cast<int>(rng() % (depth > 0 ? 4 : 1));
    static const BinOp cmps[] = {BinOp::EQ, BinOp::NE, BinOp::LT,
                                 BinOp::LE, BinOp::GT, BinOp::GE};
    switch (pick) {
    case 0:
      return Binary::make(cmps[rng() % 6], intExpr(depth), intExpr(depth));
    case 1:
      return Binary::make(BinOp::And, boolExpr(depth - 1), boolExpr(depth - 1));
    case 2:
      return Binary::make(BinOp::Or, boolExpr(depth - 1), boolExpr(depth - 1));
    default:
      return Not::make(boolExpr(depth - 1));
    }
  };
  int compared = 0;
  for (int t = 0; t < 3000; ++t) {
    Expr e = t % 2 ? intExpr(3) : boolExpr(3);
    std::vector<std::pair<Expr, int64_t>> values;
    for (const Expr &x : vars)
      values.push_back({x, static_cast<int64_t>(rng() % 61) - 30});
    std::optional<int64_t> got = interpret(e, values);
    ASSERT_TRUE(got.has_value()) << printExpr(e);
    std::optional<int64_t> want = evaluate(e, values);
    if (!want)
      continue;
    ++compared;
    ASSERT_EQ(*got, *want) << printExpr(e);
  }
  EXPECT_GT(compared, 2500);
}

TEST(Simplify, BoundsOf) {
  RangeEnv e = env();
  auto r = boundsOf(v("batch") * 4 - 1, e);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->min, 3);
  EXPECT_EQ(r->max, 255);
  EXPECT_FALSE(boundsOf(v("unknown"), e).has_value());
}

} // namespace

namespace {

// Regression: recombination erased the term that owned the expression it was
// still reading (a use-after-free that crashed later compiles).
TEST(Simplify, RecombineOwnsItsOperands) {
  for (int i = 0; i < 50; ++i) {
    Expr x = Var::make("x") * Expr(3) + Var::make("y");
    Expr e = mod(floorDiv(x, 4), 5) * 4 + mod(x, 4);
    Expr s = simplify(e);
    EXPECT_EQ(printExpr(s), "(((3 * x) + y) mod 20)");
    Expr f = floorDiv(x, 4) * 4 + mod(x, 4);
    EXPECT_EQ(printExpr(simplify(f)), "((3 * x) + y)");
  }
}

// The keys after the last whole block of 8 (attention.cpp): s - 8 * (s
// floordiv 8) is s mod 8, whose bounds [0, 7] the prover knows, so a block's
// vector load at 8 * jb + 7, jb < s floordiv 8, is proven inside s.
TEST(Simplify, RestOfWholeBlocksIsAMod) {
  Expr s = Var::make("s");
  EXPECT_EQ(printExpr(simplify(s - floorDiv(s, 8) * 8)), "(s mod 8)");
  EXPECT_EQ(printExpr(simplify(s * 3 - floorDiv(s, 8) * 24 + 1)),
            "((3 * (s mod 8)) + 1)");
  // Only a whole multiple of the divisor: 4 * (s floordiv 8) stays.
  EXPECT_EQ(printExpr(simplify(s - floorDiv(s, 8) * 4)),
            "(s - (4 * (s floordiv 8)))");
  RangeEnv e;
  e.set(s, Range{0, 1000});
  EXPECT_TRUE(proveLE(floorDiv(s, 8) * 8, s, e));
}

} // namespace

TEST(Simplify, BranchConditionsNarrowTheirVariable) {
  // A register tile's full-tile branch: inside `6 * t + 6 <= 128`, t <= 20,
  // so its rows' wrap-around `(6 * t + 2) mod 128` is `6 * t + 2`; outside
  // (t = 21 here) the remainder stays.
  Expr t = Var::make("t");
  Expr row = mod(Expr(6) * t + Expr(2), Expr(128));
  Stmt s = For::make(
      t, Expr(0), Expr(22), ForKind::Serial, 0,
      IfThenElse::make(cmp(BinOp::LE, Expr(6) * t + Expr(6), Expr(128)),
                       Store::make("a", {row}, Expr(1)),
                       Store::make("b", {row}, Expr(2))));
  std::string text = printStmt(simplify(s));
  EXPECT_NE(text.find("a[((6 * t) + 2)]"), std::string::npos) << text;
  EXPECT_NE(text.find("b[(((6 * t) + 2) mod 128)]"), std::string::npos)
      << text;
  // Negated and conjoined conditions narrow too; an unrelated one does not.
  Expr u = Var::make("u");
  Stmt s2 = For::make(
      t, Expr(0), Expr(22), ForKind::Serial, 0,
      For::make(u, Expr(0), Expr(4), ForKind::Serial, 0,
                IfThenElse::make(
                    Not::make(logicalAnd(
                        cmp(BinOp::GT, Expr(6) * t, Expr(120)),
                        cmp(BinOp::LT, u, Expr(2)))),
                    Store::make("c", {row}, Expr(3)),
                    Store::make("d", {row, mod(u + Expr(2), Expr(4))},
                                Expr(4)))));
  text = printStmt(simplify(s2));
  EXPECT_NE(text.find("c[(((6 * t) + 2) mod 128)]"), std::string::npos)
      << text;
  EXPECT_NE(text.find(", (u + 2)] = 4"), std::string::npos) << text;
}

namespace {

// evaluate() at one value of each Var gives a value for every floor
// division and remainder of a multiple of it (it gave none for (3 * x) mod 2
// at x outside [0, 1]: the bounds of x mod 2 were [0, 1] for any x).
TEST(Simplify, EvaluateRemaindersAtOneValue) {
  auto floorDivRef = [](int64_t a, int64_t d) {
    return a / d - (a % d != 0 && (a < 0) != (d < 0));
  };
  for (int64_t k : {1, 3, 5}) {
    for (int64_t d : {2, 3, 16}) {
      for (int64_t x = -40; x <= 40; ++x) {
        const int64_t a = k * x + 7;
        auto q = evaluate(floorDiv(v("x") * k + 7, d), {{v("x"), x}});
        auto r = evaluate(mod(v("x") * k + 7, Expr(d)), {{v("x"), x}});
        ASSERT_TRUE(q.has_value() && r.has_value())
            << k << " " << d << " " << x;
        EXPECT_EQ(*q, floorDivRef(a, d)) << k << " " << d << " " << x;
        EXPECT_EQ(*r, a - d * floorDivRef(a, d)) << k << " " << d << " " << x;
      }
    }
  }
}

// The bounds of a remainder over a range within one period of its divisor
// are the range shifted; across a period boundary, the whole period.
TEST(Simplify, RemainderBoundsWithinOnePeriod) {
  RangeEnv e;
  e.set(v("i"), Range{17, 30});
  auto r = boundsOf(mod(v("i"), Expr(16)), e);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->min, 1);
  EXPECT_EQ(r->max, 14);
  e.set(v("j"), Range{-5, -2});
  r = boundsOf(mod(v("j"), Expr(16)), e);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->min, 11);
  EXPECT_EQ(r->max, 14);
  e.set(v("k"), Range{15, 17});
  r = boundsOf(mod(v("k"), Expr(16)), e);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->min, 0);
  EXPECT_EQ(r->max, 15);
}

} // namespace
