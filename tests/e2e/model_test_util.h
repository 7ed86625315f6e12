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

/// Loads a compiled model on the test device (AOTC_DEVICE, default cpu).
aotc::Model loadModel(const std::string &soPath);

} // namespace aotc::e2e
