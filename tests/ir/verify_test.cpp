// The Loop IR verifier: each invariant of ir/verify.h is broken once by a
// hand-made kernel, and well-formed kernels (including guarded accesses and
// symbolic extents) pass.
#include "ir/bounds.h"
#include "ir/verify.h"

#include <gtest/gtest.h>

using namespace aotc;

namespace {

const DType f32 = DType::Float32;

/// A module with symbol n in [0, 64], input a[n], constant c[4] and output
/// y[n], and one kernel built from \p body.
struct Fixture {
  Expr n = Var::make("n");
  Expr i = Var::make("i");
  LoopModule m;

  Fixture() {
    m.name = "verify";
    m.symbols = {{"n", {0, 64}, n}};
    ModuleBuffer a, c, y;
    a.name = "a", a.dtype = f32, a.shape = {n}, a.role = BufferRole::Input;
    c.name = "c", c.dtype = f32, c.shape = {4}, c.role = BufferRole::Constant;
    y.name = "y", y.dtype = f32, y.shape = {n}, y.role = BufferRole::Output;
    a.index = 0, c.index = 0, y.index = 0;
    m.buffers = {a, c, y};
  }

  Expr a(const Expr &idx) { return Load::make(f32, "a", {idx}); }
  Expr c(const Expr &idx) { return Load::make(f32, "c", {idx}); }

