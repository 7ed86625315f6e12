// Every dtype computes in its own width, and compile time agrees with run
// time: each integer op at the boundary values (min, min+1, -1, 0, 1, max-1,
// max and all their pairs) is computed three ways and compared bit for bit:
//  - by the kernels (the values are graph inputs),
//  - by the compile-time folder (the same values as initializers),
//  - by a reference written here from ONNX/NumPy semantics in exact 128-bit
//    arithmetic, independent of aotc's ir/scalar_ops.h.
// Fused chains that used to lose the width (int8 100 + 100 cast to float,
// Less(Add(a, b), a) at INT_MAX, ...) are checked the same way.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace aotc::e2e;

namespace {

struct IntType {
  const char *name;
  int32_t onnx;
  aotc_dtype_t dtype;
  int bits;
  bool isSigned;
};

const IntType kTypes[] = {
    {"int8", onnx::TensorProto::INT8, AOTC_DTYPE_INT8, 8, true},
    {"uint8", onnx::TensorProto::UINT8, AOTC_DTYPE_UINT8, 8, false},
    {"int32", onnx::TensorProto::INT32, AOTC_DTYPE_INT32, 32, true},
    {"int64", onnx::TensorProto::INT64, AOTC_DTYPE_INT64, 64, true},
    {"int16", onnx::TensorProto::INT16, AOTC_DTYPE_INT16, 16, true},
    {"uint16", onnx::TensorProto::UINT16, AOTC_DTYPE_UINT16, 16, false},
    {"uint32", onnx::TensorProto::UINT32, AOTC_DTYPE_UINT32, 32, false},
};

using i128 = __int128;

i128 minOf(const IntType &t) {
  return t.isSigned ? -(i128(1) << (t.bits - 1)) : 0;
}
i128 maxOf(const IntType &t) {
  return t.isSigned ? (i128(1) << (t.bits - 1)) - 1 : (i128(1) << t.bits) - 1;
}

/// The exact value \p v reduced modulo 2^bits into the type's range.
int64_t reduce(const IntType &t, i128 v) {
  i128 m = i128(1) << t.bits;
  i128 r = v % m;
  if (r < 0)
    r += m;
  if (t.isSigned && r > maxOf(t))
    r -= m;
  return static_cast<int64_t>(r);
}

std::vector<int64_t> boundaryValues(const IntType &t) {
  i128 lo = minOf(t), hi = maxOf(t);
  std::vector<i128> v = {lo, lo + 1, -1, 0, 1, hi - 1, hi};
  std::vector<int64_t> out;
  for (i128 x : v)
    if (x >= lo && x <= hi &&
        std::find(out.begin(), out.end(), int64_t(x)) == out.end())
      out.push_back(static_cast<int64_t>(x));
  return out;
}

/// Host tensor of type \p t from int64 values.
aotc::HostTensor tensorOf(const IntType &t, const std::vector<int64_t> &v) {
  aotc::HostTensor h(t.dtype, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype) {
    case AOTC_DTYPE_INT8:
      h.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
      break;
    case AOTC_DTYPE_UINT8:
      h.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
      break;
    case AOTC_DTYPE_INT32:
      h.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
      break;
    case AOTC_DTYPE_INT16:
      h.data<int16_t>()[i] = static_cast<int16_t>(v[i]);
      break;
    case AOTC_DTYPE_UINT16:
      h.data<uint16_t>()[i] = static_cast<uint16_t>(v[i]);
      break;
    case AOTC_DTYPE_UINT32:
      h.data<uint32_t>()[i] = static_cast<uint32_t>(v[i]);
      break;
    default:
      h.data<int64_t>()[i] = v[i];
    }
  }
  return h;
}

