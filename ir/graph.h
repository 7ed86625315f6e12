/// \file
/// The Graph IR: a dataflow graph of Nodes over Values.
///
/// A Graph owns its nodes (kept in topological order), its values and its
/// constants. Values have a TensorType whose dims are symbolic Exprs over
/// named symbols (`batch`), each with a declared range. Constants (ONNX
/// initializers) are values with data; they keep their ONNX names because
/// users update weights by name. Small integer tensors that hold shapes may
/// carry `symbolicData`: their elements as Exprs, so shape arithmetic
/// (Shape -> Gather -> Concat -> Reshape) is evaluated at compile time.
#pragma once

#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/simplify.h"
#include "ir/status.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace aotc {

enum class OpKind {
#define AOTC_OP(kind, onnxName, ...) kind,
#include "ir/ops.def"
#undef AOTC_OP
};

/// The largest rank of a model input or output: what the runtime's C ABI
/// holds (AOTC_MAX_RANK; codegen/wrapper pins the two together).
constexpr int kMaxIORank = 8;

/// Which shape-inference and lowering code handles an op (ops.def).
enum class OpFamily {
  Elementwise,
  Contraction,
  Reduction,
  DataMovement,
  DataDependent
};

/// How many inputs and outputs an op takes; -1 is "any number".
struct OpArity {
  int minIn, maxIn, minOut, maxOut;
};

const char *opName(OpKind k);
OpFamily opFamily(OpKind k);
OpArity opArity(OpKind k);
/// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
/// ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp: the reductions
/// over `axes` (input 1 from opset 13/18, an attribute before).
bool isAxesReduction(OpKind k);
/// An op that graph passes make and no model may hold (ops.def's
/// "Internal" entries): the importer refuses its name like any unknown op.
bool isInternalOp(OpKind k);
/// Maps an ONNX op_type (default domain) to an OpKind; never an internal op.
std::optional<OpKind> opFromOnnxName(const std::string &onnxName);

struct TensorType {
  DType dtype = DType::Float32;
  std::vector<Expr> dims;

  int rank() const { return static_cast<int>(dims.size()); }
  Expr numel() const { return product(dims); }
  /// True if every dim is an integer constant.
  bool isStatic() const;
  /// Static dims; only valid when isStatic().
  std::vector<int64_t> staticDims() const;
  std::string str() const; ///< "f32[batch,64]"
  /// The type of \p dtype with the static dims \p dims.
  static TensorType of(DType dtype, const std::vector<int64_t> &dims) {
    TensorType t;
    t.dtype = dtype;
    for (int64_t d : dims)
      t.dims.push_back(Expr(d));
    return t;
  }
};

/// Raw little-endian bytes of a constant tensor, shared between copies: an
/// owned buffer, or a view into storage someone else owns (a mapped
/// external-data file), kept alive by \c owner.
struct TensorData {
  std::shared_ptr<const void> owner;
  const uint8_t *ptr = nullptr;
  int64_t len = 0;

  /// Takes ownership of \p bytes.
  static TensorData fromBytes(std::vector<uint8_t> bytes) {
    auto v = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    TensorData d;
    d.ptr = v->data();
    d.len = static_cast<int64_t>(v->size());
    d.owner = std::move(v);
    return d;
  }
  /// \p n bytes at \p p, valid while \p owner lives.
  static TensorData view(std::shared_ptr<const void> owner, const uint8_t *p,
                         int64_t n) {
    TensorData d;
    d.owner = std::move(owner);
    d.ptr = p;
    d.len = n;
    return d;
  }
  /// True once bytes (possibly none) were given.
  bool defined() const { return owner != nullptr; }
  int64_t size() const { return len; }
  const uint8_t *data() const { return ptr; }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data());
  }
};

/// Reads element \p i of \p data with type \p t as int64 / double.
int64_t tensorDataInt(const TensorData &data, DType t, int64_t i);
double tensorDataFloat(const TensorData &data, DType t, int64_t i);

class Node;

/// A tensor-valued edge: a graph input, a constant, or a node result.
class Value {
public:
  enum class Kind { Input, Constant, NodeResult };

  Value(int id, std::string name, TensorType type, Kind kind)
      : id_(id), name_(std::move(name)), type_(std::move(type)), kind_(kind) {}

