/// \file
/// The ONNX importer: model-level checks, ONNX checker and shape inference,
/// graph inputs, initializers, Constant nodes, nodes and outputs, and the
/// cross-check of aotc's inferred types against ONNX's.
#include "compiler/frontend/onnx_import.h"

#include "compiler/frontend/external_data.h"
#include "compiler/frontend/inline_functions.h"
#include "compiler/frontend/onnx_internal.h"
#include "compiler/frontend/read_file.h"
#include "compiler/passes/shape_inference.h"
#include "compiler/passes/value_symbols.h"

#include <onnx/checker.h>
#include <onnx/common/version.h>
#include <onnx/defs/parser.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

namespace aotc {

using namespace onnx_import;

namespace {

constexpr int64_t kMinOpset = 1;

/// The newest opset of the default domain the ONNX library knows (25 for
/// ONNX 1.20): its checker and shape inference cover every opset up to it.
int64_t maxOpset() {
  const auto &m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = m.find(onnx::ONNX_DOMAIN);
  return it == m.end() ? 0 : it->second.second;
}
/// Initializers above this many elements lose their data in the copy given
/// to ONNX's shape inference (which only reads small shape-like tensors).
constexpr int64_t kShapeInferenceDataLimit = 1024;

bool isDefaultDomain(const std::string &d) {
  return d.empty() || d == "ai.onnx";
}

/// First line of a (possibly multi-line) exception message, trimmed.
std::string firstLine(const std::string &s) {
  std::string r = s.substr(0, s.find('\n'));
  while (!r.empty() && (r.back() == ' ' || r.back() == '\r'))
    r.pop_back();
  return r;
}

/// A multi-line message on one line: non-empty lines joined by "; ".
std::string oneLine(const std::string &s) {
  std::string r, line;
  std::istringstream in(s);
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
      line.pop_back();
    if (!line.empty())
      r += (r.empty() ? "" : "; ") + line;
  }
  return r;
}

/// A C/OpenCL identifier for a dim_param (which may be "batch size" or
/// "2*n"); the same param always gets the same symbol.
class SymbolNamer {
public:
  std::string nameFor(const std::string &param) {
    auto it = names_.find(param);
    if (it != names_.end())
      return it->second;
    std::string s;
    for (char c : param)
      s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
      s = "d_" + s;
    std::string unique = s;
    for (int i = 1; used_.count(unique); ++i)
      unique = s + "_" + std::to_string(i);
    used_.insert(unique);
    names_[param] = unique;
    return unique;
  }

private:
  std::map<std::string, std::string> names_;
  std::set<std::string> used_;
};

class Importer {
public:
  /// \p modelPath: the file the model came from (empty for text and
  /// in-memory models); external data is read relative to its folder.
  Importer(const onnx::ModelProto &model, const std::string &origin,
           const ImportOptions &opts, const std::string &modelPath)
      : model_(model), origin_(origin), opts_(opts), modelPath_(modelPath),
        external_(folderOf(modelPath)) {}

  Expected<std::unique_ptr<Graph>> run();

private:
  Status withOrigin(const Status &s) const { return s.withContext(origin_); }
  template <typename... Args> Status error(Args &&...args) const {
    return makeError(origin_, ": ", std::forward<Args>(args)...);
  }

  Status checkModel();
  Status runOnnxChecker();
  Status runOnnxShapeInference();
  Status importInitializers();
  Status importInputs();
  Status importNode(const onnx::NodeProto &node, int index);
  Status importConstantNode(const onnx::NodeProto &node,
                            const std::string &desc);
  Status importOutputs();
  Status crossCheckTypes() const;
  Expected<Range> rangeFor(const std::string &dimName) const;
  Expected<Value *> lookup(const std::string &name,
                           const std::string &desc) const;

  static std::string folderOf(const std::string &path) {
    if (path.empty())
      return "";
    size_t s = path.find_last_of('/');
    return s == std::string::npos ? "." : s == 0 ? "/" : path.substr(0, s);
  }