std::vector<int64_t> valuesOf(const aotc::HostTensor &h) {
  std::vector<int64_t> out(h.numel());
  for (int64_t i = 0; i < h.numel(); ++i) {
    switch (h.dtype()) {
    case AOTC_DTYPE_INT8:
      out[i] = h.data<int8_t>()[i];
      break;
    case AOTC_DTYPE_UINT8:
    case AOTC_DTYPE_BOOL:
      out[i] = h.data<uint8_t>()[i];
      break;
    case AOTC_DTYPE_INT32:
      out[i] = h.data<int32_t>()[i];
      break;
    case AOTC_DTYPE_INT16:
      out[i] = h.data<int16_t>()[i];
      break;
    case AOTC_DTYPE_UINT16:
      out[i] = h.data<uint16_t>()[i];
      break;
    case AOTC_DTYPE_UINT32:
      out[i] = h.data<uint32_t>()[i];
      break;
    case AOTC_DTYPE_INT64:
      out[i] = h.data<int64_t>()[i];
      break;
    case AOTC_DTYPE_FLOAT32:
      out[i] = static_cast<int64_t>(h.data<float>()[i]);
      break;
    default:
      out[i] = static_cast<int64_t>(h.data<double>()[i]);
    }
  }
  return out;
}

/// The reference of binary op \p op on the pair (a, b) of type \p t.
int64_t reference(const std::string &op, const IntType &t, int64_t a,
                  int64_t b) {
  i128 x = a, y = b;
  if (op == "Add")
    return reduce(t, x + y);
  if (op == "Sub")
    return reduce(t, x - y);
  if (op == "Mul")
    return reduce(t, x * y);
  if (op == "Div") // C truncation; x / 0 = 0 (aotc's documented choice)
    return y == 0 ? 0 : reduce(t, x / y);
  if (op == "Max")
    return std::max(a, b);
  if (op == "Min")
    return std::min(a, b);
  if (op == "Equal")
    return a == b;
  if (op == "Less")
    return a < b;
  if (op == "Greater")
    return a > b;
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

const char *const kBinaryOps[] = {"Add", "Sub",   "Mul",  "Div",    "Max",
                                  "Min", "Equal", "Less", "Greater"};
/// Ops the compile-time folder handles (shape arithmetic).
bool folds(const std::string &op) { return op != "Less" && op != "Greater"; }

int32_t resultType(const std::string &op, const IntType &t) {
  return op == "Equal" || op == "Less" || op == "Greater"
             ? onnx::TensorProto::BOOL
             : t.onnx;
}

TEST(IntSemantics, BinaryOpsAtTheLimitsAgreeWithTheFolder) {
  for (const IntType &t : kTypes) {
    std::vector<int64_t> vals = boundaryValues(t), as, bs;
    for (int64_t a : vals)
      for (int64_t b : vals)
        as.push_back(a), bs.push_back(b);
    int64_t n = static_cast<int64_t>(as.size());
    // Run time: a and b are inputs. Compile time: the same values are
    // initializers (int32 or int64 data cast to the type, so that the folder
    // sees them as symbolic data).
    for (bool folded : {false, true}) {
      ModelBuilder mb(std::string("ops_") + t.name);
      if (!folded) {
        mb.input("a", t.onnx, {n});
        mb.input("b", t.onnx, {n});
      } else {
        mb.initializerI64("a64", {n}, as);
        mb.initializerI64("b64", {n}, bs);
        ModelBuilder::attrInt(mb.node("Cast", {"a64"}, {"a"}), "to", t.onnx);
        ModelBuilder::attrInt(mb.node("Cast", {"b64"}, {"b"}), "to", t.onnx);
      }
      std::vector<std::string> ops;
      for (const char *op : kBinaryOps) {
        if (folded && !folds(op))
          continue;
        mb.node(op, {"a", "b"}, {std::string("y_") + op}, op);
        mb.output(std::string("y_") + op, resultType(op, t), {n});
        ops.push_back(op);
      }
      Compiled c = compileModel(mb.bytes());
      ASSERT_EQ(c.exitCode, 0) << t.name << ": " << c.output;
      aotc::Model m = loadModel(c.soPath);
      std::vector<aotc::HostTensor> in;
      if (!folded)
        in = {tensorOf(t, as), tensorOf(t, bs)};
      std::vector<aotc::HostTensor> out = m.run(in);
      ASSERT_EQ(out.size(), ops.size());
      for (size_t o = 0; o < ops.size(); ++o) {
        std::vector<int64_t> got = valuesOf(out[o]);
        for (int64_t i = 0; i < n; ++i)
          EXPECT_EQ(got[i], reference(ops[o], t, as[i], bs[i]))
              << (folded ? "folded " : "kernel ") << t.name << " " << ops[o]
              << "(" << as[i] << ", " << bs[i] << ")";
      }
    }
  }
}

TEST(IntSemantics, UnaryOpsAndCastsBetweenIntegerTypes) {
  for (const IntType &t : kTypes) {
    std::vector<int64_t> vals = boundaryValues(t);
    int64_t n = static_cast<int64_t>(vals.size());
    for (bool folded : {false, true}) {
      ModelBuilder mb(std::string("unary_") + t.name);
      if (!folded) {
        mb.input("a", t.onnx, {n});
      } else {
        mb.initializerI64("a64", {n}, vals);
        ModelBuilder::attrInt(mb.node("Cast", {"a64"}, {"a"}), "to", t.onnx);
      }
      std::vector<std::string> outs;
      if (!folded || true) {
        // Neg and Abs are computed by kernels in both models (the folder
        // has no Neg); the casts fold.
        if (t.isSigned) {
          mb.node("Neg", {"a"}, {"neg"});
          mb.output("neg", t.onnx, {n});
          mb.node("Abs", {"a"}, {"abs"});
          mb.output("abs", t.onnx, {n});
          outs.push_back("neg");
          outs.push_back("abs");
        }
      }
      for (const IntType &to : kTypes) {
        std::string name = std::string("to_") + to.name;
        ModelBuilder::attrInt(mb.node("Cast", {"a"}, {name}), "to", to.onnx);
        mb.output(name, to.onnx, {n});
        outs.push_back(name);
      }
      Compiled c = compileModel(mb.bytes());
      ASSERT_EQ(c.exitCode, 0) << c.output;
      aotc::Model m = loadModel(c.soPath);
      std::vector<aotc::HostTensor> in;
      if (!folded)
        in = {tensorOf(t, vals)};
      std::vector<aotc::HostTensor> out = m.run(in);
      for (size_t o = 0; o < outs.size(); ++o) {
        std::vector<int64_t> got = valuesOf(out[o]);
        for (int64_t i = 0; i < n; ++i) {
          i128 x = vals[i];
          int64_t want;
          if (outs[o] == "neg")
            want = reduce(t, -x);
          else if (outs[o] == "abs")
            want = reduce(t, x < 0 ? -x : x);
          else {
            const IntType *to = nullptr;
            for (const IntType &k : kTypes)
              if (outs[o] == std::string("to_") + k.name)
                to = &k;
            want = reduce(*to, x);
          }
          EXPECT_EQ(got[i], want) << (folded ? "folded " : "kernel ") << t.name
                                  << " " << outs[o] << "(" << vals[i] << ")";
        }
      }
    }
  }
}

/// The documented result of a float (or double) \p x cast to an integer
/// of \p to: NaN -> 0; truncated toward zero; saturated to int64; wrapped
/// to the width.
int64_t floatToInteger(const IntType &to, double x) {
  i128 v;
  if (std::isnan(x))
    v = 0;
  else if (x >= 9.2233720368547758e18)
    v = std::numeric_limits<int64_t>::max();
  else if (x < -9.2233720368547758e18)
    v = std::numeric_limits<int64_t>::min();
  else
    v = static_cast<int64_t>(std::trunc(x));
  return reduce(to, v);
}

TEST(IntSemantics, FloatToIntegerHasOneDocumentedResult) {
  // Each value where a rule or a width changes: the halves, the int8 to
  // int32 limits and one past them, 2^31 and 2^63 (exact in float) and
  // their neighbours, infinities, NaN, a denormal, -0. 41 of them, in
  // rows of 16 stored as vectors of 8 or 16 (the profile's lanes;
  // aotc_f2l_f16: convert_long16_sat, then the low bits) and a remainder
  // of 9 (a vector of 8 and a scalar), every element asserted.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {
      -2.7f, 2.7f, -0.5f, 0.5f, -0.0f, 1e-40f, 255.9f, 256.0f, -129.0f,
      127.5f, -128.5f, 32767.9f, -32769.0f, 65535.5f, 65536.0f, 1e10f, -1e10f,
      2147483648.0f, -2147483648.0f, 2147483520.0f, -2147483904.0f,
      4294967296.0f, 4294967040.0f, 3e19f, -3e19f, 9.223372e18f,
      9223372036854775808.0f, -9223372036854775808.0f, 9.2233731e18f,
      -9.2233731e18f, 1e38f, -1e38f, inf, -inf,
      std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
      1.0f, -1.0f, 200.49f, -200.51f, 12345678.0f};
  int64_t n = static_cast<int64_t>(xs.size());
  for (int lanes : {8, 16})
  for (bool dbl : {false, true}) {
    SCOPED_TRACE(std::string(dbl ? "double" : "float") + ", " +
                 std::to_string(lanes) + " lanes");
    const std::string profile = "--vector-lanes " + std::to_string(lanes);
    const int32_t fromType =
        dbl ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT;
    ModelBuilder mb(dbl ? "d2i" : "f2i");
    mb.input("x", fromType, {n});
    for (const IntType &to : kTypes) {
      std::string name = std::string("to_") + to.name;
      ModelBuilder::attrInt(mb.node("Cast", {"x"}, {name}), "to", to.onnx);
      mb.output(name, to.onnx, {n});
    }
    ModelBuilder::attrInt(mb.node("Cast", {"x"}, {"to_bool"}), "to",
                          onnx::TensorProto::BOOL);
    mb.output("to_bool", onnx::TensorProto::BOOL, {n});
    // The kernels under test are the vector ones.
    Compiled cl = compileModel(mb.bytes(), profile + " --emit=cl");
    ASSERT_EQ(cl.exitCode, 0) << cl.output;
    EXPECT_NE(cl.output.find(std::string(dbl ? "aotc_f2l_d" : "aotc_f2l_f") +
                             std::to_string(lanes) + "("),
              std::string::npos)
        << "the casts are no longer vectors";
    Compiled c = compileModel(mb.bytes(), profile);
    ASSERT_EQ(c.exitCode, 0) << c.output;
    aotc::Model m = loadModel(c.soPath);
    aotc::HostTensor in(dbl ? AOTC_DTYPE_FLOAT64 : AOTC_DTYPE_FLOAT32, {n});
    for (int64_t i = 0; i < n; ++i) {
      if (dbl)
        in.data<double>()[i] = xs[i];
      else
        in.data<float>()[i] = xs[i];
    }
    auto out = m.run({in});
    for (size_t k = 0; k < std::size(kTypes); ++k) {
      std::vector<int64_t> got = valuesOf(out[k]);
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(got[i], floatToInteger(kTypes[k], xs[i]))
            << (dbl ? "double " : "float ") << "Cast<" << kTypes[k].name
            << ">(" << xs[i] << ") at " << i;
    }
    std::vector<int64_t> b = valuesOf(out[std::size(kTypes)]);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(b[i], xs[i] != 0.0f ? 1 : 0) << "Cast<bool>(" << xs[i] << ")";
  }
}

