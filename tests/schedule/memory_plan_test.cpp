// Arena planning (compiler/schedule/memory_plan.cpp): buffers whose
// lifetimes do not overlap share space, and of the two assignments (first
// fit, best fit) the smaller arena is kept; a kernel that stores in place
// (compiler/schedule/in_place.h) writes its output over the input it reads
// for the last time.
#include "ir/in_place.h"
#include "compiler/schedule/schedule.h"

#include <gtest/gtest.h>

#include <functional>

namespace aotc {
namespace {

/// A module of \p floats arena buffers b0, b1, ... of the given sizes (in
/// floats) and one kernel per entry of \p kernels, which lists the buffers
/// the kernel uses.
LoopModule module(const std::vector<int64_t> &floats,
                  const std::vector<std::vector<int>> &kernels) {
  LoopModule m;
  for (size_t i = 0; i < floats.size(); ++i) {
    ModuleBuffer b;
    b.name = "b" + std::to_string(i);
    b.shape = {Expr(floats[i])};
    m.buffers.push_back(b);
  }
  for (size_t k = 0; k < kernels.size(); ++k) {
    Kernel kernel;
    kernel.name = "k" + std::to_string(k);
    for (int b : kernels[k])
      kernel.buffers.push_back(KernelBuffer{"b" + std::to_string(b),
                                            DType::Float32, true,
                                            {Expr(floats[b])}});
    m.kernels.push_back(kernel);
  }
  return m;
}

int64_t offsetOf(const LoopModule &m, const std::string &name) {
  return m.findBuffer(name)->arenaOffset.as<IntImm>()->value;
}

TEST(MemoryPlan, DisjointLifetimesShareASlot) {
  // b0 [k0, k1], b1 [k1, k2], b2 [k2, k3]: b2 takes b0's slot.
  LoopModule m = module({64, 64, 64}, {{0}, {0, 1}, {1, 2}, {2}});
  planMemory(m, RangeEnv(), true);
  EXPECT_EQ(offsetOf(m, "b0"), offsetOf(m, "b2"));
  EXPECT_NE(offsetOf(m, "b0"), offsetOf(m, "b1"));
  EXPECT_TRUE(m.arenaBytes.isConstValue(512));
}

TEST(MemoryPlan, BestFitKeepsTheLargeSlotForTheLargeBuffer) {
  // b0 (1024 floats) and b1 (64) live together and die at k2; b2 (64)
  // lives k2-k3; b3 (64) from k3 and b4 (1024) from k4 live to the end.
  // First fit puts b3 in b0's large slot and grows b1's for b4: 8704
  // bytes. Best fit puts b3 in b1's slot and b4 in b0's: 4608.
  LoopModule m = module({1024, 64, 64, 64, 1024},
                        {{0}, {0, 1}, {0, 1, 2}, {2, 3}, {3, 4}, {3, 4}});
  planMemory(m, RangeEnv(), true);
  EXPECT_TRUE(m.arenaBytes.isConstValue(4096 + 256 + 256))
      << printExpr(m.arenaBytes);
  EXPECT_EQ(offsetOf(m, "b4"), offsetOf(m, "b0"));
  EXPECT_EQ(offsetOf(m, "b3"), offsetOf(m, "b1"));
  // Every pair of buffers live in the same kernel is disjoint.
  auto bytesOf = [&](const std::string &name) {
    return m.findBuffer(name)->bytes().as<IntImm>()->value;
  };
  for (const Kernel &k : m.kernels)
    for (const KernelBuffer &a : k.buffers)
      for (const KernelBuffer &b : k.buffers) {
        if (a.name == b.name)
          continue;
        int64_t oa = offsetOf(m, a.name), ob = offsetOf(m, b.name);
        EXPECT_TRUE(oa + bytesOf(a.name) <= ob || oa >= ob + bytesOf(b.name))
            << a.name << " and " << b.name << " overlap in " << k.name;
      }
}

TEST(MemoryPlan, FirstFitKeptWhereBestFitIsNoSmaller) {
  // A chain: both assignments give two slots.
  LoopModule m = module({256, 256, 256, 256},
                        {{0}, {0, 1}, {1, 2}, {2, 3}, {3}});
  planMemory(m, RangeEnv(), true);
  EXPECT_TRUE(m.arenaBytes.isConstValue(2048));
  EXPECT_EQ(offsetOf(m, "b0"), 0);
  EXPECT_EQ(offsetOf(m, "b2"), 0);
}

/// A kernel over i in [0, 64) (one work-item each) reading arena buffer
/// "r" and writing "o" (both f32[64] unless \p oShape), with body
/// \p body(i).
Kernel inPlaceKernel(const std::function<Stmt(const Expr &)> &body,
                     int64_t oShape = 64) {
  Kernel k;
  k.name = "k";
  k.buffers = {KernelBuffer{"r", DType::Float32, false, {Expr(int64_t{64})}},
               KernelBuffer{"o", DType::Float32, true, {Expr(oShape)}}};
  Expr i = Var::make("i");
  k.body = For::make(i, Expr(int64_t{0}), Expr(int64_t{64}), ForKind::Parallel,
                     0, body(i));
  return k;
}

Expr loadR(const Expr &at) { return Load::make(DType::Float32, "r", {at}); }

TEST(InPlace, ElementwiseStoresInPlace) {
  // o[i] = r[i] + 1, also with r[i] bound by a let before the store.
  Kernel k = inPlaceKernel([](const Expr &i) {
    return Store::make("o", {i}, loadR(i) + FloatImm::make(1.0));
  });
  EXPECT_TRUE(storesInPlace(k, "r", "o"));
  Expr v = Var::make("v", DType::Float32);
  Kernel let = inPlaceKernel([&](const Expr &i) {
    return LetStmt::make(v, loadR(i), Store::make("o", {i}, v * v));
  });
  EXPECT_TRUE(storesInPlace(let, "r", "o"));
  // Read and written the other way round, or a buffer the kernel lacks.
  EXPECT_FALSE(storesInPlace(k, "o", "r"));
  EXPECT_FALSE(storesInPlace(k, "r", "x"));
}

TEST(InPlace, RefusesWhatCouldReadAStoredElement) {
  // A stencil: r[i + 1] is stored by the next work-item.
  Kernel stencil = inPlaceKernel([](const Expr &i) {
    return Store::make("o", {i}, loadR(i) + loadR(i + Expr(int64_t{1})));
  });
  EXPECT_FALSE(storesInPlace(stencil, "r", "o"));
  // The element read after this work-item stored it.
  Kernel after = inPlaceKernel([](const Expr &i) {
    return Block::make({Store::make("o", {i}, FloatImm::make(0.0)),
                        Store::make("o", {i}, loadR(i))});
  });
  EXPECT_FALSE(storesInPlace(after, "r", "o"));
  // Inside a serial loop (its next iteration reads after this one stored).
  Expr j = Var::make("j");
  Kernel serial = inPlaceKernel([&](const Expr &i) {
    return For::make(j, Expr(int64_t{0}), Expr(int64_t{2}), ForKind::Serial, 0,
                     Store::make("o", {i}, loadR(i) + FloatImm::make(1.0)));
  });
  EXPECT_FALSE(storesInPlace(serial, "r", "o"));
  // The output read back.
  Kernel readsOut = inPlaceKernel([](const Expr &i) {
    return Store::make("o", {i},
                       loadR(i) + Load::make(DType::Float32, "o", {i}));
  });
  EXPECT_FALSE(storesInPlace(readsOut, "r", "o"));
  // Another shape: one index names other bytes.
  Kernel shape = inPlaceKernel(
      [](const Expr &i) { return Store::make("o", {i}, loadR(i)); }, 128);
  EXPECT_FALSE(storesInPlace(shape, "r", "o"));
  // A data-dependent index.
  Kernel gathered = inPlaceKernel([](const Expr &i) {
    Expr at = IndexCheck::make(i, Expr(int64_t{64}), 0, false);
    return Store::make("o", {at}, loadR(at));
  });
  EXPECT_FALSE(storesInPlace(gathered, "r", "o"));
}

TEST(InPlace, EachArmOfAnIfSeesTheStoresBeforeIt) {
  // A full tile and its partial form (register_tile.cpp) store the same
  // elements in the two arms: in place. A load in an arm after that arm's
  // store of the element is not.
  auto arm = [](const Expr &i, Expr scale) {
    return Store::make("o", {i}, loadR(i) * scale);
  };
  Kernel tiles = inPlaceKernel([&](const Expr &i) {
    return IfThenElse::make(cmp(BinOp::LT, i, Expr(int64_t{60})),
                            arm(i, FloatImm::make(2.0)),
                            arm(i, FloatImm::make(3.0)));
  });
  EXPECT_TRUE(storesInPlace(tiles, "r", "o"));
  Kernel late = inPlaceKernel([&](const Expr &i) {
    return IfThenElse::make(
        cmp(BinOp::LT, i, Expr(int64_t{60})), arm(i, FloatImm::make(2.0)),
        Block::make({Store::make("o", {i}, FloatImm::make(0.0)),
                     arm(i, FloatImm::make(3.0))}));
  });
  EXPECT_FALSE(storesInPlace(late, "r", "o"));
  // After the if, both arms' stores count.
  Kernel after = inPlaceKernel([&](const Expr &i) {
    return Block::make({IfThenElse::make(cmp(BinOp::LT, i, Expr(int64_t{60})),
                                         arm(i, FloatImm::make(2.0))),
                        arm(i, FloatImm::make(3.0))});
  });
  EXPECT_FALSE(storesInPlace(after, "r", "o"));
}

TEST(InPlace, VectorsMatchTheirStores) {
  // Vectors of 16 lanes from element 16 * i: the same lanes stored.
  Kernel k;
  k.name = "k";
  k.buffers = {KernelBuffer{"r", DType::Float32, false, {Expr(int64_t{64})}},
               KernelBuffer{"o", DType::Float32, true, {Expr(int64_t{64})}}};
  Expr i = Var::make("i");
  Expr at = i * Expr(int64_t{16});
  auto kernel = [&](Expr value) {
    Kernel c = k;
    c.body = For::make(i, Expr(int64_t{0}), Expr(int64_t{4}), ForKind::Parallel,
                       0, Store::make("o", {at}, value));
    return c;
  };
  EXPECT_TRUE(storesInPlace(
      kernel(VectorLoad::make(DType::Float32, "r", {at}, 16)), "r", "o"));
  // 8 lanes against a store of 16: another vector than the one stored.
  Expr half = VectorLoad::make(DType::Float32, "r", {at}, 8);
  EXPECT_FALSE(storesInPlace(
      kernel(Broadcast::make(Lane::make(half, 0), 16)), "r", "o"));
}

TEST(MemoryPlan, AnOutputTakesTheSlotOfTheInputItStoresOver) {
  // k0 writes r, k1 reads r (last) and writes o in place, k2 reads o.
  LoopModule m;
  for (const char *name : {"r", "o"}) {
    ModuleBuffer b;
    b.name = name;
    b.shape = {Expr(int64_t{64})};
    m.buffers.push_back(b);
  }
  Kernel producer;
  producer.name = "k0";
  producer.buffers = {KernelBuffer{"r", DType::Float32, true, {Expr(int64_t{64})}}};
  Kernel consumer = producer;
  consumer.name = "k2";
  consumer.buffers = {KernelBuffer{"o", DType::Float32, false, {Expr(int64_t{64})}}};
  m.kernels = {producer, inPlaceKernel([](const Expr &i) {
                 return Store::make("o", {i}, loadR(i) * FloatImm::make(2.0));
               }),
               consumer};
  LoopModule inPlace = m;
  planMemory(inPlace, RangeEnv(), true);
  EXPECT_EQ(offsetOf(inPlace, "r"), offsetOf(inPlace, "o"));
  EXPECT_TRUE(inPlace.arenaBytes.isConstValue(256));
  planMemory(m, RangeEnv(), false);
  EXPECT_NE(offsetOf(m, "r"), offsetOf(m, "o"));
  EXPECT_TRUE(m.arenaBytes.isConstValue(512));
}

} // namespace
} // namespace aotc