  const onnx::ModelProto &model_;
  std::string origin_;
  const ImportOptions &opts_;
  std::string modelPath_;
  ExternalData external_;
  bool hasExternalData_ = false;
  std::unique_ptr<Graph> graph_ = std::make_unique<Graph>();
  int64_t opset_ = 0;
  std::map<std::string, Value *> values_;
  /// Types of values after ONNX's shape inference, by name.
  std::map<std::string, onnx::TypeProto> onnxTypes_;
  SymbolNamer symbols_;
  /// The dim names rangeFor() was asked about (to refuse unknown --dim).
  mutable std::set<std::string> dimsSeen_;
};

std::string describeOnnxNode(const onnx::NodeProto &node, int index) {
  std::string name = node.name();
  if (name.empty())
    for (const std::string &o : node.output())
      if (!o.empty()) {
        name = o;
        break;
      }
  if (name.empty())
    name = node.op_type() + "_" + std::to_string(index);
  return name;
}

Status Importer::checkModel() {
  if (!model_.has_graph())
    return error("model has no graph");
  const onnx::GraphProto &g = model_.graph();
  // The opset first: which attributes an op has depends on it.
  bool found = false;
  std::set<std::string> domains;
  for (const onnx::OperatorSetIdProto &o : model_.opset_import()) {
    std::string domain = isDefaultDomain(o.domain()) ? "" : o.domain();
    if (!domains.insert(domain).second)
      return error("the model imports domain '",
                   domain.empty() ? "ai.onnx" : domain,
                   "' more than once (ONNX allows one version per domain)");
    if (isDefaultDomain(o.domain())) {
      opset_ = o.version();
      found = true;
    }
  }
  // Ops and attributes next: aotc's messages are clearer than the checker's.
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &node = g.node(i);
    std::string desc =
        "node '" + describeOnnxNode(node, i) + "' (" + node.op_type() + ")";
    std::optional<OpKind> op;
    if (isDefaultDomain(node.domain()))
      op = opFromOnnxName(node.op_type());
    if (!op)
      return error(desc, ": unsupported op '", node.op_type(), "' (domain '",
                   node.domain(), "')");
    if (found)
      AOTC_RETURN_IF_ERROR(
          withOrigin(checkAttributeNames(*op, node, desc, opset_)));
  }
  if (!found)
    return error("model imports no opset of the default ONNX domain");
  if (opset_ < kMinOpset)
    return error("unsupported opset version ", opset_, " (supported: ",
                 kMinOpset, " to ", maxOpset(), ")");
  if (opset_ > maxOpset())
    return error("opset version ", opset_,
                 " is newer than the ONNX library aotc is built with (ONNX ",
                 onnx::LAST_RELEASE_VERSION, " knows opsets up to ", maxOpset(), ")");
  if (g.output_size() == 0)
    return error("the graph has no outputs");
  if (g.sparse_initializer_size() > 0)
    return error("sparse initializer '",
                 g.sparse_initializer(0).values().name(), "' is not supported");
  // External data: every location is checked (inside the model's folder,
  // a regular file) before ONNX's checker sees it.
  for (const onnx::TensorProto &t : g.initializer())
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
      auto path = external_.resolve(t);
      if (!path)
        return withOrigin(path.status());
      hasExternalData_ = true;
    }
  return Status::ok();
}

Status Importer::runOnnxChecker() {
  try {
    // With external data the checker resolves locations against the
    // model's folder, which only its file-path form knows (it re-reads the
    // small model file, not the data).
    if (hasExternalData_)
      onnx::checker::check_model(modelPath_);
    else
      onnx::checker::check_model(model_);
  } catch (const std::exception &e) {
    return error("invalid model: ", firstLine(e.what()));
  }
  return Status::ok();
}