  /// parallel i < n { body }
  Status verify(const Stmt &inner, std::vector<KernelBuffer> bufs = {}) {
    if (bufs.empty())
      bufs = {{"a", f32, false, {n}},
              {"c", f32, false, {4}},
              {"y", f32, true, {n}}};
    Kernel k{
        "k", bufs, {n}, For::make(i, 0, n, ForKind::Parallel, 0, inner), false};
    m.kernels = {k};
    return verifyModule(m);
  }
};

std::string message(const Status &s) { return s.isOk() ? "ok" : s.message(); }

TEST(Verify, AcceptsWellFormedKernels) {
  Fixture f;
  // y[i] = a[i] + c[i mod 4]
  EXPECT_EQ(
      message(f.verify(Store::make(
          "y", {f.i}, Binary::make(BinOp::Add, f.a(f.i), f.c(mod(f.i, 4)))))),
      "ok");
  // Guarded: a[i + 1] only when i + 1 < n; c[i - 1] only when i >= 1.
  Expr next = f.i + 1, prev = f.i - 1;
  Expr v =
      Select::make(cmp(BinOp::LT, next, f.n), f.a(next), FloatImm::make(0.0));
  Expr w = Select::make(cmp(BinOp::GE, f.i, Expr(1)),
                        Select::make(cmp(BinOp::LT, prev, Expr(4)), f.c(prev),
                                     FloatImm::make(1.0)),
                        FloatImm::make(2.0));
  EXPECT_EQ(message(f.verify(
                Store::make("y", {f.i}, Binary::make(BinOp::Add, v, w)))),
            "ok");
  // A serial loop over a symbolic extent and a let.
  Expr k = Var::make("k"), acc = Var::make("acc", f32), t = Var::make("t");
  Stmt loop =
      For::make(k, 0, f.n - f.i, ForKind::Serial, 0,
                LetStmt::make(t, f.i + k,
                              LocalAssign::make(
                                  acc, Binary::make(BinOp::Add, acc, f.a(t)))));
  EXPECT_EQ(message(f.verify(LocalDecl::make(
                acc, FloatImm::make(0.0),
                Block::make({loop, Store::make("y", {f.i}, acc)})))),
            "ok");
}

TEST(Verify, RejectsUnprovenAccesses) {
  Fixture f;
  Status s = f.verify(Store::make("y", {f.i}, f.a(f.i + 1)));
  EXPECT_NE(message(s).find("kernel 'k': load from buffer 'a': index 0 "
                            "((i + 1)) is not provably inside dimension 0"),
            std::string::npos)
      << message(s);
  s = f.verify(Store::make("y", {f.i}, f.c(f.i)));
  EXPECT_NE(message(s).find("load from buffer 'c'"), std::string::npos)
      << message(s);
  s = f.verify(Store::make("y", {f.i - 1}, f.a(f.i)));
  EXPECT_NE(message(s).find("store into buffer 'y'"), std::string::npos)
      << message(s);
  // A guard on the wrong side does not count.
  Expr bad = Select::make(cmp(BinOp::LT, f.i + 1, f.n), FloatImm::make(0.0),
                          f.a(f.i + 1));
  EXPECT_FALSE(f.verify(Store::make("y", {f.i}, bad)).isOk());
  // A data-dependent index needs a check.
  Expr idx = Cast::make(DType::Int64, f.a(f.i));
  EXPECT_FALSE(f.verify(Store::make("y", {f.i}, f.a(idx))).isOk());
  // Wrong rank.
  EXPECT_NE(message(f.verify(Store::make("y", {f.i, f.i}, f.a(f.i))))
                .find("with 2 indices; its shape has rank 1"),
            std::string::npos);
}

TEST(Verify, VectorLoadsAreProvenInEveryLane) {
  Fixture f;
  // c has 4 elements: a 4-lane load from 0 is inside, from 1 its last lane
  // is not; a vector load is never left to the guard pass.
  Expr acc = Var::make("acc", f32, 4);
  auto sumOf = [&](const Expr &start) {
    Expr v = VectorLoad::make(f32, "c", {start}, 4);
    Stmt body = Block::make(
        {LocalAssign::make(acc, Call::make(f32, "fma", {v, v, acc})),
         Store::make("y", {f.i}, Lane::make(acc, 3))});
    return LocalDecl::make(acc, Broadcast::make(FloatImm::make(0.0), 4), body);
  };
  EXPECT_EQ(message(f.verify(sumOf(Expr(0)))), "ok");
  Status s = f.verify(sumOf(Expr(1)));
  EXPECT_NE(message(s).find("load from buffer 'c': index 0 (4) is not provably"),
            std::string::npos)
      << message(s);
  // Collected, it is one access marked as a vector (the guard pass leaves
  // it; speculate_loads.cpp keeps such a load where it was).
  // (once per operand it is: fma(v, v, acc) reads it twice).
  std::vector<UnprovenAccess> unproven = unprovenAccesses(f.m, f.m.kernels[0]);
  ASSERT_EQ(unproven.size(), 2u);
  for (const UnprovenAccess &u : unproven) {
    EXPECT_TRUE(u.vector);
    EXPECT_EQ(u.dims, std::vector<size_t>{0});
  }
  // Widths must agree: a vector stored, a 4-lane local given 8 lanes.
  EXPECT_FALSE(f.verify(Store::make("y", {f.i},
                                    VectorLoad::make(f32, "c", {Expr(0)}, 4)))
                   .isOk());
  Stmt wide = LocalDecl::make(
      acc, Broadcast::make(FloatImm::make(0.0), 8),
      Store::make("y", {f.i}, Lane::make(acc, 0)));
  EXPECT_FALSE(f.verify(wide).isOk());
}

TEST(Verify, StridedVectorLoadsAreProvenAtTheirLastLane) {
  Fixture f;
  // c has 4 elements: a 2-lane load with stride 2 reads 0 and 2 from 0,
  // 1 and 3 from 1, and 2 and 4 (past the end) from 2.
  Expr acc = Var::make("acc", f32, 2);
  auto sumOf = [&](const Expr &start) {
    Expr v = VectorLoad::make(f32, "c", {start}, 2, 2);
    Stmt body = Block::make(
        {LocalAssign::make(acc, Call::make(f32, "fma", {v, v, acc})),
         Store::make("y", {f.i}, Lane::make(acc, 1))});
    return LocalDecl::make(acc, Broadcast::make(FloatImm::make(0.0), 2), body);
  };
  EXPECT_EQ(message(f.verify(sumOf(Expr(0)))), "ok");
  EXPECT_EQ(message(f.verify(sumOf(Expr(1)))), "ok");
  EXPECT_FALSE(f.verify(sumOf(Expr(2))).isOk());
  // The stride is part of the expression: equal only with the same stride.
  EXPECT_TRUE(structurallyEqual(VectorLoad::make(f32, "c", {Expr(0)}, 2, 2),
                                VectorLoad::make(f32, "c", {Expr(0)}, 2, 2)));
  EXPECT_FALSE(structurallyEqual(VectorLoad::make(f32, "c", {Expr(0)}, 2, 2),
                                 VectorLoad::make(f32, "c", {Expr(0)}, 2)));
  // 16-bit floats and other strides have no printed form.
  EXPECT_DEATH_IF_SUPPORTED(
      VectorLoad::make(DType::Float16, "c", {Expr(0)}, 2, 2), "stride 2");
  EXPECT_DEATH_IF_SUPPORTED(VectorLoad::make(f32, "c", {Expr(0)}, 2, 3),
                            "stride 3");
}

TEST(Verify, VectorSelectsCheckBothArmsWithoutTheCondition) {
  Fixture f;
  // A float comparison of vectors selects lane by lane (a vector Clip): both
  // arms are evaluated, so a condition proves nothing about their loads.
  Expr v = VectorLoad::make(f32, "c", {Expr(0)}, 4);
  Expr zero = Broadcast::make(FloatImm::make(0.0), 4);
  Expr relu = Select::make(Binary::make(BinOp::LT, v, zero), zero, v);
  EXPECT_EQ(relu.lanes(), 4);
  Expr acc = Var::make("acc", f32, 4);
  auto storing = [&](const Expr &value) {
    return LocalDecl::make(acc, value,
                           Store::make("y", {f.i}, Lane::make(acc, 0)));
  };
  EXPECT_EQ(message(f.verify(storing(relu))), "ok");
  // The arm past c's end (a load from 1 reads lane 3 at index 4) is an
  // error even though a scalar select's condition could have guarded it.
  Expr past = VectorLoad::make(f32, "c", {Expr(1)}, 4);
  Expr guarded = Select::make(Binary::make(BinOp::LT, v, zero), past, v);
  EXPECT_FALSE(f.verify(storing(guarded)).isOk());
  // Integer vectors still have no comparisons.
  EXPECT_DEATH_IF_SUPPORTED(
      Binary::make(BinOp::LT, Broadcast::make(Expr(1), 4),
                   Broadcast::make(Expr(2), 4)),
      "lanes");
}

TEST(Verify, IndexChecksMakeDataIndicesSafe) {
  Fixture f;
  f.m.errors = {"bad index {value}"};
  Expr raw = Cast::make(DType::Int64, f.a(f.i));
  Expr checked = IndexCheck::make(raw, Expr(4), 0, true);
  Kernel k{"k",
           {{"a", f32, false, {f.n}},
            {"c", f32, false, {4}},
            {"y", f32, true, {f.n}}},
           {f.n},
           For::make(f.i, 0, f.n, ForKind::Parallel, 0,
                     Store::make("y", {f.i}, f.c(checked))),
           false};
  k.reportsErrors = true;
  f.m.kernels = {k};
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  // The kernel must declare that it reports errors.
  f.m.kernels[0].reportsErrors = false;
  EXPECT_NE(message(verifyModule(f.m)).find("does not report errors"),
            std::string::npos);
  // An extent that may be 0 leaves the check's result unproven.
  f.m.kernels[0].reportsErrors = true;
  f.m.kernels[0].body = For::make(
      f.i, 0, f.n, ForKind::Parallel, 0,
      Store::make("y", {f.i}, f.a(IndexCheck::make(raw, f.n, 0, true))));
  EXPECT_EQ(message(verifyModule(f.m)), "ok"); // inside the loop, n >= 1
  Expr m2 = Var::make("m");
  f.m.symbols.push_back({"m", {0, 8}, m2});
  f.m.kernels[0].symbols.push_back(m2);
  f.m.kernels[0].body = For::make(
      f.i, 0, f.n, ForKind::Parallel, 0,
      Store::make("y", {f.i}, f.a(IndexCheck::make(raw, m2, 0, true))));
  EXPECT_FALSE(verifyModule(f.m).isOk());
}

TEST(Verify, RejectsScopeAndDefinitionErrors) {
  Fixture f;
  Expr t = Var::make("t");
  // Use of an undefined variable, and of a variable named like a symbol.
  EXPECT_NE(message(f.verify(Store::make("y", {f.i}, f.a(t))))
                .find("variable 't' is neither defined"),
            std::string::npos);
  EXPECT_FALSE(
      f.verify(Store::make("y", {f.i}, f.a(Var::make("n") - 1))).isOk());
  // Defined twice.
  Stmt twice = LetStmt::make(
      t, f.i, LetStmt::make(t, f.i, Store::make("y", {f.i}, f.a(t))));
  EXPECT_NE(message(f.verify(twice)).find("defined twice"), std::string::npos);
  // Used after its scope.
  Expr k = Var::make("k");
  Stmt after = Block::make({For::make(k, 0, 1, ForKind::Serial, 0,
                                      Store::make("y", {f.i}, f.a(f.i))),
                            Store::make("y", {k}, f.a(f.i))});
  EXPECT_NE(message(f.verify(after)).find("outside its scope"),
            std::string::npos);
  // Assignment to something that is not a local.
  EXPECT_NE(message(f.verify(LocalAssign::make(f.i, f.i)))
                .find("not a local in scope"),
            std::string::npos);
}

TEST(Verify, RejectsTypeAndBufferErrors) {
  Fixture f;
  // Store of an i64 into f32.
  EXPECT_NE(message(f.verify(Store::make("y", {f.i}, f.i)))
                .find("store of a i64 into buffer 'y' of type f32"),
            std::string::npos);
  // Binary operands of two types (built directly, bypassing make()).
  Expr mixed = Expr(std::make_shared<Binary>(f32, BinOp::Add, f.a(f.i), f.i));
  EXPECT_NE(message(f.verify(Store::make("y", {f.i}, mixed)))
                .find("operands of + are f32 and i64"),
            std::string::npos);
  // A read-only buffer declared written, and a store into a buffer declared
  // read-only.
  EXPECT_NE(
      message(f.verify(Store::make("y", {f.i}, f.a(f.i)),
                       {{"a", f32, true, {f.n}}, {"y", f32, true, {f.n}}}))
          .find("buffer 'a' is read-only"),
      std::string::npos);
  EXPECT_NE(
      message(f.verify(Store::make("y", {f.i}, f.a(f.i)),
                       {{"a", f32, false, {f.n}}, {"y", f32, false, {f.n}}}))
          .find("declares read-only"),
      std::string::npos);
  // A view larger than the buffer.
  EXPECT_NE(
      message(f.verify(Store::make("y", {f.i}, f.a(f.i)),
                       {{"a", f32, false, {f.n + 1}}, {"y", f32, true, {f.n}}}))
          .find("may exceed"),
      std::string::npos);
  // An unknown buffer.
  EXPECT_NE(message(f.verify(Store::make("y", {f.i}, f.a(f.i)),
                             {{"a", f32, false, {f.n}},
                              {"y", f32, true, {f.n}},
                              {"ghost", f32, false, {1}}}))
                .find("'ghost' is not a buffer of the module"),
            std::string::npos);
}

TEST(Verify, RejectsMisplacedParallelLoops) {
  Fixture f;
  Expr j = Var::make("j");
  Stmt inner = For::make(j, 0, 4, ForKind::Parallel, 1,
                         Store::make("y", {f.i}, f.a(f.i)));
  EXPECT_NE(message(f.verify(For::make(Var::make("s"), 0, 1, ForKind::Serial, 0,
                                       inner)))
                .find("not in the kernel's outermost loop nest"),
            std::string::npos);
}

TEST(Verify, ArenaBuffersLiveTogetherMustNotOverlap) {
  Fixture f;
  ModuleBuffer t, u;
  t.name = "t", t.dtype = f32, t.shape = {f.n}, t.role = BufferRole::Arena;
  u = t;
  u.name = "u";
  t.arenaOffset = Expr(0);
  u.arenaOffset = f.n * 2; // overlaps t when n > 0... t holds 4n bytes
  f.m.buffers.push_back(t);
  f.m.buffers.push_back(u);
  f.m.arenaBytes = f.n * 8;
  Kernel k1{"k1",
            {{"a", f32, false, {f.n}}, {"t", f32, true, {f.n}}},
            {f.n},
            For::make(f.i, 0, f.n, ForKind::Parallel, 0,
                      Store::make("t", {f.i}, f.a(f.i))),
            false};
  Expr i2 = Var::make("i");
  Kernel k2{"k2",
            {{"t", f32, false, {f.n}}, {"u", f32, true, {f.n}}},
            {f.n},
            For::make(i2, 0, f.n, ForKind::Parallel, 0,
                      Store::make("u", {i2}, Load::make(f32, "t", {i2}))),
            false};
  f.m.kernels = {k1, k2};
  EXPECT_NE(message(verifyModule(f.m)).find("may overlap"), std::string::npos);
  f.m.buffers[4].arenaOffset = f.n * 4;
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  f.m.arenaBytes = f.n * 7;
  EXPECT_NE(message(verifyModule(f.m)).find("not provably inside the arena"),
            std::string::npos);
}

TEST(BoundsProver, SymbolicIntervalsAndFacts) {
  Expr n = Var::make("n"), m = Var::make("m"), i = Var::make("i"),
       j = Var::make("j");
  RangeEnv env;
  env.set(n, Range{0, 100});
  env.set(m, Range{0, 100});
  BoundsProver p(env);
  p.addLoop(i, 0, n);
  p.addLoop(j, 0, m);
  EXPECT_TRUE(p.proveInRange(i, n));
  EXPECT_FALSE(p.proveInRange(i, m));
  EXPECT_TRUE(p.proveInRange(i * m + j, n * m));
  EXPECT_TRUE(p.proveInRange(j * n + i, n * m));
  EXPECT_FALSE(p.proveInRange(i * m + j + 1, n * m));
  EXPECT_TRUE(p.proveInRange(floorDiv(i * m + j, m), n)); // inside, m >= 1
  EXPECT_TRUE(p.proveInRange(mod(i + j, m), m));
  size_t mark = p.mark();
  p.addFact(cmp(BinOp::LT, i + 1, n), true);
  EXPECT_TRUE(p.proveInRange(i + 1, n));
  p.release(mark);
  EXPECT_FALSE(p.proveInRange(i + 1, n));
  // 256 * ((x + 255) floordiv 256) >= x.
  EXPECT_TRUE(p.proveNonNegative(floorDiv(n * 4 + 255, 256) * 256 - n * 4));
}

// Two rounded-up buffers after a third of symbolic channels cover a
// buffer of the second's size (fuzz seed 91130, --large: an arena of three
// channel-blocked 3 x 3 convolutions' buffers over [d2, 32, d4, d5]):
// 256 * ceil(64 (2 d2 d4 + 4 d2)(d5 + 2) / 256) + 768 * ceil(128 d2 d4 d5 /
// 256) >= 128 d2 d4 d5.
TEST(BoundsProver, RoundedUpBuffersCoverAProduct) {
  Expr a = Var::make("d2"), b = Var::make("d4"), c = Var::make("d5");
  RangeEnv env;
  for (const Expr &v : {a, b, c})
    env.set(v, Range{0, 65536});
  BoundsProver p(env);
  Expr x = Expr(64) * ((Expr(2) * a * b + Expr(4) * a) * (c + Expr(2)));
  Expr y = Expr(64) * (Expr(2) * a * b * c);
  Expr arena = Expr(256) * floorDiv(x + Expr(255), Expr(256)) +
               Expr(768) * floorDiv(y + Expr(255), Expr(256));
  EXPECT_TRUE(p.proveNonNegative(arena - y));
  EXPECT_TRUE(p.proveNonNegative(arena - x - y));
  EXPECT_FALSE(p.proveNonNegative(arena - x - Expr(4) * y - Expr(1)));
  // A buffer over a fourth symbol before them: at the default range its
  // product may leave 64 bits (and wrap), so nothing is proven; with the
  // symbol at the one value a node requires of it (shape inference's
  // narrowToConstant: a Conv's input channels), it fits.
  Expr cc = Var::make("cc");
  auto first = [&] {
    return Expr(256) *
           floorDiv(Expr(4) * ((cc * a * b + Expr(2) * (cc * a)) *
                               (c + Expr(2))) +
                        Expr(255),
                    Expr(256));
  };
  env.set(cc, Range{0, 65536});
  BoundsProver wide(env);
  EXPECT_FALSE(wide.proveNonNegative(first()));
  env.set(cc, Range{16, 16});
  BoundsProver narrow(env);
  EXPECT_TRUE(narrow.proveNonNegative(first()));
  EXPECT_TRUE(narrow.proveNonNegative(first() + arena - first() - y));
  // A symbol of one value is that value in a proof: 12 (12 n d6) - 96 n >=
  // 0 where d6 is 3 (fuzz seed 95707: a ConvTranspose whose input channels
  // and width are one symbol), which intervals alone cannot show (n
  // appears twice), and not where d6 may be 0.
  Expr n = Var::make("n"), d6 = Var::make("d6");
  RangeEnv one;
  one.set(n, Range{0, 65536});
  one.set(d6, Range{3, 3});
  BoundsProver fixed(one);
  EXPECT_TRUE(fixed.proveNonNegative(Expr(12) * (Expr(12) * n * d6) -
                                     Expr(96) * n));
  EXPECT_FALSE(fixed.proveNonNegative(Expr(12) * (Expr(12) * n * d6) -
                                      Expr(433) * n));
  one.set(d6, Range{0, 3});
  BoundsProver open(one);
  EXPECT_FALSE(open.proveNonNegative(Expr(12) * (Expr(12) * n * d6) -
                                     Expr(96) * n));
}

// A long sum's blocks: rb over ceil(n / 65536) blocks, ri over
// min(65536, n - 65536 * rb) terms, reads element 65536 * rb + ri of n. With
// n of a value symbol's range (2^48) the interval of min(...) says nothing
// of n; the loop's min extent gives one fact per operand.
TEST(BoundsProver, MinExtentBoundsItsLoop) {
  Expr n = Var::make("n"), rb = Var::make("rb"), ri = Var::make("ri");
  RangeEnv env;
  env.set(n, Range{0, int64_t{1} << 48});
  BoundsProver p(env);
  p.addLoop(rb, 0, floorDiv(n + Expr(65535), Expr(65536)));
  p.addLoop(ri, 0, minExpr(Expr(65536), n - rb * Expr(65536)));
  EXPECT_TRUE(p.proveInRange(rb * Expr(65536) + ri, n));
  EXPECT_TRUE(p.proveInRange(ri, Expr(65536)));
  EXPECT_FALSE(p.proveInRange(rb * Expr(65536) + ri + 1, n));
}

// A fact in one variable bounds it: a register tile's check that its 6 rows
// fit in 28 (t <= 3) proves its stride-2 reads inside a 56-wide row, which
// comparing the read with the fact term by term does not.
TEST(BoundsProver, FactBoundsItsVariable) {
  Expr t = Var::make("t"), r = Var::make("r");
  BoundsProver p{RangeEnv()};
  p.addLoop(t, 0, Expr(5));
  p.addLoop(r, 0, Expr(3));
  EXPECT_FALSE(p.proveInRange(t * 12 + 10, Expr(56)));
  size_t mark = p.mark();
  p.addFact(cmp(BinOp::LE, t * 6 + 6, Expr(28)), true);
  EXPECT_TRUE(p.proveInRange(t * 12 + 10, Expr(56)));     // t <= 3: 46
  EXPECT_TRUE(p.proveInRange(t * 12 + 10 + r * 4, Expr(56)));  // 54
  EXPECT_FALSE(p.proveInRange(t * 12 + 10 + r * 6, Expr(56))); // 58
  p.release(mark);
  EXPECT_FALSE(p.proveInRange(t * 12 + 10, Expr(56)));
  // A multiple of a fact: 8 outputs at stride 2 from `8 * t + 8 <= n`.
  Expr n = Var::make("n");
  RangeEnv env;
  env.set(n, Range{0, 1000});
  BoundsProver q(env);
  q.addLoop(t, 0, floorDiv(n + Expr(7), Expr(8)));
  q.addLoop(r, 0, Expr(3));
  q.addFact(cmp(BinOp::LE, t * 8 + 8, n), true);
  EXPECT_TRUE(q.proveInRange(t * 16 + 14 + r * 2, n * 2 + 5));
  EXPECT_FALSE(q.proveInRange(t * 16 + 14 + r * 2, n * 2 + 2)); // 2n + 2
  // A rounded-up size covers what it rounds: 256 * ((x + 123) floordiv 256)
  // + 3072 >= x + 2940 for any x, and not x + 2941 (x = n = 132). For x =
  // 1960 * n, a multiple of 8, the remainder of x + 123 by 256 is at most
  // 251: the true bound is x + 2944 (n = 16 reaches it), which the prover
  // does not reach; x + 2945 is false.
  EXPECT_TRUE(q.proveNonNegative(floorDiv(n * 1960 + 123, 256) * 256 + 3072 -
                                 (n * 1960 + 2940)));
  EXPECT_FALSE(q.proveNonNegative(floorDiv(n * 1960 + 123, 256) * 256 +
                                  3072 - (n * 1960 + 2945)));
  EXPECT_FALSE(q.proveNonNegative(floorDiv(n + 123, 256) * 256 + 3072 -
                                  (n + 2941)));
  // A store of 4 lanes at (32 * t + 4 * r) mod 56 stays in a row of 56:
  // the mod is a multiple of 4, at most 52.
  EXPECT_TRUE(q.proveInRange(mod(t * 32 + r * 4, Expr(56)) + 3, Expr(56)));
  EXPECT_FALSE(q.proveInRange(mod(t * 4 + r, Expr(56)) + 3, Expr(56)));
  // The else branch: t >= 4, so 12 * t >= 48.
  p.addFact(cmp(BinOp::LE, t * 6 + 6, Expr(28)), false);
  EXPECT_TRUE(p.proveNonNegative(t * 12 - 48));
  EXPECT_FALSE(p.proveNonNegative(t * 12 - 49));
}

// A clamped window index, min(max(x, 0), max(n - 1, 0)), is inside n where
// a fact gives n >= 1: the interior tiles of a depthwise convolution over a
// symbolic width n, whose check is 8 * t + 8 <= n (one arm of the min, then
// both of the max). Found by the fuzzer (seed 54008): the verifier refused
// the vector loads that speculate_loads.cpp had hoisted.
TEST(BoundsProver, MinAndMaxArms) {
  Expr n = Var::make("n"), t = Var::make("t"), r = Var::make("r");
  RangeEnv env;
  env.set(n, Range{0, 1000});
  BoundsProver p(env);
  p.addLoop(t, 0, floorDiv(n + Expr(7), Expr(8)));
  p.addLoop(r, 0, Expr(3));
  Expr x = t * 8 + r - 1;
  Expr clamped = minExpr(maxExpr(x, Expr(0)), maxExpr(n - 1, Expr(0)));
  size_t mark = p.mark();
  p.addFact(cmp(BinOp::LE, t * 8 + 8, n), true);
  EXPECT_TRUE(p.proveInRange(clamped, n));
  // The tile's last pixel, clamped the same way; clamped to n, it may be n.
  EXPECT_TRUE(p.proveInRange(minExpr(maxExpr(x + 7, Expr(0)), maxExpr(n - 1, Expr(0))), n));
  EXPECT_FALSE(p.proveInRange(minExpr(maxExpr(x + 7, Expr(0)), n), n));
  // A max below an extent needs both arms inside: x + 8 reaches 8 t + 9.
  EXPECT_FALSE(p.proveInRange(maxExpr(x + 8, Expr(0)), t * 8 + 9));
  EXPECT_TRUE(p.proveInRange(maxExpr(x + 8, Expr(0)), t * 8 + 10));
  p.release(mark);
  // Without the tile's check, n may be 0 below the loop's own range... the
  // loop runs only where (n + 7) floordiv 8 >= 1, so n >= 1 still.
  EXPECT_TRUE(p.proveInRange(maxExpr(n - 1, Expr(0)), n));
  EXPECT_FALSE(p.proveInRange(maxExpr(n, Expr(0)), n));
}

// A Slice's reads over a symbolic dim, against the count shape inference
// gave it (fuzz seeds 40279, 60044 and 60128 of CI's slices, which the
// verifier refused; tests/fuzz/regressions/slice_symbolic_count_*).
TEST(BoundsProver, SliceCounts) {
  Expr d = Var::make("d"), i = Var::make("i"), t = Var::make("t");
  RangeEnv env;
  env.set(d, Range{0, 65536});
  {
    // starts 4, ends 3, step 3: an empty slice, read at 3 i + min(4, d) by a
    // loop over max(((min(3, d) - min(4, d)) + 2) floordiv 3, 0): needs the
    // loop's clamped count, a floor division's upper bound and a min's arm.
    BoundsProver p(env);
    Expr count =
        maxExpr(floorDiv(minExpr(Expr(3), d) - minExpr(Expr(4), d) + Expr(2), Expr(3)),
           Expr(0));
    p.addLoop(i, 0, count);
    EXPECT_TRUE(p.proveInRange(i * 3 + minExpr(Expr(4), d), d));
    // Not one further: 3 i + min(4, d) + 3 may be d (starts 1, ends d).
    BoundsProver q(env);
    q.addLoop(i, 0,
              maxExpr(floorDiv(d - minExpr(Expr(1), d) + Expr(2), Expr(3)), Expr(0)));
    EXPECT_TRUE(q.proveInRange(i * 3 + minExpr(Expr(1), d), d));
    EXPECT_FALSE(q.proveInRange(i * 3 + minExpr(Expr(1), d) + Expr(1), d));
  }
  {
    // ends -2: vectors of 16 at 16 t under their tile's check against
    // min(max(d - 2, 0), d).
    BoundsProver p(env);
    Expr count = minExpr(maxExpr(d - Expr(2), Expr(0)), d);
    p.addLoop(t, 0, floorDiv(count + Expr(15), Expr(16)));
    p.addFact(cmp(BinOp::LE, t * 16 + 16, count), true);
    EXPECT_TRUE(p.proveInRange(t * 16 + 15, d));
    EXPECT_FALSE(p.proveInRange(t * 16 + 16, d));
  }
  {
    // A negative step: starts 15, ends -20, step -2, read at
    // min(15, d - 1) - 2 i.
    BoundsProver p(env);
    Expr start = minExpr(Expr(15), d - Expr(1));
    Expr end = minExpr(maxExpr(d - Expr(20), Expr(-1)), d - Expr(1));
    p.addLoop(i, 0, maxExpr(floorDiv(start - end + Expr(1), Expr(2)), Expr(0)));
    EXPECT_TRUE(p.proveInRange(start - i * 2, d));
    EXPECT_FALSE(p.proveInRange(start - i * 2 - Expr(1), d));
  }
  {
    // The floor division's upper bound where it counts negatively is tried
    // after keeping it whole, which cancels it against the same division in
    // a positive term's bound: an arena rounded up to 256 bytes holding 96 f
    // + 64 bytes, f = (x + 2) floordiv 3 (fuzz seed 20261142, which the
    // bound alone refused).
    BoundsProver p(env);
    Expr f = floorDiv(d + Expr(2), Expr(3));
    Expr arena = floorDiv(f * 96 + Expr(63), Expr(256)) * 256 + Expr(256);
    EXPECT_TRUE(p.proveNonNegative(arena - (f * 96 + Expr(64))));
    EXPECT_FALSE(p.proveNonNegative(arena - (f * 96 + Expr(257))));
  }
  {
    // A max count whose other arm is positive says nothing of the first.
    BoundsProver p(env);
    p.addLoop(i, 0, maxExpr(d - Expr(5), Expr(1)));
    EXPECT_FALSE(p.proveInRange(i + Expr(5), d));
    EXPECT_TRUE(p.proveInRange(i, maxExpr(d - Expr(5), Expr(1))));
  }
}

// A fact over symbols only (a graph's assumption, checked at run time:
// GatherElements' indices no wider than its data, q <= m) joins a loop's
// fact: a vector tile under 16 t + 16 <= q reads the data's columns 16 t ..
// 16 t + 15 < m.
TEST(BoundsProver, SymbolFactJoinsALoopFact) {
  Expr m = Var::make("m"), q = Var::make("q"), t = Var::make("t");
  RangeEnv env;
  env.set(m, Range{0, 65536});
  env.set(q, Range{0, 65536});
  BoundsProver p(env);
  p.addLoop(t, 0, floorDiv(q + Expr(15), Expr(16)));
  p.addFact(cmp(BinOp::LE, t * 16 + 16, q), true);
  EXPECT_FALSE(p.proveInRange(t * 16 + 15, m));
  p.addFact(cmp(BinOp::LE, q, m), true);
  EXPECT_TRUE(p.proveInRange(t * 16 + 15, m));
  EXPECT_FALSE(p.proveInRange(t * 16 + 16, m));
}

// Products of symbols expanded into monomials: a kernel's view of 6 d2 d4 +
// 2 d2 elements inside a buffer of d2 * 2 * (3 d4 + 1) (a ConvTranspose
// over symbolic sizes, fuzz seed 20261234, whose compile the verifier
// refused; tests/fuzz/regressions/view_symbolic_product).
TEST(BoundsProver, ExpandedProducts) {
  Expr a = Var::make("a"), b = Var::make("b"), t = Var::make("t");
  RangeEnv env;
  env.set(a, Range{0, 1000});
  env.set(b, Range{0, 1000});
  BoundsProver p(env);
  Expr buffer = a * Expr(2) * (b * Expr(3) + Expr(1));
  Expr view = Expr(6) * (a * b) + Expr(2) * a;
  EXPECT_TRUE(p.proveNonNegative(buffer - view));
  EXPECT_FALSE(p.proveNonNegative(buffer - view - Expr(1)));
  EXPECT_FALSE(p.proveNonNegative(buffer - view - a * b));
  EXPECT_TRUE(p.proveNonNegative(buffer - Expr(6) * (a * b)));
  // Each atom must be non-negative: t may be -1.
  p.addLoop(t, Expr(-1), Expr(3));
  EXPECT_FALSE(p.proveNonNegative(a * t * Expr(2)));
}

// A fact in several variables bounds each by the others' ranges: a channel
// Concat over blocks of 32 (channel_blocks.h) reads its first input, 2 blocks,
// at block i1 in the vector tile whose check is 32 * i1 + 16 * t + 15 < 64.
TEST(BoundsProver, FactInSeveralVariables) {
  Expr i = Var::make("i"), t = Var::make("t");
  BoundsProver p{RangeEnv()};
  p.addLoop(i, 0, Expr(6));
  p.addLoop(t, 0, Expr(2));
  EXPECT_FALSE(p.proveInRange(i, Expr(2)));
  size_t mark = p.mark();
  p.addFact(cmp(BinOp::LT, i * 32 + t * 16 + 15, Expr(64)), true);
  EXPECT_TRUE(p.proveInRange(i, Expr(2)));  // i <= (48 - 16 * 0) / 32 = 1
  EXPECT_FALSE(p.proveInRange(i, Expr(1))); // i = 1, t = 0 is allowed
  EXPECT_TRUE(p.proveInRange(t, Expr(2)));
  p.release(mark);
  // The else branch: 32 * i + 16 * t >= 49 with t <= 1 gives 32 * i >= 33,
  // i >= 2.
  p.addFact(cmp(BinOp::LT, i * 32 + t * 16 + 15, Expr(64)), false);
  EXPECT_TRUE(p.proveNonNegative(i - 2));
  EXPECT_FALSE(p.proveNonNegative(i - 3));
  // A variable without a range bounds nothing.
  Expr u = Var::make("u");
  BoundsProver q{RangeEnv()};
  q.addLoop(i, 0, Expr(6));
  q.addFact(cmp(BinOp::LT, i * 32 + u, Expr(64)), true);
  EXPECT_FALSE(q.proveInRange(i, Expr(2)));
}

// A fact whose coefficients share a factor is that factor times a fact
// with the constant rounded down (the same integer points): a GPU GEMM
// view's tile of 4 pixel columns over 2 x 2 maps stores batch row
// 8 * gn + lx under 32 * gn + 4 * lx < 4 * n (cnn_small, generic-gpu).
TEST(BoundsProver, FactWithACommonFactor) {
  Expr n = Var::make("n"), g = Var::make("g"), l = Var::make("l");
  RangeEnv env;
  env.set(n, Range{0, 65536});
  BoundsProver p(env);
  p.addLoop(g, 0, floorDiv(n * 4 + Expr(31), Expr(32)));
  p.addLoop(l, 0, Expr(8));
  EXPECT_FALSE(p.proveInRange(g * 8 + l, n));
  size_t mark = p.mark();
  p.addFact(cmp(BinOp::LT, g * 32 + l * 4, n * 4), true);
  EXPECT_TRUE(p.proveInRange(g * 8 + l, n));
  EXPECT_FALSE(p.proveInRange(g * 8 + l + 1, n)); // the last row is n - 1
  p.release(mark);
  // 4 * x <= 4 * n - 3 is x <= n - 1 (floor of -3 / 4 is -1), not x <= n - 2.
  p.addFact(cmp(BinOp::LE, g * 32 + l * 4, n * 4 - Expr(3)), true);
  EXPECT_TRUE(p.proveInRange(g * 8 + l, n));
  EXPECT_FALSE(p.proveInRange(g * 8 + l, n - Expr(1)));
  // The else branch of x < n read as 4s: 4 * x >= 4 * n, x >= n.
  BoundsProver q(env);
  q.addLoop(g, 0, Expr(100));
  q.addLoop(l, 0, Expr(8));
  q.addFact(cmp(BinOp::LT, g * 32 + l * 4, n * 4), false);
  EXPECT_TRUE(q.proveNonNegative(g * 8 + l - n));
  EXPECT_FALSE(q.proveNonNegative(g * 8 + l - n - Expr(1)));
}

// A multiple of a fact that no fixed list holds: a register tile of 12 rows
// in a partial row group (register_tile.cpp, rowGroup: 167 M tiles of 2000
// rows in groups of 42, g over 4 groups) reads rows 12 * (42 * g + i) + r,
// in bounds by 12 times the group's check 42 * g + i < 167, the multiple
// that cancels i; the last tile has 8 rows (2000 = 166 * 12 + 8).
TEST(BoundsProver, MultipleThatCancelsAVariable) {
  Expr g = Var::make("g"), i = Var::make("i"), r = Var::make("r");
  BoundsProver p{RangeEnv()};
  p.addLoop(g, 0, Expr(4));
  p.addLoop(i, 0, Expr(42));
  Expr tile = g * 42 + i;
  EXPECT_FALSE(p.proveInRange(tile * 12 + 7, Expr(2000))); // g = 3: 2011
  p.addFact(cmp(BinOp::LT, tile, Expr(167)), true);
  EXPECT_TRUE(p.proveInRange(tile * 12 + 7, Expr(2000))); // 1999
  EXPECT_FALSE(p.proveInRange(tile * 12 + 8, Expr(2000))); // 2000
  size_t mark = p.mark();
  p.addLoop(r, 0, Expr(8));
  EXPECT_TRUE(p.proveInRange(tile * 12 + r, Expr(2000)));
  EXPECT_FALSE(p.proveInRange(tile * 12 + r + 1, Expr(2000)));
  p.release(mark);
  // Without the fact's variable in the read, no multiple: the group
  // alone (g <= 3) does not bound 504 * g + 1500.
  EXPECT_FALSE(p.proveInRange(g * 504 + 1500, Expr(2000)));
}

// A quotient below a symbol: a GEMM view's column p of 81 * n (81 pixels
// of each of n images) names image p floordiv 81 < n where p < 81 * n is
// known (gemm_view.cpp); X - (a floordiv c) >= 0 is c * X + c - 1 - a >= 0.
TEST(BoundsProver, QuotientBelowFromFact) {
  Expr n = Var::make("n"), g = Var::make("g"), l = Var::make("l");
  RangeEnv env;
  env.set(n, Range{0, 1000});
  BoundsProver p(env);
  p.addLoop(g, 0, floorDiv(n * 81 + Expr(31), Expr(32)));
  p.addLoop(l, 0, Expr(32));
  Expr pos = g * 32 + l;
  EXPECT_FALSE(p.proveInRange(floorDiv(pos, Expr(81)), n)); // g's last block
  size_t mark = p.mark();
  p.addFact(cmp(BinOp::LT, pos, n * 81), true);
  EXPECT_TRUE(p.proveInRange(floorDiv(pos, Expr(81)), n));
  EXPECT_TRUE(p.proveInRange(mod(floorDiv(pos, Expr(9)), Expr(9)), Expr(9)));
  EXPECT_FALSE(p.proveInRange(floorDiv(pos, Expr(81)) + 1, n)); // off by one
  EXPECT_FALSE(p.proveInRange(floorDiv(pos, Expr(80)), n));     // a wrong c
  p.release(mark);
  EXPECT_FALSE(p.proveInRange(floorDiv(pos, Expr(81)), n));
}

// Tile over a symbolic dimension d (lower_shape.cpp): out[i] = in[i - (i
// floordiv d) * d] for i over [0, 2 d). The loop runs only where 2 d >= 1,
// so where d >= 1, and then the index is i mod d (fuzz seed 60549: Tile of
// a [d0, 5] input was a compile error on every profile).
TEST(BoundsProver, RemainderByAFactorOfTheLoopsExtent) {
  Expr d = Var::make("d"), e = Var::make("e"), i = Var::make("i");
  RangeEnv env;
  env.set(d, Range{0, 65536});
  env.set(e, Range{0, 100});
  BoundsProver p(env);
  size_t mark = p.mark();
  p.addLoop(i, 0, d * Expr(2));
  Expr rem = i - floorDiv(i, d) * d;
  EXPECT_TRUE(p.proveInRange(rem, d));
  EXPECT_TRUE(p.proveInRange(i - d * floorDiv(i, d), d));
  EXPECT_FALSE(p.proveInRange(rem + 1, d));               // off by one
  EXPECT_FALSE(p.proveInRange(i - floorDiv(i, d) * e, d)); // not the divisor
  EXPECT_FALSE(p.proveInRange(i - floorDiv(i, e) * e, d)); // another divisor
  p.release(mark);
  // d * e >= 1 makes both factors >= 1.
  p.addLoop(i, 0, d * e * Expr(3));
  EXPECT_TRUE(p.proveInRange(i - floorDiv(i, e) * e, e));
  EXPECT_TRUE(p.proveInRange(mod(i, d), d));
  // Without a loop over a multiple of d, d may be 0.
  BoundsProver q(env);
  q.addLoop(i, 0, e);
  EXPECT_FALSE(q.proveInRange(i - floorDiv(i, d) * d, d));
}

} // namespace

