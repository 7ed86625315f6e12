// The emitted OpenCL C on the real device (PoCL here): every test module
// builds, and running its kernels in order with aotc's argument convention
// (buffer base + byte offset, symbols as long) gives the right numbers for
// random inputs. Buffers sit at odd offsets inside larger allocations filled
// with a sentinel, and global sizes are rounded up, so a kernel that ignores
// its offset or its bounds guard fails.
#include "cl_test_util.h"
#include "codegen/opencl/cl_printer.h"
#include "ir/simplify.h"
#include "test_modules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

using namespace aotc;
using namespace aotc::test;

namespace {

constexpr uint8_t kSentinel = 0xCD;
constexpr uint64_t kPad = 40; // bytes before each tensor in a shared buffer

using Bytes = std::vector<uint8_t>;
using Symbols = std::map<std::string, int64_t>;
using Bindings = std::vector<std::pair<Expr, int64_t>>;

int64_t eval(const Expr &e, const Bindings &s) {
  std::optional<int64_t> v = evaluate(e, s);
  EXPECT_TRUE(v.has_value()) << printExpr(e);
  return v.value_or(0);
}

uint64_t tensorBytes(const ModuleTensor &t, const Bindings &s) {
  return static_cast<uint64_t>(eval(product(t.dims), s) * dtypeSize(t.dtype));
}

/// One shared device buffer holding several tensors, each kPad bytes after
/// the previous one's end, and a sentinel everywhere else.
struct Packed {
  cl_mem mem = nullptr;
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  Bytes host;

  explicit Packed(const std::vector<Bytes> &parts) {
    uint64_t at = 0;
    for (const Bytes &p : parts) {
      at += kPad;
      offsets.push_back(at);
      sizes.push_back(p.size());
      at += p.size();
    }
    total = at + kPad;
    host.assign(total, kSentinel);
    for (size_t i = 0; i < parts.size(); ++i)
      std::copy(parts[i].begin(), parts[i].end(), host.begin() + offsets[i]);
    mem = makeBuffer(total, host.data());
  }
  ~Packed() {
    if (mem)
      clReleaseMemObject(mem);
  }
  /// Reads the buffer back; checks that nothing outside the tensors changed.
  std::vector<Bytes> read() {
    Bytes now(total);
    readBuffer(mem, 0, total, now.data());
    std::vector<bool> inside(total, false);
    std::vector<Bytes> out;
    for (size_t i = 0; i < offsets.size(); ++i) {
      out.emplace_back(now.begin() + offsets[i],
                       now.begin() + offsets[i] + sizes[i]);
      std::fill(inside.begin() + offsets[i],
                inside.begin() + offsets[i] + sizes[i], true);
    }
    for (uint64_t b = 0; b < total; ++b) {
      if (!inside[b]) {
        EXPECT_EQ(now[b], kSentinel) << "byte " << b << " outside the tensors";
      }
    }
    return out;
  }
};

/// Runs every kernel of \p m once, in order, the way the wrapper and the
/// runtime do, and returns the outputs.
std::vector<Bytes> runModule(const LoopModule &m, const Symbols &byName,
                             const std::vector<Bytes> &inputs,
                             const ClOptions &options = {}) {
  Bindings symbols;
  for (const Symbol &sym : m.symbols)
    symbols.emplace_back(sym.var, byName.at(sym.name));
  Expected<std::string> src = emitOpenCL(m, options);
  EXPECT_TRUE(src.isOk()) << src.status().message();
  if (!src)
    return {};
  std::string log;
  cl_program program = buildProgram(*src, buildOptions(m), log);
  EXPECT_NE(program, nullptr) << log << "\n" << *src;
  if (!program)
    return {};

  Packed in(inputs);
  std::vector<Bytes> outputs;
  for (const ModuleTensor &t : m.outputs)
    outputs.emplace_back(tensorBytes(t, symbols), kSentinel);
  Packed out(outputs);
  Bytes blob(m.constantsBytes, 0);
  for (const ModuleConstant &c : m.constants)
    std::copy(c.data.data(), c.data.data() + c.data.size(),
              blob.begin() + c.offset);
  Packed constants({blob});
  uint64_t arenaBytes = static_cast<uint64_t>(eval(m.arenaBytes, symbols));
  Packed arena({Bytes(arenaBytes, kSentinel)});

  for (const Kernel &k : m.kernels) {
    std::vector<KernelArg> args;
    for (const KernelBuffer &kb : k.buffers) {
      const ModuleBuffer *b = m.findBuffer(kb.name);
      EXPECT_NE(b, nullptr) << kb.name;
      if (!b)
        return {};
      switch (b->role) {
      case BufferRole::Input:
        args.push_back({in.mem, in.offsets[b->index], 0});
        break;
      case BufferRole::Output:
        args.push_back({out.mem, out.offsets[b->index], 0});
        break;
      case BufferRole::Constant:
        args.push_back({constants.mem,
                        constants.offsets[0] + m.constants[b->index].offset,
                        0});
        break;
      case BufferRole::Arena:
        args.push_back({arena.mem,
                        arena.offsets[0] + static_cast<uint64_t>(
                                               eval(b->arenaOffset, symbols)),
                        0});
        break;
      }
    }
    for (const Expr &s : k.symbols)
      args.push_back({nullptr, 0, eval(s, symbols)});
    // Rounded up to a multiple of 4, as a runtime with a local size would.
    std::vector<size_t> global;
    for (const Expr &e : LoopModule::globalSize(k))
      global.push_back((static_cast<size_t>(eval(e, symbols)) + 3) / 4 * 4);
    if (global.empty())
      global.push_back(1);
    EXPECT_EQ(launch(program, k.name, args, global), CL_SUCCESS) << k.name;
  }
  clReleaseProgram(program);
  in.read();
  constants.read();
  arena.read();
  return out.read();
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

template <typename T> Bytes toBytes(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) // memcpy from an empty vector's null data is undefined
    std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> toFloats(const Bytes &b) {
  std::vector<float> v(b.size() / sizeof(float));
  if (!v.empty())
    std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
  return v;
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want,
                const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << "[" << i << "]";
      continue;
    }
    EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])))
        << what << "[" << i << "]";
  }
}

