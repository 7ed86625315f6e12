// 32-bit index math (codegen/opencl/index_width.h): what the prover accepts
// and refuses at the edges of int, what the narrowing rewrites, and how a
// kernel prints with and without it.
#include "codegen/opencl/cl_printer.h"
#include "codegen/opencl/index_width.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace aotc;

namespace {

/// i * 65536 + j over i in [0, imax], j in [0, 65535].
bool fits(int64_t imax) {
  Expr i = Var::make("i"), j = Var::make("j");
  RangeEnv env;
  env.set(i, Range{0, imax});
  env.set(j, Range{0, 65535});
  return fitsInt32(i * Expr(int64_t{65536}) + j, env);
}

TEST(IndexWidth, ProvesUpToTheLastInt) {
  EXPECT_TRUE(fits(32767));  // max 2^31 - 1
  EXPECT_FALSE(fits(32768)); // max 2^31
}

TEST(IndexWidth, NegativeValuesCountToo) {
  Expr i = Var::make("i");
  RangeEnv env;
  env.set(i, Range{0, 1});
  Expr low = i - Expr(int64_t{INT32_MAX}) - Expr(int64_t{1}); // min -2^31
  EXPECT_TRUE(fitsInt32(low, env));
  EXPECT_FALSE(fitsInt32(low - Expr(int64_t{1}), env));
}

TEST(IndexWidth, EverySubexpressionMustFit) {
  // (i * 2^20) / 2^20 stays small, but its product does not.
  Expr i = Var::make("i");
  RangeEnv env;
  env.set(i, Range{0, 4096});
  Expr big = int64_t{1} << 20;
  EXPECT_FALSE(fitsInt32(Binary::make(BinOp::FloorDiv, i * big, big), env));
  EXPECT_TRUE(fitsInt32(Binary::make(BinOp::FloorDiv, i * Expr(int64_t{1024}),
                                     Expr(int64_t{1024})),
                        env));
}

TEST(IndexWidth, RefusesWhatTheRangesDoNotFollow) {
  Expr i = Var::make("i"), unranged = Var::make("u");
  RangeEnv env;
  env.set(i, Range{0, 15});
  // A variable without a range, an int64 read from memory, an index check
  // of such a value, a float converted.
  EXPECT_FALSE(fitsInt32(i + unranged, env));
  Expr load = Load::make(DType::Int64, "idx", {i});
  EXPECT_FALSE(fitsInt32(load, env));
  EXPECT_FALSE(fitsInt32(Call::make(DType::Int64, "aotc_check_index",
                                    {i, Expr(int64_t{16})}),
                         env));
  EXPECT_FALSE(fitsInt32(Call::make(DType::Int64, "aotc_f2l_f",
                                    {FloatImm::make(1.0)}),
                         env));
  // Truncating division has no bounds in boundsOf: refused.
  EXPECT_FALSE(fitsInt32(
      Call::make(DType::Int64, "aotc_div_l", {i, Expr(int64_t{3})}), env));
  // Narrower values (an int32 element) are not index math.
  EXPECT_TRUE(fitsInt32(Load::make(DType::Int32, "x", {i}), env));
}

TEST(IndexWidth, HelpersCountAsTheirOperations) {
  Expr i = Var::make("i");
  RangeEnv env;
  env.set(i, Range{-100, 100});
  Expr fd = Call::make(DType::Int64, "aotc_floordiv_l", {i, Expr(int64_t{7})});
  EXPECT_TRUE(fitsInt32(fd, env));
  Expr mul = Call::make(DType::Int64, "aotc_mul_l",
                        {i, Expr(int64_t{1} << 30)}); // +-100 * 2^30
  EXPECT_FALSE(fitsInt32(mul, env));
}

TEST(IndexWidth, NarrowingRenamesHelpersAndCasts) {
  Expr i = Var::make("i");
  ClHelpers used = {"aotc_floormod_l"}; // as the printer's rewrite left it
  Expr e = Call::make(DType::Int64, "aotc_floormod_l",
                      {Cast::make(DType::Int64, Load::make(DType::Int32, "x",
                                                           {i})),
                       Expr(int64_t{5})});
  Expr n = narrowToInt32(e, used);
  const Call *c = n.as<Call>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "aotc_floormod_i");
  EXPECT_EQ(c->type, DType::Int32);
  EXPECT_EQ(c->args[0].type(), DType::Int32); // the cast is an int32 one
  EXPECT_EQ(used.count("aotc_floormod_i"), 1u);
  EXPECT_EQ(used.count("aotc_floormod_l"), 0u); // no longer called
  // Its definition is there to emit.
  EXPECT_NE(clHelperDefinitions(used).find("int aotc_floormod_i(int a, int b)"),
            std::string::npos);
}