// Work-groups: local arrays and barriers only in a kernel with a fixed
// work-group whose innermost parallel loop is the place in the group;
// a barrier only where every work-item of the group reaches it.
TEST(Verify, BarriersAndLocalArraysNeedAFixedWorkGroup) {
  Fixture f;
  Expr g = Var::make("g"), lid = Var::make("lid"), s = Var::make("s");
  KernelBuffer tile{"tile", f32, true, {Expr(8)}};
  // tile[lid] = c[lid mod 4]; barrier; y[8 g + lid] = tile[7 - lid] where
  // 8 g + lid < n, over groups g of 8 work-items.
  Expr at = g * Expr(8) + lid;
  auto kernel = [&](const Stmt &middle, int64_t wg, int64_t extent) {
    Stmt body = Block::make(
        {Store::make("tile", {lid}, f.c(mod(lid, Expr(4)))), middle,
         IfThenElse::make(cmp(BinOp::LT, at, f.n),
                          Store::make("y", {at},
                                      Load::make(f32, "tile",
                                                 {Expr(7) - lid})))});
    Stmt loops = For::make(
        g, 0, floorDiv(f.n + Expr(7), Expr(8)), ForKind::Parallel, 0,
        For::make(lid, 0, Expr(extent), ForKind::Parallel, 0, body));
    Kernel k{"k",
             {{"c", f32, false, {4}}, {"y", f32, true, {f.n}}},
             {f.n},
             loops,
             false};
    k.locals = {tile};
    k.workGroupSize = wg;
    f.m.kernels = {k};
    return message(verifyModule(f.m));
  };
  EXPECT_EQ(kernel(Barrier::make(), 8, 8), "ok");
  // In a loop of uniform bounds.
  EXPECT_EQ(kernel(For::make(s, 0, Expr(3), ForKind::Serial, 0,
                             Barrier::make()),
                   8, 8),
            "ok");
  EXPECT_NE(kernel(Barrier::make(), 0, 8).find("local arrays need a fixed "
                                               "work-group size"),
            std::string::npos);
  EXPECT_NE(kernel(Barrier::make(), 4, 8).find("innermost parallel loop of "
                                               "that extent"),
            std::string::npos);
  EXPECT_NE(kernel(IfThenElse::make(cmp(BinOp::LT, lid, Expr(4)),
                                    Barrier::make()),
                   8, 8)
                .find("a barrier under a condition"),
            std::string::npos);
  EXPECT_NE(kernel(For::make(s, 0, lid, ForKind::Serial, 0, Barrier::make()),
                   8, 8)
                .find("not the same for every work-item"),
            std::string::npos);
  // Local arrays are bounds-checked like buffers.
  Stmt outside = Store::make("tile", {lid + Expr(1)}, FloatImm::make(0.0));
  EXPECT_NE(kernel(outside, 8, 8).find("store into buffer 'tile'"),
            std::string::npos);
}

