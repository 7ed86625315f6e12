// The guard-accesses pass (compiler/schedule/guard_accesses.cpp): an
// access the verifier cannot prove gets a run-time check, and the kernel
// then verifies. Vector loads and stores are checked at their first lane
// against the size less the lanes after it, so that the last lane is
// inside too.
#include "compiler/schedule/schedule.h"
#include "ir/verify.h"

#include <gtest/gtest.h>

using namespace aotc;

namespace {

const DType f32 = DType::Float32;

/// Symbol n in [0, 64]; input a[n], output y[n]; one kernel over
/// i < (n + 3) floordiv 4 whose body \p inner reads and writes 4-lane
/// vectors from 4 i: the last vector reaches past n unless 4 divides it,
/// which the prover cannot know.
struct Fixture {
  Expr n = Var::make("n");
  Expr i = Var::make("i");
  LoopModule m;

  Fixture() {
    m.name = "guard";
    m.symbols = {{"n", {0, 64}, n}};
    ModuleBuffer a, y;
    a.name = "a", a.dtype = f32, a.shape = {n}, a.role = BufferRole::Input;
    y.name = "y", y.dtype = f32, y.shape = {n}, y.role = BufferRole::Output;
    a.index = 0, y.index = 0;
    m.buffers = {a, y};
  }

  void kernel(const Stmt &inner) {
    Kernel k{"k",
             {{"a", f32, false, {n}}, {"y", f32, true, {n}}},
             {n},
             For::make(i, 0, floorDiv(n + Expr(3), Expr(4)),
                       ForKind::Parallel, 0, inner),
             false};
    m.kernels = {k};
  }
};

std::string message(const Status &s) { return s.isOk() ? "ok" : s.message(); }

TEST(GuardAccesses, VectorLoadsAndStoresAreCheckedAtTheirFirstLane) {
  Fixture f;
  Expr at = f.i * Expr(4);
  Expr v = VectorLoad::make(f32, "a", {at}, 4);
  f.kernel(Store::make("y", {at}, Binary::make(BinOp::Mul, v, v)));
  // Unproven: the vector load (one node, read twice) and the vector store.
  EXPECT_NE(message(verifyModule(f.m)).find("is not provably inside"),
            std::string::npos);
  EXPECT_EQ(guardUnprovenAccesses(f.m), 2);
  const Kernel &k = f.m.kernels[0];
  EXPECT_TRUE(k.reportsErrors);
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  std::string text = printKernel(k);
  // The check bounds the first lane by n - 3: the load's and the store's.
  EXPECT_NE(text.find("if (((checked((i * 4), (n - 3), #2) >= 0) && ((n - 3) >= 1)))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("select(((checked((i * 4), (n - 3), #0) >= 0) && "
                      "((n - 3) >= 1)), load4(a[checked((i * 4), (n - 3), #0)]), "
                      "broadcast4(0.0))"),
            std::string::npos)
      << text;
  // Each check has its own message, naming the vector: each read of the
  // load, and the store.
  ASSERT_EQ(f.m.errors.size(), 3u);
  for (const std::string &e : f.m.errors)
    EXPECT_NE(e.find("for a vector of 4 lanes, which must start below"),
              std::string::npos)
        << e;
}

TEST(GuardAccesses, StridedVectorLoadsSpanTheirStride) {
  Fixture f;
  // Every other element of a, from 8 i: its last lane is 8 i + 6.
  Expr v = VectorLoad::make(f32, "a", {f.i * Expr(8)}, 4, 2);
  f.kernel(Store::make("y", {f.i}, Lane::make(v, 3)));
  EXPECT_EQ(guardUnprovenAccesses(f.m), 2); // the load, the scalar store
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  std::string text = printKernel(f.m.kernels[0]);
  EXPECT_NE(text.find("load4s2(a[checked((i * 8), (n - 6), #0)])"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("y[checked(i, n, #1)]"), std::string::npos) << text;
}

TEST(GuardAccesses, ProvenVectorsStayUnchecked) {
  Fixture f;
  // Over i < n floordiv 4 every vector is inside.
  Expr at = f.i * Expr(4);
  Kernel k{"k",
           {{"a", f32, false, {f.n}}, {"y", f32, true, {f.n}}},
           {f.n},
           For::make(f.i, 0, floorDiv(f.n, Expr(4)), ForKind::Parallel, 0,
                     Store::make("y", {at},
                                 VectorLoad::make(f32, "a", {at}, 4))),
           false};
  f.m.kernels = {k};
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  EXPECT_EQ(guardUnprovenAccesses(f.m), 0);
  EXPECT_FALSE(f.m.kernels[0].reportsErrors);
}

} // namespace
