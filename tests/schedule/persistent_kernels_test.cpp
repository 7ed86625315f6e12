// Persistent kernels (compiler/schedule/persistent_kernels.h): which
// consecutive kernels run as one launch, and the verifier's checks of the
// groups (a sync point inside one would read a count its kernel has not
// written yet; a kernel with a fixed work-group or local arrays cannot be a
// part; counters that overlap would let one part's claims skip another's
// work).
#include "compiler/schedule/persistent_kernels.h"
#include "ir/verify.h"

#include <gtest/gtest.h>

using namespace aotc;

namespace {

const DType f32 = DType::Float32;

/// A chain of \p n kernels over 64 floats: kernel i reads b{i} and writes
/// b{i+1} (b0 the input, b{n} the output), one work-item per element.
struct Fixture {
  LoopModule m;

  explicit Fixture(int n) {
    m.name = "chain";
    for (int i = 0; i <= n; ++i) {
      ModuleBuffer b;
      b.name = "b" + std::to_string(i);
      b.dtype = f32;
      b.shape = {Expr(64)};
      b.role = i == 0   ? BufferRole::Input
               : i == n ? BufferRole::Output
                        : BufferRole::Arena;
      b.index = i == 0 || i == n ? 0 : -1;
      m.buffers.push_back(b);
    }
    for (int i = 0; i < n; ++i)
      m.kernels.push_back(kernel(i));
  }

  static Kernel kernel(int i) {
    Expr v = Var::make("i" + std::to_string(i));
    std::string in = "b" + std::to_string(i), out = "b" + std::to_string(i + 1);
    Kernel k;
    k.name = "k" + std::to_string(i) + "_step";
    k.buffers = {{in, f32, false, {Expr(64)}}, {out, f32, true, {Expr(64)}}};
    k.body = For::make(
        v, 0, 64, ForKind::Parallel, 0,
        Store::make(out, {v}, Load::make(f32, in, {v}) * FloatImm::make(2.0)));
    return k;
  }
};

std::string message(const Status &s) { return s.isOk() ? "ok" : s.message(); }

TEST(PersistentKernels, ConsecutiveKernelsRunAsOne) {
  Fixture f(3);
  ASSERT_EQ(persistentKernels(f.m), 1);
  ASSERT_EQ(f.m.persistent.size(), 1u);
  const LoopModule::Persistent &p = f.m.persistent[0];
  EXPECT_EQ(p.name, "p0_k0_k2");
  EXPECT_EQ(p.first, 0);
  EXPECT_EQ(p.last, 2);
  EXPECT_EQ(p.counterOffset, 0);
  // A done counter and 8 claim counters (one per range) per part and an
  // exit counter, 64 bytes each.
  EXPECT_EQ(LoopModule::Persistent::kClaimRanges, 8);
  EXPECT_EQ(f.m.counterBytes, (3 * 9 + 1) * 64);
  ASSERT_EQ(f.m.launches().size(), 1u);
  EXPECT_EQ(f.m.launches()[0].group, 0);
  EXPECT_EQ(message(verifyModule(f.m)), "ok");
  // Its parameters: each buffer once, written where a part writes it.
  Kernel sig = f.m.persistentSignature(0);
  ASSERT_EQ(sig.buffers.size(), 4u);
  EXPECT_FALSE(sig.buffers[0].written); // b0, the input
  EXPECT_TRUE(sig.buffers[1].written);  // b1: written by k0, read by k1
  EXPECT_TRUE(sig.buffers[3].written);
  EXPECT_EQ(persistentParameterBytes(sig), 4 * 16 + 16);
}

TEST(PersistentKernels, ASyncPointEndsAGroup) {
  Fixture f(5);
  f.m.syncs.push_back({1, -1, "b2"});
  ASSERT_EQ(persistentKernels(f.m), 2);
  EXPECT_EQ(f.m.persistent[0].first, 0);
  EXPECT_EQ(f.m.persistent[0].last, 1);
  EXPECT_EQ(f.m.persistent[1].first, 2);
  EXPECT_EQ(f.m.persistent[1].last, 4);
  EXPECT_EQ(f.m.persistent[1].counterOffset, (2 * 9 + 1) * 64);
  EXPECT_EQ(f.m.counterBytes, (2 * 9 + 1) * 64 + (3 * 9 + 1) * 64);
}

TEST(PersistentKernels, AWorkGroupKernelRunsOnItsOwn) {
  Fixture f(5);
  f.m.kernels[2].workGroupSize = 64;
  f.m.kernels[4].locals.push_back({"tile", f32, true, {Expr(8)}});
  ASSERT_EQ(persistentKernels(f.m), 1);
  EXPECT_EQ(f.m.persistent[0].first, 0);
  EXPECT_EQ(f.m.persistent[0].last, 1);
  // Kernel 3 alone between the two: no group of one.
  std::vector<LoopModule::Launch> l = f.m.launches();
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[1].kernel, 2);
  EXPECT_EQ(l[2].kernel, 3);
  EXPECT_EQ(l[2].group, -1);
}

