/// \file
/// The Graph IR: construction, editing, verification and the text printer.
#include "ir/graph.h"

#include "ir/half.h"
#include "ir/scalar_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

namespace aotc {

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

const char *opName(OpKind k) {
  switch (k) {
#define AOTC_OP(kind, onnxName, ...)                                           \
  case OpKind::kind:                                                           \
    return onnxName;
#include "ir/ops.def"
#undef AOTC_OP
  }
  return "?";
}

bool isAxesReduction(OpKind k) {
  switch (k) {
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::ReduceL1:
  case OpKind::ReduceL2:
  case OpKind::ReduceSumSquare:
  case OpKind::ReduceLogSum:
  case OpKind::ReduceLogSumExp:
    return true;
  default:
    return false;
  }
}

OpFamily opFamily(OpKind k) {
  switch (k) {
#define AOTC_OP(kind, onnxName, family, ...)                                   \
  case OpKind::kind:                                                           \
    return OpFamily::family;
#include "ir/ops.def"
#undef AOTC_OP
  }
  return OpFamily::Elementwise;
}

OpArity opArity(OpKind k) {
  switch (k) {
#define AOTC_OP(kind, onnxName, family, minIn, maxIn, minOut, maxOut)          \
  case OpKind::kind:                                                           \
    return {minIn, maxIn, minOut, maxOut};
#include "ir/ops.def"
#undef AOTC_OP
  }
  return {0, -1, 0, -1};
}

bool isInternalOp(OpKind k) { return k == OpKind::WinogradConv; }

std::optional<OpKind> opFromOnnxName(const std::string &onnxName) {
  static const std::map<std::string, OpKind> kOps = {
#define AOTC_OP(kind, onnxName, ...) {onnxName, OpKind::kind},
#include "ir/ops.def"
#undef AOTC_OP
  };
  auto it = kOps.find(onnxName);
  if (it == kOps.end() || isInternalOp(it->second))
    return std::nullopt;
  return it->second;
}

namespace {

/// Shortest decimal text that reads back as exactly \p v.
std::string formatDouble(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

std::string quote(const std::string &s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      r += '\\';
    r += c;
  }
  return r + "\"";
}

template <typename T, typename F>
std::string joinList(const std::vector<T> &xs, F fmt) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i ? "," : "") + fmt(xs[i]);
  return s + "]";
}

std::string printAttribute(const Attribute &a) {
  if (a.tensor)
    return "tensor<" + a.tensor->first.str() + ">";
  struct Printer {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return formatDouble(v); }
    std::string operator()(const std::string &v) const { return quote(v); }
    std::string operator()(const std::vector<int64_t> &v) const {
      return joinList(v, [](int64_t x) { return std::to_string(x); });
    }
    std::string operator()(const std::vector<double> &v) const {
      return joinList(v, formatDouble);
    }
    std::string operator()(const std::vector<std::string> &v) const {
      return joinList(v, quote);
    }
  };
  return std::visit(Printer(), a.value);
}

std::string valueRef(const Value *v) { return v ? "%" + v->name() : "none"; }

void removeOneUse(std::vector<Node *> &users, Node *n) {
  auto it = std::find(users.begin(), users.end(), n);
  if (it != users.end())
    users.erase(it);
}

} // namespace

//===----------------------------------------------------------------------===//
// TensorType and TensorData
//===----------------------------------------------------------------------===//

bool TensorType::isStatic() const {
  for (const Expr &d : dims) {
    int64_t v;
    if (!d.defined() || !d.isConst(v))
      return false;
  }
  return true;
}

std::vector<int64_t> TensorType::staticDims() const {
  std::vector<int64_t> r;
  r.reserve(dims.size());
  for (const Expr &d : dims) {
    int64_t v = 0;
    bool ok = d.defined() && d.isConst(v);
    AOTC_CHECK(ok, "staticDims() of a symbolic type " << str());
    r.push_back(v);
  }
  return r;
}