Status Importer::runOnnxShapeInference() {
  // Shape inference works on a copy without the data of large initializers.
  onnx::ModelProto copy;
  copy.set_ir_version(model_.ir_version());
  *copy.mutable_opset_import() = model_.opset_import();
  *copy.mutable_functions() = model_.functions();
  const onnx::GraphProto &src = model_.graph();
  onnx::GraphProto *dst = copy.mutable_graph();
  dst->set_name(src.name());
  *dst->mutable_node() = src.node();
  *dst->mutable_input() = src.input();
  *dst->mutable_output() = src.output();
  *dst->mutable_value_info() = src.value_info();
  for (const onnx::TensorProto &t : src.initializer()) {
    onnx::TensorProto *c = dst->add_initializer();
    int64_t numel = 1;
    for (int64_t d : t.dims())
      numel *= d;
    bool external =
        t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
    if (numel <= kShapeInferenceDataLimit && !external) {
      *c = t;
      continue;
    }
    c->set_name(t.name());
    c->set_data_type(t.data_type());
    *c->mutable_dims() = t.dims();
    // A small external tensor (a shape or axes input) gets the bytes read
    // from its file: ONNX's inference does not read external data.
    auto it = values_.find(t.name());
    if (numel <= kShapeInferenceDataLimit && it != values_.end())
      c->set_raw_data(std::string(
          reinterpret_cast<const char *>(it->second->data().data()),
          static_cast<size_t>(it->second->data().size())));
  }
  try {
    // Not strict: ONNX's inference only cross-checks aotc's, which has
    // already accepted every node; conflicts with declared types still throw.
    onnx::ShapeInferenceOptions options(/*check_type=*/true,
                                        /*strict_mode=*/0,
                                        /*data_prop=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                       options);
  } catch (const std::exception &e) {
    return error("ONNX shape inference failed: ", firstLine(e.what()));
  }
  for (const auto *list : {&dst->input(), &dst->value_info(), &dst->output()})
    for (const onnx::ValueInfoProto &vi : *list)
      if (vi.has_type())
        onnxTypes_[vi.name()] = vi.type();
  return Status::ok();
}

Expected<Range> Importer::rangeFor(const std::string &dimName) const {
  dimsSeen_.insert(dimName);
  auto it = opts_.dimRanges.find(dimName);
  Range r = it == opts_.dimRanges.end() ? opts_.defaultRange : it->second;
  if (r.min < 0 || r.min > r.max)
    return error("invalid range [", r.min, ", ", r.max, "] for dim '", dimName,
                 "'");
  return r;
}

Status Importer::importInitializers() {
  for (const onnx::TensorProto &t : model_.graph().initializer()) {
    if (values_.count(t.name()))
      return error("initializer '", t.name(), "' is defined twice");
    auto converted = convertTensor(t, &external_);
    if (!converted)
      return withOrigin(converted.status());
    auto [type, data] = converted.take();
    Value *v = graph_->addConstant(t.name(), std::move(type), std::move(data),
                                   t.name(), /*folded=*/false);
    setConstantSymbolicData(v);
    // Small integer tensors may become sizes, axes or indices compiled into
    // the code (shape inference and lowering read them as known values).
    if (v->symbolicData())
      graph_->freezeInitializer(
          v, "a small integer tensor, which the compiler may read as shape "
             "data and compile into the code");
    values_[t.name()] = v;
  }
  return Status::ok();
}

Status Importer::importInputs() {
  for (const onnx::ValueInfoProto &in : model_.graph().input()) {
    if (auto it = values_.find(in.name()); it != values_.end()) {
      // An initializer listed as an input: a constant whose data is a
      // default the caller may override per run.
      it->second->setOverridable(true);
      graph_->addOnnxInput(it->second);
      continue;
    }
    std::string label = "input '" + in.name() + "'";
    if (!in.type().has_tensor_type())
      return error(label, ": unsupported input type (only tensors are "
                          "supported)");
    const onnx::TypeProto_Tensor &tt = in.type().tensor_type();
    auto dtype = dtypeFromOnnx(tt.elem_type());
    if (!dtype)
      return withOrigin(dtype.status().withContext(label));
    if (!tt.has_shape())
      return error(label, ": unknown rank (the model gives no shape)");
    TensorType type;
    type.dtype = *dtype;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const onnx::TensorShapeProto_Dimension &d = tt.shape().dim(i);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          return error(label, ": negative dim ", d.dim_value());
        type.dims.push_back(Expr(static_cast<int64_t>(d.dim_value())));
        continue;
      }
      std::string param = d.has_dim_param() && !d.dim_param().empty()
                              ? d.dim_param()
                              : in.name() + "_d" + std::to_string(i);
      AOTC_ASSIGN_OR_RETURN(Range r, rangeFor(param));
      type.dims.push_back(graph_->addSymbol(symbols_.nameFor(param), r));
    }
    values_[in.name()] = graph_->addInput(in.name(), std::move(type));
    graph_->addOnnxInput(values_[in.name()]);
  }
  // A range for a dim the model does not have is a mistake (a typo, or the
  // name of another model's dim), not something to ignore.
  for (const auto &[name, range] : opts_.dimRanges) {
    if (dimsSeen_.count(name))
      continue;
    std::string known;
    for (const std::string &d : dimsSeen_)
      known += (known.empty() ? "" : ", ") + d;
    return error("--dim ", name, ": the model has no symbolic dimension '",
                 name, "' (it has: ", known.empty() ? "none" : known, ")");
  }
  return Status::ok();
}