TEST(PersistentKernels, ParametersPastTheBudgetStartAnotherGroup) {
  // 70 kernels of their own buffers: at most 62 buffers (16 bytes each)
  // with the counters fit 1024 bytes.
  Fixture f(70);
  ASSERT_EQ(persistentKernels(f.m), 2);
  for (int g = 0; g < 2; ++g)
    EXPECT_LE(persistentParameterBytes(f.m.persistentSignature(g)),
              kMaxParameterBytes);
  EXPECT_EQ(f.m.persistent[0].first, 0);
  EXPECT_EQ(f.m.persistent[1].first, f.m.persistent[0].last + 1);
  EXPECT_EQ(f.m.persistent[1].last, 69);
}

/// Kernel 0 of class 100, then classes 0, 1, 2 repeating: a network's
/// stem and its blocks of three kernels.
std::vector<int> stemAndBlocks(int n) {
  std::vector<int> c = {100};
  for (int i = 1; i < n; ++i)
    c.push_back((i - 1) % 3);
  return c;
}

TEST(PersistentKernels, RepeatedBlocksGetEqualGroups) {
  // 190 kernels: the longest groups would be 62, 62, 62 and 4 kernels,
  // none equal to another.
  Fixture greedy(190);
  ASSERT_EQ(persistentKernels(greedy.m), 4);
  EXPECT_EQ(greedy.m.persistent[1].first, 62);
  EXPECT_EQ(greedy.m.persistent[1].last, 123);

  // Cut at whole blocks: the stem with 20 blocks, then 20 blocks twice
  // (equal parts, in the same places), then what is left.
  Fixture f(190);
  std::vector<int> classes = stemAndBlocks(190);
  ASSERT_EQ(persistentKernels(f.m, &classes), 4);
  const std::vector<LoopModule::Persistent> &p = f.m.persistent;
  EXPECT_EQ(p[0].first, 0);
  EXPECT_EQ(p[0].last, 60);
  EXPECT_EQ(p[1].first, 61);
  EXPECT_EQ(p[1].last, 120);
  EXPECT_EQ(p[2].first, 121);
  EXPECT_EQ(p[2].last, 180);
  EXPECT_EQ(p[3].first, 181);
  EXPECT_EQ(p[3].last, 189);
  EXPECT_EQ(message(verifyModule(f.m)), "ok");

  // Repeats that fit one group leave it whole.
  Fixture small(30);
  std::vector<int> few = stemAndBlocks(30);
  ASSERT_EQ(persistentKernels(small.m, &few), 1);
  EXPECT_EQ(small.m.persistent[0].last, 29);

  // Classes that do not match the kernels are not used.
  Fixture wrong(190);
  std::vector<int> shorter = stemAndBlocks(100);
  ASSERT_EQ(persistentKernels(wrong.m, &shorter), 4);
  EXPECT_EQ(wrong.m.persistent[1].last, 123);
}

TEST(PersistentKernels, TheVerifierRefusesBadGroups) {
  {
    Fixture f(4);
    persistentKernels(f.m);
    f.m.syncs.push_back({1, -1, "b2"}); // a count read inside the group
    EXPECT_NE(message(verifyModule(f.m)).find("holds a sync point"),
              std::string::npos)
        << message(verifyModule(f.m));
  }
  {
    Fixture f(4);
    persistentKernels(f.m);
    f.m.kernels[2].workGroupSize = 64;
    EXPECT_NE(message(verifyModule(f.m)).find("fixed work-group"),
              std::string::npos);
  }
  {
    Fixture f(4);
    persistentKernels(f.m);
    f.m.counterBytes -= 64; // the last counter outside the buffer
    EXPECT_NE(message(verifyModule(f.m)).find("bytes of counters"),
              std::string::npos);
  }
  {
    Fixture f(6);
    f.m.persistent = {{"p0_a", 0, 2, 0}, {"p1_b", 2, 4, (3 * 9 + 1) * 64}};
    f.m.counterBytes = 2 * (3 * 9 + 1) * 64; // overlapping groups
    EXPECT_NE(message(verifyModule(f.m)).find("after the last group's"),
              std::string::npos);
  }
  {
    Fixture f(4);
    f.m.persistent = {{"k1_step", 0, 2, 0}}; // named like a kernel
    f.m.counterBytes = (3 * 9 + 1) * 64;
    EXPECT_NE(message(verifyModule(f.m)).find("named like another kernel"),
              std::string::npos);
  }
}

} // namespace