// A prefetch reads nothing: its index may lie past the buffer's end (the
// tile ahead of the last one), but its buffer must be a parameter, its rank
// the buffer's and its index an integer over variables in scope.
TEST(Verify, PrefetchChecksBufferAndRankNotBounds) {
  Fixture f;
  Stmt store = Store::make("y", {f.i}, f.a(f.i));
  EXPECT_EQ(message(f.verify(Block::make(
                {Prefetch::make("a", {f.i + f.n + 64}), store}))),
            "ok");
  EXPECT_NE(message(f.verify(Block::make({Prefetch::make("b", {f.i}), store})))
                .find("prefetch of buffer 'b', which is not a parameter"),
            std::string::npos);
  EXPECT_NE(message(f.verify(
                    Block::make({Prefetch::make("a", {f.i, f.i}), store})))
                .find("with 2 indices; its shape has rank 1"),
            std::string::npos);
  Expr stray = Var::make("stray");
  EXPECT_NE(message(f.verify(Block::make({Prefetch::make("a", {stray}), store})))
                .find("stray"),
            std::string::npos);
  EXPECT_NE(message(f.verify(Block::make(
                    {Prefetch::make("a", {FloatImm::make(1.0)}), store})))
                .find("prefetch of buffer 'a': index 0 is not an integer"),
            std::string::npos);
}

