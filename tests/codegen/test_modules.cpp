/// \file
/// The hand-made LoopModules of test_modules.h.
#include "test_modules.h"

#include <cmath>
#include <cstring>
#include <memory>

namespace aotc::test {

namespace {

const DType f32 = DType::Float32;

Expr f(double v) { return FloatImm::make(v, f32); }
Expr load(const std::string &b, std::vector<Expr> i) {
  return Load::make(f32, b, std::move(i));
}
Expr bin(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}

ModuleBuffer buffer(const std::string &name, DType t, std::vector<Expr> shape,
                    BufferRole role, int index, Expr offset = Expr()) {
  ModuleBuffer b;
  b.name = name;
  b.dtype = t;
  b.shape = std::move(shape);
  b.role = role;
  b.index = index;
  b.arenaOffset = std::move(offset);
  return b;
}

ModuleTensor tensor(const std::string &name, DType t, std::vector<Expr> dims,
                    const std::string &buffer) {
  return ModuleTensor{name, t, std::move(dims), buffer};
}

Expr roundUp256(const Expr &bytes) { return floorDiv(bytes + 255, 256) * 256; }

TensorData floatData(const std::vector<float> &v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  if (!v.empty())
    std::memcpy(bytes.data(), v.data(), bytes.size());
  return TensorData::fromBytes(std::move(bytes));
}

} // namespace

LoopModule pointwiseModule() {
  LoopModule m;
  m.name = "pointwise";
  Expr batch = Var::make("batch");
  m.symbols = {{"batch", {1, 64}, batch}};
  m.inputs = {tensor("x", f32, {batch, 16}, "x")};
  // y is exposed flat, so one output dim is an expression, not a symbol.
  m.outputs = {tensor("y", f32, {batch * 16}, "y"),
               tensor("mask", DType::Bool, {batch, 16}, "mask")};
  m.buffers = {buffer("x", f32, {batch, 16}, BufferRole::Input, 0),
               buffer("y", f32, {batch, 16}, BufferRole::Output, 0),
               buffer("mask", DType::Bool, {batch, 16}, BufferRole::Output, 1)};

  Expr i = Var::make("i"), j = Var::make("j");
  Expr row = Var::make("row"), idx = Var::make("idx");
  // The buffers are indexed flat in this kernel (one dimension each).
  Expr xv = load("x", {idx});
  Expr y = Select::make(bin(BinOp::GT, xv, f(0.0)), xv * f(2.0) + f(1.0),
                        Call::make(f32, "exp", {xv}) - f(1.0));
  Stmt body =
      Block::make({Store::make("y", {idx}, y),
                   Store::make("mask", {idx}, bin(BinOp::GT, xv, f(0.5)))});
  body = LetStmt::make(idx, minExpr(row + j, batch * 16 - 1), body);
  body = For::make(j, 0, 16, ForKind::Parallel, 0, body);
  body = LetStmt::make(row, i * 16, body);
  body = For::make(i, 0, batch, ForKind::Parallel, 1, body);
  Expr flat = batch * 16;
  m.kernels = {Kernel{"pointwise_0",
                      {{"x", f32, false, {flat}},
                       {"y", f32, true, {flat}},
                       {"mask", DType::Bool, true, {flat}}},
                      {batch},
                      body,
                      false}};
  m.arenaBytes = Expr(0);
  return m;
}

LoopModule reductionModule() {
  LoopModule m;
  m.name = "reduction";
  Expr seq = Var::make("seq.len");
  m.symbols = {{"seq.len", {1, 128}, seq}};
  m.inputs = {tensor("x", f32, {4, seq}, "x")};
  m.outputs = {tensor("mean", f32, {4}, "mean"), tensor("max", f32, {4}, "max"),
               tensor("any_neg", DType::Bool, {4}, "any_neg")};
  m.buffers = {
      buffer("x", f32, {4, seq}, BufferRole::Input, 0),
      buffer("mean", f32, {4}, BufferRole::Output, 0),
      buffer("max", f32, {4}, BufferRole::Output, 1),
      buffer("any_neg", DType::Bool, {4}, BufferRole::Output, 2),
  };

  Expr r = Var::make("r"), k = Var::make("k"), v = Var::make("v", f32);
  Expr sum = Var::make("sum", f32), best = Var::make("best", f32);
  Expr neg = Var::make("neg", DType::Bool);
  Stmt update = Block::make({
      LocalAssign::make(sum, sum + v),
      LocalAssign::make(best, bin(BinOp::Max, best, v)),
      LocalAssign::make(neg, bin(BinOp::Or, neg, bin(BinOp::LT, v, f(0.0)))),
  });
  Stmt loop = For::make(k, 0, seq, ForKind::Serial, 0,
                        LetStmt::make(v, load("x", {r, k}), update));
  Stmt finish = Block::make({
      IfThenElse::make(
          bin(BinOp::GT, seq, Expr(0)),
          Store::make("mean", {r}, bin(BinOp::Div, sum, Cast::make(f32, seq))),
          Store::make("mean", {r}, f(0.0))),
      Store::make("max", {r}, best),
      Store::make("any_neg", {r}, neg),
  });
  Stmt body = Block::make({loop, finish});
  body = LocalDecl::make(neg, IntImm::make(0, DType::Bool), body);
  body = LocalDecl::make(best, f(-INFINITY), body);
  body = LocalDecl::make(sum, f(0.0), body);
  body = For::make(r, 0, 4, ForKind::Parallel, 0, body);
  m.kernels = {Kernel{"row_stats",
                      {{"x", f32, false, {4, seq}},
                       {"mean", f32, true, {4}},
                       {"max", f32, true, {4}},
                       {"any_neg", DType::Bool, true, {4}}},
                      {seq},
                      body,
                      false}};
  m.arenaBytes = Expr(0);
  return m;
}

std::vector<float> constArenaWeights() {
  return {0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.75f, 1.0f, 3.0f};
}
std::vector<float> constArenaBias() {
  return {0.1f, 0.2f, -0.3f, 0.4f, -0.5f, 0.6f, 0.0f, -1.0f};
}

LoopModule constArenaModule() {
  LoopModule m;
  m.name = "const_arena";
  Expr batch = Var::make("batch");
  m.symbols = {{"batch", {1, 32}, batch}};
  m.inputs = {tensor("x", f32, {batch, 8}, "x")};
  m.outputs = {tensor("y", f32, {batch}, "y")};

  ModuleConstant w{
      "fc.weight", "fc.weight", f32, {8}, floatData(constArenaWeights()),
      0,           false};
  ModuleConstant b{"fc.bias", "",  f32, {8}, floatData(constArenaBias()),
                   64,        true};
  m.constants = {w, b};
  m.constantsBytes = 128;

  Expr tOffset = Expr(0);
  Expr uOffset = roundUp256(batch * 32);
  m.buffers = {
      buffer("x", f32, {batch, 8}, BufferRole::Input, 0),
      buffer("fc.weight", f32, {8}, BufferRole::Constant, 0),
      buffer("fc.bias", f32, {8}, BufferRole::Constant, 1),
      buffer("t", f32, {batch, 8}, BufferRole::Arena, -1, tOffset),
      buffer("u", f32, {batch}, BufferRole::Arena, -1, uOffset),
      buffer("y", f32, {batch}, BufferRole::Output, 0),
  };
  m.arenaBytes = uOffset + roundUp256(batch * 4);
  m.metadata = {{"producer", "aotc codegen tests"}};

  Expr i = Var::make("i"), r = Var::make("r"), k = Var::make("k");
  Expr acc = Var::make("acc", f32);
  // The first kernel indexes x and t flat; the others by [row, k].
  Expr r2 = Var::make("r");
  Stmt k0 =
      For::make(i, 0, batch * 8, ForKind::Parallel, 0,
                Store::make("t", {i},
                            load("x", {i}) * load("fc.weight", {mod(i, 8)}) +
                                load("fc.bias", {mod(i, 8)})));
  Stmt k1 = For::make(
      r, 0, batch, ForKind::Parallel, 0,
      LocalDecl::make(acc, f(0.0),
                      Block::make({For::make(k, 0, 8, ForKind::Serial, 0,
                                             LocalAssign::make(
                                                 acc, acc + load("t", {r, k}))),
                                   Store::make("u", {r}, acc)})));
  Stmt k2 = For::make(
      r2, 0, batch, ForKind::Parallel, 0,
      Store::make("y", {r2}, bin(BinOp::Max, load("u", {r2}), f(0.0))));
  m.kernels = {
      Kernel{"scale_shift",
             {{"x", f32, false, {batch * 8}},
              {"fc.weight", f32, false, {8}},
              {"fc.bias", f32, false, {8}},
              {"t", f32, true, {batch * 8}}},
             {batch},
             k0,
             false},
      Kernel{"row_sum",
             {{"t", f32, false, {batch, 8}}, {"u", f32, true, {batch}}},
             {batch},
             k1,
             false},
      Kernel{"relu_out",
             {{"u", f32, false, {batch}}, {"y", f32, true, {batch}}},
             {batch},
             k2,
             false},
  };
  return m;
}

std::vector<std::string> moduleNames() {
  return {"pointwise", "reduction", "const_arena"};
}

bool moduleByName(const std::string &name, LoopModule &out) {
  if (name == "pointwise")
    out = pointwiseModule();
  else if (name == "reduction")
    out = reductionModule();
  else if (name == "const_arena")
    out = constArenaModule();
  else
    return false;
  return true;
}

} // namespace aotc::test
