/// \file
/// 3 x 3 convolutions as Winograd F(2x2, 3x3) (see winograd.h).
#include "compiler/passes/winograd.h"

#include "compiler/passes/fold_program.h"

#include <cstring>
#include <set>

namespace aotc {

namespace {

/// G of F(2x2, 3x3), U = G g G^T, with its last row negated as Bt's is
/// (lower_winograd.cpp: every row of Bt is then d[k] + s d[2 - k / 2]).
constexpr float kG[4][3] = {
    {1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, -1}};

Value *floatConstant(Graph &g, const std::string &name,
                     const std::vector<int64_t> &dims,
                     const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.addConstant(name, TensorType::of(DType::Float32, dims),
                       TensorData::fromBytes(std::move(bytes)), "",
                       /*folded=*/true);
}

/// Where F(2x2, 3x3) gains on a 2-core AVX-512 VM under PoCL (stop 56,
/// one 3 x 3 convolution between two 1 x 1 ones, against the direct
/// convolution, alternated rounds): 128 channels over 28 x 28 0.94 ->
/// 0.74 ms at batch 1, 10.1 -> 8.1 at batch 8; 256 over 14 x 14 1.34 ->
/// 0.97 and 11.6 -> 8.6. 64 over 56 x 56 lost then (1.14 -> 1.29 ms,
/// 11.3 -> 12.3): a 64-step reduction is short beside the transforms,
/// which write and read four times the input and the output. Since the
/// input transform runs rows of tiles (register_tile.cpp,
/// pointwiseRows; stop 57) it gains at batch 1: ResNet-18's layer1
/// 0.69-0.70 -> 0.58 ms a convolution, ResNet-50's 0.69-0.71 -> 0.61-0.64
/// (kernel_profile.py, 5 rounds), and is even at batch 8 (ResNet-18
/// layer1 5.9-6.3 -> 5.3-6.6 ms; device busy 84.0 / 90.6 -> 85.3 / 86.2
/// in two alternated pairs). A profile may start higher
/// (DeviceProfile::winogradMinChannels: zen5-avx512's 128).
constexpr int64_t kMinChannels = 64;

int64_t minChannels(const DeviceProfile &profile) {
  return profile.winogradMinChannels > 0 ? profile.winogradMinChannels
                                         : kMinChannels;
}

/// The tiles of an output map (2 x 2 outputs each) below which the direct
/// convolution stays, by the profile's vector registers.
///
/// With 32 (AVX-512), the 7 x 7 maps (16 tiles an image) lost inside
/// ResNet-18 at batch 1 on that VM: U, 16 / 9 the weight's size (16.8 MB
/// for 512 channels), is streamed for 16 rows of tiles, and the direct
/// convolution's 7 x 32 tiles (14 accumulators) run well; so 49 tiles
/// (maps of 13 x 13 and up).
///
/// With 16 (AVX2), a 7-pixel row of a direct convolution holds one vector
/// of output channels per pixel (7 x 16 would need 17 registers): 7
/// accumulators, one FMA latency apart, 8 loads for 7 FMAs. ResNet-50's
/// layer4 3 x 3s ran at 128 GFLOP/s so (14.3 ms at batch 8, ONNX Runtime's
/// 10.3) on a Zen 3 VM (stop 76), and as Winograd in 7.8 ms with the
/// transforms (1.16 against 2.0 at batch 1). Whole models, alternated
/// (ab_models.cpp): ResNet-18 0.881 at batch 1 and 0.884 at batch 8,
/// ResNet-50 0.945 and 0.957. So 16 tiles (maps of 7 x 7 and up).
int64_t minTiles(const DeviceProfile &profile) {
  return profile.vectorRegisters >= 32 ? 49 : 16;
}

bool allEqual(const std::vector<int64_t> &v, int64_t x) {
  for (int64_t e : v)
    if (e != x)
      return false;
  return true;
}

/// Whether \p conv is eligible (winograd.h) for channel blocks of \p block
/// with \p tiles or more tiles of 2 x 2 outputs an image and \p channels
/// or more input and output channels.
bool eligible(const Node &conv, int64_t block, int64_t tiles,
              int64_t channels) {
  if (conv.op() != OpKind::Conv || conv.outputs().size() != 1 ||
      conv.numInputs() < 2)
    return false;
  const Value *x = conv.input(0), *w = conv.input(1), *out = conv.output(0);
  const Value *bias = conv.numInputs() > 2 ? conv.input(2) : nullptr;
  const TensorType &xt = x->type(), &wt = w->type(), &ot = out->type();
  if (xt.dtype != DType::Float32 || wt.dtype != DType::Float32 ||
      xt.rank() != 4 || wt.rank() != 4 || ot.rank() != 4 || !wt.isStatic() ||
      !isFoldable(w))
    return false;
  if (bias &&
      (bias->type().dtype != DType::Float32 || bias->type().rank() != 1))
    return false;
  const std::vector<int64_t> wd = wt.staticDims();
  int64_t c = 0, h = 0, wdt = 0, ho = 0, wo = 0;
  if (wd[2] != 3 || wd[3] != 3 || !xt.dims[1].isConst(c) || c != wd[1] ||
      !xt.dims[2].isConst(h) || !xt.dims[3].isConst(wdt) ||
      !ot.dims[2].isConst(ho) || !ot.dims[3].isConst(wo) || ho < 1 || wo < 1)
    return false;
  if (conv.intAttr("group") != 1 || !allEqual(conv.intsAttr("strides"), 1) ||
      !allEqual(conv.intsAttr("dilations"), 1) ||
      conv.intsAttr("pads").size() != 4)
    return false;
  return block > 0 && c % block == 0 && wd[0] % block == 0 && c >= channels &&
         wd[0] >= channels && ((ho + 1) / 2) * ((wo + 1) / 2) >= tiles;
}

/// Whether \p v, a convolution's result, leaves the channel blocks at once
/// (winograd.h): it is a graph output, or every node that reads it, and
/// every node that reads those in turn, is element-wise (Relu, a residual
/// Add, ...), so the values end in graph outputs (or nowhere) without a
/// convolution, pool, Concat or other op that would keep them blocked.
bool leavesBlocksAtOnce(const Graph &g, const Value *v) {
  if (g.isOutput(v))
    return true;
  std::vector<const Value *> todo = {v};
  std::set<const Value *> seen;
  while (!todo.empty()) {
    const Value *x = todo.back();
    todo.pop_back();
    if (!seen.insert(x).second)
      continue;
    for (const Node *u : x->users()) {
      if (opFamily(u->op()) != OpFamily::Elementwise)
        return false;
      for (const Value *o : u->outputs())
        todo.push_back(o);
    }
  }
  return true;
}

void rewrite(Graph &g, Node *conv, int64_t block) {
  Value *x = conv->input(0), *w = conv->input(1), *out = conv->output(0);
  Value *bias = conv->numInputs() > 2 ? conv->input(2) : nullptr;
  const std::vector<int64_t> wd = w->type().staticDims();
  const int64_t co = wd[0], c = wd[1];
  const std::string p = "aotc_winograd_" + conv->name() + "_";
  auto node = [&](OpKind op, const std::string &name,
                  const std::vector<Value *> &in,
                  const std::vector<int64_t> &dims) {
    Node *n = g.addNodeBefore(conv, op, p + name, in, {p + name});
    n->output(0)->setType(TensorType::of(DType::Float32, dims));
    if (op == OpKind::Reshape)
      n->setAttr("allowzero", Attribute{int64_t{0}, std::nullopt});
    return n;
  };
  std::vector<float> gv, gt;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      gv.push_back(kG[i][j]);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i)
      gt.push_back(kG[i][j]);
  // U = G g G^T per (co, c): [Co, C, 4, 4].
  Value *gw = node(OpKind::MatMul, "g_w",
                   {floatConstant(g, p + "G", {4, 3}, gv), w}, {co, c, 4, 3})
                  ->output(0);
  Value *u = node(OpKind::MatMul, "u",
                  {gw, floatConstant(g, p + "Gt", {3, 4}, gt)}, {co, c, 4, 4})
                 ->output(0);
  // [Co / B, B, C, 16] -> [16, Co / B, C, B].
  Value *split = node(OpKind::Reshape, "u_split",
                      {u, g.addShapeConstant(p + "u_split_shape",
                                             {co / block, block, c, 16})},
                      {co / block, block, c, 16})
                     ->output(0);
  Node *packed =
      node(OpKind::Transpose, "u_packed", {split}, {16, co / block, c, block});
  packed->setAttr("perm",
                  Attribute{std::vector<int64_t>{3, 0, 2, 1}, std::nullopt});
  // Computed by the folding program in this layout, not read through views.
  packed->output(0)->setFoldTarget(true);
  // The weight itself too: where an output of the transforms is not finite,
  // the kernel computes it directly (lower_winograd.cpp).
  std::vector<Value *> in = {x, packed->output(0), w};
  if (bias)
    in.push_back(bias);
  // The result keeps the Conv's value name (a graph output is named by it).
  const std::string outName = out->name();
  out->setName(p + "replaced");
  Node *wc =
      g.addNodeBefore(conv, OpKind::WinogradConv, conv->name(), in, {outName});
  wc->setAttr("pads", Attribute{conv->intsAttr("pads"), std::nullopt});
  wc->output(0)->setType(out->type());
  g.replaceAllUsesWith(out, wc->output(0));
}

} // namespace

int rewriteWinograd(Graph &g, int64_t block, const DeviceProfile &profile,
                    bool atOutputs) {
  const int64_t tiles = minTiles(profile), channels = minChannels(profile);
  std::vector<Node *> todo;
  for (const auto &n : g.nodes())
    if (eligible(*n, block, tiles, channels) &&
        (atOutputs || !leavesBlocksAtOnce(g, n->output(0))))
      todo.push_back(n.get());
  for (Node *conv : todo)
    rewrite(g, conv, block);
  if (!todo.empty())
    g.removeDeadNodes();
  return static_cast<int>(todo.size());
}

} // namespace aotc