Expected<Value *> Importer::lookup(const std::string &name,
                                   const std::string &desc) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return error(desc, ": input '", name, "' is not defined");
  return it->second;
}

Status Importer::importConstantNode(const onnx::NodeProto &node,
                                    const std::string &desc) {
  if (node.output_size() != 1 || node.attribute_size() != 1)
    return error(desc, ": expected one output and one value attribute");
  const onnx::AttributeProto &a = node.attribute(0);
  TensorType type;
  std::vector<uint8_t> bytes;
  auto putInts = [&](const std::vector<int64_t> &v) {
    type.dtype = DType::Int64;
    bytes.resize(v.size() * sizeof(int64_t));
    if (!v.empty()) // memcpy of a null pointer is undefined, even for 0 bytes
      std::memcpy(bytes.data(), v.data(), bytes.size());
  };
  auto putFloats = [&](const std::vector<float> &v) {
    type.dtype = DType::Float32;
    bytes.resize(v.size() * sizeof(float));
    if (!v.empty()) // memcpy of a null pointer is undefined, even for 0 bytes
      std::memcpy(bytes.data(), v.data(), bytes.size());
  };
  TensorData data;
  if (a.name() == "value") {
    auto t = convertTensor(a.t(), nullptr);
    if (!t)
      return withOrigin(t.status().withContext(desc + ": attribute 'value'"));
    std::tie(type, data) = t.take();
  } else if (a.name() == "value_float") {
    putFloats({a.f()});
  } else if (a.name() == "value_floats") {
    putFloats(std::vector<float>(a.floats().begin(), a.floats().end()));
    type.dims = {Expr(static_cast<int64_t>(a.floats_size()))};
  } else if (a.name() == "value_int") {
    putInts({a.i()});
  } else if (a.name() == "value_ints") {
    putInts(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    type.dims = {Expr(static_cast<int64_t>(a.ints_size()))};
  } else if (a.name() == "value_string" || a.name() == "value_strings") {
    return error(desc, ": attribute '", a.name(),
                 "': unsupported dtype 'string'");
  } else {
    return error(desc, ": attribute '", a.name(),
                 "': sparse constants are not supported");
  }
  if (!data.defined())
    data = TensorData::fromBytes(std::move(bytes));
  const std::string &name = node.output(0);
  Value *v = graph_->addConstant(name, std::move(type), std::move(data), "",
                                 /*folded=*/true);
  setConstantSymbolicData(v);
  values_[name] = v;
  return Status::ok();
}

Status Importer::importNode(const onnx::NodeProto &node, int index) {
  std::string name = describeOnnxNode(node, index);
  std::string desc = "node '" + name + "' (" + node.op_type() + ")";
  OpKind op = *opFromOnnxName(node.op_type()); // checked in checkModel()
  for (const std::string &out : node.output())
    if (!out.empty() && values_.count(out))
      return error(desc, ": output '", out, "' is already defined");
  if (op == OpKind::Constant)
    return importConstantNode(node, desc);

  std::vector<Value *> inputs;
  for (const std::string &in : node.input()) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    AOTC_ASSIGN_OR_RETURN(Value * v, lookup(in, desc));
    inputs.push_back(v);
  }
  while (!inputs.empty() && !inputs.back())
    inputs.pop_back();

  std::vector<std::string> outputs(node.output().begin(), node.output().end());
  while (!outputs.empty() && outputs.back().empty())
    outputs.pop_back();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].empty())
      return error(desc, ": omitted output ", i,
                   " followed by a used one is not supported");
  if (op == OpKind::MaxPool && outputs.size() > 1)
    return error(desc, ": output 'Indices' is not supported");
  if (op == OpKind::BatchNormalization && outputs.size() > 1)
    return error(desc, ": training-mode outputs (running mean/var) are not "
                       "supported");

  if (op == OpKind::MatMulInteger || op == OpKind::QLinearMatMul ||
      op == OpKind::ConvInteger || op == OpKind::QLinearConv) {
    if (outputs.size() != 1)
      return error(desc, ": expected one output");
    std::vector<std::pair<std::string, Attribute>> attrs;
    for (const onnx::AttributeProto &a : node.attribute()) {
      auto attr = convertAttribute(a);
      if (!attr)
        return withOrigin(attr.status().withContext(desc));
      attrs.emplace_back(a.name(), attr.take());
    }
    auto y = op == OpKind::ConvInteger || op == OpKind::QLinearConv
                 ? expandQuantizedConv(*graph_, op, name, desc, inputs,
                                       outputs[0], attrs, opset_, onnxTypes_)
                 : expandQuantizedMatMul(*graph_, op, name, desc, inputs,
                                         outputs[0], onnxTypes_);
    if (!y)
      return withOrigin(y.status());
    Value *v = y.take();
    values_[v->name()] = v;
    return Status::ok();
  }
  Node *n = graph_->addNode(op, name, inputs, outputs);
  for (const onnx::AttributeProto &a : node.attribute()) {
    auto attr = convertAttribute(a);
    if (!attr)
      return withOrigin(attr.status().withContext(desc));
    n->setAttr(a.name(), attr.take());
  }
  AOTC_RETURN_IF_ERROR(withOrigin(checkAttributeValues(*n, opset_)));
  AOTC_RETURN_IF_ERROR(withOrigin(n->verify()));
  for (Value *out : n->outputs())
    values_[out->name()] = out;
  return Status::ok();
}

