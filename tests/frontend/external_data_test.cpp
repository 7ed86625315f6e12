/// \file
/// External data (model.onnx + model.onnx.data): tensors read from any
/// offset of a mapped file, and a clear error for every bad location, file
/// or range.
#include "compiler/frontend/onnx_import.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace aotc {
namespace {

/// A fresh folder holding a model whose initializers live in other files.
class ExternalData : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aotc-extdata-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/model";
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + root_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  static void write(const std::string &path, const std::string &bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  /// Bytes of \p n floats i * 0.5 - k.
  static std::string floats(int n, float k) {
    std::string s(n * sizeof(float), '\0');
    for (int i = 0; i < n; ++i) {
      float v = i * 0.5f - k;
      std::memcpy(&s[i * sizeof(float)], &v, sizeof v);
    }
    return s;
  }

  /// An external float tensor [n]; entries with an empty value are left out.
  static onnx::TensorProto tensor(const std::string &name, int n,
                                  const std::string &location,
                                  const std::string &offset = "",
                                  const std::string &length = "") {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto_DataType_FLOAT);
    t.add_dims(n);
    t.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto add = [&](const char *k, const std::string &v) {
      if (v.empty())
        return;
      auto *e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", offset);
    add("length", length);
    return t;
  }

  /// y_i = Add(w_i, w_i) for every tensor; written to dir/model.onnx.
  std::string writeModel(const std::vector<onnx::TensorProto> &ts) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(18);
    onnx::GraphProto *g = m.mutable_graph();
    g->set_name("g");
    for (const onnx::TensorProto &t : ts) {
      *g->add_initializer() = t;
      onnx::NodeProto *n = g->add_node();
      n->set_op_type("Add");
      n->add_input(t.name());
      n->add_input(t.name());
      n->add_output("y_" + t.name());
      onnx::ValueInfoProto *o = g->add_output();
      o->set_name("y_" + t.name());
      auto *tt = o->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
      tt->mutable_shape()->add_dim()->set_dim_value(t.dims(0));
    }
    std::string path = dir_ + "/model.onnx";
    std::string bytes;
    EXPECT_TRUE(m.SerializeToString(&bytes));
    write(path, bytes);
    return path;
  }

  std::string importError(const std::vector<onnx::TensorProto> &ts) {
    std::string path = writeModel(ts);
    auto g = importOnnxFile(path, ImportOptions());
    if (g.isOk())
      return "";
    std::string msg = g.status().message();
    // Paths differ per run: the message from the file name on.
    EXPECT_EQ(msg.substr(0, path.size()), path) << msg;
    return msg.substr(std::min(msg.size(), path.size()));
  }

  std::string root_, dir_;
};

TEST_F(ExternalData, ReadsTensorsAtTheirOffsets) {
  // One data file with three tensors: at 0, at an aligned 4096 and at an
  // odd offset; a fourth in a file of its own, without offset and length.
  std::string data = floats(5, 1) + std::string(4096 - 20, '\x7f') +
                     floats(7, 2) + std::string(3, '\x7f') + floats(3, 3);
  write(dir_ + "/model.onnx.data", data);
  write(dir_ + "/other.bin", floats(2, 4));
  std::string path = writeModel(
      {tensor("a", 5, "model.onnx.data", "0", "20"),
       tensor("b", 7, "model.onnx.data", "4096", "28"),
       tensor("c", 3, "model.onnx.data", std::to_string(4096 + 28 + 3), "12"),
       tensor("d", 2, "other.bin")});
  auto g = importOnnxFile(path, ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  struct Want {
    const char *name;
    int n;
    float k;
  };
  for (Want w : {Want{"a", 5, 1}, Want{"b", 7, 2}, Want{"c", 3, 3},
                 Want{"d", 2, 4}}) {
    Value *v = (*g)->findValue(w.name);
    ASSERT_NE(v, nullptr) << w.name;
    EXPECT_EQ(v->type().str(), "f32[" + std::to_string(w.n) + "]");
    ASSERT_EQ(v->data().size(), w.n * 4) << w.name;
    for (int i = 0; i < w.n; ++i)
      EXPECT_EQ(tensorDataFloat(v->data(), DType::Float32, i), i * 0.5f - w.k)
          << w.name << "[" << i << "]";
  }
}

TEST_F(ExternalData, BadFilesAndRangesAreClearErrors) {
  write(dir_ + "/w.bin", floats(4, 0));
  EXPECT_EQ(importError({tensor("w", 4, "missing.bin")}),
            ": initializer 'w': external data file '" + dir_ +
                "/missing.bin' cannot be opened: No such file or directory");
  EXPECT_EQ(importError({tensor("w", 8, "w.bin")}),
            ": initializer 'w': external data has 16 bytes, expected 32 for "
            "its type and shape");
  EXPECT_EQ(importError({tensor("w", 4, "w.bin", "8", "16")}),
            ": initializer 'w': external data [8, 24) lies past the end of '" +
                dir_ + "/w.bin' (16 bytes)");
  EXPECT_EQ(importError({tensor("w", 4, "w.bin", "0", "12")}),
            ": initializer 'w': external data has 12 bytes, expected 16 for "
            "its type and shape");
  EXPECT_EQ(importError({tensor("w", 4, "w.bin", "-4")}),
            ": initializer 'w': external data offset '-4' is not a "
            "non-negative integer");
  EXPECT_EQ(importError({tensor("w", 4, "w.bin", "", "16x")}),
            ": initializer 'w': external data length '16x' is not a "
            "non-negative integer");
  ASSERT_EQ(::mkdir((dir_ + "/sub").c_str(), 0755), 0);
  EXPECT_EQ(importError({tensor("w", 4, "sub")}),
            ": initializer 'w': external data '" + dir_ +
                "/sub' is not a regular file");
  EXPECT_EQ(importError({tensor("w", 4, "")}),
            ": initializer 'w': external data without a 'location'");
}

TEST_F(ExternalData, LocationsStayInsideTheModelsFolder) {
  write(root_ + "/outside.bin", floats(4, 0));
  write(dir_ + "/w.bin", floats(4, 0));
  EXPECT_EQ(importError({tensor("w", 4, "../outside.bin")}),
            ": initializer 'w': external data location '../outside.bin' "
            "points outside the model's folder ('..')");
  EXPECT_EQ(importError({tensor("w", 4, "sub/../../outside.bin")}),
            ": initializer 'w': external data location "
            "'sub/../../outside.bin' points outside the model's folder "
            "('..')");
  EXPECT_EQ(importError({tensor("w", 4, root_ + "/outside.bin")}),
            ": initializer 'w': external data location '" + root_ +
                "/outside.bin' is an absolute path; it must be relative to "
                "the model's folder");
  // A symlink out of the folder is refused; one that stays inside is read.
  ASSERT_EQ(::symlink((root_ + "/outside.bin").c_str(),
                      (dir_ + "/link.bin").c_str()),
            0);
  char real[4096];
  ASSERT_NE(::realpath(root_.c_str(), real), nullptr);
  EXPECT_EQ(importError({tensor("w", 4, "link.bin")}),
            ": initializer 'w': external data location 'link.bin' resolves "
            "to '" + std::string(real) + "/outside.bin', outside the model's "
            "folder '" + std::string(real) + "/model'");
  ASSERT_EQ(::symlink("w.bin", (dir_ + "/inside.bin").c_str()), 0);
  EXPECT_EQ(importError({tensor("w", 4, "inside.bin")}), "");
}

} // namespace
} // namespace aotc
