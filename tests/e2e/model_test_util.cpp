/// \file
/// ModelBuilder and the compile/load helpers of the end-to-end model tests.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace aotc::e2e {

bool onPocl(const aotc::Model &m) {
  return m.deviceName().find("Portable Computing Language") !=
         std::string::npos;
}

aotc::Model loadSmallRelu(const std::string &graphName) {
  ModelBuilder mb(graphName);
  mb.input("x", onnx::TensorProto::FLOAT, {37});
  mb.node("Relu", {"x"}, {"y"});
  mb.output("y", onnx::TensorProto::FLOAT, {37});
  Compiled comp = compileModel(mb.bytes());
  EXPECT_EQ(comp.exitCode, 0) << comp.output;
  return loadModel(comp.soPath);
}

void expectSmallRelu(aotc::Model &m) {
  std::vector<float> x(37);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) - 18.5f;
  std::vector<float> y =
      m.run({aotc::HostTensor::fromVector({37}, x)})[0].toVector<float>();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f) << i;
}

namespace {

void setShape(onnx::ValueInfoProto *v, int32_t type,
              const std::vector<Dim> &dims) {
  auto *tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto *shape = tt->mutable_shape();
  for (const Dim &d : dims) {
    auto *dim = shape->add_dim();
    if (d.param.empty())
      dim->set_dim_value(d.value);
    else
      dim->set_dim_param(d.param);
  }
}

/// A private directory for this test process's files, removed at exit.
const std::string &tempDir() {
  struct Dir {
    std::string path;
    Dir() {
      const char *t = std::getenv("TMPDIR");
      std::string tmpl = std::string(t && *t ? t : "/tmp") + "/aotc-e2e-XXXXXX";
      std::vector<char> buf(tmpl.begin(), tmpl.end());
      buf.push_back('\0');
      if (mkdtemp(buf.data()))
        path = buf.data();
    }
    ~Dir() {
      if (!path.empty() && !std::getenv("AOTC_KEEP_TEST_FILES")) {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
      }
    }
  };
  static Dir dir;
  return dir.path;
}

} // namespace

ModelBuilder::ModelBuilder(const std::string &graphName, int opset) {
  model_.set_ir_version(8);
  auto *op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_.mutable_graph()->set_name(graphName);
}

void ModelBuilder::input(const std::string &name, int32_t type,
                         const std::vector<Dim> &dims) {
  auto *v = model_.mutable_graph()->add_input();
  v->set_name(name);
  setShape(v, type, dims);
}

void ModelBuilder::output(const std::string &name, int32_t type,
                          const std::vector<Dim> &dims) {
  auto *v = model_.mutable_graph()->add_output();
  v->set_name(name);
  setShape(v, type, dims);
}

void ModelBuilder::initializerI64(const std::string &name,
                                  const std::vector<int64_t> &dims,
                                  const std::vector<int64_t> &values) {
  auto *t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims)
    t->add_dims(d);
  for (int64_t v : values)
    t->add_int64_data(v);
}

void ModelBuilder::initializerF32(const std::string &name,
                                  const std::vector<int64_t> &dims,
                                  const std::vector<float> &values) {
  auto *t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t->add_dims(d);
  for (float v : values)
    t->add_float_data(v);
}

onnx::NodeProto &ModelBuilder::node(const std::string &op,
                                    const std::vector<std::string> &inputs,
                                    const std::vector<std::string> &outputs,
                                    const std::string &name) {
  onnx::NodeProto *n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string &i : inputs)
    n->add_input(i);
  for (const std::string &o : outputs)
    n->add_output(o);
  return *n;
}

void ModelBuilder::attrInt(onnx::NodeProto &n, const std::string &name,
                           int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void ModelBuilder::attrInts(onnx::NodeProto &n, const std::string &name,
                            const std::vector<int64_t> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}

void ModelBuilder::attrFloat(onnx::NodeProto &n, const std::string &name,
                             float v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void ModelBuilder::attrString(onnx::NodeProto &n, const std::string &name,
                              const std::string &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

std::string ModelBuilder::bytes() const {
  std::string s;
  model_.SerializeToString(&s);
  return s;
}

Compiled compileModel(const std::string &modelBytes,
                      const std::string &extraArgs, const std::string &suffix) {
  static int counter = 0;
  std::string base = tempDir() + "/m" + std::to_string(counter++);
  std::string modelPath = base + suffix;
  {
    std::ofstream out(modelPath, std::ios::binary);
    out.write(modelBytes.data(),
              static_cast<std::streamsize>(modelBytes.size()));
  }
  Compiled c;
  std::string cmd = std::string(AOTC_BIN) + " compile '" + modelPath +
                    "' -o '" + base + ".so' --verify-each " + extraArgs +
                    " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) {
    c.output = "cannot run " + cmd;
    return c;
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    c.output.append(buf.data(), n);
  int status = pclose(p);
  c.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (c.exitCode == 0)
    c.soPath = base + ".so";
  return c;
}

aotc::ModelOptions deviceOptions() {
  aotc::ModelOptions opts;
  const char *dev = std::getenv("AOTC_DEVICE");
  opts.device = std::string(dev && *dev ? dev : "cpu");
  return opts;
}

aotc::Model loadModel(const std::string &soPath) {
  return aotc::Model::load(soPath, deviceOptions());
}

namespace twolayer {

Weights makeWeights(float seed) {
  Weights w;
  for (int64_t i = 0; i < kHidden * kIn; ++i)
    w.w1.push_back(std::sin(seed + 0.37f * static_cast<float>(i)));
  for (int64_t i = 0; i < kHidden; ++i)
    w.b1.push_back(std::cos(seed * 1.7f + static_cast<float>(i)));
  for (int64_t i = 0; i < kHidden * kOut; ++i)
    w.w2.push_back(std::sin(seed * 2.3f - 0.61f * static_cast<float>(i)));
  return w;
}

aotc::Model::ConstantMap asMap(const Weights &w) {
  return {{"w1", aotc::HostTensor::fromVector({kHidden, kIn}, w.w1)},
          {"b1", aotc::HostTensor::fromVector({kHidden}, w.b1)},
          {"w2", aotc::HostTensor::fromVector({kHidden, kOut}, w.w2)}};
}

aotc::HostTensor input(int64_t n) {
  std::vector<float> x(n * kIn);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.9f * static_cast<float>(i) + 0.3f) * 2.0f;
  return aotc::HostTensor::fromVector({n, kIn}, x);
}

} // namespace twolayer

} // namespace aotc::e2e
