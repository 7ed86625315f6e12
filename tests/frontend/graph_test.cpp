/// \file
/// The Graph IR: construction, printing, verification and editing.
#include "ir/graph.h"
#include "ir/op_attrs.h"

#include <gtest/gtest.h>

#include <cstring>

namespace aotc {
namespace {

TensorData int64Data(const std::vector<int64_t> &v) {
  std::vector<uint8_t> bytes(v.size() * 8);
  if (!v.empty())
    std::memcpy(bytes.data(), v.data(), bytes.size());
  return TensorData::fromBytes(std::move(bytes));
}

TensorType f32(std::vector<Expr> dims) {
  return TensorType{DType::Float32, std::move(dims)};
}

/// x[batch,3,16,16] -> Conv(w, b) -> Relu.
struct SmallGraph {
  Graph g;
  Value *x, *w, *b;
  Node *conv, *relu;
  SmallGraph() {
    g.name = "small";
    g.opsetVersion = 13;
    Expr batch = g.addSymbol("batch", Range{1, 64});
    x = g.addInput("x", f32({batch, 3, 16, 16}));
    w = g.addConstant("w", f32({8, 3, 3, 3}), TensorData(), "conv1.weight",
                      /*folded=*/false);
    b = g.addConstant("b", f32({8}), TensorData(), "conv1.bias",
                      /*folded=*/false);
    conv = g.addNode(OpKind::Conv, "conv1", {x, w, b}, {"conv1_out"});
    conv->setAttr("pads", Attribute{std::vector<int64_t>{1, 1, 1, 1}, {}});
    conv->setAttr("strides", Attribute{std::vector<int64_t>{1, 1}, {}});
    conv->output(0)->setType(f32({batch, 8, 16, 16}));
    relu = g.addNode(OpKind::Relu, "relu1", {conv->output(0)}, {"y"});
    relu->output(0)->setType(f32({batch, 8, 16, 16}));
    g.addOutput(relu->output(0));
  }
};

TEST(Graph, PrintIsStable) {
  SmallGraph s;
  const char *expected = R"(graph "small" opset 13 {
  symbol batch in [1, 64]
  input %x: f32[batch,3,16,16]
  const %w: f32[8,3,3,3] onnx="conv1.weight"
  const %b: f32[8] onnx="conv1.bias"
  %conv1_out: f32[batch,8,16,16] = Conv(%x, %w, %b) {pads=[1,1,1,1], strides=[1,1]}
  %y: f32[batch,8,16,16] = Relu(%conv1_out)
  output %y
}
)";
  EXPECT_EQ(s.g.print(), expected);
  EXPECT_EQ(s.g.print(), s.g.print());
}

TEST(Graph, PrintsAttributeKindsAndOmittedInputs) {
  Graph g;
  Value *x = g.addInput("x", f32({4}));
  Node *n = g.addNode(OpKind::Clip, "clip", {x, nullptr, nullptr}, {"y"});
  n->setAttr("f", Attribute{0.01, {}});
  n->setAttr("s", Attribute{std::string("SAME_UPPER"), {}});
  n->setAttr("fs", Attribute{std::vector<double>{0.5, -2}, {}});
  n->setAttr("i", Attribute{int64_t(-3), {}});
  EXPECT_NE(g.print().find("= Clip(%x, none, none) {f=0.01, fs=[0.5,-2], i=-3, "
                           "s=\"SAME_UPPER\"}"),
            std::string::npos)
      << g.print();
}

TEST(Graph, UseListsAndVerify) {
  SmallGraph s;
  EXPECT_TRUE(s.g.verify().isOk()) << s.g.verify().message();
  ASSERT_EQ(s.x->users().size(), 1u);
  EXPECT_EQ(s.x->users()[0], s.conv);
  EXPECT_EQ(s.conv->output(0)->producer(), s.conv);
  EXPECT_EQ(s.conv->output(0)->producerIndex(), 0);
  EXPECT_EQ(s.g.findValue("conv1_out"), s.conv->output(0));
  EXPECT_EQ(s.g.findValue("nope"), nullptr);
  EXPECT_TRUE(s.g.isOutput(s.relu->output(0)));
  EXPECT_EQ(s.g.constants().size(), 2u);
  EXPECT_EQ(s.conv->describe(), "node 'conv1' (Conv)");
}

