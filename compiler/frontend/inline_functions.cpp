/// \file
/// Function expansion (inline_functions.h).
#include "compiler/frontend/inline_functions.h"

#include "ir/graph.h"

#include <onnx/defs/schema.h>
#include <onnx/inliner/inliner.h>

#include <map>
#include <set>

namespace aotc {
namespace onnx_import {

namespace {

int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      return o.version();
  return 0;
}

/// Default-domain ops of the main graph with no native lowering whose
/// schema at the model's opset has a function body.
std::set<std::string> expandableOps(const onnx::ModelProto &model) {
  std::set<std::string> ops;
  int64_t opset = defaultOpset(model);
  if (opset <= 0)
    return ops;
  for (const onnx::NodeProto &n : model.graph().node()) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx"))
      continue;
    if (opFromOnnxName(n.op_type()))
      continue;
    const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(
        n.op_type(), static_cast<int>(opset), n.domain());
    if (s && (s->HasFunction() || s->HasContextDependentFunction()))
      ops.insert(n.op_type());
  }
  return ops;
}

/// Writes every defaulted attribute of the schema that a node to expand
/// leaves out onto the node: ONNX's inliner binds only the attributes a
/// call gives, and a body that refers to an absent one loses it (a
/// MeanVarianceNormalization without 'axes' would reduce over all axes, a
/// window function's Cast would lose 'to').
void addDefaultAttributes(onnx::ModelProto &model,
                          const std::set<std::string> &ops) {
  int64_t opset = defaultOpset(model);
  for (onnx::NodeProto &n : *model.mutable_graph()->mutable_node()) {
    if (!ops.count(n.op_type()) ||
        !(n.domain().empty() || n.domain() == "ai.onnx"))
      continue;
    const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(
        n.op_type(), static_cast<int>(opset), n.domain());
    if (!s)
      continue;
    for (const auto &[name, attr] : s->attributes()) {
      if (attr.required ||
          attr.default_value.type() == onnx::AttributeProto::UNDEFINED)
        continue;
      bool present = false;
      for (const onnx::AttributeProto &a : n.attribute())
        present |= a.name() == name;
      if (present)
        continue;
      onnx::AttributeProto *a = n.add_attribute();
      *a = attr.default_value;
      a->set_name(name);
    }
  }
}

size_t countOps(const onnx::ModelProto &model, const std::set<std::string> &ops) {
  size_t k = 0;
  for (const onnx::NodeProto &n : model.graph().node())
    k += ops.count(n.op_type());
  return k;
}

} // namespace

bool needsFunctionExpansion(const onnx::ModelProto &model) {
  return model.functions_size() > 0 || !expandableOps(model).empty();
}

/// Large initializers set aside (their data swapped out, name, type and
/// dims left) while the model is copied for each attempt, and put back on
/// destruction.
class WeightsAside {
public:
  explicit WeightsAside(onnx::ModelProto &model) : model_(model) {
    for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer()) {
      if (t.ByteSizeLong() < 4096)
        continue;
      onnx::TensorProto kept;
      kept.set_name(t.name());
      kept.set_data_type(t.data_type());
      *kept.mutable_dims() = t.dims();
      kept.Swap(&t); // t is now the stub, kept the data
      aside_.emplace(kept.name(), std::move(kept));
    }
  }
  ~WeightsAside() {
    for (onnx::TensorProto &t : *model_.mutable_graph()->mutable_initializer()) {
      auto it = aside_.find(t.name());
      if (it != aside_.end())
        t.Swap(&it->second);
    }
  }

private:
  onnx::ModelProto &model_;
  std::map<std::string, onnx::TensorProto> aside_;
};

Status expandFunctions(onnx::ModelProto &model, const std::string &origin) {
  WeightsAside aside(model);
  try {
    if (model.functions_size() > 0)
      onnx::inliner::InlineLocalFunctions(model, /*convert_version=*/true);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    return makeError(origin, ": expanding the model's local functions: ",
                     msg.substr(0, msg.find('\n')));
  }
  // One op at a time, so an op whose body ONNX cannot build (a
  // context-dependent body over types inference cannot give) stays as it
  // is: the importer then refuses it by name. A body may call other
  // function ops: repeat until nothing changes (bounded, against a body
  // that calls itself).
  std::set<std::string> failed;
  for (int round = 0; round < 8; ++round) {
    std::set<std::string> ops = expandableOps(model);
    for (const std::string &f : failed)
      ops.erase(f);
    if (ops.empty())
      return Status::ok();
    bool changed = false;
    for (const std::string &op : ops) {
      onnx::ModelProto attempt = model;
      std::set<std::string> one = {op};
      size_t before = countOps(attempt, one);
      try {
        addDefaultAttributes(attempt, one);
        onnx::inliner::FunctionIdVector ids = {{"", op}, {"ai.onnx", op}};
        auto set = onnx::inliner::FunctionIdSet::Create(std::move(ids));
        onnx::inliner::InlineSelectedFunctions(
            attempt, *set, onnx::OpSchemaRegistry::Instance());
      } catch (const std::exception &) {
        failed.insert(op);
        continue;
      }
      if (countOps(attempt, one) >= before) {
        failed.insert(op); // ONNX has no body for it at this opset
        continue;
      }
      model = std::move(attempt);
      changed = true;
    }
    if (!changed)
      return Status::ok();
  }
  return Status::ok();
}

} // namespace onnx_import
} // namespace aotc
