/// \file
/// The attribute table of every op (op_attrs.h).
#include "ir/op_attrs.h"

#include <map>

namespace aotc {

namespace {

using D = AttrSchema;
constexpr int64_t kMax = 1 << 30;

Expected<Attribute> intAttr(int64_t v) { return Attribute{v, std::nullopt}; }
Expected<Attribute> floatAttr(double v) { return Attribute{v, std::nullopt}; }
Expected<Attribute> stringAttr(const char *v) {
  return Attribute{std::string(v), std::nullopt};
}
Expected<Attribute> intsAttr(std::vector<int64_t> v) {
  return Attribute{std::move(v), std::nullopt};
}

D defInt(const char *name, int64_t v, int64_t since = 1, int64_t until = kMax,
         bool implied = false) {
  return D{name,         AttrKind::Int,
           D::Defaulted, [v](const Node &, int64_t) { return intAttr(v); },
           since,        until,
           implied};
}
/// An int attribute that behaves as \p v in the opsets without it.
D impliedInt(const char *name, int64_t v, int64_t since, int64_t until = kMax) {
  return defInt(name, v, since, until, true);
}
D defFloat(const char *name, double v, int64_t since = 1,
           int64_t until = kMax) {
  return D{name,         AttrKind::Float,
           D::Defaulted, [v](const Node &, int64_t) { return floatAttr(v); },
           since,        until};
}
D defString(const char *name, const char *v, int64_t since = 1) {
  return D{name, AttrKind::String, D::Defaulted,
           [v](const Node &, int64_t) { return stringAttr(v); }, since};
}
D optional(const char *name, AttrKind k, int64_t since = 1,
           int64_t until = kMax) {
  return D{name, k, D::Optional, nullptr, since, until};
}
D required(const char *name, AttrKind k, int64_t since = 1,
           int64_t until = kMax) {
  return D{name, k, D::Required, nullptr, since, until};
}

/// The number of spatial dims of a window op: rank of input 0 minus 2.
Expected<size_t> spatialRank(const Node &n) {
  const Value *x = n.input(0);
  if (!x || x->type().rank() < 3)
    return makeError(n.describe(), ": input 0 must have rank 3 or more");
  return static_cast<size_t>(x->type().rank() - 2);
}

/// strides/dilations: 1 per spatial dim; pads: 0 at both ends of each.
D windowList(const char *name, int64_t value, int perDim, int64_t since = 1,
             int64_t until = kMax) {
  return D{name,
           AttrKind::Ints,
           D::Defaulted,
           [value, perDim](const Node &n, int64_t) -> Expected<Attribute> {
             AOTC_ASSIGN_OR_RETURN(size_t s, spatialRank(n));
             return intsAttr(std::vector<int64_t>(perDim * s, value));
           },
           since,
           until,
           /*impliedElsewhere=*/true};
}

std::vector<D> windowAttrs(bool conv, bool maxPool) {
  std::vector<D> v = {defString("auto_pad", "NOTSET"), windowList("pads", 0, 2),
                      windowList("strides", 1, 1)};
  if (conv) {
    v.push_back(windowList("dilations", 1, 1));
    v.push_back(defInt("group", 1));
    // The kernel shape defaults to the weight's spatial dims.
    v.push_back(D{"kernel_shape", AttrKind::Ints, D::Defaulted,
                  [](const Node &n, int64_t) -> Expected<Attribute> {
                    const Value *w = n.input(1);
                    std::vector<int64_t> k;
                    for (int i = 2; w && i < w->type().rank(); ++i) {
                      int64_t d;
                      if (!w->type().dims[i].isConst(d))
                        return makeError(n.describe(), ": weight ",
                                         w->type().str(),
                                         " must have a static kernel size");
                      k.push_back(d);
                    }
                    return intsAttr(k);
                  }});
    return v;
  }
  v.push_back(required("kernel_shape", AttrKind::Ints));
  v.push_back(impliedInt("ceil_mode", 0, 10));
  if (maxPool) {
    v.push_back(windowList("dilations", 1, 1, 10));
    v.push_back(impliedInt("storage_order", 0, 8));
  } else {
    v.push_back(windowList("dilations", 1, 1, 19));
    v.push_back(impliedInt("count_include_pad", 0, 7));
  }
  return v;
}

std::vector<D> reduceAttrs(int64_t axesInputSince) {
  return {optional("axes", AttrKind::Ints, 1, axesInputSince - 1),
          defInt("keepdims", 1),
          impliedInt("noop_with_empty_axes", 0, axesInputSince)};
}

const std::map<OpKind, std::vector<D>> &table() {
  static const std::map<OpKind, std::vector<D>> t = [] {
    std::map<OpKind, std::vector<D>> m;
    m[OpKind::LeakyRelu] = {defFloat("alpha", 0.01)};
    m[OpKind::Elu] = {defFloat("alpha", 1.0)};
    m[OpKind::Selu] = {defFloat("alpha", 1.67326319217681884765625),
                       defFloat("gamma", 1.05070102214813232421875)};
    m[OpKind::Celu] = {defFloat("alpha", 1.0)};
    m[OpKind::HardSigmoid] = {defFloat("alpha", 0.2), defFloat("beta", 0.5)};
    m[OpKind::ThresholdedRelu] = {defFloat("alpha", 1.0)};
    m[OpKind::Gelu] = {defString("approximate", "none")};
    m[OpKind::Swish] = {defFloat("alpha", 1.0)};
    m[OpKind::IsInf] = {defInt("detect_negative", 1), defInt("detect_positive", 1)};
    m[OpKind::Mod] = {defInt("fmod", 0)};
    m[OpKind::Clip] = {optional("min", AttrKind::Float, 1, 10),
                       optional("max", AttrKind::Float, 1, 10)};
    // saturate (19) and round_mode (24) only concern float8 targets, which
    // aotc refuses as dtypes.
    m[OpKind::BitShift] = {required("direction", AttrKind::String)};
    m[OpKind::Cast] = {required("to", AttrKind::Int), defInt("saturate", 1, 19),
                       defString("round_mode", "up", 24)};
    m[OpKind::CastLike] = {defInt("saturate", 1, 19),
                           defString("round_mode", "up", 24)};
    m[OpKind::Gemm] = {defFloat("alpha", 1.0), defFloat("beta", 1.0),
                       defInt("transA", 0), defInt("transB", 0)};
    m[OpKind::Einsum] = {required("equation", AttrKind::String)};
    m[OpKind::ScatterND] = {defString("reduction", "none", 16)};
    m[OpKind::ScatterElements] = {defInt("axis", 0),
                                  defString("reduction", "none", 16)};
    m[OpKind::Scatter] = {defInt("axis", 0)};
    m[OpKind::Conv] = windowAttrs(true, false);
    // Imported as a Conv of the centred inputs (expand_quantized_matmul.cpp),
    // which takes these attributes.
    m[OpKind::ConvInteger] = windowAttrs(true, false);
    m[OpKind::QLinearConv] = windowAttrs(true, false);
    // ConvTranspose: Conv's window attributes (kernel_shape from W's dims)
    // plus output_padding and output_shape.
    m[OpKind::ConvTranspose] = windowAttrs(true, false);
    m[OpKind::ConvTranspose].push_back(windowList("output_padding", 0, 1));
    m[OpKind::ConvTranspose].push_back(
        optional("output_shape", AttrKind::Ints));
    m[OpKind::MaxPool] = windowAttrs(false, true);
    m[OpKind::AveragePool] = windowAttrs(false, false);
    // Softmax: axis 1 (a 2-D coercion) before opset 13, the last axis after.
    D softmaxAxis{"axis", AttrKind::Int, D::Defaulted,
                  [](const Node &, int64_t opset) {
                    return intAttr(opset >= 13 ? -1 : 1);
                  }};
    m[OpKind::Softmax] = {softmaxAxis};
    m[OpKind::LogSoftmax] = {softmaxAxis};
    m[OpKind::Flatten] = {defInt("axis", 1)};
    m[OpKind::Concat] = {defInt("axis", 1, 1, 3),
                         required("axis", AttrKind::Int, 4)};
    m[OpKind::Gather] = {defInt("axis", 0)};
    m[OpKind::Compress] = {optional("axis", AttrKind::Int)};
    m[OpKind::Unique] = {optional("axis", AttrKind::Int), defInt("sorted", 1)};
    m[OpKind::ReduceSum] = reduceAttrs(13);
    m[OpKind::ReduceMean] = reduceAttrs(18);
    m[OpKind::ReduceMax] = reduceAttrs(18);
    m[OpKind::ReduceMin] = reduceAttrs(18);
    for (OpKind k : {OpKind::ReduceProd, OpKind::ReduceL1, OpKind::ReduceL2,
                     OpKind::ReduceSumSquare, OpKind::ReduceLogSum,
                     OpKind::ReduceLogSumExp})
      m[k] = reduceAttrs(18);
    m[OpKind::Trilu] = {defInt("upper", 1)};
    m[OpKind::EyeLike] = {optional("dtype", AttrKind::Int), defInt("k", 0)};
    m[OpKind::OneHot] = {defInt("axis", -1)};
    // Quantization: per axis from opset 13, blocked and output_dtype from
    // 21 (DequantizeLinear's output_dtype from 23), precision from 25;
    // saturate applies to float8 only, which aotc refuses.
    m[OpKind::QuantizeLinear] = {
        defInt("axis", 1, 13), defInt("saturate", 1, 19),
        defInt("block_size", 0, 21), defInt("output_dtype", 0, 21),
        defInt("precision", 0, 25)};
    m[OpKind::DequantizeLinear] = {defInt("axis", 1, 13),
                                   defInt("block_size", 0, 21),
                                   defInt("output_dtype", 0, 23)};
    m[OpKind::CumSum] = {defInt("exclusive", 0), defInt("reverse", 0)};
    m[OpKind::Hardmax] = {softmaxAxis};
    m[OpKind::LpNormalization] = {defInt("axis", -1), defInt("p", 2)};
    m[OpKind::LRN] = {required("size", AttrKind::Int),
                      defFloat("alpha", 0.0001), defFloat("beta", 0.75),
                      defFloat("bias", 1.0)};
    for (OpKind k : {OpKind::ArgMax, OpKind::ArgMin})
      m[k] = {defInt("axis", 0), defInt("keepdims", 1),
              impliedInt("select_last_index", 0, 12)};
    // TopK: k an attribute in opset 1, an input since 10; largest and
    // sorted since 11.
    m[OpKind::TopK] = {optional("k", AttrKind::Int, 1, 9), defInt("axis", -1),
                       impliedInt("largest", 1, 11),
                       impliedInt("sorted", 1, 11)};
    m[OpKind::GatherElements] = {defInt("axis", 0)};
    m[OpKind::GatherND] = {defInt("batch_dims", 0)};
    m[OpKind::Resize] = {
        defString("mode", "nearest"),
        D{"coordinate_transformation_mode", AttrKind::String, D::Defaulted,
          [](const Node &, int64_t opset) -> Expected<Attribute> {
            // Opset 10 (Upsample's semantics) maps coordinates asymmetrically.
            return stringAttr(opset < 11 ? "asymmetric" : "half_pixel");
          },
          11},
        // Opset 10's nearest is Upsample's: the element at floor(x / s).
        D{"nearest_mode", AttrKind::String, D::Defaulted,
          [](const Node &, int64_t opset) -> Expected<Attribute> {
            return stringAttr(opset < 11 ? "floor" : "round_prefer_floor");
          },
          11},
        defFloat("cubic_coeff_a", -0.75, 11),
        defInt("exclude_outside", 0, 11),
        defFloat("extrapolation_value", 0.0, 11),
        defInt("antialias", 0, 18),
        optional("axes", AttrKind::Ints, 18),
        defString("keep_aspect_ratio_policy", "stretch", 18)};
    // Dropout: ratio an attribute until opset 12 (then an input); is_test
    // until 6. Only inference (training_mode false) is supported.
    m[OpKind::Dropout] = {optional("ratio", AttrKind::Float, 1, 11),
                          optional("is_test", AttrKind::Int, 1, 6),
                          optional("seed", AttrKind::Int, 12),
                          optional("consumed_inputs", AttrKind::Ints, 1, 5)};
    m[OpKind::BatchNormalization] = {
        defFloat("epsilon", 1e-5), defFloat("momentum", 0.9),
        defInt("spatial", 1, 1, 8), optional("is_test", AttrKind::Int, 1, 6),
        impliedInt("training_mode", 0, 14)};
    // LayerNormalization (17) and RMSNormalization (23): statistics over the
    // axes from 'axis' on, computed in stash_type (1: float, 11: double).
    m[OpKind::LayerNormalization] = {defInt("axis", -1), defFloat("epsilon", 1e-5),
                                     defInt("stash_type", 1)};
    m[OpKind::RMSNormalization] = {defInt("axis", -1), defFloat("epsilon", 1e-5),
                                   defInt("stash_type", 1)};
    // InstanceNormalization (1, 6, 22): statistics over the spatial dims of
    // each (batch, channel); before opset 6 a 'consumed_inputs' legacy.
    m[OpKind::InstanceNormalization] = {
        defFloat("epsilon", 1e-5),
        optional("consumed_inputs", AttrKind::Ints, 1, 5)};
    m[OpKind::Reshape] = {impliedInt("allowzero", 0, 14)};
    // DepthToSpace: mode DCR (depth, column, row) or CRD since opset 11.
    m[OpKind::DepthToSpace] = {required("blocksize", AttrKind::Int),
                               defString("mode", "DCR", 11)};
    m[OpKind::SpaceToDepth] = {required("blocksize", AttrKind::Int)};
    m[OpKind::Transpose] = {
        D{"perm", AttrKind::Ints, D::Defaulted,
          [](const Node &n, int64_t) -> Expected<Attribute> {
            int r = n.input(0) ? n.input(0)->type().rank() : 0;
            std::vector<int64_t> p;
            for (int k = r - 1; k >= 0; --k)
              p.push_back(k);
            return intsAttr(p);
          }}};
    // Split: sizes as an attribute until opset 13 (then an input); opset 18
    // adds num_outputs for near-equal parts.
    m[OpKind::Split] = {defInt("axis", 0), optional("split", AttrKind::Ints, 1, 12),
                        optional("num_outputs", AttrKind::Int, 18)};
    m[OpKind::Squeeze] = {optional("axes", AttrKind::Ints, 1, 12)};
    m[OpKind::Unsqueeze] = {required("axes", AttrKind::Ints, 1, 12)};
    m[OpKind::Slice] = {required("starts", AttrKind::Ints, 1, 9),
                        required("ends", AttrKind::Ints, 1, 9),
                        optional("axes", AttrKind::Ints, 1, 9)};
    m[OpKind::Pad] = {defString("mode", "constant"),
                      required("pads", AttrKind::Ints, 1, 10),
                      defFloat("value", 0.0, 1, 10)};
    m[OpKind::Shape] = {impliedInt("start", 0, 15),
                        optional("end", AttrKind::Int, 15)};
    m[OpKind::Constant] = {optional("value", AttrKind::Tensor),
                           optional("value_float", AttrKind::Float, 12),
                           optional("value_floats", AttrKind::Floats, 12),
                           optional("value_int", AttrKind::Int, 12),
                           optional("value_ints", AttrKind::Ints, 12),
                           optional("value_string", AttrKind::String, 12),
                           optional("value_strings", AttrKind::Strings, 12),
                           optional("sparse_value", AttrKind::Sparse, 11)};
    m[OpKind::ConstantOfShape] = {optional("value", AttrKind::Tensor)};
    return m;
  }();
  return t;
}

AttrKind kindOf(const Attribute &a) {
  if (a.tensor)
    return AttrKind::Tensor;
  switch (a.value.index()) {
  case 0:
    return AttrKind::Int;
  case 1:
    return AttrKind::Float;
  case 2:
    return AttrKind::String;
  case 3:
    return AttrKind::Ints;
  case 4:
    return AttrKind::Floats;
  default:
    return AttrKind::Strings;
  }
}

} // namespace

const char *attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Int:
    return "an int";
  case AttrKind::Float:
    return "a float";
  case AttrKind::String:
    return "a string";
  case AttrKind::Ints:
    return "a list of ints";
  case AttrKind::Floats:
    return "a list of floats";
  case AttrKind::Strings:
    return "a list of strings";
  case AttrKind::Tensor:
    return "a tensor";
  case AttrKind::Sparse:
    return "a sparse tensor";
  }
  return "?";
}