Status Importer::importOutputs() {
  for (const onnx::ValueInfoProto &o : model_.graph().output()) {
    auto it = values_.find(o.name());
    if (it == values_.end())
      return error("output '", o.name(), "' is not defined");
    graph_->addOutput(it->second);
  }
  return Status::ok();
}

Status Importer::crossCheckTypes() const {
  // ONNX's shape inference (1.12, still in 1.20.1) sizes ceil_mode pools
  // without dropping the windows that start in the right padding (its
  // reference implementation and node tests do drop them); sizes downstream
  // of such a pool cannot be compared.
  for (const auto &node : graph_->nodes())
    if ((node->op() == OpKind::MaxPool || node->op() == OpKind::AveragePool) &&
        node->hasAttr("ceil_mode") && node->intAttr("ceil_mode") == 1)
      return Status::ok();
  // Values ONNX's inference sized apart from ours where ours is known to be
  // right (below), and every value computed from them: their sizes cannot
  // be compared either (fuzz seed 131121: a Concat of an empty slice, 3
  // columns for aotc and ONNX Runtime, 4 for ONNX's inference). Nodes come
  // in the model's order, which ONNX requires to be topological.
  std::unordered_set<const Value *> diverged;
  for (const auto &node : graph_->nodes()) {
    bool downstream = false;
    for (const Value *in : node->inputs())
      downstream = downstream || (in && diverged.count(in));
    if (downstream) {
      for (const Value *v : node->outputs())
        diverged.insert(v);
      continue;
    }
    for (const Value *v : node->outputs()) {
      auto it = onnxTypes_.find(v->name());
      if (it == onnxTypes_.end() || !it->second.has_tensor_type())
        continue;
      const onnx::TypeProto_Tensor &tt = it->second.tensor_type();
      const TensorType &ours = v->type();
      std::ostringstream theirs;
      theirs << onnxDTypeName(tt.elem_type()) << "[";
      bool mismatch = false;
      auto dt = dtypeFromOnnx(tt.elem_type());
      if (tt.elem_type() != 0 && (!dt || *dt != ours.dtype))
        mismatch = true;
      if (tt.has_shape()) {
        if (tt.shape().dim_size() != ours.rank())
          mismatch = true;
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
          const auto &d = tt.shape().dim(i);
          theirs << (i ? "," : "");
          if (!d.has_dim_value()) {
            theirs << (d.dim_param().empty() ? "?" : d.dim_param());
            continue;
          }
          theirs << d.dim_value();
          int64_t c;
          // (ONNX's inference, 1.12 and 1.20.1, sizes some slices of empty
          // dims as 1: an empty dim on our side is not compared.)
          if (i < ours.rank() && ours.dims[i].isConst(c) &&
              c != d.dim_value()) {
            if (c != 0)
              mismatch = true;
            else
              diverged.insert(v);
          }
        }
      } else {
        theirs << "unknown rank";
      }
      theirs << "]";
      if (!mismatch)
        continue;
      // A graph output's declared type is what ONNX's (non-strict)
      // inference keeps: the model's declaration, not aotc, is wrong.
      for (const onnx::ValueInfoProto &o : model_.graph().output())
        if (o.name() == v->name() && o.has_type())
          return error("output '", v->name(), "' is declared ", theirs.str(),
                       " but ", node->describe(), " computes ", ours.str());
      return error("internal error: value '", v->name(), "' of ",
                   node->describe(), ": aotc infers ", ours.str(),
                   " but ONNX shape inference gives ", theirs.str());
    }
  }
  return Status::ok();
}