TEST(IntSemantics, FusedChainsKeepTheWidth) {
  // Each chain ends in an op of another type, so the intermediate result
  // lives only inside the fused kernel.
  struct Chain {
    const IntType &t;
    int64_t a, b;
  };
  // int8: 100 + 100 = -56; uint8: 200 + 100 = 44; int32: MAX + 1 = MIN;
  // int16: 30000 + 30000 = -5536; uint16: 60000 + 6000 = 464; uint32:
  // MAX + 1 = 0.
  const Chain chains[] = {{kTypes[0], 100, 100},   {kTypes[1], 200, 100},
                          {kTypes[2], INT32_MAX, 1}, {kTypes[3], INT64_MAX, 1},
                          {kTypes[4], 30000, 30000}, {kTypes[5], 60000, 6000},
                          {kTypes[6], UINT32_MAX, 1}};
  for (const Chain &ch : chains) {
    const IntType &t = ch.t;
    ModelBuilder mb(std::string("fused_") + t.name);
    mb.input("a", t.onnx, {1});
    mb.input("b", t.onnx, {1});
    mb.node("Add", {"a", "b"}, {"s"});
    ModelBuilder::attrInt(mb.node("Cast", {"s"}, {"sf"}), "to",
                          onnx::TensorProto::DOUBLE);
    mb.output("sf", onnx::TensorProto::DOUBLE, {1});
    mb.node("Less", {"s", "a"}, {"wrapped"}); // a + b < a
    mb.output("wrapped", onnx::TensorProto::BOOL, {1});
    mb.node("Sub", {"a", "b"}, {"d"});
    mb.node("Less", {"d", "a"}, {"dl"});
    mb.output("dl", onnx::TensorProto::BOOL, {1});
    mb.node("Mul", {"a", "b"}, {"p"});
    mb.node("Div", {"p", "b"}, {"q"});
    mb.node("Equal", {"q", "a"}, {"qa"});
    mb.output("qa", onnx::TensorProto::BOOL, {1});
    mb.node("Mul", {"a", "a"}, {"sq"});
    bool reduces = t.bits != 16; // ONNX's ReduceMax takes no 16-bit type
    if (reduces) {
      ModelBuilder::attrInt(mb.node("ReduceMax", {"sq"}, {"mx"}), "keepdims",
                            0);
      mb.output("mx", t.onnx, {});
    }
    Compiled c = compileModel(mb.bytes());
    ASSERT_EQ(c.exitCode, 0) << c.output;
    aotc::Model m = loadModel(c.soPath);
    auto out = m.run({tensorOf(t, {ch.a}), tensorOf(t, {ch.b})});
    i128 a = ch.a, b = ch.b;
    int64_t s = reduce(t, a + b), d = reduce(t, a - b), p = reduce(t, a * b);
    int64_t q = b == 0 ? 0 : reduce(t, i128(p) / b);
    EXPECT_EQ(out[0].toVector<double>()[0], static_cast<double>(s)) << t.name;
    EXPECT_EQ(valuesOf(out[1])[0], s < ch.a ? 1 : 0) << t.name;
    EXPECT_EQ(valuesOf(out[2])[0], d < ch.a ? 1 : 0) << t.name;
    EXPECT_EQ(valuesOf(out[3])[0], q == ch.a ? 1 : 0) << t.name;
    if (reduces) {
      EXPECT_EQ(valuesOf(out[4])[0], reduce(t, a * a)) << t.name;
    }
  }
}