TEST(Graph, VerifyRejectsWrongArity) {
  Graph g;
  Value *x = g.addInput("x", f32({4}));
  g.addNode(OpKind::Add, "add1", {x}, {"y"});
  Status s = g.verify();
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "node 'add1' (Add): expected 2 inputs, got 1");
}

TEST(Graph, VerifyRejectsMissingRequiredInput) {
  Graph g;
  Value *x = g.addInput("x", f32({4, 4}));
  g.addNode(OpKind::Gemm, "fc", {x, nullptr}, {"y"});
  Status s = g.verify();
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "node 'fc' (Gemm): required input 1 is missing");
}

TEST(Graph, VerifyRejectsUseBeforeDefinition) {
  Graph g;
  Value *x = g.addInput("x", f32({4}));
  Node *a = g.addNode(OpKind::Relu, "a", {x}, {"a_out"});
  Node *b = g.addNode(OpKind::Relu, "b", {a->output(0)}, {"b_out"});
  a->replaceInput(0, b->output(0)); // a cycle: a reads b, b reads a
  Status s = g.verify();
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("node 'a' (Relu): input 'b_out'"),
            std::string::npos)
      << s.message();
}

TEST(Graph, ReplaceAllUsesAndRemoveDeadNodes) {
  SmallGraph s;
  // Bypass the Relu: the graph output becomes the Conv result.
  s.g.replaceAllUsesWith(s.relu->output(0), s.conv->output(0));
  EXPECT_EQ(s.g.outputs()[0], s.conv->output(0));
  EXPECT_EQ(s.g.removeDeadNodes(), 1);
  EXPECT_EQ(s.g.nodes().size(), 1u);
  EXPECT_TRUE(s.conv->output(0)->users().empty());
  EXPECT_TRUE(s.g.verify().isOk()) << s.g.verify().message();
  // Now bypass the Conv too: the conv and its now-unused constants go.
  s.g.replaceAllUsesWith(s.conv->output(0), s.x);
  EXPECT_EQ(s.g.removeDeadNodes(), 1);
  EXPECT_TRUE(s.g.nodes().empty());
  EXPECT_TRUE(s.g.constants().empty());
  EXPECT_TRUE(s.x->users().empty());
  EXPECT_TRUE(s.g.verify().isOk());
}

TEST(Graph, FoldToConstant) {
  Graph g;
  Value *x = g.addInput("x", TensorType{DType::Int64, {2}});
  Node *n = g.addNode(OpKind::Identity, "id", {x}, {"id_out"});
  n->output(0)->setType(TensorType{DType::Int64, {2}});
  Node *m = g.addNode(OpKind::Neg, "neg", {n->output(0)}, {"y"});
  g.addOutput(m->output(0));
  Value *c = g.foldToConstant(n->output(0), int64Data({4, 5}));
  EXPECT_TRUE(c->isConstant());
  EXPECT_TRUE(c->folded());
  EXPECT_EQ(c->onnxName(), "");
  EXPECT_EQ(m->input(0), c);
  EXPECT_EQ(tensorDataInt(c->data(), DType::Int64, 1), 5);
  EXPECT_EQ(g.findValue("id_out"), c);
  EXPECT_EQ(g.removeDeadNodes(), 1);
  EXPECT_TRUE(g.verify().isOk()) << g.verify().message();
  EXPECT_NE(g.print().find("const %id_out: i64[2] folded"), std::string::npos);
}

TEST(Graph, TypedAttributes) {
  SmallGraph s;
  auto pads = s.conv->attrInts("pads", {});
  ASSERT_TRUE(pads.isOk());
  EXPECT_EQ(*pads, (std::vector<int64_t>{1, 1, 1, 1}));
  auto group = s.conv->attrInt("group", 1);
  ASSERT_TRUE(group.isOk());
  EXPECT_EQ(*group, 1);
  auto wrong = s.conv->attrInt("pads", 0);
  ASSERT_FALSE(wrong.isOk());
  EXPECT_EQ(wrong.status().message(),
            "node 'conv1' (Conv): attribute 'pads' must be an int");
  auto str = s.conv->attrString("strides", "");
  EXPECT_FALSE(str.isOk());
}