std::string TensorType::str() const {
  std::string s = dtypeName(dtype);
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ",";
    s += dims[i].defined() ? printExpr(dims[i]) : "?";
  }
  return s + "]";
}

int64_t tensorDataInt(const TensorData &data, DType t, int64_t i) {
  AOTC_CHECK(i >= 0 && (i + 1) * dtypeSize(t) <= data.size(),
             "tensor element " << i << " out of range");
  switch (t) {
  case DType::Float32:
    return scalar::fromFloat(DType::Int64, data.as<float>()[i]);
  case DType::Float64:
    return scalar::fromFloat(DType::Int64, data.as<double>()[i]);
  case DType::Float16:
    return scalar::fromFloat(DType::Int64, halfToFloat(data.as<uint16_t>()[i]));
  case DType::BFloat16:
    return scalar::fromFloat(DType::Int64,
                             bfloat16ToFloat(data.as<uint16_t>()[i]));
  case DType::UInt8:
    return data.as<uint8_t>()[i];
  case DType::Bool:
    return data.as<uint8_t>()[i] != 0;
  case DType::Int8:
    return data.as<int8_t>()[i];
  case DType::UInt16:
    return data.as<uint16_t>()[i];
  case DType::Int16:
    return data.as<int16_t>()[i];
  case DType::UInt32:
    return data.as<uint32_t>()[i];
  case DType::Int32:
    return data.as<int32_t>()[i];
  case DType::Int64:
    return data.as<int64_t>()[i];
  }
  return 0;
}

double tensorDataFloat(const TensorData &data, DType t, int64_t i) {
  AOTC_CHECK(i >= 0 && (i + 1) * dtypeSize(t) <= data.size(),
             "tensor element " << i << " out of range");
  switch (t) {
  case DType::Float32:
    return data.as<float>()[i];
  case DType::Float64:
    return data.as<double>()[i];
  case DType::Float16:
    return halfToFloat(data.as<uint16_t>()[i]);
  case DType::BFloat16:
    return bfloat16ToFloat(data.as<uint16_t>()[i]);
  case DType::UInt8:
  case DType::Bool:
  case DType::Int8:
  case DType::UInt16:
  case DType::Int16:
  case DType::UInt32:
  case DType::Int32:
  case DType::Int64:
    return static_cast<double>(tensorDataInt(data, t, i));
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

std::string Node::describe() const {
  return "node '" + name_ + "' (" + opName(op_) + ")";
}

void Node::replaceInput(size_t i, Value *v) {
  AOTC_CHECK(i < inputs_.size(), "input index " << i << " out of range");
  if (inputs_[i])
    removeOneUse(inputs_[i]->users_, this);
  inputs_[i] = v;
  if (v)
    v->users_.push_back(this);
}

namespace {
const Attribute &explicitAttr(const Node &n, const std::string &name) {
  auto it = n.attrs().find(name);
  AOTC_CHECK(it != n.attrs().end(),
             n.describe() << ": attribute '" << name
                          << "' is absent after canonicalization");
  return it->second;
}
} // namespace

int64_t Node::intAttr(const std::string &name) const {
  const auto *v = std::get_if<int64_t>(&explicitAttr(*this, name).value);
  AOTC_CHECK(v, describe() << ": attribute '" << name << "' is not an int");
  return *v;
}

double Node::floatAttr(const std::string &name) const {
  const Attribute &a = explicitAttr(*this, name);
  if (const auto *i = std::get_if<int64_t>(&a.value))
    return static_cast<double>(*i);
  const auto *v = std::get_if<double>(&a.value);
  AOTC_CHECK(v, describe() << ": attribute '" << name << "' is not a float");
  return *v;
}

const std::string &Node::stringAttr(const std::string &name) const {
  const auto *v = std::get_if<std::string>(&explicitAttr(*this, name).value);
  AOTC_CHECK(v, describe() << ": attribute '" << name << "' is not a string");
  return *v;
}

const std::vector<int64_t> &Node::intsAttr(const std::string &name) const {
  const auto *v =
      std::get_if<std::vector<int64_t>>(&explicitAttr(*this, name).value);
  AOTC_CHECK(v, describe() << ": attribute '" << name << "' is not ints");
  return *v;
}

Expected<int64_t> Node::attrInt(const std::string &name, int64_t def) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end())
    return def;
  if (auto *v = std::get_if<int64_t>(&it->second.value))
    return *v;
  return makeError(describe(), ": attribute '", name, "' must be an int");
}