// Private arrays (a row loop's accumulators, RegisterTile::rowLoop): any
// work-group, bounds-checked like buffers, static shapes, names of their
// own.
TEST(Verify, PrivateArraysAreCheckedLikeBuffers) {
  Fixture f;
  Expr q = Var::make("q");
  auto kernel = [&](const Stmt &extra, std::vector<KernelBuffer> privates) {
    // acc[q] = a[i] * q for q < 4; y[i] = acc[3] (+ extra).
    Stmt fill = For::make(
        q, 0, Expr(4), ForKind::Serial, 0,
        Store::make("acc", {q}, f.a(f.i) * Cast::make(f32, q)));
    Stmt body = Block::make(
        {fill, Store::make("y", {f.i}, Load::make(f32, "acc", {Expr(3)})),
         extra});
    Kernel k{"k",
             {{"a", f32, false, {f.n}}, {"y", f32, true, {f.n}}},
             {f.n},
             For::make(f.i, 0, f.n, ForKind::Parallel, 0, body),
             false};
    k.privates = std::move(privates);
    f.m.kernels = {k};
    return message(verifyModule(f.m));
  };
  KernelBuffer acc{"acc", f32, true, {Expr(4)}};
  EXPECT_EQ(kernel(Block::make({}), {acc}), "ok");
  EXPECT_NE(kernel(Store::make("acc", {Expr(4)}, FloatImm::make(0.0)), {acc})
                .find("store into buffer 'acc'"),
            std::string::npos);
  EXPECT_NE(kernel(Block::make({}), {})
                .find("buffer 'acc', which is not a parameter"),
            std::string::npos);
  KernelBuffer named{"y", f32, true, {Expr(4)}};
  EXPECT_NE(kernel(Block::make({}), {acc, named})
                .find("private array 'y' has the name of a buffer"),
            std::string::npos);
  KernelBuffer symbolic{"acc", f32, true, {f.n}};
  EXPECT_NE(kernel(Block::make({}), {symbolic}).find("non-static shape"),
            std::string::npos);
}