TEST(CLRun, DeviceIsPresent) {
  ClEnv &env = ClEnv::get();
  ASSERT_NE(env.queue, nullptr) << env.error;
}

TEST(CLRun, EveryTestModuleBuilds) {
  for (const std::string &name : moduleNames()) {
    LoopModule m;
    ASSERT_TRUE(moduleByName(name, m));
    Expected<std::string> src = emitOpenCL(m);
    ASSERT_TRUE(src.isOk()) << src.status().message();
    std::string log;
    cl_program p = buildProgram(*src, buildOptions(m), log);
    EXPECT_NE(p, nullptr) << name << ": " << log << "\n" << *src;
    if (p)
      clReleaseProgram(p);
  }
}

TEST(CLRun, PointwiseMatchesReference) {
  LoopModule m = pointwiseModule();
  const int64_t batch = 7;
  std::vector<float> x = randomFloats(batch * 16, 1);
  std::vector<Bytes> out = runModule(m, {{"batch", batch}}, {toBytes(x)});
  ASSERT_EQ(out.size(), 2u);
  std::vector<float> y(x.size());
  Bytes mask(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = x[i] > 0 ? x[i] * 2.0f + 1.0f : std::exp(x[i]) - 1.0f;
    mask[i] = x[i] > 0.5f ? 1 : 0;
  }
  expectNear(toFloats(out[0]), y, "y");
  EXPECT_EQ(out[1], mask);
}

TEST(CLRun, ReductionMatchesReference) {
  LoopModule m = reductionModule();
  for (int64_t seq : {int64_t(5), int64_t(1), int64_t(0)}) {
    SCOPED_TRACE("seq.len = " + std::to_string(seq));
    std::vector<float> x = randomFloats(4 * seq, 2);
    std::vector<Bytes> out = runModule(m, {{"seq.len", seq}}, {toBytes(x)});
    ASSERT_EQ(out.size(), 3u);
    std::vector<float> mean(4), mx(4);
    Bytes anyNeg(4);
    for (int64_t r = 0; r < 4; ++r) {
      float sum = 0, best = -INFINITY;
      bool neg = false;
      for (int64_t k = 0; k < seq; ++k) {
        float v = x[r * seq + k];
        sum += v;
        best = std::fmax(best, v);
        neg = neg || v < 0;
      }
      mean[r] = seq > 0 ? sum / static_cast<float>(seq) : 0.0f;
      mx[r] = best;
      anyNeg[r] = neg;
    }
    expectNear(toFloats(out[0]), mean, "mean");
    expectNear(toFloats(out[1]), mx, "max");
    EXPECT_EQ(out[2], anyNeg);
  }
}