Expected<double> Node::attrFloat(const std::string &name, double def) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end())
    return def;
  if (auto *v = std::get_if<double>(&it->second.value))
    return *v;
  if (auto *v = std::get_if<int64_t>(&it->second.value))
    return static_cast<double>(*v);
  return makeError(describe(), ": attribute '", name, "' must be a float");
}

Expected<std::string> Node::attrString(const std::string &name,
                                       const std::string &def) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end())
    return def;
  if (auto *v = std::get_if<std::string>(&it->second.value))
    return *v;
  return makeError(describe(), ": attribute '", name, "' must be a string");
}

Expected<std::vector<int64_t>> Node::attrInts(const std::string &name,
                                              std::vector<int64_t> def) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end())
    return def;
  if (auto *v = std::get_if<std::vector<int64_t>>(&it->second.value))
    return *v;
  return makeError(describe(), ": attribute '", name,
                   "' must be a list of ints");
}

Status Node::verify() const {
  OpArity a = opArity(op_);
  int nIn = static_cast<int>(inputs_.size());
  int nOut = static_cast<int>(outputs_.size());
  if (nIn < a.minIn || (a.maxIn >= 0 && nIn > a.maxIn)) {
    std::string want = std::to_string(a.minIn);
    if (a.maxIn != a.minIn)
      want += a.maxIn < 0 ? " or more" : " to " + std::to_string(a.maxIn);
    return makeError(describe(), ": expected ", want, " inputs, got ", nIn);
  }
  if (nOut < a.minOut || (a.maxOut >= 0 && nOut > a.maxOut)) {
    std::string want = std::to_string(a.minOut);
    if (a.maxOut != a.minOut)
      want += a.maxOut < 0 ? " or more" : " to " + std::to_string(a.maxOut);
    return makeError(describe(), ": expected ", want, " outputs, got ", nOut);
  }
  for (int i = 0; i < a.minIn; ++i)
    if (!inputs_[i])
      return makeError(describe(), ": required input ", i, " is missing");
  // Variadic inputs are all required.
  if (a.maxIn < 0)
    for (int i = 0; i < nIn; ++i)
      if (!inputs_[i])
        return makeError(describe(), ": input ", i, " is missing");
  for (int i = 0; i < nOut; ++i) {
    if (!outputs_[i])
      return makeError(describe(), ": output ", i, " is missing");
    if (outputs_[i]->producer() != this || outputs_[i]->producerIndex() != i)
      return makeError(describe(), ": output ", i,
                       " does not name this node as its producer");
  }
  if (op_ == OpKind::Constant && !hasAttr("value"))
    return makeError(describe(), ": missing attribute 'value'");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Graph: construction
//===----------------------------------------------------------------------===//

Value *Graph::newValue(const std::string &name, TensorType type,
                       Value::Kind kind) {
  values_.push_back(
      std::make_unique<Value>(nextId_++, name, std::move(type), kind));
  return values_.back().get();
}

Value *Graph::addInput(const std::string &name, TensorType type) {
  Value *v = newValue(name, std::move(type), Value::Kind::Input);
  inputs_.push_back(v);
  return v;
}

Value *Graph::addConstant(const std::string &name, TensorType type,
                          TensorData data, const std::string &onnxName,
                          bool folded) {
  Value *v = newValue(name, std::move(type), Value::Kind::Constant);
  v->data_ = std::move(data);
  v->onnxName_ = onnxName;
  v->folded_ = folded;
  return v;
}

Value *Graph::addScalarConstant(const std::string &name, float value) {
  std::vector<uint8_t> bytes(sizeof(float));
  std::memcpy(bytes.data(), &value, sizeof(float));
  return addConstant(name, TensorType::of(DType::Float32, {}),
                     TensorData::fromBytes(std::move(bytes)), "",
                     /*folded=*/true);
}

Value *Graph::addShapeConstant(const std::string &name,
                               const std::vector<int64_t> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  if (!bytes.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  Value *v = addConstant(
      name, TensorType::of(DType::Int64, {static_cast<int64_t>(values.size())}),
      TensorData::fromBytes(std::move(bytes)), "", /*folded=*/true);
  std::vector<Expr> known;
  for (int64_t d : values)
    known.push_back(Expr(d));
  v->setSymbolicData(known);
  return v;
}

Node *Graph::addNode(OpKind op, const std::string &name,
                     const std::vector<Value *> &inputs,
                     const std::vector<std::string> &outputNames) {
  nodes_.push_back(std::make_unique<Node>(nextId_++, op, name));
  Node *n = nodes_.back().get();
  n->inputs_ = inputs;
  for (Value *in : inputs)
    if (in)
      in->users_.push_back(n);
  for (size_t i = 0; i < outputNames.size(); ++i) {
    Value *out =
        newValue(outputNames[i], TensorType(), Value::Kind::NodeResult);
    out->producer_ = n;
    out->producerIndex_ = static_cast<int>(i);
    n->outputs_.push_back(out);
  }
  return n;
}

Node *Graph::addNodeBefore(const Node *before, OpKind op,
                           const std::string &name,
                           const std::vector<Value *> &inputs,
                           const std::vector<std::string> &outputNames) {
  Node *n = addNode(op, name, inputs, outputNames);
  auto at = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node> &p) {
                           return p.get() == before;
                         });
  AOTC_CHECK(at != nodes_.end(), "addNodeBefore: node not in the graph");
  std::rotate(at, nodes_.end() - 1, nodes_.end());
  return n;
}

