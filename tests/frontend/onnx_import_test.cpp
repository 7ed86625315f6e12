/// \file
/// The ONNX importer: constants, inputs and symbols, Constant nodes,
/// attributes, printing, and the errors a bad or unsupported model gives.
#include "compiler/frontend/onnx_import.h"
#include "tests/frontend/test_util.h"

#include "ir/simplify.h"

#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace aotc {
namespace {

using test::importError;
using test::importOk;
using test::model;
using test::typeOf;

//===----------------------------------------------------------------------===//
// Graph inputs, symbols, constants
//===----------------------------------------------------------------------===//

TEST(OnnxImport, InputsGetSymbolicDims) {
  ImportOptions opts;
  opts.dimRanges["batch"] = Range{1, 64};
  auto g = importOk(model(R"(
agraph (float[batch, 3, seq] x, float[batch, 3, seq] y) => (float[batch, 3, seq] z) {
  z = Add(x, y)
}
)"),
                    opts);
  ASSERT_TRUE(g);
  EXPECT_EQ(typeOf(*g, "x"), "f32[batch,3,seq]");
  EXPECT_EQ(typeOf(*g, "z"), "f32[batch,3,seq]");
  ASSERT_EQ(g->symbols().size(), 2u);
  EXPECT_EQ(g->symbols()[0].name, "batch");
  EXPECT_EQ(g->symbols()[0].range.min, 1);
  EXPECT_EQ(g->symbols()[0].range.max, 64);
  EXPECT_EQ(g->symbols()[1].name, "seq");
  EXPECT_EQ(g->symbols()[1].range.min, 0);
  EXPECT_EQ(g->symbols()[1].range.max, 65536);
  EXPECT_EQ(g->opsetVersion, 17);
}

TEST(OnnxImport, DefaultRangeAndUnnamedDims) {
  // A dim with neither value nor param gets a fresh symbol <input>_d<i>.
  onnx::ModelProto m;
  ASSERT_TRUE(onnx::OnnxParser::Parse(m, model(R"(
agraph (float[N, 4] x) => (float[N, 4] y) {
  y = Relu(x)
}
)")
                                             .c_str())
                  .IsOK());
  m.set_ir_version(8);
  auto *dim = m.mutable_graph()
                  ->mutable_input(0)
                  ->mutable_type()
                  ->mutable_tensor_type()
                  ->mutable_shape()
                  ->mutable_dim(0);
  dim->clear_dim_param();
  ImportOptions opts;
  opts.defaultRange = Range{2, 9};
  auto g = importOnnxModel(m, "m.onnx", opts);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(typeOf(**g, "y"), "f32[x_d0,4]");
  ASSERT_NE((*g)->findSymbol("x_d0"), nullptr);
  EXPECT_EQ((*g)->findSymbol("x_d0")->range.min, 2);
  EXPECT_EQ((*g)->findSymbol("x_d0")->range.max, 9);
}

TEST(OnnxImport, DimParamsBecomeIdentifiers) {
  onnx::ModelProto m;
  ASSERT_TRUE(onnx::OnnxParser::Parse(m, model(R"(
agraph (float[N, M] x) => (float[N, M] y) {
  y = Relu(x)
}
)")
                                             .c_str())
                  .IsOK());
  m.set_ir_version(8);
  auto *shape = m.mutable_graph()
                    ->mutable_input(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("batch size");
  shape->mutable_dim(1)->set_dim_param("2*n");
  m.mutable_graph()->mutable_output(0)->clear_type();
  *m.mutable_graph()->mutable_output(0)->mutable_type() =
      m.graph().input(0).type();
  ImportOptions opts;
  opts.dimRanges["batch size"] = Range{1, 4};
  auto g = importOnnxModel(m, "m.onnx", opts);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(typeOf(**g, "y"), "f32[batch_size,d_2_n]");
  // Ranges are looked up by the ONNX dim_param.
  EXPECT_EQ((*g)->findSymbol("batch_size")->range.max, 4);
}

TEST(OnnxImport, InvalidRangeIsAnError) {
  ImportOptions opts;
  opts.dimRanges["N"] = Range{5, 2};
  EXPECT_EQ(importError(model(R"(
agraph (float[N] x) => (float[N] y) { y = Relu(x) }
)"),
                        opts),
            "<text>: invalid range [5, 2] for dim 'N'");
}

TEST(OnnxImport, InitializersAreNamedConstants) {
  auto g = importOk(model(R"(
agraph (float[2, 3] x, float[3] b = {1.5, 2, 3}) => (float[2, 3] y)
  <int64[2] shape = {3, 2}> {
  y = Add(x, b)
}
)"));
  ASSERT_TRUE(g);
  // 'b' is listed as an input too, but it has an initializer: a constant.
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name(), "x");
  Value *b = g->findValue("b");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->isConstant());
  EXPECT_EQ(b->onnxName(), "b");
  EXPECT_FALSE(b->folded());
  EXPECT_EQ(b->type().str(), "f32[3]");
  EXPECT_EQ(tensorDataFloat(b->data(), DType::Float32, 0), 1.5);
  EXPECT_FALSE(b->symbolicData().has_value());
  Value *shape = g->findValue("shape");
  ASSERT_NE(shape, nullptr);
  ASSERT_TRUE(shape->symbolicData().has_value());
  EXPECT_EQ(printExprs(*shape->symbolicData()), "3,2");
}

/// Builds a one-node model y = Identity(c) around an initializer \p c.
onnx::ModelProto identityModel(const onnx::TensorProto &c) {
  onnx::ModelProto m;
  EXPECT_TRUE(onnx::OnnxParser::Parse(m, model(R"(
agraph (float[1] unused) => (float[1] y) {
  y = Identity(c)
}
)")
                                             .c_str())
                  .IsOK());
  m.set_ir_version(8);
  m.mutable_graph()->clear_input();
  *m.mutable_graph()->add_initializer() = c;
  auto *out = m.mutable_graph()->mutable_output(0);
  auto *tt = out->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(c.data_type());
  tt->clear_shape();
  tt->mutable_shape();
  for (int64_t d : c.dims())
    tt->mutable_shape()->add_dim()->set_dim_value(d);
  return m;
}

TEST(OnnxImport, RawDataAndTypedFields) {
  onnx::TensorProto t;
  t.set_name("c");
  t.set_data_type(onnx::TensorProto_DataType_INT32);
  t.add_dims(3);
  int32_t vals[3] = {7, -8, 9};
  t.set_raw_data(std::string(reinterpret_cast<char *>(vals), sizeof vals));
  auto g = importOnnxModel(identityModel(t), "raw.onnx", ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  Value *c = (*g)->findValue("c");
  EXPECT_EQ(c->type().str(), "i32[3]");
  EXPECT_EQ(tensorDataInt(c->data(), DType::Int32, 1), -8);
  EXPECT_EQ(printExprs(*c->symbolicData()), "7,-8,9");
  EXPECT_EQ(typeOf(**g, "y"), "i32[3]");
  EXPECT_EQ(printExprs(*(*g)->findValue("y")->symbolicData()), "7,-8,9");

  // The same through int32_data, and a bool tensor.
  t.clear_raw_data();
  for (int32_t v : vals)
    t.add_int32_data(v);
  g = importOnnxModel(identityModel(t), "typed.onnx", ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(tensorDataInt((*g)->findValue("c")->data(), DType::Int32, 2), 9);

  onnx::TensorProto d;
  d.set_name("c");
  d.set_data_type(onnx::TensorProto_DataType_DOUBLE);
  d.add_dims(2);
  d.add_double_data(0.25);
  d.add_double_data(-1);
  g = importOnnxModel(identityModel(d), "double.onnx", ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(tensorDataFloat((*g)->findValue("c")->data(), DType::Float64, 0),
            0.25);
  EXPECT_EQ(typeOf(**g, "y"), "f64[2]");
}

TEST(OnnxImport, LargeIntConstantsHaveNoSymbolicData) {
  onnx::TensorProto t;
  t.set_name("c");
  t.set_data_type(onnx::TensorProto_DataType_INT64);
  t.add_dims(65);
  for (int i = 0; i < 65; ++i)
    t.add_int64_data(i);
  auto g = importOnnxModel(identityModel(t), "big.onnx", ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_FALSE((*g)->findValue("c")->symbolicData().has_value());
}

TEST(OnnxImport, BadTensorDataIsAnError) {
  onnx::TensorProto t;
  t.set_name("c");
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  t.add_dims(4);
  t.set_raw_data(std::string(12, '\0'));
  auto g = importOnnxModel(identityModel(t), "short.onnx", ImportOptions());
  ASSERT_FALSE(g.isOk());
  // The checker or the importer rejects it, naming the file and tensor.
  EXPECT_STARTS_WITH(g.status().message(), "short.onnx: ");
}

TEST(OnnxImport, ExternalDataNeedsTheModelsFile) {
  // A model given in memory has no folder to read external data from
  // (tests/frontend/external_data_test.cpp covers models read from files).
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  t.add_dims(4);
  t.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto *e = t.add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  onnx::ModelProto m = identityModel(t);
  m.mutable_graph()->mutable_node(0)->set_input(0, "w");
  auto g = importOnnxModel(m, "ext.onnx", ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(),
            "ext.onnx: initializer 'w': external data ('weights.bin') needs "
            "the model's folder; compile the model from its file");
}

//===----------------------------------------------------------------------===//
// Constant nodes and attributes
//===----------------------------------------------------------------------===//

TEST(OnnxImport, ConstantNodeForms) {
  auto g = importOk(model(R"(
agraph (float[2] x) => (float[2] y) {
  a = Constant <value = float[2] {1, 2}> ()
  b = Constant <value_float = 0.5> ()
  c = Constant <value_floats = [1.0, 2.0, 3.0]> ()
  d = Constant <value_int = 4> ()
  e = Constant <value_ints = [5, 6]> ()
  y = Add(x, a)
}
)"));
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->nodes().size() == 1u); // Constant nodes became constants
  EXPECT_EQ(typeOf(*g, "a"), "f32[2]");
  EXPECT_EQ(typeOf(*g, "b"), "f32[]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[3]");
  EXPECT_EQ(typeOf(*g, "d"), "i64[]");
  EXPECT_EQ(typeOf(*g, "e"), "i64[2]");
  EXPECT_EQ(test::dataOf(*g, "d"), "4");
  EXPECT_EQ(test::dataOf(*g, "e"), "5,6");
  Value *a = g->findValue("a");
  EXPECT_TRUE(a->isConstant());
  EXPECT_TRUE(a->folded());
  EXPECT_EQ(tensorDataFloat(g->findValue("c")->data(), DType::Float32, 2), 3);
  EXPECT_EQ(tensorDataFloat(g->findValue("b")->data(), DType::Float32, 0), 0.5);
}

TEST(OnnxImport, FloatAttributesKeepTheirDecimalValue) {
  auto g = importOk(model(R"(
agraph (float[2] x) => (float[2] y) {
  y = LeakyRelu <alpha = 0.01> (x)
}
)"));
  ASSERT_TRUE(g);
  auto alpha = g->nodes()[0]->attrFloat("alpha", 0);
  ASSERT_TRUE(alpha.isOk());
  EXPECT_EQ(*alpha, 0.01);
  EXPECT_NE(g->print().find("{alpha=0.01}"), std::string::npos) << g->print();
}

TEST(OnnxImport, FunctionsAreExpanded) {
  // A model-local function (another domain) and a function-defined op
  // without a native lowering (MeanVarianceNormalization, whose body needs
  // its default 'axes' bound) become their bodies; LayerNormalization, which
  // aotc lowers natively, stays one node.
  auto g = importOk(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
agraph (float[2, 3, 4, 5] x, float[5] s) => (float[2, 3, 4, 5] y, float[2, 3, 4, 5] m, float[2, 3, 4, 5] l) {
  y = local.Square(x)
  m = MeanVarianceNormalization(x)
  l = LayerNormalization(x, s)
}
<domain: "local", opset_import: ["" : 17]>
Square (a) => (b) {
  b = Mul(a, a)
}
)");
  ASSERT_TRUE(g);
  std::map<std::string, int> ops;
  for (const auto &n : g->nodes())
    ++ops[opName(n->op())];
  EXPECT_EQ(ops["Mul"] >= 1, true);
  EXPECT_EQ(ops["LayerNormalization"], 1);
  EXPECT_EQ(ops.count("MeanVarianceNormalization"), 0u);
  // MVN's body reduces over its default axes [0, 2, 3].
  bool sawAxes = false;
  for (const auto &n : g->nodes())
    if (n->op() == OpKind::ReduceMean && n->hasAttr("axes")) {
      EXPECT_EQ(n->intsAttr("axes"), (std::vector<int64_t>{0, 2, 3}));
      sawAxes = true;
    }
  EXPECT_TRUE(sawAxes);
  EXPECT_EQ(typeOf(*g, "m"), "f32[2,3,4,5]");
}

TEST(OnnxImport, NodeNames) {
  auto g = importOk(model(R"(
agraph (float[2] x) => (float[2] y) {
  t = Relu(x)
  y = Neg(t)
}
)"));
  ASSERT_TRUE(g);
  // An unnamed node is named after its first output.
  EXPECT_EQ(g->nodes()[0]->name(), "t");
  EXPECT_EQ(g->nodes()[1]->describe(), "node 'y' (Neg)");
}

TEST(OnnxImport, PrintOfImportedModelIsStable) {
  std::string text = model(R"(
mlp (float[batch, 4] x, float[3, 4] w, float[3] b) => (float[batch, 3] y)
  <float[3, 4] w = {1,2,3,4,5,6,7,8,9,10,11,12}, float[3] b = {0,0,0}> {
  h = Gemm <transB = 1> (x, w, b)
  y = Relu(h)
}
)",
                           13);
  auto g = importOk(text);
  ASSERT_TRUE(g);
  const char *expected = R"(graph "mlp" opset 13 {
  symbol batch in [0, 65536]
  input %x: f32[batch,4]
  const %w: f32[3,4] onnx="w"
  const %b: f32[3] onnx="b"
  %h: f32[batch,3] = Gemm(%x, %w, %b) {alpha=1, beta=1, transA=0, transB=1}
  %y: f32[batch,3] = Relu(%h)
  output %y
}
)";
  EXPECT_EQ(g->print(), expected);
  auto again = importOk(text);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->print(), g->print());
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(OnnxImportErrors, MissingFile) {
  auto g = importOnnxFile("/nonexistent/dir/model.onnx", ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(), "/nonexistent/dir/model.onnx: cannot open "
                                  "file: No such file or directory");
}

TEST(OnnxImportErrors, MalformedBytes) {
  static const char kGarbage[] = "\xff\xff\xff\x0f garbage \x01\x02";
  std::string path = test::writeTempFile(
      "garbage.onnx", std::string(kGarbage, sizeof kGarbage - 1));
  auto g = importOnnxFile(path, ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_STARTS_WITH(g.status().message(), path + ": ");
  std::remove(path.c_str());

  // Bytes that parse as a protobuf but are no model.
  path = test::writeTempFile("empty_model.onnx", std::string("\x08\x07", 2));
  g = importOnnxFile(path, ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(), path + ": model has no graph");
  std::remove(path.c_str());

  path = test::writeTempFile("empty.onnx", "");
  g = importOnnxFile(path, ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(), path + ": file is empty");
  std::remove(path.c_str());
}

TEST(OnnxImportErrors, CorruptedModelsNeverCrash) {
  // Truncations and byte flips of a real model: every import returns a
  // graph or an error.
  std::ifstream in(std::string(AOTC_TEST_MODELS) + "/cnn_small/model.onnx",
                   std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  ASSERT_GT(bytes.size(), 1000u);
  int errors = 0, runs = 0;
  auto tryImport = [&](const std::string &b) {
    onnx::ModelProto m;
    if (!m.ParseFromString(b))
      return;
    ++runs;
    auto g = importOnnxModel(m, "corrupt.onnx", ImportOptions());
    if (!g) {
      ++errors;
      EXPECT_STARTS_WITH(g.status().message(), "corrupt.onnx: ");
    }
  };
  for (size_t len = 0; len < bytes.size(); len += 97)
    tryImport(bytes.substr(0, len));
  for (size_t pos = 0; pos < bytes.size(); pos += 13) {
    for (uint8_t mask : {0x01, 0x10, 0x80}) {
      std::string b = bytes;
      b[pos] = static_cast<char>(b[pos] ^ mask);
      tryImport(b);
    }
  }
  EXPECT_GT(runs, 100);
  EXPECT_GT(errors, 10);
}

TEST(OnnxImportErrors, TextParseError) {
  std::string msg = importError("this is not onnx");
  EXPECT_STARTS_WITH(msg, "<text>: parse error: ");
}

TEST(OnnxImportErrors, UnknownOp) {
  EXPECT_EQ(importError(model(R"(
agraph (float[2] x) => (float[2] y) {
  y = FooOp(x)
}
)")),
            "<text>: node 'y' (FooOp): unsupported op 'FooOp' (domain '')");
}

TEST(OnnxImportErrors, NonDefaultDomain) {
  std::string text = R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
agraph (float[2] x) => (float[2] y) {
  y = com.microsoft.Gelu(x)
}
)";
  EXPECT_EQ(importError(text), "<text>: node 'y' (Gelu): unsupported op "
                               "'Gelu' (domain 'com.microsoft')");
}

TEST(OnnxImportErrors, UnknownAttribute) {
  EXPECT_EQ(
      importError(model(R"(
agraph (float[1, 1, 4, 4] x, float[1, 1, 3, 3] w) => (float[1, 1, 2, 2] y) {
  y = Conv <foo = 1> (x, w)
}
)")),
      "<text>: node 'y' (Conv): unsupported attribute 'foo' (at opset 17)");
}

TEST(OnnxImportErrors, AttributesOfAnotherOpset) {
  // ceil_mode exists from MaxPool-10 on; at opset 9 it is not an attribute.
  EXPECT_EQ(importError(model(R"(
agraph (float[1, 1, 4, 4] x) => (float[1, 1, 2, 2] y) {
  y = MaxPool <kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1> (x)
}
)",
                              9)),
            "<text>: node 'y' (MaxPool): unsupported attribute 'ceil_mode' "
            "(at opset 9)");
  EXPECT_EQ(importError(model(R"(
agraph (float[1, 1, 4, 4] x) => (float[1, 1, 2, 2] y) {
  y = MaxPool <strides = [2, 2]> (x)
}
)")),
            "<text>: node 'y' (MaxPool): missing attribute 'kernel_shape'");
}

TEST(OnnxImportErrors, InvalidModelsAreRefusedAsTheCheckerWould) {
  EXPECT_EQ(importError(R"(<ir_version: 8, opset_import: ["" : 17, "" : 13]>
agraph (float[2] x) => (float[2] y) {
  y = Relu(x)
}
)"),
            "<text>: the model imports domain 'ai.onnx' more than once (ONNX "
            "allows one version per domain)");
  EXPECT_EQ(importError(model(R"(
agraph (float[2] x) => () {
  y = Relu(x)
}
)")),
            "<text>: the graph has no outputs");
  EXPECT_NE(importError(model(R"(
agraph (float[2, 3] x) => (float[3, 2] y) {
  y = Transpose <perm = [-1, 0]> (x)
}
)"))
                .find("node 'y' (Transpose): perm value -1 is not in [0, 2)"),
            std::string::npos);
}

TEST(OnnxImportErrors, RanksBeyondTheCAbi) {
  EXPECT_EQ(importError(model(R"(
agraph (float[1,1,1,1,1,1,1,1,2] x) => (float[1,1,1,1,1,1,1,1,2] y) {
  y = Relu(x)
}
)")),
            "<text>: input 'x' has rank 9; inputs and outputs can have at "
            "most 8 dims");
  EXPECT_EQ(importError(model(R"(
agraph (float[1,1,1,1,1,1,1,2] x) => (float[1,1,1,1,1,1,1,1,2] y) {
  a = Constant <value = int64[1] {0}> ()
  y = Unsqueeze(x, a)
}
)")),
            "<text>: output 'y' has rank 9; inputs and outputs can have at "
            "most 8 dims");
}

TEST(OnnxImportErrors, WrongAttributeKind) {
  EXPECT_EQ(importError(model(R"(
agraph (float[2, 3] x) => (float[3, 2] y) {
  y = Transpose <perm = 1> (x)
}
)")),
            "<text>: node 'y' (Transpose): attribute 'perm' must be a list of "
            "ints, got an int");
}

TEST(OnnxImportErrors, UnsupportedDTypes) {
  EXPECT_EQ(importError(model(R"(
agraph (uint64[2] x) => (uint64[2] y) { y = Relu(x) }
)")),
            "<text>: input 'x': unsupported dtype 'uint64'");
  EXPECT_EQ(importError(model(R"(
agraph (string[2] x) => (string[2] y) { y = Identity(x) }
)")),
            "<text>: input 'x': unsupported dtype 'string'");
  EXPECT_EQ(importError(model(R"(
agraph (float[2] x) => (uint64[2] y) { y = Cast <to = 13> (x) }
)")),
            "<text>: node 'y' (Cast): attribute 'to': unsupported dtype "
            "'uint64'");
  // A float16 Constant's bits in int32_data (the text parser has no float16
  // literals) import; a float8 one is refused.
  onnx::ModelProto m;
  ASSERT_TRUE(onnx::OnnxParser::Parse(m, model(R"(
agraph (float[2] x) => (float[2] y) {
  c = Constant <value = float[2] {1, 2}> ()
  y = Identity(x)
}
)")
                                             .c_str())
                  .IsOK());
  m.set_ir_version(8);
  onnx::TensorProto *t =
      m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  t->clear_float_data();
  t->set_data_type(onnx::TensorProto_DataType_FLOAT16);
  t->add_int32_data(0x3c00);
  t->add_int32_data(0xc000);
  auto g = importOnnxModel(m, "half.onnx", ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  const Value *c = nullptr;
  for (const Value *v : (*g)->constants())
    if (v->name() == "c")
      c = v;
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->type().dtype, DType::Float16);
  EXPECT_EQ(tensorDataFloat(c->data(), DType::Float16, 0), 1.0);
  EXPECT_EQ(tensorDataFloat(c->data(), DType::Float16, 1), -2.0);
  t->set_data_type(onnx::TensorProto_DataType_FLOAT8E4M3FN);
  g = importOnnxModel(m, "f8.onnx", ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(),
            "f8.onnx: node 'c' (Constant): attribute 'value': tensor: "
            "unsupported dtype 'float8e4m3fn'");
}

TEST(OnnxImportErrors, Conv4D) {
  // 1-D to 3-D windows compile (e2e.windows_3d); a 4-D one is refused.
  EXPECT_EQ(importError(model(R"(
agraph (float[1, 1, 4, 4, 4, 4] x, float[1, 1, 3, 3, 3, 3] w) => (float[1, 1, 2, 2, 2, 2] y) {
  y = Conv <kernel_shape = [3, 3, 3, 3]> (x, w)
}
)")),
            "<text>: node 'y' (Conv): unsupported 4-D window (attribute "
            "'kernel_shape' has 4 dims); only 1-D to 3-D are supported");
  // Without kernel_shape, shape inference rejects it.
  EXPECT_EQ(importError(model(R"(
agraph (float[1, 1, 4, 4, 4, 4] x, float[1, 1, 3, 3, 3, 3] w) => (float[1, 1, 2, 2, 2, 2] y) {
  y = Conv (x, w)
}
)")),
            "<text>: node 'y' (Conv): unsupported 4-D convolution (input "
            "f32[1,1,4,4,4,4]); only 1-D to 3-D are supported");
}

TEST(OnnxImportErrors, UnsupportedAttributeValues) {
  EXPECT_EQ(importError(model(R"(
agraph (float[1, 1, 4, 4] x) => (float[1, 1, 2, 2] y) {
  y = MaxPool <kernel_shape = [2, 2], auto_pad = "SAME_SIDEWAYS"> (x)
}
)")),
            "<text>: node 'y' (MaxPool): attribute 'auto_pad' has unsupported "
            "value 'SAME_SIDEWAYS'");
  EXPECT_EQ(importError(model(R"(
agraph (float[2, 3] x, float[3] s, float[3] b, float[3] m, float[3] v) => (float[2, 3] y) {
  y = BatchNormalization <training_mode = 1> (x, s, b, m, v)
}
)")),
            "<text>: node 'y' (BatchNormalization): attribute 'training_mode' "
            "is 1: only inference mode is supported");
  EXPECT_EQ(importError(model(R"(
agraph (float[2, 3] x) => (float[2, 3] y) {
  p = Constant <value = int64[4] {0, 0, 0, 0}> ()
  y = Pad <mode = "wrap"> (x, p)
}
)")),
            "<text>: node 'y' (Pad): attribute 'mode' has unsupported value "
            "'wrap' before opset 19");
  EXPECT_EQ(importError(model(R"(
agraph (float[2, 3] x) => (float[2, 3] y) {
  p = Constant <value = int64[4] {0, 0, 0, 0}> ()
  y = Pad <mode = "circular"> (x, p)
}
)",
                              19)),
            "<text>: node 'y' (Pad): attribute 'mode' has unsupported value "
            "'circular'");
}

TEST(OnnxImportErrors, CheckerAndOnnxShapeInference) {
  // An undefined input: the checker names it.
  std::string msg = importError(model(R"(
agraph (float[2] x) => (float[2] y) { y = Add(x, nope) }
)"));
  EXPECT_STARTS_WITH(msg, "<text>: invalid model: ");
  EXPECT_NE(msg.find("nope"), std::string::npos) << msg;
  // Incompatible static shapes: ONNX's own inference already rejects them.
  msg = importError(model(R"(
agraph (float[2, 3] x, float[4, 5] w) => (float[2, 5] y) { y = MatMul(x, w) }
)"));
  EXPECT_STARTS_WITH(msg, "<text>: ");
}

TEST(OnnxImportErrors, ShapeErrorsNameTheNode) {
  EXPECT_EQ(importError(model(R"(
agraph (float[batch, 3] x, float[batch, 4] y) => (float[batch, 3] z) {
  z = Add(x, y)
}
)")),
            "<text>: node 'z' (Add): cannot broadcast shapes [batch,3] and "
            "[batch,4]: dim 3 vs 4");
  EXPECT_EQ(importError(model(R"(
agraph (float[batch, 12] x, int64[n] s) => (float[batch, 12] y) {
  y = Reshape(x, s)
}
)")),
            "<text>: node 'y' (Reshape): input 1 ('s') (shape) must be known "
            "at compile time");
  // A shape of known length given at run time is read by the run (value
  // symbols); its values may break Reshape's rules only at run time.
  EXPECT_EQ(importError(model(R"(
agraph (float[batch, 12] x, int64[2] s) => (float[batch, 12] y) {
  y = Reshape(x, s)
}
)")),
            "");
}

TEST(OnnxImportErrors, OpsetOutOfRange) {
  // Every opset the ONNX library knows imports; a newer one names both.
  for (int opset : {1, 6, 13, 17, 18, 21, 25})
    EXPECT_EQ(importError(model(R"(
agraph (float[2] x) => (float[2] y) { y = Relu(x) }
)",
                                opset)),
              "")
        << "opset " << opset;
  EXPECT_EQ(importError(model(R"(
agraph (float[2] x) => (float[2] y) { y = Relu(x) }
)",
                              99)),
            "<text>: opset version 99 is newer than the ONNX library aotc is "
            "built with (ONNX 1.20.1 knows opsets up to 25)");
  EXPECT_EQ(importError(model(R"(
agraph (float[2] x) => (float[2] y) { y = Relu(x) }
)",
                              0)),
            "<text>: unsupported opset version 0 (supported: 1 to 25)");
}

TEST(OnnxImportErrors, CrossCheckAgainstOnnxShapes) {
  // ONNX cannot infer 'r' (its shape comes through a Shape chain) and keeps
  // the value_info it was given; a static dim that disagrees with aotc's
  // inference is reported as an internal error naming the value.
  onnx::ModelProto m;
  ASSERT_TRUE(onnx::OnnxParser::Parse(m, model(R"(
agraph (float[batch, 3, 4] x) => (float[batch, 12] y) {
  s = Shape(x)
  i = Constant <value = int64[1] {0}> ()
  b = Gather(s, i)
  k = Constant <value = int64[1] {12}> ()
  t = Concat <axis = 0> (b, k)
  r = Reshape(x, t)
  y = Identity(r)
}
)")
                                             .c_str())
                  .IsOK());
  m.set_ir_version(8);
  auto *vi = m.mutable_graph()->add_value_info();
  vi->set_name("r");
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(13);
  // The graph output's dim 1 is a dim_param, so ONNX sees no conflict.
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("cols");
  auto g = importOnnxModel(m, "x.onnx", ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(),
            "x.onnx: internal error: value 'r' of node 'r' (Reshape): aotc "
            "infers f32[batch,12] but ONNX shape inference gives "
            "float[batch,13]");
  // With the right dim it imports.
  tt->mutable_shape()->mutable_dim(1)->set_dim_value(12);
  g = importOnnxModel(m, "x.onnx", ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(typeOf(**g, "y"), "f32[batch,12]");

  // A graph output declared with the wrong rank (shape present, no dims)
  // is the model's error, said as such.
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()
      ->mutable_shape()->clear_dim();
  g = importOnnxModel(m, "x.onnx", ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(),
            "x.onnx: output 'y' is declared float[] but node 'y' (Identity) "
            "computes f32[batch,12]");
}

TEST(OnnxImportErrors, CrossCheckSkipsWhatFollowsAnEmptySlice) {
  // ONNX's inference (1.20.1) sizes a negative-step Slice of an empty dim
  // as 1 column and the Concat after it as 7; the slice is empty and the
  // Concat 6 (ONNX Runtime). aotc's empty dim is not compared, nor anything
  // computed from it (fuzz seed 131121 reported its right Concat as an
  // internal error); a value elsewhere still is.
  onnx::ModelProto m;
  ASSERT_TRUE(onnx::OnnxParser::Parse(m, model(R"(
agraph (float[1, 0] a, float[1, 3] b) => (float[1, 6] y, float[1, cols] w) {
  starts = Constant <value = int64[1] {-2}> ()
  ends = Constant <value = int64[1] {-4611686018427387904}> ()
  axes = Constant <value = int64[1] {1}> ()
  steps = Constant <value = int64[1] {-2}> ()
  s = Slice(a, starts, ends, axes, steps)
  c = Concat <axis = 1> (b, s, b)
  y = Relu(c)
  r = Neg(b)
  w = Identity(r)
}
)")
                                             .c_str())
                  .IsOK());
  m.set_ir_version(8);
  auto g = importOnnxModel(m, "x.onnx", ImportOptions());
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(typeOf(**g, "s"), "f32[1,0]");
  EXPECT_EQ(typeOf(**g, "c"), "f32[1,6]");
  EXPECT_EQ(typeOf(**g, "y"), "f32[1,6]");
  // A wrong size on a value that does not follow the slice is still ours.
  auto *vi = m.mutable_graph()->add_value_info();
  vi->set_name("r");
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  g = importOnnxModel(m, "x.onnx", ImportOptions());
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(),
            "x.onnx: internal error: value 'r' of node 'r' (Neg): aotc infers "
            "f32[1,3] but ONNX shape inference gives float[1,4]");
}

//===----------------------------------------------------------------------===//
// Real models
//===----------------------------------------------------------------------===//

/// Dims of a TensorProto file (test_data_set_*/output_0.pb).
std::vector<int64_t> referenceDims(const std::string &path) {
  onnx::TensorProto t;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_TRUE(t.ParseFromString(ss.str())) << path;
  return std::vector<int64_t>(t.dims().begin(), t.dims().end());
}

TEST(OnnxImport, ExportedPyTorchModels) {
  for (const char *name : {"cnn_small", "mlp_gelu", "mlp_tanh_sigmoid"}) {
    std::string dir = std::string(AOTC_TEST_MODELS) + "/" + name;
    auto g = importOnnxFile(dir + "/model.onnx", ImportOptions());
    ASSERT_TRUE(g.isOk()) << g.status().message();
    EXPECT_TRUE((*g)->verify().isOk());
    ASSERT_NE((*g)->findSymbol("batch"), nullptr) << name;
    // Each data set has its own batch size; the symbolic output type must
    // evaluate to the reference output's dims.
    for (int set = 0; set < 3; ++set) {
      std::string ds = dir + "/test_data_set_" + std::to_string(set);
      std::vector<int64_t> in = referenceDims(ds + "/input_0.pb");
      ASSERT_FALSE(in.empty());
      std::map<std::string, int64_t> bind = {{"batch", in[0]}};
      for (size_t o = 0; o < (*g)->outputs().size(); ++o) {
        std::vector<int64_t> want =
            referenceDims(ds + "/output_" + std::to_string(o) + ".pb");
        const TensorType &t = (*g)->outputs()[o]->type();
        ASSERT_EQ(static_cast<size_t>(t.rank()), want.size()) << name;
        for (int d = 0; d < t.rank(); ++d)
          EXPECT_EQ(evaluate(t.dims[d], test::symbolValues(**g, bind)), want[d])
              << name << " set " << set << " output " << o << " dim " << d;
      }
    }
  }
}

} // namespace
} // namespace aotc