  int id() const { return id_; }
  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  const TensorType &type() const { return type_; }
  void setType(TensorType t) { type_ = std::move(t); }
  Kind kind() const { return kind_; }
  bool isConstant() const { return kind_ == Kind::Constant; }
  bool isInput() const { return kind_ == Kind::Input; }

  Node *producer() const { return producer_; }
  int producerIndex() const { return producerIndex_; }
  const std::vector<Node *> &users() const { return users_; }

  /// Data of a Constant value.
  const TensorData &data() const { return data_; }
  /// ONNX name of a constant (initializer); empty for a folded constant.
  const std::string &onnxName() const { return onnxName_; }
  bool folded() const { return folded_; }
  /// A folded constant without data at compile time: the model's folding
  /// program computes it on the device when the model is loaded and again
  /// whenever the initializers it derives from are updated
  /// (compiler/passes/fold_program.h).
  bool computedAtLoad() const { return computedAtLoad_; }
  void setComputedAtLoad(bool c) { computedAtLoad_ = c; }
  /// A value that the folding program must materialize as it is (a packed
  /// weight computed from weights), even though it is a view of another.
  bool foldTarget() const { return foldTarget_; }
  void setFoldTarget(bool t) { foldTarget_ = t; }
  /// A constant that the ONNX graph also lists as an input: its data is a
  /// default the caller may override per run (ONNX IR >= 4).
  bool overridable() const { return overridable_; }
  void setOverridable(bool o) { overridable_ = o; }

  /// Compile-time known elements (Exprs) of a small 1-D or 0-D int tensor.
  const std::optional<std::vector<Expr>> &symbolicData() const {
    return symbolicData_;
  }
  void setSymbolicData(std::optional<std::vector<Expr>> d) {
    symbolicData_ = std::move(d);
  }

private:
  friend class Graph;
  friend class Node;
  int id_;
  std::string name_;
  TensorType type_;
  Kind kind_;
  Node *producer_ = nullptr;
  int producerIndex_ = -1;
  std::vector<Node *> users_;
  TensorData data_;
  std::string onnxName_;
  bool folded_ = false;
  bool computedAtLoad_ = false;
  bool foldTarget_ = false;
  bool overridable_ = false;
  std::optional<std::vector<Expr>> symbolicData_;
};

/// An attribute value, as in ONNX.
struct Attribute {
  std::variant<int64_t, double, std::string, std::vector<int64_t>,
               std::vector<double>, std::vector<std::string>>
      value;
  /// A tensor-valued attribute (Constant's `value`) is stored as a constant.
  std::optional<std::pair<TensorType, TensorData>> tensor;
};

class Node {
public:
  Node(int id, OpKind op, std::string name)
      : id_(id), op_(op), name_(std::move(name)) {}

  int id() const { return id_; }
  OpKind op() const { return op_; }
  const std::string &name() const { return name_; }
  /// "node 'conv1' (Conv)": how error messages name a node.
  std::string describe() const;

  /// Inputs; an omitted optional input is nullptr.
  const std::vector<Value *> &inputs() const { return inputs_; }
  Value *input(size_t i) const {
    return i < inputs_.size() ? inputs_[i] : nullptr;
  }
  size_t numInputs() const { return inputs_.size(); }
  const std::vector<Value *> &outputs() const { return outputs_; }
  Value *output(size_t i) const { return outputs_.at(i); }

  void replaceInput(size_t i, Value *v);

  const std::map<std::string, Attribute> &attrs() const { return attrs_; }
  void setAttr(const std::string &name, Attribute a) {
    attrs_[name] = std::move(a);
  }
  bool hasAttr(const std::string &name) const {
    return attrs_.count(name) != 0;
  }
  /// Typed attribute access: returns \p def if absent; an error if present
  /// with another type.
  Expected<int64_t> attrInt(const std::string &name, int64_t def) const;
  Expected<double> attrFloat(const std::string &name, double def) const;
  Expected<std::string> attrString(const std::string &name,
                                   const std::string &def) const;
  Expected<std::vector<int64_t>> attrInts(const std::string &name,
                                          std::vector<int64_t> def) const;

  /// Explicit values, for passes after attribute canonicalization
  /// (ir/op_attrs.h): the attribute must be present with that kind (an
  /// invariant, checked).
  int64_t intAttr(const std::string &name) const;
  double floatAttr(const std::string &name) const;
  const std::string &stringAttr(const std::string &name) const;
  const std::vector<int64_t> &intsAttr(const std::string &name) const;