Expected<std::unique_ptr<Graph>> Importer::run() {
  AOTC_RETURN_IF_ERROR(checkModel());
  AOTC_RETURN_IF_ERROR(runOnnxChecker());
  const onnx::GraphProto &g = model_.graph();
  graph_->name = g.name();
  graph_->opsetVersion = opset_;
  AOTC_RETURN_IF_ERROR(importInitializers());
  AOTC_RETURN_IF_ERROR(importInputs());
  // ONNX's inference runs before the nodes are imported (a few imports read
  // the type of a value a node computes), but its error is reported after
  // aotc's inference, whose errors name the node.
  Status onnxInference = runOnnxShapeInference();
  for (int i = 0; i < g.node_size(); ++i)
    AOTC_RETURN_IF_ERROR(importNode(g.node(i), i));
  AOTC_RETURN_IF_ERROR(importOutputs());
  // aotc's inference first (its errors name the node), then ONNX's, whose
  // static dims must agree.
  AOTC_RETURN_IF_ERROR(withOrigin(bindValueSymbols(*graph_)));
  AOTC_RETURN_IF_ERROR(withOrigin(inferShapes(*graph_)));
  // The C ABI holds tensors up to kMaxIORank dims: refuse more now rather
  // than at run time.
  for (const Value *v : graph_->inputs())
    if (v->type().rank() > kMaxIORank)
      return error("input '", v->name(), "' has rank ", v->type().rank(),
                   "; inputs and outputs can have at most ", kMaxIORank,
                   " dims");
  for (const Value *v : graph_->outputs())
    if (v->type().rank() > kMaxIORank)
      return error("output '", v->name(), "' has rank ", v->type().rank(),
                   "; inputs and outputs can have at most ", kMaxIORank,
                   " dims");
  AOTC_RETURN_IF_ERROR(onnxInference);
  AOTC_RETURN_IF_ERROR(crossCheckTypes());
  AOTC_RETURN_IF_ERROR(
      withOrigin(graph_->verify().withContext("internal error")));
  return std::move(graph_);
}

} // namespace

Expected<std::unique_ptr<Graph>> importOnnxModel(const onnx::ModelProto &model,
                                                 const std::string &origin,
                                                 const ImportOptions &opts) {
  if (needsFunctionExpansion(model)) {
    onnx::ModelProto expanded = model;
    AOTC_RETURN_IF_ERROR(expandFunctions(expanded, origin));
    return Importer(expanded, origin, opts, "").run();
  }
  return Importer(model, origin, opts, "").run();
}

Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string &path,
                                                const ImportOptions &opts) {
  AOTC_ASSIGN_OR_RETURN(std::string bytes,
                        readRegularFile(path, kMaxProtobufBytes));
  if (bytes.empty())
    return makeError(path, ": file is empty");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    return makeError(path, ": not an ONNX model (protobuf parse failed)");
  bytes = std::string(); // the parsed model holds what is needed
  if (needsFunctionExpansion(model))
    AOTC_RETURN_IF_ERROR(expandFunctions(model, path));
  return Importer(model, path, opts, path).run();
}

Expected<std::unique_ptr<Graph>> importOnnxText(const std::string &text,
                                                const ImportOptions &opts) {
  const std::string origin = "<text>";
  onnx::ModelProto model;
  try {
    auto status = onnx::OnnxParser::Parse(model, text.c_str());
    if (!status.IsOK())
      return makeError(origin,
                       ": parse error: ", oneLine(status.ErrorMessage()));
  } catch (const std::exception &e) {
    return makeError(origin, ": parse error: ", oneLine(e.what()));
  }
  if (model.ir_version() == 0)
    model.set_ir_version(onnx::IR_VERSION);
  if (needsFunctionExpansion(model))
    AOTC_RETURN_IF_ERROR(expandFunctions(model, origin));
  return importOnnxModel(model, origin, opts);
}

} // namespace aotc