// The provers of a module's kernels share their proofs: a question asked
// again in another kernel's loop over the same range is answered from the
// cache, and only that question is (another range, fact or symbol, or
// other symbol ranges, is proven afresh or not at all).
TEST(ProofCache, AnswersTheSameQuestionOnly) {
  Expr n = Var::make("n"), m = Var::make("m");
  RangeEnv env;
  env.set(n, Range{1, 100});
  env.set(m, Range{1, 100});
  ProofCache cache;
  // A kernel's two loops, over \p outer and 8, with fresh Vars: its
  // tile's index outer * 8 + inner.
  struct Tile {
    BoundsProver p;
    Expr outer = Var::make("o"), inner = Var::make("i");
    Tile(const RangeEnv &env, ProofCache &cache, const Expr &extent)
        : p(env, &cache) {
      p.addLoop(outer, 0, extent);
      p.addLoop(inner, 0, Expr(8));
    }
    Expr index() const { return outer * 8 + inner; }
  };
  Tile first(env, cache, n);
  EXPECT_FALSE(first.p.proveInRange(first.index() + 1, n * 8));
  EXPECT_EQ(cache.proofs(), 1u); // only index >= 0
  EXPECT_TRUE(first.p.proveInRange(first.index(), n * 8));
  EXPECT_EQ(cache.proofs(), 3u);
  EXPECT_EQ(cache.hits(), 0u);

  // Another kernel, other Vars, the same loops: answered.
  Tile second(env, cache, n);
  EXPECT_TRUE(second.p.proveInRange(second.index(), n * 8));
  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(cache.proofs(), 3u);
  // The loops' variables swapped: other questions (false where n < 8).
  EXPECT_FALSE(second.p.proveInRange(second.inner * 8 + second.outer, n * 8));
  EXPECT_EQ(cache.hits(), 2u);

  // One more element in the outer loop: other questions, and false.
  Tile wider(env, cache, n + 1);
  EXPECT_FALSE(wider.p.proveInRange(wider.index(), n * 8));
  EXPECT_EQ(cache.hits(), 2u);
  // With the fact that bounds it, proven; released, false again.
  size_t mark = wider.p.mark();
  wider.p.addFact(cmp(BinOp::LT, wider.outer, n), true);
  EXPECT_TRUE(wider.p.proveInRange(wider.index(), n * 8));
  wider.p.release(mark);
  EXPECT_FALSE(wider.p.proveInRange(wider.index(), n * 8));

  // Another symbol of the same range: other questions.
  Tile other(env, cache, m);
  const size_t hits = cache.hits();
  EXPECT_FALSE(other.p.proveInRange(other.index(), n * 8));
  EXPECT_EQ(cache.hits(), hits);

  // Other symbol ranges (a folding program's): proofs of their own.
  RangeEnv small;
  small.set(n, Range{1, 50});
  small.set(m, Range{1, 100});
  Tile elsewhere(small, cache, n);
  const size_t proofs = cache.proofs();
  EXPECT_TRUE(elsewhere.p.proveInRange(elsewhere.index(), n * 8));
  EXPECT_EQ(cache.hits(), hits);
  EXPECT_EQ(cache.proofs(), proofs + 2);
  Tile again(small, cache, n);
  EXPECT_TRUE(again.p.proveInRange(again.index(), n * 8));
  EXPECT_EQ(cache.hits(), hits + 2);
  // What the small ranges proved is not an answer for the wide ones: with
  // n up to 50, index < 8 n <= 400; with n up to 100 it need not be.
  Tile narrowFirst(small, cache, n);
  EXPECT_TRUE(
      narrowFirst.p.proveNonNegative(Expr(50) * 8 - 1 - narrowFirst.index()));
  Tile wide(env, cache, n);
  EXPECT_FALSE(wide.p.proveNonNegative(Expr(50) * 8 - 1 - wide.index()));
}