TEST(CLRun, ConstantsAndArenaMatchReference) {
  LoopModule m = constArenaModule();
  const int64_t batch = 7;
  std::vector<float> x = randomFloats(batch * 8, 3);
  std::vector<Bytes> out = runModule(m, {{"batch", batch}}, {toBytes(x)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<float> w = constArenaWeights(), b = constArenaBias();
  std::vector<float> y(batch);
  for (int64_t r = 0; r < batch; ++r) {
    float acc = 0;
    for (int k = 0; k < 8; ++k)
      acc += x[r * 8 + k] * w[k] + b[k];
    y[r] = std::fmax(acc, 0.0f);
  }
  expectNear(toFloats(out[0]), y, "y");
}

TEST(CLRun, IntegerMinMaxWithLiteralsRun) {
  // out[i] = in[clamp(min(max(i, 2), 5), 0, 6)]: long builtins with literal
  // operands must not be ambiguous overloads.
  LoopModule m;
  m.name = "minmax";
  Expr n = Var::make("n"), i = Var::make("i");
  m.symbols = {{"n", {1, 100}, n}};
  m.inputs = {{"in", DType::Float32, {n}, "in"}};
  m.outputs = {{"out", DType::Float32, {n}, "out"}};
  ModuleBuffer ib, ob;
  ib.name = "in", ib.shape = {n}, ib.role = BufferRole::Input, ib.index = 0;
  ob.name = "out", ob.shape = {n}, ob.role = BufferRole::Output, ob.index = 0;
  m.buffers = {ib, ob};
  m.arenaBytes = Expr(0);
  Expr idx =
      Call::make(DType::Int64, "clamp",
                 {minExpr(maxExpr(i, Expr(2)), Expr(5)), Expr(0), Expr(6)});
  m.kernels = {Kernel{
      "gather_clamped",
      {{"in", DType::Float32, false, {n}}, {"out", DType::Float32, true, {n}}},
      {n},
      For::make(
          i, 0, n, ForKind::Parallel, 0,
          Store::make("out", {i}, Load::make(DType::Float32, "in", {idx}))),
      false}};
  std::vector<float> x = {10, 11, 12, 13, 14, 15, 16, 17};
  std::vector<Bytes> out = runModule(m, {{"n", 8}}, {toBytes(x)});
  ASSERT_EQ(out.size(), 1u);
  expectNear(toFloats(out[0]), {12, 12, 12, 13, 14, 15, 15, 15}, "out");
}

TEST(CLRun, Float64KernelBuildsAndRuns) {
  // y[i] = x[i] * 0.1 in double, with the fp64 pragma.
  LoopModule m;
  m.name = "f64";
  Expr n = Var::make("n"), i = Var::make("i");
  m.symbols = {{"n", {1, 100}, n}};
  m.inputs = {{"x", DType::Float64, {n}, "x"}};
  m.outputs = {{"y", DType::Float64, {n}, "y"}};
  ModuleBuffer xb, yb;
  xb.name = "x", xb.dtype = DType::Float64, xb.shape = {n};
  xb.role = BufferRole::Input, xb.index = 0;
  yb.name = "y", yb.dtype = DType::Float64, yb.shape = {n};
  yb.role = BufferRole::Output, yb.index = 0;
  m.buffers = {xb, yb};
  m.arenaBytes = Expr(0);
  m.kernels = {Kernel{
      "scale_f64",
      {{"x", DType::Float64, false, {n}}, {"y", DType::Float64, true, {n}}},
      {n},
      For::make(i, 0, n, ForKind::Parallel, 0,
                Store::make("y", {i},
                            Binary::make(BinOp::Mul,
                                         Load::make(DType::Float64, "x", {i}),
                                         FloatImm::make(0.1, DType::Float64)))),
      false}};
  std::vector<double> x = {1.0, -2.5, 3.25, 1e10, 7.0};
  Bytes xbytes = toBytes(x);
  std::vector<Bytes> out = runModule(m, {{"n", 5}}, {xbytes});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), xbytes.size());
  std::vector<double> y(x.size());
  std::memcpy(y.data(), out[0].data(), out[0].size());
  for (size_t k = 0; k < x.size(); ++k)
    EXPECT_EQ(y[k], x[k] * 0.1) << k;
}

