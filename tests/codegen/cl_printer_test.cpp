// OpenCL C printing: the text of the test modules, identifier sanitizing,
// the fp64 pragma, build options, and the errors for IR the printer cannot
// print.
#include "codegen/opencl/cl_printer.h"
#include "codegen/opencl/identifiers.h"
#include "test_modules.h"

#include <gtest/gtest.h>

using namespace aotc;
using namespace aotc::test;

namespace {

std::string emitOk(const LoopModule &m) {
  Expected<std::string> s = emitOpenCL(m);
  EXPECT_TRUE(s.isOk()) << s.status().message();
  return s ? *s : std::string();
}

std::string emitError(const LoopModule &m) {
  Expected<std::string> s = emitOpenCL(m);
  EXPECT_FALSE(s.isOk()) << *s;
  return s ? std::string() : s.status().message();
}

/// The module symbol n of oneKernel().
const Expr &N() {
  static Expr n = Var::make("n");
  return n;
}
/// The parallel loop variable of overN().
const Expr &I() {
  static Expr i = Var::make("i");
  return i;
}

/// A one-kernel module: `out[i] = value` over parallel i < n, plus whatever
/// the test changes. Buffers are 1-D of 16 elements.
LoopModule oneKernel(Stmt body, std::vector<KernelBuffer> buffers = {},
                     std::vector<Expr> symbols = {N()}) {
  LoopModule m;
  m.name = "one";
  m.symbols = {{"n", {1, 8}, N()}};
  if (buffers.empty())
    buffers = {{"in", DType::Float32, false, {16}},
               {"out", DType::Float32, true, {16}}};
  m.kernels = {Kernel{"k", std::move(buffers), std::move(symbols),
                      std::move(body), false}};
  return m;
}

Stmt overN(Stmt body) {
  return For::make(I(), 0, N(), ForKind::Parallel, 0, std::move(body));
}

Expr in(const Expr &i) { return Load::make(DType::Float32, "in", {i}); }

TEST(Identifiers, SanitizeAndReserve) {
  EXPECT_TRUE(isCIdentifier("a_b9"));
  EXPECT_FALSE(isCIdentifier("9a"));
  EXPECT_FALSE(isCIdentifier("a.b"));
  EXPECT_FALSE(isCIdentifier(""));
  EXPECT_EQ(sanitizeIdentifier("fc.weight"), "fc_weight");
  EXPECT_EQ(sanitizeIdentifier("0x"), "v_0x");
  EXPECT_EQ(sanitizeIdentifier(""), "v_");
  for (const char *r :
       {"global",   "constant", "local",   "kernel",      "float",
        "float4",   "long16",   "min",     "exp",         "get_global_id",
        "int",      "return",   "__x",     "convert_int", "aotc_min",
        "INFINITY", "M_PI",     "FLT_MAX", "HUGE_VALF",   "_Bool",
        "xor",      "uchar",    "size_t"})
    EXPECT_TRUE(isReservedIdentifier(r)) << r;
  for (const char *ok : {"x", "input", "weight", "s_batch", "t12", "float5",
                         "minimum", "expected", "Global"})
    EXPECT_FALSE(isReservedIdentifier(ok)) << ok;
}

TEST(Identifiers, NamerIssuesEachIdentifierOnce) {
  Namer n;
  n.reserve("k0");
  EXPECT_EQ(n.fresh("x"), "x");
  EXPECT_EQ(n.fresh("x"), "x_1");
  EXPECT_EQ(n.fresh("k0"), "k0_1");
  EXPECT_EQ(n.fresh("float"), "float_1");
  EXPECT_EQ(n.fresh("a.b"), "a_b");
  EXPECT_EQ(n.fresh("a-b"), "a_b_1");
  EXPECT_EQ(n.fresh("9"), "v_9");
  EXPECT_EQ(n.fresh(""), "v_");
  // A name and its derived forms are taken together.
  EXPECT_EQ(n.fresh("buf", {"_base", "_off"}), "buf");
  EXPECT_EQ(n.fresh("buf_base"), "buf_base_1");
  EXPECT_EQ(n.fresh(std::string(100, 'q')), std::string(40, 'q'));
}

TEST(Identifiers, StringLiteralsAndComments) {
  EXPECT_EQ(cStringLiteral("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(cStringLiteral("x\n1"), "\"x\\0121\"");
  EXPECT_EQ(cStringLiteral("?"
                           "?="),
            "\"\\?\\?=\"");
  EXPECT_EQ(commentText("a\nb\tc"), "a b c");
}

TEST(CLPrinter, PointwiseKernel) {
  std::string s = emitOk(pointwiseModule());
  EXPECT_EQ(s.find("// OpenCL C kernels of model 'pointwise'"), 0u) << s;
  EXPECT_EQ(s.find("#pragma OPENCL EXTENSION cl_khr_fp64"), std::string::npos);
  const char *expected = R"(// Kernel 0: pointwise_0
__kernel void pointwise_0(
    __global const float *x_base, ulong x_off,
    __global float *y_base, ulong y_off,
    __global uchar *mask_base, ulong mask_off,
    const long s_batch) {
  __global const float *x = (__global const float *)((__global const char *)x_base + x_off);
  __global float *y = (__global float *)((__global char *)y_base + y_off);
  __global uchar *mask = (__global uchar *)((__global char *)mask_base + mask_off);
  const long gid1 = get_global_id(1);
  if (gid1 >= s_batch) return;
  const long i = gid1;
  const long row = (i * 16);
  const long gid0 = get_global_id(0);
  if (gid0 >= 16) return;
  const long j = gid0;
  const long idx = min((row + j), ((s_batch * 16) - 1));
)";
  EXPECT_NE(s.find(expected), std::string::npos) << s;
  EXPECT_NE(s.find("  y[idx] = ((x[idx] > 0.0f) ? ((x[idx] * 2.0f) + 1.0f) : "
                   "(exp(x[idx]) - 1.0f));\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  mask[idx] = (uchar)(x[idx] > 0.5f);\n"),
            std::string::npos)
      << s;
  // Deterministic.
  EXPECT_EQ(s, emitOk(pointwiseModule()));
}

TEST(CLPrinter, ReductionKernelSanitizesNames) {
  std::string s = emitOk(reductionModule());
  // `max` is an OpenCL builtin, `seq.len` is no identifier.
  EXPECT_NE(s.find("__global float *max_1_base, ulong max_1_off,"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("    const long s_seq_len) {"), std::string::npos) << s;
  EXPECT_NE(s.find("  float sum = 0.0f;\n  float best = (-INFINITY);\n"
                   "  uchar neg = 0;\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  for (long k = 0; k < s_seq_len; ++k) {\n"
                   "    const float v = x[((r * s_seq_len) + k)];\n"
                   "    sum = (sum + v);\n"
                   "    best = fmax(best, v);\n"
                   "    neg = (neg | (v < 0.0f));\n"
                   "  }\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  if (s_seq_len > 0) {\n"
                   "    mean[r] = (sum / ((float)(s_seq_len)));\n"
                   "  } else {\n"
                   "    mean[r] = 0.0f;\n"
                   "  }\n"
                   "  max_1[r] = best;\n"
                   "  any_neg[r] = (uchar)neg;\n"),
            std::string::npos)
      << s;
}

TEST(CLPrinter, ConstantArenaKernels) {
  std::string s = emitOk(constArenaModule());
  EXPECT_NE(s.find("// Kernel 0: scale_shift\n__kernel void scale_shift("),
            std::string::npos);
  EXPECT_NE(s.find("// Kernel 1: row_sum\n__kernel void row_sum("),
            std::string::npos);
  EXPECT_NE(s.find("// Kernel 2: relu_out\n__kernel void relu_out("),
            std::string::npos);
  EXPECT_LT(s.find("scale_shift("), s.find("row_sum("));
  EXPECT_LT(s.find("row_sum("), s.find("relu_out("));
  EXPECT_NE(s.find("__global const float *fc_weight_base, ulong fc_weight_off"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("t[i] = ((x[i] * fc_weight[(i % 8)]) + fc_bias[(i % 8)]);"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("acc = (acc + t[(k + (8 * r))]);"), std::string::npos) << s;
  EXPECT_NE(s.find("y[r] = fmax(u[r], 0.0f);"), std::string::npos) << s;
}

TEST(CLPrinter, SelfComparisonOfIntegersFolds) {
  // Two reads of one element compared (a Gather whose index simplified to
  // the element it reads): clang rejects x == x of an integer as always
  // true, so it prints as a constant; a float keeps it (a NaN test).
  Expr i = I();
  Expr ld = Load::make(DType::Int32, "ii", {Expr(0)});
  Expr f = in(Expr(0));
  LoopModule m = oneKernel(
      Block::make({Store::make("ob", {i},
                               Cast::make(DType::UInt8,
                                          Binary::make(BinOp::EQ, ld, ld))),
                   Store::make("ob", {i + 8},
                               Cast::make(DType::UInt8,
                                          Binary::make(BinOp::LT, ld, ld))),
                   Store::make("ob", {i + 4},
                               Cast::make(DType::UInt8,
                                          Binary::make(BinOp::EQ, f, f)))}),
      {{"in", DType::Float32, false, {16}},
       {"ii", DType::Int32, false, {16}},
       {"ob", DType::UInt8, true, {16}}});
  m.kernels[0].body = overN(m.kernels[0].body);
  std::string s = emitOk(m);
  EXPECT_NE(s.find("ob[i] = 1;"), std::string::npos) << s;
  EXPECT_NE(s.find("ob[(i + 8)] = 0;"), std::string::npos) << s;
  EXPECT_NE(s.find("ob[(i + 4)] = ((uchar)((in[0] == in[0])));"),
            std::string::npos)
      << s;
}

TEST(CLPrinter, Float64Pragma) {
  Expr i = I();
  LoopModule m = oneKernel(overN(Store::make(
      "out", {i},
      Cast::make(DType::Float32, Cast::make(DType::Float64, in(i))))));
  std::string s = emitOk(m);
  EXPECT_NE(s.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("out[i] = ((float)(((double)(in[i]))));"), std::string::npos)
      << s;
}

TEST(CLPrinter, SixteenBitFloatsAreStoredAndComputedInFloat) {
  // float16 buffers are `half` read by vload_half and written rounded by
  // vstore_half_rte; bfloat16 buffers are ushort bits shifted into a float
  // and rounded back by a helper; a cast to either rounds; vectors too.
  Expr i = I();
  auto buffers = [](DType in, DType out) {
    return std::vector<KernelBuffer>{{"in", in, false, {16}},
                                     {"out", out, true, {16}}};
  };
  Expr h = Load::make(DType::Float16, "in", {i});
  std::string s = emitOk(oneKernel(overN(Store::make("out", {i}, h * h)),
                                   buffers(DType::Float16, DType::Float16)));
  EXPECT_NE(s.find("__global const half *in"), std::string::npos) << s;
  EXPECT_NE(
      s.find(
          "vstore_half_rte((vload_half(i, in) * vload_half(i, in)), i, out);"),
      std::string::npos)
      << s;
  EXPECT_EQ(s.find("cl_khr_fp16"), std::string::npos) << s;
  Expr b = Load::make(DType::BFloat16, "in", {i});
  s = emitOk(oneKernel(overN(Store::make("out", {i}, b)),
                       buffers(DType::BFloat16, DType::BFloat16)));
  EXPECT_NE(s.find("__global const ushort *in"), std::string::npos) << s;
  EXPECT_NE(s.find("out[i] = aotc_bf16_bits(as_float((uint)in[i] << 16));"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("ushort aotc_bf16_bits(float x)"), std::string::npos) << s;
  s = emitOk(oneKernel(
      overN(Store::make(
          "out", {i},
          Cast::make(DType::Float32, Cast::make(DType::Float16, in(i))))),
      buffers(DType::Float32, DType::Float32)));
  EXPECT_NE(s.find("out[i] = ((float)(aotc_round_half(in[i])));"),
            std::string::npos)
      << s;
  s = emitOk(oneKernel(
      overN(Store::make("out", {i},
                        VectorLoad::make(DType::BFloat16, "in", {i * 8}, 8))),
      buffers(DType::BFloat16, DType::BFloat16)));
  EXPECT_NE(s.find("vstore8(aotc_bf16_bits8(as_float8(convert_uint8(vload8("
                   "0, in + (8 * i))) << 16)), 0, out + i);"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("ushort8 aotc_bf16_bits8(float8 x)"), std::string::npos)
      << s;
  // A float buffer is not read as float16.
  EXPECT_NE(emitError(oneKernel(overN(Store::make("out", {i}, h)),
                                buffers(DType::Float32, DType::Float16)))
                .find("load of f16 from buffer 'in' of type f32"),
            std::string::npos);
}

TEST(CLPrinter, BuildOptionsAreStrict) {
  std::string o = buildOptions(pointwiseModule());
  EXPECT_EQ(o, "-cl-std=CL1.2");
  EXPECT_EQ(o.find("fast"), std::string::npos);
  EXPECT_EQ(o.find("mad"), std::string::npos);
}

TEST(CLPrinter, VariablesAreObjectsNotNames) {
  // Two loops whose variables share a name, a let named like a builtin, a
  // variable named like a symbol, and a buffer clashing with another's
  // derived name: every variable gets its own identifier.
  Expr i = I();
  Expr k1 = Var::make("exp"), k2 = Var::make("exp");
  Expr t1 = Var::make("t"), t2 = Var::make("t"), fakeN = Var::make("n");
  Stmt loop1 = For::make(k1, 0, 2, ForKind::Serial, 0,
                         Store::make("out", {i + k1}, in(k1)));
  Stmt loop2 = For::make(k2, 0, 3, ForKind::Serial, 0,
                         Store::make("out_base", {i + k2}, in(k2)));
  Stmt inner =
      LetStmt::make(t2, t1 + 1,
                    LetStmt::make(fakeN, t2 + N(),
                                  Store::make("out", {t2},
                                              Call::make(DType::Float32, "exp",
                                                         {in(fakeN)}))));
  Stmt body =
      overN(Block::make({loop1, loop2, LetStmt::make(t1, i * 2, inner)}));
  LoopModule m = oneKernel(body, {{"in", DType::Float32, false, {16}},
                                  {"out", DType::Float32, true, {16}},
                                  {"out_base", DType::Float32, true, {16}}});
  std::string s = emitOk(m);
  EXPECT_NE(s.find("for (long exp_1 = 0; exp_1 < 2; ++exp_1) {"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("for (long exp_2 = 0; exp_2 < 3; ++exp_2) {"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("__global float *out_base_1_base, ulong out_base_1_off"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("const long t = (i * 2);\n  const long t_1 = (t + 1);\n"
                   "  const long n = (t_1 + s_n);\n"
                   "  out[t_1] = exp(in[n]);"),
            std::string::npos)
      << s;
}

TEST(CLPrinter, FlattensParallelLoopsOfOneDimension) {
  // A 3-D iteration space on ND-range dimension 0.
  Expr a = Var::make("a"), b = Var::make("b"), c = Var::make("c");
  Stmt store = Store::make("out", {a, b, c},
                           Load::make(DType::Float32, "in", {c, b, a}));
  Stmt body =
      For::make(a, 0, N(), ForKind::Parallel, 0,
                For::make(b, 0, 3, ForKind::Parallel, 0,
                          For::make(c, 0, 5, ForKind::Parallel, 0, store)));
  LoopModule m = oneKernel(body, {{"in", DType::Float32, false, {5, 3, N()}},
                                  {"out", DType::Float32, true, {N(), 3, 5}}});
  std::string s = emitOk(m);
  EXPECT_NE(s.find("  const long gid0 = get_global_id(0);\n"
                   "  if (gid0 >= s_n * 3 * 5) return;\n"
                   "  const long c = gid0 % 5;\n"
                   "  const long b = (gid0 / 5) % 3;\n"
                   "  const long a = ((gid0 / 5) / 3);\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("out[(((15 * a) + (5 * b)) + c)] = "
                   "in[(((b * s_n) + (3 * (c * s_n))) + a)];"),
            std::string::npos)
      << s;
  EXPECT_EQ(LoopModule::globalSize(m.kernels[0]).size(), 1u);
}

TEST(CLPrinter, KernelWithoutParallelLoopsRunsOnce) {
  LoopModule m = oneKernel(Store::make("out", {Expr(0)}, in(Expr(1))));
  std::string s = emitOk(m);
  EXPECT_NE(s.find("  if (get_global_id(0) != 0) return;\n  out[0] = in[1];"),
            std::string::npos)
      << s;
}

TEST(CLPrinter, TypesIntegerLiteralsOfOverloadedBuiltins) {
  // OpenCL's min(long, int) is ambiguous: the literal gets the long type.
  Expr i = I();
  LoopModule m = oneKernel(overN(Store::make(
      "out", {maxExpr(minExpr(i, Expr(5)), Expr(1))},
      in(Call::make(DType::Int64, "clamp", {i, Expr(0), Expr(3)})))));
  std::string s = emitOk(m);
  EXPECT_NE(s.find("out[max(min(i, ((long)(5))), ((long)(1)))] = "
                   "in[clamp(i, ((long)(0)), ((long)(3)))];"),
            std::string::npos)
      << s;
}

TEST(CLPrinter, RejectsAccess) {
  Expr i = I();
  LoopModule m = oneKernel(
      overN(Store::make("out", {i}, Access::make(DType::Float32, 3, {i}))));
  std::string e = emitError(m);
  EXPECT_NE(e.find("kernel 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("%t3"), std::string::npos) << e;
  EXPECT_NE(e.find("scheduler"), std::string::npos) << e;
}

TEST(CLPrinter, RejectsUnboundVariable) {
  Expr i = I();
  LoopModule m = oneKernel(overN(Store::make("out", {i}, in(Var::make("j")))));
  std::string e = emitError(m);
  EXPECT_NE(e.find("kernel 'k': variable 'j'"), std::string::npos) << e;
  // A module symbol the kernel does not list is just as unbound.
  m = oneKernel(overN(Store::make("out", {i}, in(i))), {}, {});
  e = emitError(m);
  EXPECT_NE(e.find("variable 'n'"), std::string::npos) << e;
  // So is a variable that merely shares the symbol's name.
  m = oneKernel(overN(Store::make("out", {i}, in(Var::make("n")))));
  e = emitError(m);
  EXPECT_NE(e.find("variable 'n' is neither bound"), std::string::npos) << e;
  // A variable bound twice.
  m = oneKernel(
      overN(LetStmt::make(I(), Expr(1), Store::make("out", {i}, in(i)))));
  e = emitError(m);
  EXPECT_NE(e.find("variable 'i' is defined twice"), std::string::npos) << e;
}

TEST(CLPrinter, RejectsMisplacedParallelLoops) {
  Expr i = I(), j = Var::make("j");
  Stmt inner = For::make(j, 0, 4, ForKind::Parallel, 1,
                         Store::make("out", {i + j}, in(j)));
  LoopModule m = oneKernel(For::make(i, 0, 4, ForKind::Serial, 0, inner));
  EXPECT_NE(emitError(m).find("parallel loop 'j' is not in the kernel's "
                              "outermost loop nest"),
            std::string::npos);
  // Dimensions 0 and 2 without 1.
  m = oneKernel(For::make(i, 0, 4, ForKind::Parallel, 0,
                          For::make(j, 0, 4, ForKind::Parallel, 2,
                                    Store::make("out", {i + j}, in(j)))));
  EXPECT_NE(emitError(m).find("not 0..1"), std::string::npos);
  m = oneKernel(
      For::make(i, 0, 4, ForKind::Parallel, 3, Store::make("out", {i}, in(i))));
  EXPECT_NE(emitError(m).find("dimension 3"), std::string::npos);
}

TEST(CLPrinter, RejectsBadStores) {
  Expr i = I();
  LoopModule m = oneKernel(overN(Store::make("in", {i}, in(i))));
  EXPECT_NE(emitError(m).find("read-only"), std::string::npos);
  m = oneKernel(overN(Store::make("nowhere", {i}, in(i))));
  EXPECT_NE(emitError(m).find("'nowhere' that is not a parameter"),
            std::string::npos);
  m = oneKernel(overN(Store::make("out", {i}, i)));
  EXPECT_NE(emitError(m).find("store of a i64 value into buffer 'out'"),
            std::string::npos);
  m = oneKernel(overN(LocalAssign::make(i, i)));
  EXPECT_NE(emitError(m).find("assignment to 'i'"), std::string::npos);
  m = oneKernel(overN(Store::make("out", {i, i}, in(i))));
  EXPECT_NE(emitError(m).find("with 2 indices; its shape has rank 1"),
            std::string::npos);
}

TEST(CLPrinter, RejectsBadKernelNames) {
  Expr i = I();
  LoopModule m = oneKernel(overN(Store::make("out", {i}, in(i))));
  m.kernels[0].name = "global";
  EXPECT_NE(emitError(m).find("kernel 'global': the name is not a usable"),
            std::string::npos);
  m.kernels[0].name = "k";
  m.kernels.push_back(m.kernels[0]);
  EXPECT_NE(emitError(m).find("kernel 'k' is defined twice"),
            std::string::npos);
}

TEST(CLPrinter, SymbolsThatPrintAlikeStayApart) {
  // Symbols named "a.b" and "a_b" sanitize to one spelling; the namer keeps
  // their identifiers apart.
  Expr i = I(), ab1 = Var::make("a.b"), ab2 = Var::make("a_b");
  LoopModule m =
      oneKernel(overN(Store::make("out", {i}, in(minExpr(ab1, ab2)))), {},
                {N(), ab1, ab2});
  m.symbols.push_back({"a.b", {0, 4}, ab1});
  m.symbols.push_back({"a_b", {0, 4}, ab2});
  std::string s = emitOk(m);
  EXPECT_NE(s.find("const long s_a_b,\n    const long s_a_b_1) {"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("in[min(s_a_b, s_a_b_1)]"), std::string::npos) << s;
}

} // namespace

TEST(CLPrinter, AlignedLocalVectorLoadsGoThroughVectorPointers) {
  // A local array is declared 64-byte aligned; a float32 vector load from
  // it whose element index is a multiple of its lanes for every value of
  // the variables prints as a __local float4 dereference (one wide load on
  // NVIDIA, where vload4 promises 4-byte alignment and reads 4 floats one
  // by one); one that may start between vectors keeps vload4.
  Expr lid = Var::make("lid");
  Stmt body = For::make(
      lid, 0, 4, ForKind::Parallel, 0,
      Block::make(
          {Store::make("t", {Expr(1), lid * 4}, in(lid)),
           Store::make("t", {Expr(0), lid * 4 + 1}, in(lid + 4)),
           Barrier::make(),
           Store::make(
               "out", {lid},
               Lane::make(VectorLoad::make(DType::Float32, "t",
                                           {Expr(1), lid * 4}, 4),
                          2) +
                   Lane::make(VectorLoad::make(DType::Float32, "t",
                                               {Expr(0), lid * 2 + 1}, 4),
                              1))}));
  LoopModule m = oneKernel(body, {}, {});
  m.kernels[0].locals = {{"t", DType::Float32, true, {2, 16}}};
  m.kernels[0].workGroupSize = 4;
  std::string s = emitOk(m);
  EXPECT_NE(s.find("__local float t[32] __attribute__((aligned(64)));"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("(*(__local const float4 *)(t + ((4 * lid) + 16)))"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("vload4(0, t + ((2 * lid) + 1))"), std::string::npos) << s;
}

TEST(CLPrinter, PrivateArraysAreDeclaredPerWorkItem) {
  // A private array (a row loop's accumulators): declared at the kernel's
  // scope without an address space, 64-byte aligned, read and written as
  // vectors through vload/vstore, in a kernel without a fixed work-group.
  Expr i = I();
  Stmt body = overN(Block::make(
      {Store::make("acc", {Expr(0)},
                   Broadcast::make(in(i), 4)),
       Store::make("out", {i},
                   Lane::make(VectorLoad::make(DType::Float32, "acc",
                                               {Expr(0)}, 4),
                              3))}));
  LoopModule m = oneKernel(body);
  m.kernels[0].privates = {{"acc", DType::Float32, true, {8}}};
  std::string s = emitOk(m);
  EXPECT_NE(s.find("  float acc[8] __attribute__((aligned(64)));"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("__local"), std::string::npos) << s;
  EXPECT_NE(s.find("vstore4(((float4)(in[i])), 0, acc + 0)"), std::string::npos)
      << s;
  EXPECT_NE(s.find("vload4(0, acc + 0)"), std::string::npos) << s;
}