// The cache's questions are written as bytes (BoundsProver::canonical):
// two questions that differ only in an operator, a constant, a select's
// arm or a node written as text (an index check) are different questions. Each pair asks the provable one first,
// so that a key shared with the other would answer it wrongly.
TEST(ProofCache, TellsApartQuestionsThatDifferInOneNode) {
  RangeEnv env;
  ProofCache cache;
  // A fresh prover over one loop i in [0, 8), and its i.
  auto ask = [&](const std::function<Expr(const Expr &)> &question) {
    BoundsProver p(env, &cache);
    Expr i = Var::make("i");
    p.addLoop(i, 0, Expr(8));
    return p.proveNonNegative(question(i));
  };
  using Q = std::function<Expr(const Expr &)>;
  auto minMax = [](BinOp op) {
    return Q([op](const Expr &i) {
      return Expr(6) - Binary::make(op, i, Expr(6));
    });
  };
  EXPECT_TRUE(ask(minMax(BinOp::Min)));
  EXPECT_FALSE(ask(minMax(BinOp::Max))); // i = 7
  auto constant = [](int64_t c) {
    return Q([c](const Expr &i) { return Expr(c) - i; });
  };
  EXPECT_TRUE(ask(constant(7)));
  EXPECT_FALSE(ask(constant(6)));
  auto otherArm = [](int64_t c) {
    return Q([c](const Expr &i) {
      return Expr(7) - Select::make(cmp(BinOp::LT, i, Expr(3)), i, Expr(c));
    });
  };
  EXPECT_TRUE(ask(otherArm(7)));
  EXPECT_FALSE(ask(otherArm(8))); // i >= 3 reads 8
  auto checked = [](int64_t extent) {
    return Q([extent](const Expr &i) {
      Expr data = Cast::make(DType::Int64, Load::make(DType::Int32, "idx", {i}));
      return Expr(7) - IndexCheck::make(data, Expr(extent), 0, false);
    });
  };
  EXPECT_TRUE(ask(checked(8)));
  EXPECT_FALSE(ask(checked(9)));
  EXPECT_GE(cache.proofs(), 4u);
  EXPECT_EQ(cache.hits(), 0u);
  // And the same question again is answered from the cache.
  EXPECT_TRUE(ask(checked(8)));
  EXPECT_EQ(cache.hits(), 1u);
}