Expr Graph::addSymbol(const std::string &name, Range range) {
  if (const Symbol *s = findSymbol(name))
    return s->var;
  symbols_.push_back(Symbol{name, range, Var::make(name)});
  return symbols_.back().var;
}

Expr Graph::addValueSymbol(const std::string &name, Range range,
                           const std::string &input, int64_t index,
                           DType type) {
  std::string unique = name;
  for (int k = 2; findSymbol(unique); ++k)
    unique = name + "_" + std::to_string(k);
  symbols_.emplace_back(unique, range, Var::make(unique, type), input, index);
  return symbols_.back().var;
}

const Symbol *Graph::findDerivedSymbol(const Expr &definition) const {
  for (const Symbol &s : symbols_)
    if (s.isDerived() && structurallyEqual(s.definition, definition))
      return &s;
  return nullptr;
}

Expr Graph::addDerivedSymbol(const std::string &name, Range range,
                             Expr definition) {
  if (const Symbol *s = findDerivedSymbol(definition))
    return s->var;
  std::string unique = name;
  for (int k = 2; findSymbol(unique); ++k)
    unique = name + "_" + std::to_string(k);
  symbols_.emplace_back(unique, range, Var::make(unique));
  symbols_.back().definition = std::move(definition);
  return symbols_.back().var;
}

Expr Graph::addDataSymbol(const std::string &name, Range range, Expr bound) {
  std::string unique = name;
  for (int k = 2; findSymbol(unique); ++k)
    unique = name + "_" + std::to_string(k);
  symbols_.emplace_back(unique, range, Var::make(unique));
  symbols_.back().dataBound = std::move(bound);
  return symbols_.back().var;
}

const Symbol *Graph::findSymbol(const std::string &name) const {
  for (const Symbol &s : symbols_)
    if (s.name == name)
      return &s;
  return nullptr;
}

