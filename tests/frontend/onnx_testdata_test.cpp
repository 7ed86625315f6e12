/// \file
/// Real models from ONNX's backend node tests (libonnx-testdata): import,
/// infer shapes, and compare the output types with the reference outputs.
#include "tests/frontend/test_util.h"

#include "ir/simplify.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>

namespace aotc {
namespace {

bool readProto(const std::string &path, google::protobuf::Message &m) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  return m.ParseFromString(ss.str());
}

/// Imports a node test case with its integer inputs (shapes, axes, indices)
/// bound as initializers, and checks each output's dtype and dims against
/// test_data_set_0. Returns "" on success, "skip: ..." for a case aotc
/// rejects as unsupported, or the failure.
std::string checkCase(const std::string &dir, bool symbolic) {
  onnx::ModelProto model;
  if (!readProto(dir + "/model.onnx", model))
    return "cannot read model";
  onnx::GraphProto *g = model.mutable_graph();
  // Symbolic variant: every dim v > 1 of the non-integer inputs becomes
  // symbol sV.
  std::map<std::string, int64_t> bindings;
  for (int i = 0; symbolic && i < g->input_size(); ++i) {
    auto *tt = g->mutable_input(i)->mutable_type()->mutable_tensor_type();
    if (tt->elem_type() == onnx::TensorProto_DataType_INT64 ||
        tt->elem_type() == onnx::TensorProto_DataType_INT32)
      continue; // Bound as constants below.
    for (auto &d : *tt->mutable_shape()->mutable_dim()) {
      if (!d.has_dim_value() || d.dim_value() <= 1)
        continue;
      std::string name = "s" + std::to_string(d.dim_value());
      bindings[name] = d.dim_value();
      d.set_dim_param(name);
    }
  }
  if (symbolic && bindings.empty())
    return "skip: nothing symbolic";
  for (int i = 0; i < g->input_size(); ++i) {
    int32_t et = g->input(i).type().tensor_type().elem_type();
    if (et != onnx::TensorProto_DataType_INT64 &&
        et != onnx::TensorProto_DataType_INT32)
      continue;
    onnx::TensorProto t;
    std::string path =
        dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb";
    if (!readProto(path, t))
      return "cannot read " + path;
    t.set_name(g->input(i).name());
    *g->add_initializer() = t;
  }
  auto graph = importOnnxModel(model, dir + "/model.onnx", ImportOptions());
  if (!graph) {
    const std::string &m = graph.status().message();
    if (m.find("unsupported") != std::string::npos ||
        m.find("not supported") != std::string::npos ||
        (symbolic && (m.find("static") != std::string::npos ||
                      m.find("known at compile time") != std::string::npos)))
      return "skip: " + m;
    return m;
  }
  for (size_t i = 0; i < (*graph)->outputs().size(); ++i) {
    onnx::TensorProto ref;
    std::string path =
        dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb";
    if (!readProto(path, ref))
      return "cannot read " + path;
    const TensorType &t = (*graph)->outputs()[i]->type();
    std::string want = "[";
    for (int d = 0; d < ref.dims_size(); ++d)
      want += (d ? "," : "") + std::to_string(ref.dims(d));
    want += "]";
    std::string got = "[";
    for (int d = 0; d < t.rank(); ++d) {
      auto v = evaluate(t.dims[d], bindings);
      got += (d ? "," : "") +
             (v ? std::to_string(*v) : "?" + printExpr(t.dims[d]));
    }
    got += "]";
    if (got != want || static_cast<int32_t>(t.dtype) != ref.data_type())
      return "output " + std::to_string(i) + ": got " + t.str() +
             ", want dtype " + std::to_string(ref.data_type()) + " " + want;
  }
  return "";
}

std::vector<std::string> allCases() {
  std::vector<std::string> r;
  DIR *d = opendir(AOTC_ONNX_NODE_TESTDATA);
  if (!d)
    return r;
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.')
      r.push_back(e->d_name);
  closedir(d);
  std::sort(r.begin(), r.end());
  return r;
}

void sweep(bool symbolic) {
  int pass = 0, skip = 0, fail = 0;
  for (const std::string &name : allCases()) {
    std::string r =
        checkCase(std::string(AOTC_ONNX_NODE_TESTDATA) + "/" + name, symbolic);
    if (r.empty())
      ++pass;
    else if (r.rfind("skip: ", 0) == 0)
      ++skip, std::printf("SKIP %s: %s\n", name.c_str(), r.c_str() + 6);
    else
      ++fail, std::printf("FAIL %s: %s\n", name.c_str(), r.c_str());
  }
  std::printf("pass %d skip %d fail %d\n", pass, skip, fail);
}

TEST(OnnxNodeTests, Sweep) { sweep(false); }
TEST(OnnxNodeTests, SymbolicSweep) { sweep(true); }

} // namespace
} // namespace aotc