const std::vector<AttrSchema> &opAttributes(OpKind op) {
  static const std::vector<AttrSchema> kNone;
  auto it = table().find(op);
  return it == table().end() ? kNone : it->second;
}

const AttrSchema *findAttribute(OpKind op, const std::string &name,
                                int64_t opset) {
  for (const AttrSchema &s : opAttributes(op))
    if (name == s.name && opset >= s.sinceOpset && opset <= s.untilOpset)
      return &s;
  return nullptr;
}

namespace {

/// Whether \p s is written outside its opsets too: every defaulted
/// attribute is. ONNX adds attributes whose default keeps the earlier
/// behaviour (ceil_mode before opset 10 is 0), and where it does not the
/// default depends on the opset (makeDefault gets it). So lowering reads
/// any defaulted attribute at any opset: before, a Resize at opset 13 read
/// `antialias` (opset 18) and aborted.
bool impliedOutside(const AttrSchema &s) {
  return s.impliedElsewhere || s.presence == AttrSchema::Defaulted;
}

} // namespace

Status canonicalizeAttributes(Node &n, int64_t opset) {
  for (const auto &[name, attr] : n.attrs()) {
    if (name.rfind("aotc_", 0) == 0)
      continue; // set by aotc's own passes
    const AttrSchema *s = findAttribute(n.op(), name, opset);
    // A default written outside its opsets by an earlier canonicalization.
    for (const AttrSchema &i : opAttributes(n.op()))
      if (!s && impliedOutside(i) && name == i.name)
        s = &i;
    if (!s)
      return makeError(n.describe(), ": unsupported attribute '", name,
                       "' (at opset ", opset, ")");
    AttrKind k = kindOf(attr);
    bool ok =
        k == s->kind || (s->kind == AttrKind::Float && k == AttrKind::Int);
    if (!ok)
      return makeError(n.describe(), ": attribute '", name, "' must be ",
                       attrKindName(s->kind), ", got ", attrKindName(k));
  }
  for (const AttrSchema &s : opAttributes(n.op())) {
    bool inOpset = opset >= s.sinceOpset && opset <= s.untilOpset;
    if ((!inOpset && !impliedOutside(s)) || n.hasAttr(s.name))
      continue;
    if (s.presence == AttrSchema::Required && inOpset)
      return makeError(n.describe(), ": missing attribute '", s.name, "'");
    if (s.presence == AttrSchema::Defaulted) {
      AOTC_ASSIGN_OR_RETURN(Attribute a, s.makeDefault(n, opset));
      n.setAttr(s.name, std::move(a));
    }
  }
  return Status::ok();
}

} // namespace aotc