TEST(Graph, Symbols) {
  Graph g;
  g.addSymbol("batch", Range{1, 8});
  g.addSymbol("batch", Range{0, 100}); // keeps the first range
  ASSERT_NE(g.findSymbol("batch"), nullptr);
  EXPECT_EQ(g.findSymbol("batch")->range.max, 8);
  g.setSymbolRange("batch", Range{2, 4});
  EXPECT_EQ(g.findSymbol("batch")->range.min, 2);
  const Var *batch = g.findSymbol("batch")->var.as<Var>();
  ASSERT_NE(g.rangeEnv().find(batch), nullptr);
  EXPECT_EQ(g.rangeEnv().find(batch)->max, 4);
  EXPECT_EQ(g.findSymbol("seq"), nullptr);
  // One symbol, one variable: declaring it again returns the same Var.
  EXPECT_TRUE(
      g.addSymbol("batch", Range{0, 1}).sameAs(g.findSymbol("batch")->var));
  EXPECT_EQ(g.findSymbol(batch), g.findSymbol("batch"));
}

TEST(Graph, TensorTypes) {
  TensorType t{DType::Float32, {Var::make("batch"), 3}};
  EXPECT_EQ(t.str(), "f32[batch,3]");
  EXPECT_FALSE(t.isStatic());
  TensorType s{DType::Int64, {2, 3}};
  EXPECT_TRUE(s.isStatic());
  EXPECT_EQ(s.staticDims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((TensorType{DType::Bool, {}}.str()), "bool[]");
}

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::Float32, DType::UInt8, DType::Int8, DType::Int32,
                  DType::Int64, DType::Bool, DType::Float64, DType::Float16,
                  DType::BFloat16}) {
    DType back;
    ASSERT_TRUE(parseDType(dtypeName(t), back)) << dtypeName(t);
    EXPECT_EQ(back, t);
  }
  EXPECT_STREQ(dtypeName(DType::Float32), "f32");
  EXPECT_STREQ(dtypeCLName(DType::Int64), "long");
  EXPECT_STREQ(dtypeCLName(DType::Bool), "uchar");
  // 16-bit floats compute in float and are stored as half / their bits.
  EXPECT_STREQ(dtypeCLName(DType::Float16), "float");
  EXPECT_STREQ(dtypeCLStorageName(DType::Float16), "half");
  EXPECT_STREQ(dtypeCLStorageName(DType::BFloat16), "ushort");
  EXPECT_STREQ(dtypeCLStorageName(DType::Float32), "float");
  DType out;
  EXPECT_FALSE(parseDType("f8", out));
}

TEST(Ops, OnnxNames) {
  EXPECT_EQ(opFromOnnxName("Conv"), OpKind::Conv);
  EXPECT_EQ(opFromOnnxName("ConstantOfShape"), OpKind::ConstantOfShape);
  EXPECT_FALSE(opFromOnnxName("FooOp").has_value());
  // An internal op (made by a graph pass) is not a name a model may use.
  EXPECT_TRUE(isInternalOp(OpKind::WinogradConv));
  EXPECT_FALSE(opFromOnnxName(opName(OpKind::WinogradConv)).has_value());
  EXPECT_STREQ(opName(OpKind::BatchNormalization), "BatchNormalization");
}

/// Every defaulted attribute of every op is present after canonicalization
/// at every opset, its own or not: lowering reads them unconditionally (a
/// Resize at opset 13 read opset 18's `antialias` and aborted the compiler;
/// one at opset 10 read `nearest_mode`). Nodes get a rank-4 input so that
/// window defaults can be made.
TEST(OpAttributes, DefaultsPresentAtEveryOpset) {
  const OpKind kinds[] = {
#define AOTC_OP(kind, ...) OpKind::kind,
#include "ir/ops.def"
#undef AOTC_OP
  };
  int checked = 0;
  for (OpKind k : kinds) {
    for (int64_t opset = 1; opset <= 25; ++opset) {
      Graph g;
      g.opsetVersion = opset;
      Value *x = g.addInput("x", f32({1, 2, 3, 4}));
      Value *w = g.addConstant("w", f32({2, 2, 3, 3}), TensorData(), "w",
                               /*folded=*/false);
      Node *n = g.addNode(k, "n", {x, w}, {"y"});
      if (!canonicalizeAttributes(*n, opset).isOk())
        continue; // a required attribute the bare node lacks
      for (const AttrSchema &s : opAttributes(k)) {
        if (s.presence != AttrSchema::Defaulted)
          continue;
        EXPECT_TRUE(n->hasAttr(s.name))
            << n->describe() << " at opset " << opset << ": '" << s.name
            << "' is absent";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

} // namespace
} // namespace aotc
