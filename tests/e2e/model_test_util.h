/// \file
/// Helpers of the end-to-end model tests: build ONNX models in C++ (any
/// names, any dtype), compile them with the aotc CLI, load them with the C++
/// runner and run them on the OpenCL device.
#pragma once

#include <aotc/runner.hpp>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aotc::e2e {

/// A dimension: a number or a dim_param name.
struct Dim {
  Dim(int64_t v) : value(v) {}
  Dim(int v) : value(v) {}
  Dim(const char *p) : param(p) {}
  Dim(std::string p) : param(std::move(p)) {}
  int64_t value = -1;
  std::string param;
};

/// Builds a ModelProto (IR version 8) node by node.
class ModelBuilder {
public:
  explicit ModelBuilder(const std::string &graphName, int opset = 17);

  void input(const std::string &name, int32_t onnxType,
             const std::vector<Dim> &dims);
  void output(const std::string &name, int32_t onnxType,
              const std::vector<Dim> &dims);
  /// An initializer (constant) with int64 / float / raw data.
  void initializerI64(const std::string &name, const std::vector<int64_t> &dims,
                      const std::vector<int64_t> &values);
  void initializerF32(const std::string &name, const std::vector<int64_t> &dims,
                      const std::vector<float> &values);
  onnx::NodeProto &node(const std::string &op,
                        const std::vector<std::string> &inputs,
                        const std::vector<std::string> &outputs,
                        const std::string &name = "");
  static void attrInt(onnx::NodeProto &n, const std::string &name, int64_t v);
  static void attrInts(onnx::NodeProto &n, const std::string &name,
                       const std::vector<int64_t> &v);
  static void attrFloat(onnx::NodeProto &n, const std::string &name, float v);
  static void attrString(onnx::NodeProto &n, const std::string &name,
                         const std::string &v);

  std::string bytes() const;
  onnx::ModelProto &proto() { return model_; }

private:
  onnx::ModelProto model_;
};

/// The result of compiling a model with the aotc CLI.
struct Compiled {
  int exitCode = -1;
  std::string output; ///< what aotc printed (stdout and stderr)
  std::string soPath; ///< the .so when exitCode == 0
};

/// Writes \p modelBytes to a temporary file and runs
/// `aotc compile FILE -o FILE.so --verify-each EXTRA`.
Compiled compileModel(const std::string &modelBytes,
                      const std::string &extraArgs = "",
                      const std::string &suffix = ".onnx");

/// Options for the test device (AOTC_DEVICE, default cpu).
aotc::ModelOptions deviceOptions();

/// Loads a compiled model on the test device (AOTC_DEVICE, default cpu).
aotc::Model loadModel(const std::string &soPath);

/// True if \p m runs on PoCL (its platform is Portable Computing Language).
bool onPocl(const aotc::Model &m);

/// y = Relu(x) over float[37], compiled and loaded: the smallest model, for
/// tests of what the runtime sets up per process (each test its own
/// process, ctest running every discovered test alone).
aotc::Model loadSmallRelu(const std::string &graphName);
/// Runs \p m (from loadSmallRelu) on x = i - 18.5 and expects Relu(x) in
/// every element.
void expectSmallRelu(aotc::Model &m);

/// The weights of the small two-layer model the constants and package
/// tests build (y = Relu(x @ w1^T + b1) @ w2, w1 [kHidden, kIn] read
/// transposed by a Gemm, w2 [kHidden, kOut]). The hidden and output widths
/// are multiples of the 8 vector lanes: the tiled build packs w1 (Gemm,
/// transB) and w2 (MatMul) as panels of 8 columns, a fold with a split
/// (pack_weights.h) that updates and extraction redo.
namespace twolayer {
constexpr int64_t kIn = 5, kHidden = 24, kOut = 16;
struct Weights {
  std::vector<float> w1, b1, w2;
};
/// Deterministic weights, different for each \p seed.
Weights makeWeights(float seed);
/// The weights by initializer name, for updateConstants.
aotc::Model::ConstantMap asMap(const Weights &w);
/// A deterministic input x of \p n rows.
aotc::HostTensor input(int64_t n);
} // namespace twolayer

} // namespace aotc::e2e