/// out_a = c ? x : 0, out_b = c ? 0 : x, out_c = c ? x : y on vectors of 8
/// \p t, c = (i mod 3 == 1) one bool per vector (a padded row's select).
LoopModule scalarCondVectorSelects(DType t) {
  LoopModule m;
  m.name = "lane_masks";
  Expr n = Var::make("n"), i = Var::make("i");
  Expr n8 = n * Expr(8);
  m.symbols = {{"n", {1, 100}, n}};
  m.inputs = {{"x", t, {n8}, "x"}, {"y", t, {n8}, "y"}};
  m.outputs = {{"a", t, {n8}, "a"}, {"b", t, {n8}, "b"}, {"c", t, {n8}, "c"}};
  std::vector<KernelBuffer> kbs;
  const char *names[] = {"x", "y", "a", "b", "c"};
  for (int k = 0; k < 5; ++k) {
    ModuleBuffer b;
    b.name = names[k], b.dtype = t, b.shape = {n8};
    b.role = k < 2 ? BufferRole::Input : BufferRole::Output;
    b.index = k < 2 ? k : k - 2;
    m.buffers.push_back(b);
    kbs.push_back({names[k], t, k >= 2, {n8}});
  }
  m.arenaBytes = Expr(0);
  Expr c = cmp(BinOp::EQ, mod(i, Expr(3)), Expr(1));
  Expr x = VectorLoad::make(t, "x", {i * Expr(8)}, 8);
  Expr y = VectorLoad::make(t, "y", {i * Expr(8)}, 8);
  Expr zero = Broadcast::make(FloatImm::make(0.0, t), 8);
  m.kernels = {Kernel{
      "lane_masks",
      kbs,
      {n},
      For::make(i, 0, n, ForKind::Parallel, 0,
                Block::make({Store::make("a", {i * Expr(8)},
                                         Select::make(c, x, zero)),
                             Store::make("b", {i * Expr(8)},
                                         Select::make(c, zero, x)),
                             Store::make("c", {i * Expr(8)},
                                         Select::make(c, x, y))})),
      false}};
  return m;
}

template <typename T> void laneMaskSelectsKeepEveryBit(DType t) {
  LoopModule m = scalarCondVectorSelects(t);
  const int64_t n = 7; // odd: the last vectors past a multiple of 4
  // Every class of value: NaN with a payload, both zeros, infinities,
  // subnormals, and the extremes.
  std::vector<T> special = {std::numeric_limits<T>::quiet_NaN(),
                            -std::numeric_limits<T>::quiet_NaN(),
                            T(-0.0),
                            T(0.0),
                            std::numeric_limits<T>::infinity(),
                            -std::numeric_limits<T>::infinity(),
                            std::numeric_limits<T>::denorm_min(),
                            -std::numeric_limits<T>::denorm_min(),
                            std::numeric_limits<T>::max(),
                            std::numeric_limits<T>::lowest()};
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> dist(-3.0, 3.0);
  std::vector<T> x(n * 8), y(n * 8);
  for (size_t k = 0; k < x.size(); ++k) {
    x[k] = k % 3 == 0 ? special[k % special.size()] : T(dist(gen));
    y[k] = k % 4 == 1 ? special[(k + 3) % special.size()] : T(dist(gen));
  }
  std::vector<T> a(x.size()), bb(x.size()), c(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < 8; ++l) {
      const size_t k = static_cast<size_t>(i * 8 + l);
      const bool cond = i % 3 == 1;
      a[k] = cond ? x[k] : T(0.0);
      bb[k] = cond ? T(0.0) : x[k];
      c[k] = cond ? x[k] : y[k];
    }
  for (bool masks : {false, true}) {
    SCOPED_TRACE(masks ? "lane masks" : "?:");
    ClOptions o;
    o.laneMaskSelects = masks;
    Expected<std::string> src = emitOpenCL(m, o);
    ASSERT_TRUE(src.isOk()) << src.status().message();
    const std::string v = t == DType::Float32 ? "float8" : "double8";
    EXPECT_EQ(src->find("as_" + v + "(") != std::string::npos, masks) << *src;
    // c ? x : y keeps ?:
    EXPECT_NE(src->find(" ? vload8(0, x + (8 * i)) : vload8(0, y + (8 * i))"),
              std::string::npos)
        << *src;
    EXPECT_NE(src->find(" ? "), std::string::npos) << *src;
    std::vector<Bytes> out = runModule(m, {{"n", n}}, {toBytes(x), toBytes(y)}, o);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0], toBytes(a)) << "c ? x : 0";
    EXPECT_EQ(out[1], toBytes(bb)) << "c ? 0 : x";
    EXPECT_EQ(out[2], toBytes(c)) << "c ? x : y";
  }
}

TEST(CLRun, LaneMaskSelectsKeepEveryBit) {
  laneMaskSelectsKeepEveryBit<float>(DType::Float32);
  laneMaskSelectsKeepEveryBit<double>(DType::Float64);
}

} // namespace
