/// \file
/// The folding program joins the model's module (see attachFoldProgram in
/// schedule.h): one constants table for both, the program's outputs
/// written into the model's computed constants.
#include "compiler/schedule/schedule.h"

#include "ir/visitor.h"

#include <map>
#include <set>

namespace aotc {

namespace {

/// Moves every IndexCheck's error code by \p offset: the program's error
/// messages follow the model's in one table.
class ShiftErrorCodes : public IRMutator {
public:
  explicit ShiftErrorCodes(int offset) : offset_(offset) {}

protected:
  Expr mutateIndexCheck(const IndexCheck *op, const Expr &self) override {
    (void)self;
    return IndexCheck::make(mutate(op->value), mutate(op->extent),
                            op->code + offset_, op->wrapNegative);
  }

private:
  int offset_;
};

} // namespace

Status attachFoldProgram(LoopModule &m, LoopModule fold,
                         const std::vector<std::string> &targets) {
  if (!fold.inputs.empty() || !fold.symbols.empty())
    return makeError("the folding program has inputs or symbols");
  if (fold.outputs.size() != targets.size())
    return makeError("the folding program has ", fold.outputs.size(),
                     " outputs for ", targets.size(), " computed constants");
  std::map<std::string, int> byOnnxName, byName;
  for (size_t i = 0; i < m.constants.size(); ++i) {
    if (!m.constants[i].onnxName.empty())
      byOnnxName[m.constants[i].onnxName] = static_cast<int>(i);
    byName[m.constants[i].name] = static_cast<int>(i);
  }
  // A constant name no other constant has, from \p base; claimed for the
  // next constant of m.
  auto claimName = [&](const std::string &base) {
    std::string name = base;
    for (int k = 1; byName.count(name); ++k)
      name = base + "_" + std::to_string(k);
    byName[name] = static_cast<int>(m.constants.size());
    return name;
  };
  // A packed copy's recipe (LoopModule::Fold) with the program's index.
  std::map<int, const LoopModule::Fold *> recipeOf;
  for (const LoopModule::Fold &f : fold.folds)
    recipeOf[f.target] = &f;
  auto sameRecipe = [](const LoopModule::Fold &a, const LoopModule::Fold &b) {
    return a.source == b.source && a.dtype == b.dtype &&
           a.sourceShape == b.sourceShape && a.perm == b.perm &&
           a.splitDim == b.splitDim && a.split == b.split;
  };
  // The program's constants in m: the same initializer is one constant, and
  // so is the same packing of one (the model's copy, repacked on updates).
  std::vector<int> constantIndex(fold.constants.size());
  for (size_t i = 0; i < fold.constants.size(); ++i) {
    ModuleConstant &c = fold.constants[i];
    auto it = c.onnxName.empty() ? byOnnxName.end() : byOnnxName.find(c.onnxName);
    if (it != byOnnxName.end()) {
      constantIndex[i] = it->second;
      continue;
    }
    auto recipe = recipeOf.find(static_cast<int>(i));
    if (recipe != recipeOf.end()) {
      int same = -1;
      for (const LoopModule::Fold &f : m.folds)
        if (sameRecipe(f, *recipe->second))
          same = f.target;
      if (same >= 0) {
        constantIndex[i] = same;
        continue;
      }
    }
    if (c.computed)
      return makeError("the folding program reads computed constant '", c.name,
                       "'");
    // Named for people: the weight's ONNX name, or the program's buffer.
    c.name = claimName(c.onnxName.empty() ? "fold_" + c.name : c.onnxName);
    if (!c.onnxName.empty())
      byOnnxName[c.onnxName] = static_cast<int>(m.constants.size());
    constantIndex[i] = static_cast<int>(m.constants.size());
    m.constants.push_back(c);
    if (recipe != recipeOf.end()) {
      LoopModule::Fold f = *recipe->second;
      f.target = constantIndex[i];
      m.folds.push_back(std::move(f));
    }
  }
  // Outputs find their constants by name: a name twice would send two
  // outputs to one constant and leave the other unwritten.
  std::set<std::string> distinct(targets.begin(), targets.end());
  if (distinct.size() != targets.size())
    return makeError("the folding program's computed constants repeat a name");
  std::vector<int> outputIndex(targets.size());
  for (size_t k = 0; k < targets.size(); ++k) {
    int index = -1;
    for (size_t i = 0; i < m.constants.size(); ++i)
      if (m.constants[i].computed && m.constants[i].valueName == targets[k])
        index = static_cast<int>(i);
    // The main graph may no longer read a target (a packed copy replaced
    // it): then the output is written to a constant of its own.
    if (index < 0) {
      ModuleConstant c;
      c.valueName = targets[k];
      c.name = claimName(targets[k]);
      c.dtype = fold.outputs[k].dtype;
      for (const Expr &d : fold.outputs[k].dims) {
        int64_t v;
        if (!d.isConst(v))
          return makeError("folding program output '", fold.outputs[k].name,
                           "' has a symbolic shape");
        c.shape.push_back(v);
      }
      c.folded = c.computed = true;
      index = static_cast<int>(m.constants.size());
      m.constants.push_back(std::move(c));
    }
    const ModuleConstant &c = m.constants[index];
    bool same = c.dtype == fold.outputs[k].dtype &&
                c.shape.size() == fold.outputs[k].dims.size();
    for (size_t d = 0; same && d < c.shape.size(); ++d)
      same = fold.outputs[k].dims[d].isConstValue(c.shape[d]);
    if (!same)
      return makeError("folding program output '", fold.outputs[k].name,
                       "' does not match constant '", c.name, "'");
    outputIndex[k] = index;
  }
  for (ModuleBuffer &b : fold.buffers) {
    if (b.role == BufferRole::Constant) {
      b.index = constantIndex.at(b.index);
    } else if (b.role == BufferRole::Output) {
      b.role = BufferRole::Constant;
      b.index = outputIndex.at(b.index);
    }
  }
  // One error table: the program's messages after the model's.
  int errorOffset = static_cast<int>(m.errors.size());
  m.errors.insert(m.errors.end(), fold.errors.begin(), fold.errors.end());
  fold.errors.clear();
  for (Kernel &k : fold.kernels) {
    k.name = "fold_" + k.name;
    if (k.reportsErrors && errorOffset > 0)
      k.body = ShiftErrorCodes(errorOffset).mutate(k.body);
  }
  fold.constants.clear();
  fold.outputs.clear();
  fold.inputSlots.clear();
  fold.folds.clear();
  fold.constantsBytes = fold.constantsStoredBytes = 0;
  m.foldProgram = std::make_shared<LoopModule>(std::move(fold));
  layoutConstants(m);
  return Status::ok();
}

} // namespace aotc