const Symbol *Graph::findSymbol(const Var *var) const {
  for (const Symbol &s : symbols_)
    if (s.var.as<Var>()->id == var->id)
      return &s;
  return nullptr;
}

void Graph::freezeInitializer(const Value *v, const std::string &reason) {
  if (!v || !v->isConstant() || v->folded() || v->onnxName().empty())
    return;
  frozen_.emplace(v->onnxName(), reason); // the first reason stays
}

bool Graph::isFixedConstant(const Value *v) const {
  if (!v || !v->isConstant() || v->overridable() || v->computedAtLoad() ||
      !v->data().defined())
    return false;
  if (!v->onnxName().empty() && !v->folded())
    return frozen_.count(v->onnxName()) > 0; // an initializer
  for (const FoldRecipe &r : folds_)
    if (r.target == v) // a packed copy of an initializer
      return frozen_.count(r.source) > 0;
  return true;
}

void Graph::addAssumption(Expr holds, std::string message) {
  for (const Assumption &a : assumptions_)
    if (structurallyEqual(a.holds, holds))
      return;
  assumptions_.push_back(Assumption{std::move(holds), std::move(message)});
}

void Graph::setSymbolRange(const std::string &name, Range r) {
  for (Symbol &s : symbols_) {
    if (s.name == name) {
      s.range = r;
      return;
    }
  }
  symbols_.push_back(Symbol{name, r, Var::make(name)});
}

RangeEnv Graph::rangeEnv() const {
  RangeEnv env;
  for (const Symbol &s : symbols_)
    env.set(s.var, s.range);
  return env;
}

//===----------------------------------------------------------------------===//
// Graph: access and editing
//===----------------------------------------------------------------------===//

std::vector<Value *> Graph::constants() const {
  std::vector<Value *> r;
  for (const auto &v : values_)
    if (v->isConstant())
      r.push_back(v.get());
  return r;
}

Value *Graph::findValue(const std::string &name) const {
  // Latest first: a folded constant shadows the result it replaced.
  for (auto it = values_.rbegin(); it != values_.rend(); ++it)
    if ((*it)->name() == name)
      return it->get();
  return nullptr;
}

bool Graph::isOutput(const Value *v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

void Graph::replaceAllUsesWith(Value *from, Value *to) {
  if (from == to)
    return;
  std::vector<Node *> users = from->users_;
  for (Node *n : users)
    for (size_t i = 0; i < n->inputs_.size(); ++i)
      if (n->inputs_[i] == from)
        n->replaceInput(i, to);
  for (Value *&o : outputs_)
    if (o == from)
      o = to;
}

int Graph::removeDeadNodes() {
  int removed = 0;
  std::set<const Node *> dead;
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
    Node *n = it->get();
    bool used = false;
    for (Value *out : n->outputs_)
      used |= !out->users_.empty() || isOutput(out);
    if (used)
      continue;
    for (Value *in : n->inputs_)
      if (in)
        removeOneUse(in->users_, n);
    dead.insert(n);
    ++removed;
  }
  std::set<const Value *> deadValues;
  for (const auto &v : values_) {
    bool deadResult = v->producer_ && dead.count(v->producer_);
    // An overridable constant is an input of the model even when unused.
    bool deadConst = v->isConstant() && v->users_.empty() &&
                     !isOutput(v.get()) && !v->overridable();
    if (deadResult || deadConst)
      deadValues.insert(v.get());
  }
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node> &n) {
                                return dead.count(n.get()) != 0;
                              }),
               nodes_.end());
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [&](const std::unique_ptr<Value> &v) {
                                 return deadValues.count(v.get()) != 0;
                               }),
                values_.end());
  // A recipe names its constant by identity: it goes with the constant.
  folds_.erase(std::remove_if(folds_.begin(), folds_.end(),
                              [&](const FoldRecipe &r) {
                                return deadValues.count(r.target) != 0;
                              }),
               folds_.end());
  return removed;
}