TEST(IntSemantics, ReductionsAccumulateInTheirWidth) {
  // ReduceSum of int32 wraps like repeated int32 additions; ReduceMean
  // divides the wrapped sum by the count.
  std::vector<int64_t> v(200, int64_t{1} << 30);
  ModelBuilder mb("red");
  mb.input("x", onnx::TensorProto::INT32, {200});
  ModelBuilder::attrInt(mb.node("ReduceSum", {"x"}, {"s"}), "keepdims", 0);
  mb.output("s", onnx::TensorProto::INT32, {});
  ModelBuilder::attrInt(mb.node("ReduceMean", {"x"}, {"mean"}), "keepdims", 0);
  mb.output("mean", onnx::TensorProto::INT32, {});
  ModelBuilder::attrInt(mb.node("ReduceMax", {"x"}, {"mx"}), "keepdims", 0);
  mb.output("mx", onnx::TensorProto::INT32, {});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  auto out = m.run({tensorOf(kTypes[2], v)});
  int64_t sum = reduce(kTypes[2], i128(200) << 30); // 200 * 2^30 mod 2^32
  EXPECT_EQ(valuesOf(out[0])[0], sum);
  EXPECT_EQ(valuesOf(out[1])[0], sum / 200);
  EXPECT_EQ(valuesOf(out[2])[0], int64_t{1} << 30);
}

