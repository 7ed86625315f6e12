/// \file
/// Value symbols for integer graph inputs that size tensors (value_symbols.h).
#include "compiler/passes/value_symbols.h"

#include <set>

namespace aotc {

namespace {

/// True if operand \p i of a node of kind \p op is read as shape data
/// through shape inference's knownData (symbolic elements accepted).
bool readsSizes(OpKind op, size_t i) {
  if (isAxesReduction(op))
    return i == 1; // axes (opset 13 ReduceSum, 18 the others)
  switch (op) {
  case OpKind::Reshape:
  case OpKind::Expand:
  case OpKind::Tile:
  case OpKind::Split:
  case OpKind::Pad:
    return i == 1;
  case OpKind::Slice:
    return i >= 1 && i <= 4; // starts, ends, axes, steps
  case OpKind::Range:
    return i <= 2;
  case OpKind::Resize:
    return i == 3; // sizes
  case OpKind::ConstantOfShape:
    return i == 0;
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::CumSum:
    return i == 1; // axes
  case OpKind::TopK:
    return i == 1; // k
  case OpKind::OneHot:
    return i == 1; // depth
  default:
    return false;
  }
}

/// True if operand \p i of \p n reads a float input's values as sizes:
/// a Resize's scales (input 1 in opset 10, 2 after), a float Range's
/// bounds, a float OneHot's depth.
bool readsFloatSizes(const Node &n, size_t i, int64_t opset) {
  if (n.op() == OpKind::Resize)
    return i == (opset > 0 && opset < 11 ? 1u : 2u);
  if (n.op() == OpKind::OneHot)
    return i == 1; // depth, truncated
  return n.op() == OpKind::Range && i <= 2;
}

/// The range of a value symbol of integer type \p t: the type's own, but
/// within +-2^48 (no tensor has a dim that large; Slice clamps its bounds
/// there too) so that shape arithmetic on it (n * 2, a + b) provably stays
/// inside 64 bits and keeps its symbolic form. A value outside is refused
/// by the run with the range in the message.
Range valueRange(DType t) {
  constexpr int64_t kLimit = int64_t{1} << 48;
  if (t == DType::Int32)
    return Range{INT32_MIN, INT32_MAX};
  return Range{-kLimit, kLimit};
}

/// The name of value symbol \p k of input \p in: its name, or name[k].
std::string elementName(const Value *in, int64_t k) {
  return in->type().rank() == 0 ? in->name()
                                : in->name() + "[" + std::to_string(k) + "]";
}

/// A float input (float32 or float64) that a node reads directly as sizes
/// gets float value symbols (Symbol::isFloat): the sizes computed from it
/// are derived symbols the wrapper evaluates in double.
bool bindFloatValueSymbols(Graph &g, Value *in, int64_t count) {
  bool sizes = false;
  for (const auto &node : g.nodes())
    for (size_t i = 0; i < node->numInputs(); ++i)
      sizes |= node->input(i) == in &&
               readsFloatSizes(*node, i, g.opsetVersion);
  if (!sizes)
    return false;
  std::vector<Expr> data;
  // The range is the slot's: the runtime checks that the value is finite.
  for (int64_t k = 0; k < count; ++k)
    data.push_back(g.addValueSymbol(elementName(in, k),
                                    Range{INT64_MIN, INT64_MAX}, in->name(), k,
                                    DType::Float64));
  in->setSymbolicData(std::move(data));
  return true;
}

} // namespace

Status bindValueSymbols(Graph &g) {
  for (Value *in : g.inputs()) {
    const TensorType &t = in->type();
    bool floats = t.dtype == DType::Float32 || t.dtype == DType::Float64;
    if ((t.dtype != DType::Int64 && t.dtype != DType::Int32 && !floats) ||
        t.rank() > 1)
      continue;
    int64_t count = 1;
    if (t.rank() == 1 && (!t.dims[0].isConst(count) || count < 0 ||
                          count > kMaxIORank))
      continue;
    if (floats) {
      bindFloatValueSymbols(g, in, count);
      continue;
    }
    // Everything computed from the input (Shape and Size read no data).
    std::set<const Value *> reached{in};
    bool sizes = false;
    for (const auto &node : g.nodes()) {
      if (node->op() == OpKind::Shape || node->op() == OpKind::Size)
        continue;
      bool reads = false;
      for (size_t i = 0; i < node->numInputs(); ++i) {
        if (node->input(i) && reached.count(node->input(i))) {
          reads = true;
          sizes |= readsSizes(node->op(), i);
        }
      }
      if (reads)
        for (Value *out : node->outputs())
          reached.insert(out);
    }
    if (!sizes)
      continue;
    // An empty input (no axes, no pads) is known: no element to bind.
    std::vector<Expr> data;
    for (int64_t k = 0; k < count; ++k)
      data.push_back(g.addValueSymbol(elementName(in, k), valueRange(t.dtype),
                                      in->name(), k));
    in->setSymbolicData(std::move(data));
  }
  return Status::ok();
}

} // namespace aotc