Value *Graph::foldToConstant(Value *v, TensorData data) {
  Value *c = addConstant(v->name(), v->type(), std::move(data), "",
                         /*folded=*/true);
  c->symbolicData_ = v->symbolicData_;
  replaceAllUsesWith(v, c);
  return c;
}

//===----------------------------------------------------------------------===//
// Graph: verification and printing
//===----------------------------------------------------------------------===//

Status Graph::verify() const {
  std::map<const Value *, int> owned; // value -> index of its producer or -1
  for (const auto &v : values_)
    owned[v.get()] = -1;
  std::map<const Node *, int> position;
  for (size_t i = 0; i < nodes_.size(); ++i)
    position[nodes_[i].get()] = static_cast<int>(i);
  // Uses each value should list: node -> count.
  std::map<const Value *, std::map<const Node *, int>> expectedUses;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &n = *nodes_[i];
    AOTC_RETURN_IF_ERROR(n.verify());
    for (const Value *in : n.inputs()) {
      if (!in)
        continue;
      if (!owned.count(in))
        return makeError(n.describe(), ": input '", in->name(),
                         "' is not a value of this graph");
      if (in->producer()) {
        auto p = position.find(in->producer());
        if (p == position.end() || p->second >= static_cast<int>(i))
          return makeError(n.describe(), ": input '", in->name(),
                           "' is not produced by an earlier node");
      }
      ++expectedUses[in][&n];
    }
  }
  for (const auto &v : values_) {
    std::map<const Node *, int> actual;
    for (const Node *u : v->users())
      ++actual[u];
    if (actual != expectedUses[v.get()])
      return makeError("value '", v->name(), "': use list is out of date");
    if (v->kind() == Value::Kind::NodeResult &&
        (!v->producer() || !position.count(v->producer())))
      return makeError("value '", v->name(), "': producer is not in the graph");
  }
  for (const Value *o : outputs_)
    if (!o || !owned.count(o))
      return makeError("graph output is not a value of this graph");
  for (const Value *in : inputs_)
    if (!owned.count(in) || !in->isInput())
      return makeError("graph input is not an input value of this graph");
  return Status::ok();
}

std::string Graph::print() const {
  std::ostringstream os;
  os << "graph " << quote(name);
  if (opsetVersion)
    os << " opset " << opsetVersion;
  os << " {\n";
  for (const Symbol &s : symbols_)
    os << "  symbol " << s.name << " in [" << s.range.min << ", " << s.range.max
       << "]\n";
  for (const Value *v : inputs_)
    os << "  input %" << v->name() << ": " << v->type().str() << "\n";
  for (const Value *v : constants()) {
    os << "  const %" << v->name() << ": " << v->type().str();
    if (!v->onnxName().empty())
      os << " onnx=" << quote(v->onnxName());
    if (v->folded())
      os << " folded";
    os << "\n";
  }
  for (const auto &n : nodes_) {
    os << "  ";
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value *out = n->outputs()[i];
      os << (i ? ", " : "") << "%" << out->name() << ": " << out->type().str();
    }
    os << " = " << opName(n->op()) << "(";
    for (size_t i = 0; i < n->inputs().size(); ++i)
      os << (i ? ", " : "") << valueRef(n->inputs()[i]);
    os << ")";
    if (!n->attrs().empty()) {
      os << " {";
      bool first = true;
      for (const auto &[key, attr] : n->attrs()) {
        os << (first ? "" : ", ") << key << "=" << printAttribute(attr);
        first = false;
      }
      os << "}";
    }
    // Compile-time known contents of shape tensors help reading shape chains.
    if (n->outputs().size() == 1 && n->output(0)->symbolicData())
      os << "  # value=[" << printExprs(*n->output(0)->symbolicData()) << "]";
    os << "\n";
  }
  for (const Value *v : outputs_)
    os << "  output " << valueRef(v) << "\n";
  os << "}\n";
  return os.str();
}

} // namespace aotc