TEST(IntSemantics, CasesFromTheBugReport) {
  // Constant folding ignored int32: Cast<int64>(Cast<int32>(2^40 + 3)) is 3,
  // int32 2147483647 + 1 wraps, 65536 * 65536 == 0 in int32, also when the
  // 65536 comes from a shape at run time.
  ModelBuilder mb("report");
  mb.input("x", onnx::TensorProto::FLOAT, {"s"});
  mb.initializerI64("c", {1}, {(int64_t{1} << 40) + 3});
  ModelBuilder::attrInt(mb.node("Cast", {"c"}, {"c32"}), "to",
                        onnx::TensorProto::INT32);
  ModelBuilder::attrInt(mb.node("Cast", {"c32"}, {"c64"}), "to",
                        onnx::TensorProto::INT64);
  mb.output("c64", onnx::TensorProto::INT64, {1});
  mb.initializerI64("big", {1}, {2147483647});
  mb.initializerI64("one", {1}, {1});
  ModelBuilder::attrInt(mb.node("Cast", {"big"}, {"big32"}), "to",
                        onnx::TensorProto::INT32);
  ModelBuilder::attrInt(mb.node("Cast", {"one"}, {"one32"}), "to",
                        onnx::TensorProto::INT32);
  mb.node("Add", {"big32", "one32"}, {"sum32"});
  mb.output("sum32", onnx::TensorProto::INT32, {1});
  mb.initializerI64("k", {1}, {65536});
  ModelBuilder::attrInt(mb.node("Cast", {"k"}, {"k32"}), "to",
                        onnx::TensorProto::INT32);
  mb.node("Mul", {"k32", "k32"}, {"kk"});
  mb.initializerI64("zero", {1}, {0});
  ModelBuilder::attrInt(mb.node("Cast", {"zero"}, {"zero32"}), "to",
                        onnx::TensorProto::INT32);
  mb.node("Equal", {"kk", "zero32"}, {"kk0"});
  mb.output("kk0", onnx::TensorProto::BOOL, {1});
  mb.node("Shape", {"x"}, {"sh"});
  ModelBuilder::attrInt(mb.node("Cast", {"sh"}, {"sh32"}), "to",
                        onnx::TensorProto::INT32);
  mb.node("Mul", {"sh32", "sh32"}, {"ss"});
  mb.output("ss", onnx::TensorProto::INT32, {1});
  Compiled c = compileModel(mb.bytes());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  aotc::Model m = loadModel(c.soPath);
  for (int64_t s : {int64_t{3}, int64_t{65536}}) {
    auto out = m.run({aotc::HostTensor(AOTC_DTYPE_FLOAT32, {s})});
    EXPECT_EQ(valuesOf(out[0])[0], 3);
    EXPECT_EQ(valuesOf(out[1])[0], INT32_MIN);
    EXPECT_EQ(valuesOf(out[2])[0], 1);
    EXPECT_EQ(valuesOf(out[3])[0], reduce(kTypes[2], i128(s) * s)) << s;
  }
}

} // namespace
