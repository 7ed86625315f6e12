// Names never leak: models whose dimension, tensor, constant, node and graph
// names are the identifiers aotc's printers emit (x, acc, r0, gid0, in0,
// s_batch, errors, ovf, ...) and C, C++ and OpenCL keywords and builtins
// compile and give the right numbers.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace aotc::e2e;

namespace {

/// Identifiers generated code uses, keywords, builtins and odd strings.
const std::vector<std::string> &namePool() {
  static const std::vector<std::string> names = {
      // what the kernel and wrapper printers emit
      "x", "acc", "red", "r0", "r1", "i0", "i1", "i2", "gid0", "gid1", "in0",
      "in1", "out0", "out1", "t3", "t4", "c1", "c2", "k0_y", "k1_out", "s",
      "s_n", "s_batch", "s_x", "batch", "n", "args", "global", "err", "errors",
      "errors_base", "errors_off", "in0_base", "in0_off", "dims", "ctx", "run",
      "arena_bytes", "output_shapes", "check_symbols", "kModelDesc", "kSymbols",
      "kInputs", "ovf", "int64_t", "uint64_t", "aotc_min", "aotc_check_index",
      "aotc_model_desc", "AotcArg",
      // C, C++ and OpenCL keywords, types and builtins
      "int", "float", "double", "long", "char", "uchar", "bool", "half",
      "float4", "return", "kernel", "__kernel", "__global", "constant", "local",
      "private", "exp", "min", "max", "fmax", "select", "clamp",
      "get_global_id", "barrier", "if", "else", "for", "while", "do", "switch",
      "case", "struct", "class", "template", "typename", "namespace", "main",
      "NULL", "INFINITY", "NAN", "M_PI", "true", "false", "auto", "register",
      "volatile", "restrict", "typedef", "sizeof", "operator", "new", "delete",
      "this", "void", "static", "extern", "inline", "const",
      // odd strings
      "a.b", "a-b", "a b", "9lives", "", "_", "__x", "x\"y", "x\\y", "x/*y",
      "x//y", "x\ny", "\xc3\xa9t\xc3\xa9",
      "a_very_long_name_that_goes_on_and_on_and_on_and_on_and_on_and_on"};
  return names;
}

/// Distinct names for one model, starting at \p offset in the pool; an
/// empty name is only usable where ONNX allows it, so it is skipped.
std::vector<std::string> pickNames(size_t offset, size_t count) {
  const auto &pool = namePool();
  std::vector<std::string> out;
  for (size_t i = 0; out.size() < count; ++i) {
    const std::string &n = pool[(offset + i * 7) % pool.size()];
    if (n.empty() || std::find(out.begin(), out.end(), n) != out.end())
      continue;
    out.push_back(n);
  }
  return out;
}

// MatMul(A[d1, d2], B[d2, 3]) + C -> Relu -> Softmax over dim 1 (out 0) and
// ReduceSum over dim 1 (out 1): contraction, broadcasting, a fused
// reduction epilogue and a three-kernel softmax, all named from the pool.
TEST(Hygiene, NamesFromEveryPrinterAndKeywordsComputeCorrectly) {
  const size_t kModels = 12;
  for (size_t m = 0; m < kModels; ++m) {
    std::vector<std::string> nm = pickNames(m * 5, 16);
    const std::string &d1 = nm[0], &d2 = nm[1];
    const std::string &a = nm[2], &b = nm[3], &c = nm[4], &mm = nm[5],
                      &sum = nm[6], &relu = nm[7], &soft = nm[8], &rsum = nm[9],
                      &axes = nm[10];
    ModelBuilder mb(nm[11]);
    mb.input(a, onnx::TensorProto::FLOAT, {d1, d2});
    mb.input(b, onnx::TensorProto::FLOAT, {d2, 3});
    mb.initializerF32(c, {3}, {0.25f, -0.5f, 1.0f});
    mb.initializerI64(axes, {1}, {1});
    mb.node("MatMul", {a, b}, {mm}, nm[12]);
    mb.node("Add", {mm, c}, {sum}, nm[13]);
    mb.node("Relu", {sum}, {relu}, nm[14]);
    ModelBuilder::attrInt(mb.node("Softmax", {relu}, {soft}, nm[15]), "axis",
                          1);
    ModelBuilder::attrInt(mb.node("ReduceSum", {relu, axes}, {rsum}),
                          "keepdims", 0);
    mb.output(soft, onnx::TensorProto::FLOAT, {d1, 3});
    mb.output(rsum, onnx::TensorProto::FLOAT, {d1});

    Compiled comp = compileModel(mb.bytes());
    ASSERT_EQ(comp.exitCode, 0) << "model " << m << ": " << comp.output;
    aotc::Model model = loadModel(comp.soPath);

    std::mt19937 gen(static_cast<unsigned>(m));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto [n1, n2] : {std::pair<int64_t, int64_t>{5, 3}, {1, 7}, {0, 2}}) {
      std::vector<float> av(n1 * n2), bv(n2 * 3);
      for (float &v : av)
        v = dist(gen);
      for (float &v : bv)
        v = dist(gen);
      auto out = model.run({aotc::HostTensor::fromVector({n1, n2}, av),
                            aotc::HostTensor::fromVector({n2, 3}, bv)});
      ASSERT_EQ(out.size(), 2u);
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n1, 3}));
      ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{n1}));
      std::vector<float> gotS = out[0].toVector<float>();
      std::vector<float> gotR = out[1].toVector<float>();
      const float cv[3] = {0.25f, -0.5f, 1.0f};
      for (int64_t i = 0; i < n1; ++i) {
        double r[3], total = 0, mx = -INFINITY;
        for (int j = 0; j < 3; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < n2; ++k)
            acc += double(av[i * n2 + k]) * bv[k * 3 + j];
          r[j] = std::max(0.0, acc + cv[j]);
          mx = std::max(mx, r[j]);
          total += r[j];
        }
        double z = 0;
        for (int j = 0; j < 3; ++j)
          z += std::exp(r[j] - mx);
        for (int j = 0; j < 3; ++j)
          EXPECT_NEAR(gotS[i * 3 + j], std::exp(r[j] - mx) / z, 1e-5)
              << "model " << m << " (dims '" << d1 << "', '" << d2 << "') ["
              << i << "," << j << "]";
        EXPECT_NEAR(gotR[i], total, 1e-4) << "model " << m << " row " << i;
      }
    }
  }
}

} // namespace