  /// Structural checks: input/output counts, dtypes, ranks, attributes.
  Status verify() const;

private:
  friend class Graph;
  int id_;
  OpKind op_;
  std::string name_;
  std::vector<Value *> inputs_;
  std::vector<Value *> outputs_;
  std::map<std::string, Attribute> attrs_;
};

/// A condition over the symbols that the compiled code relies on but that
/// could not be proven for every size in the declared ranges (a squeezed dim
/// is 1, a window fits its input, ...). The wrapper checks it before a run and
/// reports `message` when it fails.
struct Assumption {
  Expr holds; ///< Bool expression over symbols
  std::string message;
};

/// A symbolic size and its declared range. `var` is the one Var that stands
/// for it in every expression; `name` is the ONNX dim_param (or a generated
/// name) users refer to it by. A value symbol stands for an element of an
/// integer graph input instead (a Reshape shape, Slice starts, ... given at
/// run time): `valueInput` names the input, `valueIndex` the element, and
/// the runtime binds it from the input's data rather than from a dim. A
/// value symbol of a float input (a Resize's scales given at run time) has
/// a Float64 Var: the runtime stores the element's value as the bits of a
/// double in its int64 slot, and it appears only in the definitions of
/// derived symbols (the sizes computed from it), never in a kernel. A
/// derived symbol stands for `definition`, an expression over the symbols
/// declared before it, which the wrapper computes once per run: a size
/// that depends on values through branches (a Reshape dim that is the
/// given value, the input's dim for 0, or the remainder for -1) is one
/// opaque size in the kernels instead of the whole expression in every
/// index. A data symbol is a count the model computes from data while it
/// runs (NonZero's number of nonzero elements): a kernel writes it, the
/// run reads it back at a sync point and only then knows it and the sizes
/// derived from it; `dataBound` is an upper bound over the symbols declared
/// before it (the input's element count), by which memory is planned.
struct Symbol {
  Symbol(std::string name, Range range, Expr var,
         std::string valueInput = "", int64_t valueIndex = -1)
      : name(std::move(name)), range(range), var(std::move(var)),
        valueInput(std::move(valueInput)), valueIndex(valueIndex) {}
  std::string name;
  Range range;
  Expr var;
  std::string valueInput; ///< empty: bound by an input dim
  int64_t valueIndex = -1;
  Expr definition; ///< defined: a derived symbol
  Expr dataBound;  ///< defined: a data symbol (at most this)
  bool isValue() const { return !valueInput.empty(); }
  bool isData() const { return dataBound.defined(); }
  bool isDerived() const { return definition.defined(); }
  /// A float value symbol (its slot holds a double's bits).
  bool isFloat() const { return aotc::isFloat(var.type()); }
};

class Graph {
public:
  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  std::string name;
  /// Default-domain (ai.onnx) opset version of the imported model; 0 if
  /// unknown.
  int64_t opsetVersion = 0;

  // Construction.
  Value *addInput(const std::string &name, TensorType type);
  Value *addConstant(const std::string &name, TensorType type, TensorData data,
                     const std::string &onnxName, bool folded);
  /// A folded int64 constant of \p values whose elements shape arithmetic
  /// knows (symbolicData): a Reshape's shape, Pad's pads, Slice's bounds.
  Value *addShapeConstant(const std::string &name,
                          const std::vector<int64_t> &values);
  /// A folded float32 scalar constant (an epsilon, a Where's zero).
  Value *addScalarConstant(const std::string &name, float value);
  /// Appends a node; results get the given names (types filled by shape
  /// inference later).
  Node *addNode(OpKind op, const std::string &name,
                const std::vector<Value *> &inputs,
                const std::vector<std::string> &outputNames);
  /// As addNode, placed just before \p before in the node order (for a pass
  /// that adds a producer of one of \p before's inputs).
  Node *addNodeBefore(const Node *before, OpKind op, const std::string &name,
                      const std::vector<Value *> &inputs,
                      const std::vector<std::string> &outputNames);
  void addOutput(Value *v) { outputs_.push_back(v); }
  void setOutput(size_t i, Value *v) { outputs_.at(i) = v; }