/// out[i] = in[i * 2^k + j] over parallel i < n (n in [0, nmax]) and serial
/// j < 4: a kernel whose widest index is nmax * 2^k + 3.
LoopModule strided(int64_t nmax, int k) {
  Expr n = Var::make("n"), i = Var::make("i"), j = Var::make("j");
  LoopModule m;
  m.name = "strided";
  m.symbols = {{"n", {0, nmax}, n}};
  Expr stride = int64_t{1} << k;
  Expr extent = n * stride + Expr(int64_t{4});
  Stmt body = For::make(
      i, 0, n, ForKind::Parallel, 0,
      For::make(j, 0, 4, ForKind::Serial, -1,
                Store::make("out", {i},
                            Load::make(DType::Float32, "in",
                                       {i * stride + j}))));
  m.kernels = {Kernel{"k",
                      {{"in", DType::Float32, false, {extent}},
                       {"out", DType::Float32, true, {n}}},
                      {n},
                      body,
                      false}};
  return m;
}

TEST(IndexWidth, KernelPrintsIntWhereItFits) {
  auto narrow = emitOpenCL(strided(1000, 16), ClOptions{true});
  ASSERT_TRUE(narrow.isOk()) << narrow.status().message();
  const std::string &s = *narrow;
  EXPECT_NE(s.find("// Kernel 0: k (32-bit indices)"), std::string::npos) << s;
  EXPECT_NE(s.find("const long s_n_arg)"), std::string::npos) << s;
  EXPECT_NE(s.find("const int s_n = (int)s_n_arg;"), std::string::npos) << s;
  EXPECT_NE(s.find("const int gid0 = (int)get_global_id(0);"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("for (int j = 0; j < 4; ++j)"), std::string::npos) << s;
  EXPECT_EQ(s.find("const long"), s.find("const long s_n_arg")) << s;
  EXPECT_EQ(s.find("(long"), std::string::npos) << s;
  // Off, the same kernel is all long.
  auto wide = emitOpenCL(strided(1000, 16));
  ASSERT_TRUE(wide.isOk());
  EXPECT_EQ(wide->find("32-bit"), std::string::npos) << *wide;
  EXPECT_NE(wide->find("for (long j = 0; j < 4; ++j)"), std::string::npos);
}

TEST(IndexWidth, KernelKeepsLongPastInt) {
  // i < n: with n <= 32768 the widest index, 32767 * 65536 + 3, fits; with
  // n <= 32769 it is 32768 * 65536 + 3 = 2^31 + 3.
  EXPECT_NE(emitOpenCL(strided(32768, 16), ClOptions{true})->find("32-bit"),
            std::string::npos);
  auto s = emitOpenCL(strided(32769, 16), ClOptions{true});
  ASSERT_TRUE(s.isOk());
  EXPECT_EQ(s->find("32-bit"), std::string::npos) << *s;
  EXPECT_NE(s->find("for (long j"), std::string::npos) << *s;
  EXPECT_NE(s->find("const long s_n)"), std::string::npos) << *s;
}

} // namespace