  /// Declares a symbol and returns its Var; re-declaring returns the same Var
  /// and narrows nothing (keeps the first range).
  Expr addSymbol(const std::string &name, Range range);
  /// Declares a value symbol (see Symbol) under a fresh name based on
  /// \p name and returns its Var (of type \p type: Int64, or Float64 for
  /// a float input's element).
  Expr addValueSymbol(const std::string &name, Range range,
                      const std::string &input, int64_t index,
                      DType type = DType::Int64);
  /// Declares a derived symbol (see Symbol) under a fresh name based on
  /// \p name, or returns the one whose definition equals \p definition.
  Expr addDerivedSymbol(const std::string &name, Range range,
                        Expr definition);
  /// Declares a data symbol (see Symbol) under a fresh name based on
  /// \p name, at most \p bound, and returns its Var.
  Expr addDataSymbol(const std::string &name, Range range, Expr bound);
  const std::vector<Symbol> &symbols() const { return symbols_; }
  /// The derived symbol whose definition is structurally \p definition, or
  /// null.
  const Symbol *findDerivedSymbol(const Expr &definition) const;
  const Symbol *findSymbol(const std::string &name) const;
  /// The symbol whose Var is \p var, or null.
  const Symbol *findSymbol(const Var *var) const;

  /// Records a run-time assumption (once per condition).
  void addAssumption(Expr holds, std::string message);
  /// Records that the value of ONNX initializer \p v was used at compile
  /// time (packed, read as shape data): the .so cannot take an update of it,
  /// and names it with \p reason. No-op for a value that is not an
  /// initializer.
  void freezeInitializer(const Value *v, const std::string &reason);
  /// ONNX initializer name -> why its value is compiled in.
  const std::map<std::string, std::string> &frozenInitializers() const {
    return frozen_;
  }
  /// Whether \p v is a constant whose value no update or run can change,
  /// known at compile time: a Constant node's or a folded value (not a
  /// packed copy of an updatable initializer), a frozen initializer; not
  /// one a run may override or the folding program computes. Code may hold
  /// its value itself.
  bool isFixedConstant(const Value *v) const;
  /// A folded constant that is a permutation of an ONNX initializer
  /// (a packed weight): the runtime recomputes it when the initializer is
  /// updated.
  struct FoldRecipe {
    std::string source; ///< the initializer's ONNX name
    DType dtype = DType::Float32;
    std::vector<int64_t> sourceShape;
    /// The folded constant (identity, not name: two packed copies may
    /// share a name).
    const Value *target = nullptr;
    /// Target dim k is view dim perm[k]: the source, or with split > 0
    /// the source with dim splitDim split into [size / split, split].
    std::vector<int> perm;
    int splitDim = -1;
    int64_t split = 0;
  };
  void addFoldRecipe(FoldRecipe r) { folds_.push_back(std::move(r)); }
  const std::vector<FoldRecipe> &foldRecipes() const { return folds_; }
  const std::vector<Assumption> &assumptions() const { return assumptions_; }
  void setSymbolRange(const std::string &name, Range r);
  RangeEnv rangeEnv() const;

  // Access. nodes() is in topological order.
  const std::vector<std::unique_ptr<Node>> &nodes() const { return nodes_; }
  const std::vector<Value *> &inputs() const { return inputs_; }
  /// The inputs as the ONNX graph lists them: inputs() and the overridable
  /// constants, in ONNX order.
  const std::vector<Value *> &onnxInputs() const { return onnxInputs_; }
  void addOnnxInput(Value *v) { onnxInputs_.push_back(v); }
  const std::vector<Value *> &outputs() const { return outputs_; }
  std::vector<Value *> constants() const;
  Value *findValue(const std::string &name) const;
  bool isOutput(const Value *v) const;

  // Editing.
  /// Points every use of \p from (and graph outputs) at \p to.
  void replaceAllUsesWith(Value *from, Value *to);
  /// Removes nodes whose results are unused and not outputs; and unused
  /// constants. Returns the number of nodes removed.
  int removeDeadNodes();
  /// Replaces a node result by a new constant with the given data.
  Value *foldToConstant(Value *v, TensorData data);

  /// Runs Node::verify on every node and checks use lists and order.
  Status verify() const;
  /// Stable text form used by tests and --emit=graph.
  std::string print() const;

private:
  Value *newValue(const std::string &name, TensorType type, Value::Kind kind);

  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value *> inputs_;
  std::vector<Value *> onnxInputs_;
  std::vector<Value *> outputs_;
  std::vector<Symbol> symbols_;
  std::vector<Assumption> assumptions_;
  std::map<std::string, std::string> frozen_;
  std::vector<FoldRecipe> folds_;
  int nextId_ = 0;
};

} // namespace aotc
