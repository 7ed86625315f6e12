/// \file
/// LoopModule -> the C++ wrapper. The emitter prints, top to bottom: the
/// prelude, the descriptor tables, arena_bytes(), output_shapes(), run() and
/// the AotcModelDesc. Every symbolic expression is checked to read only
/// symbols and printed in the Cxx dialect; one Namer issues the identifier of
/// every symbol (symbols are Vars, matched by identity), and each function
/// binds just the symbols it reads.
#include "codegen/wrapper/wrapper_emitter.h"

#include "codegen/opencl/identifiers.h"
#include "ir/visitor.h"
#include "runtime/include/aotc/aotc_runtime.h"
#include "runtime/include/aotc/model_desc.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <set>

namespace aotc {

// The wrapper writes DType values into the descriptor tables: they must be
// the AOTC_DT_* numbers of the contract (runtime/src/abi.cpp pins the public
// aotc_dtype_t to the same numbers).
static_assert(kMaxIORank == AOTC_MAX_RANK,
              "the compiler and the C ABI disagree on the largest rank");
static_assert(static_cast<int>(DType::Float32) == AOTC_DT_FLOAT32 &&
                  static_cast<int>(DType::UInt8) == AOTC_DT_UINT8 &&
                  static_cast<int>(DType::Int8) == AOTC_DT_INT8 &&
                  static_cast<int>(DType::UInt16) == AOTC_DT_UINT16 &&
                  static_cast<int>(DType::Int16) == AOTC_DT_INT16 &&
                  static_cast<int>(DType::UInt32) == AOTC_DT_UINT32 &&
                  static_cast<int>(DType::Int32) == AOTC_DT_INT32 &&
                  static_cast<int>(DType::Int64) == AOTC_DT_INT64 &&
                  static_cast<int>(DType::Bool) == AOTC_DT_BOOL &&
                  static_cast<int>(DType::Float16) == AOTC_DT_FLOAT16 &&
                  static_cast<int>(DType::BFloat16) == AOTC_DT_BFLOAT16 &&
                  static_cast<int>(DType::Float64) == AOTC_DT_FLOAT64,
              "DType and AOTC_DT_* disagree");

namespace {

const char *dtypeEnum(DType t) {
  switch (t) {
  case DType::Float32:
    return "AOTC_DT_FLOAT32";
  case DType::UInt8:
    return "AOTC_DT_UINT8";
  case DType::Int8:
    return "AOTC_DT_INT8";
  case DType::UInt16:
    return "AOTC_DT_UINT16";
  case DType::Int16:
    return "AOTC_DT_INT16";
  case DType::UInt32:
    return "AOTC_DT_UINT32";
  case DType::Int32:
    return "AOTC_DT_INT32";
  case DType::Int64:
    return "AOTC_DT_INT64";
  case DType::Bool:
    return "AOTC_DT_BOOL";
  case DType::Float64:
    return "AOTC_DT_FLOAT64";
  case DType::Float16:
    return "AOTC_DT_FLOAT16";
  case DType::BFloat16:
    return "AOTC_DT_BFLOAT16";
  }
  return "0";
}

/// An int64_t literal that any C++ compiler reads back exactly.
std::string i64(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  std::string s = std::to_string(v);
  return (v > INT32_MAX || v < INT32_MIN) ? s + "LL" : s;
}

std::string u64(uint64_t v) {
  std::string s = std::to_string(v);
  return v > INT32_MAX ? s + "ULL" : s;
}

class WrapperEmitter {
public:
  WrapperEmitter(const LoopModule &m, const WrapperOptions &o)
      : m_(m), opts_(o) {}

  Expected<std::string> emit();

private:
  /// \p e in the Cxx dialect, over symbol identifiers; adds the symbols it
  /// reads to \p used. \p what names the expression in errors.
  Expected<std::string> cxx(const Expr &e, const std::string &what,
                            std::set<int> &used) const;
  /// `const int64_t s_x = s[i];` for each used symbol, or `(void)s;`.
  std::string bindSymbols(const std::set<int> &used) const;
  /// The declaration binding symbol \p i from s[] (a double for a float
  /// value symbol), without indentation.
  std::string bindSymbol(int i) const;

  /// C++ that is true while sync \p sync has not bound its count (its
  /// data symbol holds AOTC_SYMBOL_UNKNOWN).
  std::string unknown(int sync) const {
    return "s[" + std::to_string(m_.syncs.at(sync).symbol) +
           "] == AOTC_SYMBOL_UNKNOWN";
  }
  /// \p code with two more spaces before each line.
  static std::string indent(const std::string &code);

  Status checkSymbols();
  Status emitTensors(const std::vector<ModuleTensor> &ts, bool inputs);
  Status emitConstants();
  void emitFrozen();
  /// Whether the .so has a constants blob: always, except a weightless one
  /// whose every constant is updatable.
  bool hasBlob() const {
    if (!opts_.weightsFile.empty())
      return false;
    return !opts_.weightless || m_.constantsStoredBytes > 0;
  }
  Status emitFolds();
  Status emitInputSlots();
  void emitKernelNamesAndMetadata();
  Status emitDeriveSymbols();
  Status emitArenaBytes();
  Status emitOutputShapes();
  Status emitRun();
  /// run_fold(): the folding program's kernels, in order.
  Status emitRunFold();
  /// The launch of \p k, kernel \p index of the .so, whose buffers are
  /// \p owner's (the model, or its folding program).
  Expected<std::string> emitLaunch(const Kernel &k, size_t index,
                                   const LoopModule &owner,
                                   std::set<int> &used) const;
  /// The launch of persistent group \p g, kernel \p index of the .so
  /// (persistent_kernels.h): its parts' buffers, the counters, the error
  /// record, its symbols, and each part's work-item count (0 where its
  /// size variant does not run).
  Expected<std::string> emitPersistentLaunch(int g, size_t index,
                                             std::set<int> &used) const;
  /// The ND-range of a kernel over symbols: the outermost Parallel loops,
  /// with the LetStmts between them substituted into their extents.
  Expected<std::vector<Expr>> globalSizeOf(const Kernel &k) const;
  /// What the runtime numbers as kernels: the model's launches (a kernel,
  /// or a persistent group as one), then the folding program's kernels.
  struct Launchable {
    std::string name, function, summary;
    std::vector<const Kernel *> kernels; ///< the model's it runs
    /// The run() path that launches it (AOTC_KERNEL_*_PATH).
    int path = AOTC_KERNEL_ANY_PATH;
  };
  std::vector<Launchable> launchables() const;
  /// The .so's number of the first persistent kernel part kernel
  /// (launchables(): after the model's launches), and of the folding
  /// program's first kernel.
  size_t firstPartKernel() const { return m_.launches().size(); }
  size_t foldKernelBase() const {
    size_t n = firstPartKernel();
    for (const LoopModule::Persistent &p : m_.persistent)
      n += static_cast<size_t>(p.parts());
    return n;
  }
  void emitErrors();
  Status emitCheckSymbols();
  /// kernel_costs(): each kernel's flops and bytes estimates, in double.
  Status emitKernelCosts();
  Expected<std::string> doubleCxx(const Expr &e, const std::string &what,
                                  std::set<int> &used) const;
  /// \p e as C++ that evaluates with overflow checks (sets `ovf`).
  Expected<std::string> checkedCxx(const Expr &e, const std::string &what,
                                   std::set<int> &used) const;
  /// A kernel's argument for integer symbol \p sym (marked used).
  Expected<std::string> symbolArg(const Expr &sym, std::set<int> &used) const;
  /// The AotcArg initializers of kernel \p k's launch, in the printer's
  /// parameter order: its buffers, \p afterBuffers (a persistent kernel's
  /// counters), the error record, its symbols; \p count gets their number.
  Expected<std::string> kernelArgs(const Kernel &k, const LoopModule &owner,
                                   const std::string &afterBuffers,
                                   std::set<int> &used, size_t &count) const;
  Expected<std::string> launchArg(const KernelBuffer &kb,
                                  const LoopModule &owner,
                                  std::set<int> &used) const;
  void emitProgramBinaries();
  void emitDesc();

  const LoopModule &m_;
  const WrapperOptions &opts_;
  /// Symbol Var id -> index in m_.symbols.
  std::map<uint64_t, int> symbolIndex_;
  /// The identifier of each symbol (by index).
  std::vector<std::string> symbolIdents_;
  bool hasDerived_ = false; ///< derive_symbols() was emitted
  Namer namer_;
  size_t numMetadata_ = 0; ///< key/value pairs
  uint64_t foldArenaBytes_ = 0; ///< set by emitRunFold
  size_t numChecks_ = 0;
  std::string out_;
};

std::string WrapperEmitter::indent(const std::string &code) {
  std::string out;
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    end = end == std::string::npos ? code.size() : end + 1;
    out += "  " + code.substr(start, end - start);
    start = end;
  }
  return out;
}

Expected<std::string> WrapperEmitter::cxx(const Expr &e,
                                          const std::string &what,
                                          std::set<int> &used) const {
  if (!e.defined())
    return makeError(what, " is undefined");
  if (readsMemory(e))
    return makeError(what, " reads a buffer: ", printExpr(e));
  for (const Expr &v : freeVars(e)) {
    auto it = symbolIndex_.find(v.as<Var>()->id);
    if (it == symbolIndex_.end())
      return makeError(what, " depends on '", v.as<Var>()->name,
                       "', which is not a symbol: ", printExpr(e));
    used.insert(it->second);
  }
  VarNamer names = [this](const Var &v) {
    return symbolIdents_.at(symbolIndex_.at(v.id));
  };
  return printExpr(e, PrintDialect::Cxx, &names);
}

std::string WrapperEmitter::bindSymbols(const std::set<int> &used) const {
  if (used.empty())
    return "  (void)s;\n";
  std::string out;
  for (int i : used)
    out += "  " + bindSymbol(i);
  return out;
}

std::string WrapperEmitter::bindSymbol(int i) const {
  std::string slot = "s[" + std::to_string(i) + "]";
  return m_.symbols[i].isFloat()
             ? "const double " + symbolIdents_[i] + " = aotc_f64(" + slot +
                   ");\n"
             : "const int64_t " + symbolIdents_[i] + " = " + slot + ";\n";
}

Status WrapperEmitter::checkSymbols() {
  // The fixed names of the generated code; symbols get fresh ones.
  for (const char *fixed : {"s",
                            "dims",
                            "ctx",
                            "args",
                            "global",
                            "err",
                            "arena_bytes",
                            "output_shapes",
                            "run",
                            "int64_t",
                            "uint64_t",
                            "int32_t",
                            "uint32_t",
                            "int8_t",
                            "uint8_t",
                            "nullptr",
                            "kModelDesc",
                            "kSymbols",
                            "kInputs",
                            "kOutputs",
                            "kConstants",
                            "kKernelNames",
                            "kKernelFunctions",
                            "kKernelPaths",
                            "kMetadata",
                            "kInputSlots",
                            "kKernelSummaries",
                            "kernel_costs",
                            "aotc_fdiv",
                            "aotc_fmod",
                            "derive_symbols",
                            "tiles",
                            "local"})
    namer_.reserve(fixed);
  std::set<std::string> names;
  for (size_t i = 0; i < m_.symbols.size(); ++i) {
    const Symbol &s = m_.symbols[i];
    const Var *v = s.var.as<Var>();
    if (!v)
      return makeError("symbol '", s.name, "' has no variable");
    if (symbolIndex_.count(v->id) || !names.insert(s.name).second)
      return makeError("symbol '", s.name, "' is declared twice");
    symbolIndex_[v->id] = static_cast<int>(i);
    symbolIdents_.push_back(namer_.fresh("s_" + s.name));
  }
  if (m_.symbols.empty())
    return Status::ok();
  out_ += "// Symbolic sizes: name, min, max, kind (AOTC_SYMBOL_*), the input\n"
          "// and element a value symbol is read from.\n";
  out_ += "static const AotcSymbolDesc kSymbols[" +
          std::to_string(m_.symbols.size()) + "] = {\n";
  for (const Symbol &s : m_.symbols) {
    int input = -1;
    if (!s.valueInput.empty()) {
      for (size_t i = 0; i < m_.inputs.size(); ++i)
        if (m_.inputs[i].name == s.valueInput)
          input = static_cast<int>(i);
      if (input < 0)
        return makeError("symbol '", s.name, "' is read from input '",
                         s.valueInput, "', which the module does not take");
    }
    const char *kind = input >= 0        ? "AOTC_SYMBOL_VALUE, "
                       : s.isDerived() ? "AOTC_SYMBOL_DERIVED, "
                       : s.isData()    ? "AOTC_SYMBOL_DATA, "
                                       : "AOTC_SYMBOL_DIM, ";
    int index = static_cast<int>(&s - m_.symbols.data());
    out_ += "    {" + cStringLiteral(s.name) + ", " + i64(s.range.min) + ", " +
            i64(s.range.max) + ", " + kind + std::to_string(input) + ", " +
            i64(s.valueIndex) + ", " +
            std::to_string(m_.syncOfSymbol(index)) + "},\n";
  }
  out_ += "};\n\n";
  return Status::ok();
}

Status WrapperEmitter::emitTensors(const std::vector<ModuleTensor> &ts,
                                   bool inputs) {
  const char *kind = inputs ? "input" : "output";
  const char *table = inputs ? "kInput" : "kOutput";
  for (size_t i = 0; i < ts.size(); ++i) {
    const ModuleTensor &t = ts[i];
    out_ += std::string("// ") + (inputs ? "Input " : "Output ") +
            std::to_string(i) + ": '" + commentText(t.name) + "' " +
            dtypeName(t.dtype) + "[" + commentText(printExprs(t.dims)) + "]\n";
    if (t.dims.empty())
      continue;
    out_ += "static const AotcDimDesc " + std::string(table) +
            std::to_string(i) + "Dims[" + std::to_string(t.dims.size()) +
            "] = {\n";
    for (size_t d = 0; d < t.dims.size(); ++d) {
      const Expr &dim = t.dims[d];
      if (!dim.defined())
        return makeError(kind, " '", t.name, "' dim ", d, " is undefined");
      std::string text = cStringLiteral(printExpr(dim, PrintDialect::Text));
      int64_t v;
      const Var *var = dim.as<Var>();
      if (dim.isConst(v)) {
        out_ += "    {" + i64(v) + ", -1, " + text + "},\n";
      } else if (var && symbolIndex_.count(var->id)) {
        out_ += "    {0, " + std::to_string(symbolIndex_.at(var->id)) + ", " +
                text + "},\n";
      } else if (inputs) {
        return makeError("input '", t.name, "' dim ", d, " is '",
                         printExpr(dim),
                         "', which is neither a constant nor a symbol");
      } else {
        std::set<int> used;
        AOTC_RETURN_IF_ERROR(
            cxx(dim, "output '" + t.name + "' dim " + std::to_string(d), used)
                .status());
        out_ += "    {-1, -1, " + text + "},\n";
      }
    }
    out_ += "};\n";
  }
  if (ts.empty())
    return Status::ok();
  out_ += "static const AotcTensorDesc " + std::string(table) + "s[" +
          std::to_string(ts.size()) + "] = {\n";
  for (size_t i = 0; i < ts.size(); ++i) {
    const ModuleTensor &t = ts[i];
    std::string dims = t.dims.empty() ? std::string("nullptr")
                                      : table + std::to_string(i) + "Dims";
    int sync = -1;
    for (const Expr &d : t.dims)
      sync = std::max(sync, m_.syncOf(d));
    out_ += "    {" + cStringLiteral(t.name) + ", " + dtypeEnum(t.dtype) +
            ", " + std::to_string(t.dims.size()) + ", " + dims + ", " +
            std::to_string(sync) + "},\n";
  }
  out_ += "};\n\n";
  return Status::ok();
}

Status WrapperEmitter::emitConstants() {
  if (m_.constants.empty())
    return Status::ok();
  out_ += "// Constants: name, ONNX name, dtype, rank, shape, offset in the "
          "blob, bytes, folded.\n";
  std::string table;
  for (size_t i = 0; i < m_.constants.size(); ++i) {
    const ModuleConstant &c = m_.constants[i];
    uint64_t bytes = static_cast<uint64_t>(dtypeSize(c.dtype));
    for (int64_t d : c.shape) {
      if (d < 0)
        return makeError("constant '", c.name, "' has a negative dim");
      bytes *= static_cast<uint64_t>(d);
    }
    if (c.data.size() > 0 && static_cast<uint64_t>(c.data.size()) != bytes)
      return makeError("constant '", c.name, "' holds ", c.data.size(),
                       " bytes, its shape needs ", bytes);
    if (c.computed && (c.offset != 0 || c.data.size() > 0))
      return makeError("computed constant '", c.name,
                       "' has data or a place in the blob");
    if (!c.computed &&
        (c.offset % LoopModule::kConstantAlignment != 0 ||
         c.offset > m_.constantsBytes || bytes > m_.constantsBytes - c.offset))
      return makeError("constant '", c.name, "' at offset ", c.offset, " (",
                       bytes, " bytes) is misaligned or outside the ",
                       m_.constantsBytes, "-byte blob");
    std::string shape = "nullptr";
    if (!c.shape.empty()) {
      shape = "kConstant" + std::to_string(i) + "Shape";
      out_ += "static const int64_t " + shape + "[" +
              std::to_string(c.shape.size()) + "] = {";
      for (size_t d = 0; d < c.shape.size(); ++d)
        out_ += (d ? ", " : "") + i64(c.shape[d]);
      out_ += "};\n";
    }
    table += "    {" + cStringLiteral(c.name) + ", " +
             cStringLiteral(c.onnxName) + ", " + dtypeEnum(c.dtype) + ", " +
             std::to_string(c.shape.size()) + ", " + shape + ", " +
             u64(c.offset) + ", " + u64(bytes) + ", " +
             (c.computed ? "AOTC_CONSTANT_COMPUTED"
              : c.folded ? "1"
                         : "0") +
             "},\n";
  }
  out_ += "static const AotcConstantDesc kConstants[" +
          std::to_string(m_.constants.size()) + "] = {\n" + table + "};\n\n";
  return Status::ok();
}

Status WrapperEmitter::emitFolds() {
  if (m_.folds.empty())
    return Status::ok();
  out_ += "// Packed initializers: source, dtype, rank, shape, target constant, "
          "perm, split dim, split.\n";
  std::string table;
  for (size_t i = 0; i < m_.folds.size(); ++i) {
    const LoopModule::Fold &f = m_.folds[i];
    size_t r = f.sourceShape.size();
    size_t viewRank = r + (f.split > 0 ? 1 : 0);
    if (f.target < 0 || f.target >= static_cast<int>(m_.constants.size()) ||
        f.perm.size() != viewRank || r == 0 ||
        (f.split > 0 && (f.splitDim < 0 || f.splitDim >= static_cast<int>(r))))
      return makeError("fold of '", f.source, "' has a bad target or perm");
    std::string shape = "kFold" + std::to_string(i) + "Shape";
    std::string perm = "kFold" + std::to_string(i) + "Perm";
    out_ += "static const int64_t " + shape + "[" + std::to_string(r) + "] = {";
    for (size_t d = 0; d < r; ++d)
      out_ += (d ? ", " : "") + i64(f.sourceShape[d]);
    out_ += "};\nstatic const int32_t " + perm + "[" +
            std::to_string(viewRank) + "] = {";
    for (size_t d = 0; d < viewRank; ++d)
      out_ += (d ? ", " : "") + std::to_string(f.perm[d]);
    out_ += "};\n";
    table += "    {" + cStringLiteral(f.source) + ", " + dtypeEnum(f.dtype) +
             ", " + std::to_string(r) + ", " + shape + ", " +
             std::to_string(f.target) + ", " + perm + ", " +
             std::to_string(f.split > 0 ? f.splitDim : -1) + ", " +
             i64(f.split > 0 ? f.split : 0) + "},\n";
  }
  out_ += "static const AotcFoldDesc kFolds[" +
          std::to_string(m_.folds.size()) + "] = {\n" + table + "};\n\n";
  return Status::ok();
}

void WrapperEmitter::emitFrozen() {
  if (m_.frozen.empty())
    return;
  out_ += "// ONNX initializers compiled into the model: name, why.\n";
  out_ += "static const char *const kFrozen[" +
          std::to_string(2 * m_.frozen.size()) + "] = {\n";
  for (const auto &[name, why] : m_.frozen)
    out_ += "    " + cStringLiteral(name) + ", " + cStringLiteral(why) + ",\n";
  out_ += "};\n\n";
}

Status WrapperEmitter::emitInputSlots() {
  if (m_.inputSlots.empty())
    return Status::ok();
  out_ += "// The inputs as the ONNX graph lists them: name, kind, input or "
          "constant\n// number, compiled-in value.\n";
  std::string table;
  for (size_t i = 0; i < m_.inputSlots.size(); ++i) {
    const ModuleInputSlot &slot = m_.inputSlots[i];
    std::string kind, data = "nullptr", bytes = "0";
    int index = slot.input;
    if (slot.input >= 0) {
      if (slot.input >= static_cast<int>(m_.inputs.size()))
        return makeError("input slot '", slot.name, "' is input ", slot.input,
                         " of ", m_.inputs.size());
      kind = "AOTC_SLOT_REQUIRED";
    } else {
      if (slot.constant < 0 ||
          slot.constant >= static_cast<int>(m_.constants.size()))
        return makeError("input slot '", slot.name, "' is constant ",
                         slot.constant, " of ", m_.constants.size());
      index = slot.constant;
      kind = slot.foldedIn ? "AOTC_SLOT_FIXED" : "AOTC_SLOT_DEFAULT";
      const ModuleConstant &c = m_.constants[slot.constant];
      if (slot.foldedIn) {
        // Small (shape data): kept in the wrapper, so that even a weightless
        // .so can check a value given for it.
        data = "kInputSlot" + std::to_string(i) + "Data";
        bytes = std::to_string(c.data.size());
        out_ += "static const uint8_t " + data + "[" +
                std::to_string(std::max<int64_t>(c.data.size(), 1)) + "] = {";
        for (int64_t b = 0; b < c.data.size(); ++b)
          out_ += (b ? "," : "") + std::to_string(c.data.data()[b]);
        out_ += "};\n";
      }
    }
    table += "    {" + cStringLiteral(slot.name) + ", " + kind + ", " +
             std::to_string(index) + ", " + data + ", " + bytes + "},\n";
  }
  out_ += "static const AotcInputSlotDesc kInputSlots[" +
          std::to_string(m_.inputSlots.size()) + "] = {\n" + table +
          "};\n\n";
  return Status::ok();
}

std::vector<WrapperEmitter::Launchable> WrapperEmitter::launchables() const {
  std::vector<Launchable> out;
  for (const LoopModule::Launch &l : m_.launches()) {
    if (l.group < 0) {
      const Kernel &k = m_.kernels[l.kernel];
      out.push_back(
          {k.name, k.function.empty() ? k.name : k.function, k.summary, {&k}});
      continue;
    }
    const LoopModule::Persistent &p = m_.persistent[l.group];
    Launchable a{p.name,
                 p.function.empty() ? p.name : p.function,
                 "",
                 {},
                 AOTC_KERNEL_PERSISTENT_PATH};
    for (int k = p.first; k <= p.last; ++k)
      a.kernels.push_back(&m_.kernels[k]);
    a.summary = "persistent: " + std::to_string(a.kernels.size()) +
                " kernels, " + a.kernels.front()->name + " .. " +
                a.kernels.back()->name + " (on CPUs)";
    out.push_back(std::move(a));
  }
  // Each persistent kernel's parts as kernels of their own, which devices
  // other than CPUs launch one by one (persistent_kernels.h).
  for (const LoopModule::Persistent &p : m_.persistent)
    for (int k = p.first; k <= p.last; ++k)
      out.push_back({m_.kernels[k].name,
                     m_.kernels[k].function.empty() ? m_.kernels[k].name
                                                    : m_.kernels[k].function,
                     m_.kernels[k].summary,
                     {&m_.kernels[k]},
                     AOTC_KERNEL_PARTS_PATH});
  if (m_.foldProgram)
    for (const Kernel &k : m_.foldProgram->kernels)
      out.push_back({k.name,
                     k.function.empty() ? k.name : k.function,
                     "folding: " + k.summary,
                     {}});
  return out;
}

void WrapperEmitter::emitKernelNamesAndMetadata() {
  const auto all = launchables();
  if (!all.empty()) {
    out_ += "// The model's kernels (a persistent kernel runs several), then "
            "the\n// folding program's.\n";
    out_ += "static const char *const kKernelNames[" +
            std::to_string(all.size()) + "] = {\n";
    for (const Launchable &k : all)
      out_ += "    " + cStringLiteral(k.name) + ",\n";
    out_ += "};\n\n";
    out_ += "// The OpenCL function each kernel runs: its own, or the first\n"
            "// kernel's whose code is the same (codegen/opencl/"
            "share_kernels.h).\n";
    out_ += "static const char *const kKernelFunctions[" +
            std::to_string(all.size()) + "] = {\n";
    for (const Launchable &k : all)
      out_ += "    " + cStringLiteral(k.function) + ",\n";
    out_ += "};\n\n";
    out_ += "static const char *const kKernelSummaries[" +
            std::to_string(all.size()) + "] = {\n";
    for (const Launchable &k : all)
      out_ += "    " + cStringLiteral(k.summary) + ",\n";
    out_ += "};\n\n";
    if (!m_.persistent.empty()) {
      out_ += "// The run() path that launches each kernel: 0 either, 1 the "
              "persistent\n// kernels' (CPUs), 2 their parts' "
              "(compiler/schedule/persistent_kernels.h).\n";
      out_ += "static const uint8_t kKernelPaths[" +
              std::to_string(all.size()) + "] = {";
      for (size_t i = 0; i < all.size(); ++i)
        out_ +=
            (i % 16 == 0 ? "\n    " : " ") + std::to_string(all[i].path) + ",";
      out_ += "\n};\n\n";
    }
  }
  std::map<std::string, std::string> meta = m_.metadata;
  meta["aotc.version"] = kAotcVersion;
  meta["aotc.num_kernels"] = std::to_string(all.size());
  // How many OpenCL functions they run (share_kernels.h).
  meta["aotc.num_kernel_functions"] = std::to_string(m_.numFunctions());
  numMetadata_ = meta.size();
  out_ += "// Metadata: key, value pairs.\n";
  out_ += "static const char *const kMetadata[" +
          std::to_string(2 * meta.size()) + "] = {\n";
  for (const auto &[key, value] : meta)
    out_ += "    " + cStringLiteral(key) + ", " + cStringLiteral(value) + ",\n";
  out_ += "};\n\n";
}

Status WrapperEmitter::emitDeriveSymbols() {
  std::string body;
  for (size_t i = 0; i < m_.symbols.size(); ++i) {
    const Symbol &s = m_.symbols[i];
    if (!s.isDerived())
      continue;
    // Each definition reads symbols declared before it (derived ones
    // included, already written to s[]).
    std::set<int> used;
    AOTC_ASSIGN_OR_RETURN(
        std::string v, checkedCxx(s.definition, "symbol '" + s.name + "'", used));
    if (!used.empty() && *used.rbegin() >= static_cast<int>(i))
      return makeError("symbol '", s.name,
                       "' is defined by a symbol declared after it: ",
                       printExpr(s.definition));
    std::string bind; // (no "(void)s;": s is written below)
    for (int k : used)
      bind += "    " + bindSymbol(k);
    std::string compute = "    bool ovf = false;\n    const int64_t v = " + v +
                          ";\n    if (ovf)\n      return " +
                          std::to_string(i) + ";\n    s[" +
                          std::to_string(i) + "] = v;\n";
    int sync = m_.syncOfSymbol(static_cast<int>(i));
    if (sync >= 0) // computed from a count the run has not read yet
      compute = "    if (" + unknown(sync) + ") {\n      s[" +
                std::to_string(i) + "] = AOTC_SYMBOL_UNKNOWN;\n    } else {\n" +
                indent(compute) + "    }\n";
    body += "  {  // " + commentText(s.name) + " = " +
            commentText(printExpr(s.definition)) + "\n" + bind + compute +
            "  }\n";
  }
  if (body.empty())
    return Status::ok();
  hasDerived_ = true;
  out_ += "// Computes the derived symbols from those the inputs bind, in\n"
          "// order. Returns -1, or the index of a symbol whose definition\n"
          "// overflows 64 bits or divides by zero for these values.\n";
  out_ += "static int32_t derive_symbols(int64_t *s) {\n" + body +
          "  return -1;\n}\n\n";
  return Status::ok();
}

Status WrapperEmitter::emitArenaBytes() {
  std::set<int> used;
  std::string value = "0";
  if (m_.arenaBytes.defined()) {
    AOTC_ASSIGN_OR_RETURN(value, cxx(m_.arenaBytes, "arena size", used));
  }
  out_ += "static int64_t arena_bytes(const int64_t *s) {\n" +
          bindSymbols(used) + "  return " + value + ";\n}\n\n";
  return Status::ok();
}

Status WrapperEmitter::emitOutputShapes() {
  std::set<int> used;
  std::string body;
  size_t n = 0;
  for (size_t i = 0; i < m_.outputs.size(); ++i) {
    const ModuleTensor &t = m_.outputs[i];
    body += "  // Output " + std::to_string(i) + ": '" + commentText(t.name) +
            "'\n";
    for (size_t d = 0; d < t.dims.size(); ++d) {
      AOTC_ASSIGN_OR_RETURN(
          std::string v,
          cxx(t.dims[d], "output '" + t.name + "' dim " + std::to_string(d),
              used));
      int sync = m_.syncOf(t.dims[d]);
      if (sync >= 0) // -1 until the run has read its count
        v = unknown(sync) + " ? -1 : (int64_t)(" + v + ")";
      body += "  dims[" + std::to_string(n++) + "] = " + v + ";\n";
    }
  }
  if (n == 0)
    body += "  (void)dims;\n";
  out_ += "static void output_shapes(const int64_t *s, int64_t *dims) {\n" +
          bindSymbols(used) + body + "}\n\n";
  return Status::ok();
}

Expected<std::string> WrapperEmitter::launchArg(const KernelBuffer &kb,
                                                const LoopModule &owner,
                                                std::set<int> &used) const {
  const ModuleBuffer *b = owner.findBuffer(kb.name);
  if (!b)
    return makeError("buffer '", kb.name, "' is not declared by the module");
  std::string comment = "  // " + commentText(kb.name) + "\n";
  auto checkTensor = [&](const std::vector<ModuleTensor> &ts,
                         const char *kind) -> Status {
    if (b->index < 0 || b->index >= static_cast<int>(ts.size()))
      return makeError("buffer '", kb.name, "' is ", kind, " ", b->index,
                       " of ", ts.size());
    if (ts[b->index].buffer != kb.name)
      return makeError("buffer '", kb.name, "' is ", kind, " ", b->index,
                       ", which is held by buffer '", ts[b->index].buffer, "'");
    return Status::ok();
  };
  switch (b->role) {
  case BufferRole::Input:
    AOTC_RETURN_IF_ERROR(checkTensor(m_.inputs, "input"));
    return "{AOTC_ARG_INPUT, " + std::to_string(b->index) + ", 0}," + comment;
  case BufferRole::Output:
    AOTC_RETURN_IF_ERROR(checkTensor(m_.outputs, "output"));
    return "{AOTC_ARG_OUTPUT, " + std::to_string(b->index) + ", 0}," + comment;
  case BufferRole::Constant:
    if (b->index < 0 || b->index >= static_cast<int>(m_.constants.size()))
      return makeError("buffer '", kb.name, "' is constant ", b->index, " of ",
                       m_.constants.size());
    return "{AOTC_ARG_CONSTANT, " + std::to_string(b->index) + ", " +
           i64(static_cast<int64_t>(m_.constants[b->index].offset)) + "}," +
           comment;
  case BufferRole::Arena: {
    AOTC_ASSIGN_OR_RETURN(
        std::string off,
        cxx(b->arenaOffset, "arena offset of buffer '" + kb.name + "'", used));
    return "{AOTC_ARG_ARENA, 0, " + off + "}," + comment;
  }
  }
  return makeError("buffer '", kb.name, "' has an unknown role");
}

Expected<std::vector<Expr>>
WrapperEmitter::globalSizeOf(const Kernel &k) const {
  VarBindings lets;
  std::set<int> dims;
  for (Stmt s = k.body; s.defined();) {
    if (const LetStmt *l = s.as<LetStmt>()) {
      lets.emplace_back(l->var, l->value);
      s = l->body;
      continue;
    }
    const For *f = s.as<For>();
    if (!f || f->forKind != ForKind::Parallel)
      break;
    if (f->dim < 0 || f->dim > 2)
      return Status::error("bad parallel dimension " + std::to_string(f->dim));
    dims.insert(f->dim);
    s = f->body;
  }
  if (!dims.empty() && *dims.rbegin() != static_cast<int>(dims.size()) - 1)
    return Status::error("parallel loop dimensions are not contiguous");
  std::vector<Expr> out;
  for (Expr e : LoopModule::globalSize(k)) {
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
      e = substitute(e, {*it});
    out.push_back(e);
  }
  return out;
}

Expected<std::string> WrapperEmitter::emitLaunch(const Kernel &k,
                                                 size_t index,
                                                 const LoopModule &owner,
                                                 std::set<int> &used) const {
  auto fail = [&](const Status &s) {
    return s.withContext("kernel '" + k.name + "'");
  };
  if (!isCIdentifier(k.name) || isReservedIdentifier(k.name))
    return fail(Status::error("the name is not a usable OpenCL identifier"));

  std::vector<std::string> global;
  Expected<std::vector<Expr>> sizes = globalSizeOf(k);
  if (!sizes)
    return fail(sizes.status());
  for (const Expr &e : *sizes) {
    auto v = cxx(e, "global size " + std::to_string(global.size()), used);
    if (!v)
      return fail(v.status());
    global.push_back("(uint64_t)(" + *v + ")");
  }
  if (global.empty())
    global.push_back("1"); // a single work-item

  size_t nargs = 0;
  Expected<std::string> args = kernelArgs(k, owner, "", used, nargs);
  if (!args)
    return fail(args.status());

  // A size variant (Kernel::launchIf) runs where its condition holds.
  std::string when;
  if (k.launchIf.defined()) {
    auto c = cxx(k.launchIf, "launch condition", used);
    if (!c)
      return fail(c.status());
    when = "if (" + *c + ") ";
  }
  std::string out = "  // Kernel " + std::to_string(index) + ": " + k.name +
                    "\n  " + when + "{\n";
  if (nargs > 0)
    out += "    const AotcArg args[" + std::to_string(nargs) + "] = {\n" +
           *args + "    };\n";
  out += "    const uint64_t global[" + std::to_string(global.size()) + "] = {";
  for (size_t i = 0; i < global.size(); ++i)
    out += (i ? ", " : "") + global[i];
  out += "};\n";
  // A kernel built for a fixed work-group (local arrays, barriers) is
  // launched with it; its global size is a whole number of groups.
  if (k.workGroupSize > 0) {
    if (global.size() != 1)
      return fail(Status::error("a fixed work-group needs one dimension"));
    out += "    const uint64_t local[1] = {" +
           std::to_string(k.workGroupSize) + "};\n";
  }
  out += "    if (int32_t err = aotc_rt_launch(ctx, " + std::to_string(index) +
         ", " + (nargs ? "args" : "nullptr") + ", " + std::to_string(nargs) +
         ", " + std::to_string(global.size()) + ", global, " +
         (k.workGroupSize > 0 ? "local" : "nullptr") + "))\n";
  out += "      return err;\n  }\n";
  return out;
}

Expected<std::string> WrapperEmitter::symbolArg(const Expr &sym,
                                                std::set<int> &used) const {
  const Var *v = sym.as<Var>();
  auto it = v ? symbolIndex_.find(v->id) : symbolIndex_.end();
  if (it == symbolIndex_.end())
    return makeError("symbol '", v ? v->name : std::string("?"),
                     "' is not declared by the module");
  if (m_.symbols[it->second].isFloat())
    return makeError("symbol '", v->name,
                     "' is a float value: kernels read it from its input, "
                     "not as an argument");
  used.insert(it->second);
  return "        {AOTC_ARG_I64, " + std::to_string(it->second) + ", " +
         symbolIdents_[it->second] + "},  // " +
         commentText(m_.symbols[it->second].name) + "\n";
}

Expected<std::string>
WrapperEmitter::kernelArgs(const Kernel &k, const LoopModule &owner,
                           const std::string &afterBuffers, std::set<int> &used,
                           size_t &count) const {
  std::string args;
  for (const KernelBuffer &kb : k.buffers) {
    AOTC_ASSIGN_OR_RETURN(std::string a, launchArg(kb, owner, used));
    args += "        " + a;
  }
  args += afterBuffers;
  if (k.reportsErrors)
    args += "        {AOTC_ARG_ERRORS, 0, 0},  // the error record\n";
  for (const Expr &sym : k.symbols) {
    AOTC_ASSIGN_OR_RETURN(std::string a, symbolArg(sym, used));
    args += a;
  }
  count = k.buffers.size() + (afterBuffers.empty() ? 0 : 1) +
          (k.reportsErrors ? 1 : 0) + k.symbols.size();
  return args;
}

Expected<std::string>
WrapperEmitter::emitPersistentLaunch(int g, size_t index,
                                     std::set<int> &used) const {
  const LoopModule::Persistent &p = m_.persistent.at(static_cast<size_t>(g));
  auto fail = [&](const Status &s) {
    return s.withContext("persistent kernel '" + p.name + "'");
  };
  const Kernel sig = m_.persistentSignature(g);
  size_t nargs = 0;
  Expected<std::string> args =
      kernelArgs(sig, m_,
                 "        {AOTC_ARG_COUNTERS, 0, " + i64(p.counterOffset) +
                     "},  // its counters\n",
                 used, nargs);
  if (!args)
    return fail(args.status());
  std::string tiles;
  for (int k = p.first; k <= p.last; ++k) {
    const Kernel &part = m_.kernels[k];
    Expected<std::vector<Expr>> sizes = globalSizeOf(part);
    if (!sizes)
      return fail(sizes.status().withContext("kernel '" + part.name + "'"));
    Expr n = Expr(int64_t{1});
    for (const Expr &e : *sizes)
      n = n * e;
    auto v = cxx(n, "work-items of kernel '" + part.name + "'", used);
    if (!v)
      return fail(v.status());
    std::string t = "(uint64_t)(" + *v + ")";
    if (part.launchIf.defined()) {
      auto c = cxx(part.launchIf, "launch condition", used);
      if (!c)
        return fail(c.status());
      t = "(" + *c + ") ? " + t + " : 0";
    }
    tiles += "        " + t + ",  // " + commentText(part.name) + "\n";
  }
  const int parts = p.parts();
  std::string out = "  // Kernel " + std::to_string(index) + ": " + p.name +
                    ", persistent: kernels " + std::to_string(p.first) + ".." +
                    std::to_string(p.last) + "\n  {\n";
  out += "    const AotcArg args[" + std::to_string(nargs) + "] = {\n" + *args +
         "    };\n";
  out += "    const uint64_t tiles[" + std::to_string(parts) + "] = {\n" +
         tiles + "    };\n";
  out += "    if (int32_t err = aotc_rt_launch_persistent(ctx, " +
         std::to_string(index) + ", args, " + std::to_string(nargs) + ", " +
         std::to_string(parts) + ", tiles))\n";
  out += "      return err;\n  }\n";
  return out;
}

Status WrapperEmitter::emitRun() {
  // Kernels and sync points in order; each symbol is bound where it becomes
  // known: at the top, or after the sync that reads it (the verifier has
  // checked that no kernel reads a symbol before its sync).
  std::set<int> used;
  std::vector<std::string> phases(m_.syncs.size() + 1);
  size_t phase = 0;
  const std::vector<LoopModule::Launch> launches = m_.launches();
  for (size_t j = 0; j < launches.size(); ++j) {
    const LoopModule::Launch &l = launches[j];
    Expected<std::string> launch =
        l.group < 0 ? emitLaunch(m_.kernels[l.kernel], j, m_, used)
                    : emitPersistentLaunch(l.group, j, used);
    if (!launch)
      return launch.status();
    if (l.group < 0) {
      phases[phase] += *launch;
    } else {
      // On a CPU device the persistent kernel; elsewhere its parts one by
      // one, whose work-groups need not see each other's stores before a
      // kernel ends (persistent_kernels.h).
      const LoopModule::Persistent &p = m_.persistent[l.group];
      size_t index = firstPartKernel();
      for (int g = 0; g < l.group; ++g)
        index += static_cast<size_t>(m_.persistent[g].last -
                                     m_.persistent[g].first + 1);
      std::string apart;
      for (int k = p.first; k <= p.last; ++k) {
        AOTC_ASSIGN_OR_RETURN(
            std::string one,
            emitLaunch(m_.kernels[k], index + static_cast<size_t>(k - p.first),
                       m_, used));
        apart += indent(one);
      }
      phases[phase] += "  if (aotc_rt_persistent(ctx)) {\n" + indent(*launch) +
                       "  } else {\n" + apart + "  }\n";
    }
    // The model's kernel the launch ends with: syncs follow kernels.
    const size_t i = static_cast<size_t>(
        l.group < 0 ? l.kernel : m_.persistent[l.group].last);
    if (phase < m_.syncs.size() &&
        m_.syncs[phase].afterKernel == static_cast<int>(i)) {
      const LoopModule::Sync &sync = m_.syncs[phase];
      const ModuleBuffer *b = m_.findBuffer(sync.buffer);
      if (!b)
        return makeError("sync ", phase, " reads undeclared buffer '",
                         sync.buffer, "'");
      AOTC_ASSIGN_OR_RETURN(
          std::string offset,
          cxx(b->arenaOffset, "arena offset of '" + sync.buffer + "'", used));
      const Symbol &sym = m_.symbols[sync.symbol];
      AOTC_ASSIGN_OR_RETURN(
          std::string bound,
          cxx(sym.dataBound, "the bound of '" + sym.name + "'", used));
      phases[phase] += "  // Sync " + std::to_string(phase) + ": " +
                       commentText(sym.name) + " = " +
                       commentText(sync.buffer) + "[0], at most " +
                       commentText(printExpr(sym.dataBound)) + "\n";
      phases[phase] += "  if (int32_t err = aotc_rt_sync(ctx, " +
                       std::to_string(phase) + ", " +
                       std::to_string(sync.symbol) + ", (uint64_t)(" + offset +
                       "), " + bound + "))\n    return err;\n";
      ++phase;
    }
  }
  if (phase != m_.syncs.size())
    return makeError("sync ", phase, " is after kernel ",
                     m_.syncs[phase].afterKernel, ", which does not exist");
  std::vector<std::set<int>> bindAt(m_.syncs.size() + 1);
  for (int i : used)
    bindAt[m_.syncOfSymbol(i) + 1].insert(i);
  std::string body = bindSymbols(bindAt[0]);
  for (size_t p = 0; p < phases.size(); ++p) {
    if (p > 0)
      for (int i : bindAt[p])
        body += "  " + bindSymbol(i);
    body += phases[p];
  }
  out_ += "// Enqueues every kernel in order, reading the counts the model\n"
          "// computes at its sync points; returns the first error.\n";
  out_ += "static int32_t run(AotcRunCtx *ctx, const int64_t *s) {\n" + body;
  if (m_.kernels.empty())
    out_ += "  (void)ctx;\n";
  out_ += "  return 0;\n}\n\n";
  return Status::ok();
}

Status WrapperEmitter::emitRunFold() {
  if (!m_.foldProgram)
    return Status::ok();
  const LoopModule &fold = *m_.foldProgram;
  std::set<int> used;
  std::string body;
  for (size_t i = 0; i < fold.kernels.size(); ++i) {
    AOTC_ASSIGN_OR_RETURN(
        std::string launch,
        emitLaunch(fold.kernels[i], foldKernelBase() + i, fold, used));
    body += launch;
  }
  if (!used.empty())
    return makeError("the folding program reads symbols");
  int64_t arena = 0;
  if (!fold.arenaBytes.isConst(arena) || arena < 0)
    return makeError("the folding program's arena size is not a constant");
  foldArenaBytes_ = static_cast<uint64_t>(arena);
  out_ += "// The folding program: computes the computed constants of the\n"
          "// constant set being prepared from its other constants.\n";
  out_ += "static int32_t run_fold(AotcRunCtx *ctx) {\n";
  if (fold.kernels.empty())
    out_ += "  (void)ctx;\n";
  out_ += body + "  return 0;\n}\n\n";
  return Status::ok();
}

void WrapperEmitter::emitErrors() {
  if (m_.errors.empty())
    return;
  out_ += "// Errors kernels can record (AotcErrorRecord::code - 1).\n";
  out_ += "static const char *const kErrorMessages[" +
          std::to_string(m_.errors.size()) + "] = {\n";
  for (const std::string &e : m_.errors)
    out_ += "    " + cStringLiteral(e) + ",\n";
  out_ += "};\n\n";
}

Expected<std::string> WrapperEmitter::checkedCxx(const Expr &e,
                                                 const std::string &what,
                                                 std::set<int> &used) const {
  if (!e.defined())
    return makeError(what, " is undefined");
  int64_t c;
  if (e.isConst(c))
    return i64(c);
  if (isFloat(e.type()))
    return makeError(what, ": a float where a size is expected: ",
                     printExpr(e));
  if (const Var *v = e.as<Var>()) {
    auto it = symbolIndex_.find(v->id);
    if (it == symbolIndex_.end())
      return makeError(what, " depends on '", v->name,
                       "', which is not a symbol: ", printExpr(e));
    used.insert(it->second);
    return symbolIdents_[it->second];
  }
  if (const Binary *b = e.as<Binary>();
      b && isComparison(b->op) && isFloat(b->a.type())) {
    // A comparison of float values (a scale given at run time > 0).
    AOTC_ASSIGN_OR_RETURN(std::string x, doubleCxx(b->a, what, used));
    AOTC_ASSIGN_OR_RETURN(std::string y, doubleCxx(b->b, what, used));
    return "(" + x + " " + binOpName(b->op) + " " + y + ")";
  }
  if (const Binary *b = e.as<Binary>()) {
    AOTC_ASSIGN_OR_RETURN(std::string x, checkedCxx(b->a, what, used));
    AOTC_ASSIGN_OR_RETURN(std::string y, checkedCxx(b->b, what, used));
    auto call = [&](const char *f) {
      return std::string(f) + "(" + x + ", " + y + ", &ovf)";
    };
    switch (b->op) {
    case BinOp::Add:
      return call("aotc_ck_add");
    case BinOp::Sub:
      return call("aotc_ck_sub");
    case BinOp::Mul:
      return call("aotc_ck_mul");
    case BinOp::FloorDiv:
      return call("aotc_ck_fdiv");
    case BinOp::Mod:
      return call("aotc_ck_mod");
    case BinOp::Min:
      return "aotc_min(" + x + ", " + y + ")";
    case BinOp::Max:
      return "aotc_max(" + x + ", " + y + ")";
    default:
      if (isComparison(b->op) || b->op == BinOp::And || b->op == BinOp::Or)
        return "(" + x + " " + binOpName(b->op) + " " + y + ")";
      return makeError(what, ": unsupported operator ", binOpName(b->op),
                       " in a size: ", printExpr(e));
    }
  }
  if (const Select *sel = e.as<Select>()) {
    AOTC_ASSIGN_OR_RETURN(std::string c0, checkedCxx(sel->cond, what, used));
    AOTC_ASSIGN_OR_RETURN(std::string t,
                          checkedCxx(sel->trueValue, what, used));
    AOTC_ASSIGN_OR_RETURN(std::string f,
                          checkedCxx(sel->falseValue, what, used));
    return "(" + c0 + " ? " + t + " : " + f + ")";
  }
  if (const Not *n = e.as<Not>()) {
    AOTC_ASSIGN_OR_RETURN(std::string a, checkedCxx(n->a, what, used));
    return "!" + a;
  }
  if (const Cast *cast = e.as<Cast>()) {
    if (!isFloat(cast->value.type()))
      return checkedCxx(cast->value, what, used);
    // A size computed in double from float values (truncated toward zero,
    // as OpenCL converts); NaN or a value outside 64 bits overflows.
    AOTC_ASSIGN_OR_RETURN(std::string v, doubleCxx(cast->value, what, used));
    return "aotc_ck_f2i(" + v + ", &ovf)";
  }
  return makeError(what, " is not a size expression: ", printExpr(e));
}

Expected<std::string> WrapperEmitter::doubleCxx(const Expr &e,
                                                const std::string &what,
                                                std::set<int> &used) const {
  if (!e.defined())
    return std::string("0.0");
  int64_t c;
  if (e.isConst(c))
    return "(double)" + i64(c);
  if (const Var *v = e.as<Var>()) {
    auto it = symbolIndex_.find(v->id);
    if (it == symbolIndex_.end())
      return makeError(what, " depends on '", v->name,
                       "', which is not a symbol: ", printExpr(e));
    used.insert(it->second);
    return "(double)" + symbolIdents_[it->second];
  }
  if (const FloatImm *f = e.as<FloatImm>()) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", f->value);
    return "(" + std::string(text) + ")";
  }
  if (const Call *call = e.as<Call>();
      call && call->args.size() == 1 &&
      (call->name == "floor" || call->name == "ceil" || call->name == "rint")) {
    AOTC_ASSIGN_OR_RETURN(std::string a, doubleCxx(call->args[0], what, used));
    return "__builtin_" + call->name + "(" + a + ")";
  }
  if (const Binary *b = e.as<Binary>()) {
    AOTC_ASSIGN_OR_RETURN(std::string x, doubleCxx(b->a, what, used));
    AOTC_ASSIGN_OR_RETURN(std::string y, doubleCxx(b->b, what, used));
    if (b->op == BinOp::Div && isFloat(e.type()))
      return "(" + x + " / " + y + ")";
    switch (b->op) {
    case BinOp::Add:
      return "(" + x + " + " + y + ")";
    case BinOp::Sub:
      return "(" + x + " - " + y + ")";
    case BinOp::Mul:
      return "(" + x + " * " + y + ")";
    case BinOp::FloorDiv:
      return "__builtin_floor(" + x + " / " + y + ")";
    case BinOp::Min:
      return "__builtin_fmin(" + x + ", " + y + ")";
    case BinOp::Max:
      return "__builtin_fmax(" + x + ", " + y + ")";
    default:
      break;
    }
  }
  if (const Select *sel = e.as<Select>()) {
    AOTC_ASSIGN_OR_RETURN(std::string c0, checkedCxx(sel->cond, what, used));
    AOTC_ASSIGN_OR_RETURN(std::string t, doubleCxx(sel->trueValue, what, used));
    AOTC_ASSIGN_OR_RETURN(std::string f,
                          doubleCxx(sel->falseValue, what, used));
    return "(" + c0 + " ? " + t + " : " + f + ")";
  }
  if (const Cast *cast = e.as<Cast>()) {
    if (!isFloat(cast->type) && !isFloat(cast->value.type()))
      return doubleCxx(cast->value, what, used);
    if (cast->type == DType::Float64)
      return doubleCxx(cast->value, what, used);
    if (cast->type == DType::Float32) { // rounded to float, as a kernel would
      AOTC_ASSIGN_OR_RETURN(std::string v, doubleCxx(cast->value, what, used));
      return "(double)(float)" + v;
    }
    if (isFloat(cast->value.type())) { // to an integer: truncated, checked
      AOTC_ASSIGN_OR_RETURN(std::string v, doubleCxx(cast->value, what, used));
      return "(double)aotc_ck_f2i(" + v + ", &ovf)";
    }
  }
  // Anything else (a modulo in a size): evaluated exactly, with the checks
  // check_symbols() has already passed.
  AOTC_ASSIGN_OR_RETURN(std::string v, checkedCxx(e, what, used));
  return "(double)" + v;
}

Status WrapperEmitter::emitKernelCosts() {
  std::set<int> used;
  std::string body;
  bool checked = false;
  const std::vector<Launchable> all = launchables();
  size_t launched = 0; // the model's launches, which come first
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].kernels.empty())
      continue; // the folding program's: no estimates
    launched = i + 1;
    std::string fs, bs; // a persistent kernel: the sum of its parts'
    for (const Kernel *kp : all[i].kernels) {
      const Kernel &k = *kp;
      AOTC_ASSIGN_OR_RETURN(std::string f,
                            doubleCxx(k.flops, "flops of " + k.name, used));
      AOTC_ASSIGN_OR_RETURN(std::string b,
                            doubleCxx(k.bytes, "bytes of " + k.name, used));
      checked |= f.find("&ovf") != std::string::npos ||
                 b.find("&ovf") != std::string::npos;
      if (k.launchIf.defined()) { // a size variant: nothing where not run
        AOTC_ASSIGN_OR_RETURN(std::string c,
                              cxx(k.launchIf, "launch of " + k.name, used));
        f = "(" + c + " ? (double)(" + f + ") : 0.0)";
        b = "(" + c + " ? (double)(" + b + ") : 0.0)";
      }
      int sync = std::max({m_.syncOf(k.flops), m_.syncOf(k.bytes),
                           k.launchIf.defined() ? m_.syncOf(k.launchIf) : -1});
      if (sync >= 0) { // 0 until the run has read its count
        f = "(" + unknown(sync) + " ? 0.0 : (double)(" + f + "))";
        b = "(" + unknown(sync) + " ? 0.0 : (double)(" + b + "))";
      }
      fs += (fs.empty() ? "" : " +\n      ") + f;
      bs += (bs.empty() ? "" : " +\n      ") + b;
    }
    body += "  out[" + std::to_string(2 * i) + "] = " + fs + ";\n";
    body += "  out[" + std::to_string(2 * i + 1) + "] = " + bs + ";\n";
  }
  out_ += "// Estimated floating-point operations and bytes of each kernel\n"
          "// (out[2k], out[2k+1]), for profiles.\n";
  out_ += "static void kernel_costs(const int64_t *s, double *out) {\n" +
          bindSymbols(used) + (checked ? "  bool ovf = false;\n" : "") +
          (launched == 0 ? "  (void)out;\n" : "") + body +
          (checked ? "  (void)ovf;\n" : "") + "}\n\n";
  return Status::ok();
}

Status WrapperEmitter::emitCheckSymbols() {
  // Every size the wrapper and the runtime compute from the symbols, each
  // evaluated with overflow checks; the kernels' index arithmetic stays
  // below these sizes.
  struct Check {
    Expr size;
    std::string message; ///< what the runtime reports when it fails
    std::string what;    ///< names the expression in compile errors
  };
  std::vector<Check> checks;
  // First what the compiled code assumes about the sizes: the sizes below
  // may be meaningless (negative) when an assumption fails.
  for (const Assumption &a : m_.assumptions)
    checks.push_back({a.holds, a.message, "assumption '" + a.message + "'"});
  for (const ModuleTensor &t : m_.outputs)
    checks.push_back({product(t.dims) * Expr(dtypeSize(t.dtype)),
                      "the size of output '" + t.name + "' [" +
                          printExprs(t.dims) + "] overflows 64 bits",
                      "output '" + t.name + "'"});
  for (const ModuleBuffer &b : m_.buffers)
    if (b.role == BufferRole::Arena && b.arenaOffset.defined())
      checks.push_back({b.arenaOffset + b.bytes(),
                        "the size of intermediate buffer '" + b.name + "' [" +
                            printExprs(b.shape) + "] overflows 64 bits",
                        "arena offset of buffer '" + b.name + "'"});
  if (m_.arenaBytes.defined())
    checks.push_back({m_.arenaBytes,
                      "the arena size (" + printExpr(m_.arenaBytes) +
                          " bytes) overflows 64 bits",
                      "arena size"});
  for (const Kernel &k : m_.kernels) {
    Expected<std::vector<Expr>> global = globalSizeOf(k);
    if (!global)
      return global.status().withContext("kernel '" + k.name + "'");
    checks.push_back(
        {product(*global),
         "the work size of kernel '" + k.name + "' overflows 64 bits",
         "kernel '" + k.name + "': global size"});
  }
  std::set<int> used;
  std::string body, table;
  for (const Check &c : checks) {
    const Expr &e = c.size;
    const std::string &message = c.message;
    if (freeVars(e).empty())
      continue; // static: checked when the module was built
    AOTC_ASSIGN_OR_RETURN(std::string v, checkedCxx(e, c.what, used));
    body += "  // " + commentText(message) + "\n";
    std::string check;
    if (e.type() == DType::Bool) { // an assumption: must hold
      check = "  ovf = false;\n  if (!" + v + " || ovf)\n    return " +
              std::to_string(numChecks_) + ";\n";
    } else { // a size: must not overflow
      check = "  ovf = false;\n  (void)" + v + ";\n";
      check += "  if (ovf)\n    return " + std::to_string(numChecks_) + ";\n";
    }
    int sync = m_.syncOf(e);
    if (sync >= 0) // checked once the run has read its count
      check = "  if (!(" + unknown(sync) + ")) {\n" + indent(check) + "  }\n";
    body += check;
    table += "    " + cStringLiteral(message) + ",\n";
    ++numChecks_;
  }
  if (numChecks_ > 0)
    out_ += "static const char *const kCheckMessages[" +
            std::to_string(numChecks_) + "] = {\n" + table + "};\n\n";
  out_ += "// Returns -1 if every check holds for the symbol values, else the\n"
          "// index of the first that fails.\n";
  out_ += "static int32_t check_symbols(const int64_t *s) {\n" +
          bindSymbols(used) +
          (numChecks_ ? "  bool ovf = false;\n" + body : std::string()) +
          "  return -1;\n}\n\n";
  return Status::ok();
}

void WrapperEmitter::emitProgramBinaries() {
  if (opts_.programBinaries.empty())
    return;
  out_ += "// Program binaries built at compile time, by device key.\n";
  out_ += "static const AotcProgramBinaryDesc kProgramBinaries[" +
          std::to_string(opts_.programBinaries.size()) + "] = {\n";
  for (size_t i = 0; i < opts_.programBinaries.size(); ++i)
    out_ += "    {" + cStringLiteral(opts_.programBinaries[i].deviceKey) +
            ", " + programBinarySymbol(i) + ", " +
            u64(opts_.programBinaries[i].size) + "},\n";
  out_ += "};\n\n";
}

void WrapperEmitter::emitDesc() {
  auto count = [](size_t n, const char *table) {
    return std::to_string(n) + ", " + (n ? table : "nullptr");
  };
  out_ += "static const AotcModelDesc kModelDesc = {\n";
  out_ += "    AOTC_MODEL_DESC_VERSION,\n";
  out_ += "    " + cStringLiteral(m_.name) + ",  // model_name\n";
  out_ += "    " + std::string(kKernelsSourceSymbol) + ", " +
          u64(opts_.clSourceSize) + ",  // cl_source, cl_source_size\n";
  out_ += "    " + cStringLiteral(opts_.clBuildOptions) +
          ",  // cl_build_options\n";
  out_ += "    " + count(launchables().size(), "kKernelNames") + ",\n";
  out_ += "    " + count(m_.symbols.size(), "kSymbols") + ",\n";
  out_ += "    " + count(m_.inputs.size(), "kInputs") + ",\n";
  out_ += "    " + count(m_.outputs.size(), "kOutputs") + ",\n";
  out_ += "    " + count(m_.constants.size(), "kConstants") + ",\n";
  out_ += "    " + std::string(hasBlob() ? kConstantsBlobSymbol : "nullptr") +
          ", " + u64(m_.constantsBytes) +
          ",  // constants_blob, constants_blob_size\n";
  out_ += "    " + std::to_string(numMetadata_) + ", kMetadata,\n";
  out_ += "    arena_bytes,\n    output_shapes,\n    run,\n";
  out_ += "    " + count(m_.errors.size(), "kErrorMessages") + ",\n";
  out_ += "    check_symbols,\n";
  out_ += "    " + count(numChecks_, "kCheckMessages") + ",\n";
  out_ += "    " + count(m_.inputSlots.size(), "kInputSlots") + ",\n";
  out_ += "    " +
          std::string(m_.allKernels().empty() ? "nullptr" : "kKernelSummaries") +
          ",\n    kernel_costs,\n";
  out_ += "    " + count(m_.frozen.size(), "kFrozen") + ",\n";
  out_ += "    " + count(m_.folds.size(), "kFolds") + ",\n";
  out_ += "    " +
          u64(opts_.weightless ? m_.constantsStoredBytes : m_.constantsBytes) +
          ",  // constants_blob_stored\n";
  out_ += "    " +
          (opts_.weightsFile.empty() ? std::string("nullptr")
                                     : cStringLiteral(opts_.weightsFile)) +
          ", " + u64(opts_.weightsId) + ",  // weights_file, weights_id\n";
  out_ += std::string("    ") + (hasDerived_ ? "derive_symbols" : "nullptr") +
          ",\n";
  out_ += std::string("    ") + (m_.foldProgram ? "run_fold" : "nullptr") +
          ", " + u64(foldArenaBytes_) + ",  // run_fold, fold_arena_bytes\n";
  out_ += "    " + std::to_string(m_.syncs.size()) + ",  // num_syncs\n";
  out_ += "    " + count(opts_.programBinaries.size(), "kProgramBinaries") +
          ",  // program_binaries\n";
  out_ += "    " +
          std::string(m_.allKernels().empty() ? "nullptr" : "kKernelFunctions") +
          ",  // kernel_functions\n";
  out_ += "    " + u64(static_cast<uint64_t>(m_.counterBytes)) +
          ",  // counter_bytes\n";
  out_ += std::string("    ") +
          (m_.persistent.empty() ? "nullptr" : "kKernelPaths") +
          ",  // kernel_paths\n";
  out_ += "};\n\n";
  out_ +=
      "extern \"C\" __attribute__((visibility(\"hidden\"))) const "
      "AotcModelDesc *\naotc_model_desc(void) {\n  return &kModelDesc;\n}\n";
}

Expected<std::string> WrapperEmitter::emit() {
  out_ = "// C++ wrapper of model '" + commentText(m_.name) +
         "', generated by aotc. Do not edit.\n";
  out_ += "// Kernels: " + std::to_string(m_.kernels.size()) +
          ", symbols: " + std::to_string(m_.symbols.size()) +
          ", inputs: " + std::to_string(m_.inputs.size()) +
          ", outputs: " + std::to_string(m_.outputs.size()) +
          ", constants: " + std::to_string(m_.constants.size()) + ".\n";
  out_ += "#include <aotc/model_desc.h>\n\n";
  out_ += "// Defined by the data object linked beside this wrapper.\n";
  if (hasBlob())
    out_ += "extern \"C\" __attribute__((visibility(\"hidden\"))) const "
            "uint8_t " +
            std::string(kConstantsBlobSymbol) + "[];\n";
  out_ += "extern \"C\" __attribute__((visibility(\"hidden\"))) const char " +
          std::string(kKernelsSourceSymbol) + "[];\n";
  for (size_t i = 0; i < opts_.programBinaries.size(); ++i)
    out_ += "extern \"C\" __attribute__((visibility(\"hidden\"))) const "
            "uint8_t " +
            programBinarySymbol(i) + "[];\n";
  out_ += "\n";
  out_ += "// Integer min/max of the printed size expressions.\n";
  out_ += "__attribute__((unused)) static inline int64_t aotc_min(int64_t a, "
          "int64_t b) {\n  return a < b ? a : b;\n}\n";
  out_ += "__attribute__((unused)) static inline int64_t aotc_max(int64_t a, "
          "int64_t b) {\n  return a > b ? a : b;\n}\n";
  out_ += R"(// Floor division and its remainder (ONNX size arithmetic may divide
// negative values); check_symbols() has ruled out a zero divisor and
// overflow before any size is evaluated.
__attribute__((unused)) static inline int64_t aotc_fdiv(int64_t a, int64_t b) {
  if (b == 0 || (b == -1 && a == (-9223372036854775807LL - 1)))
    return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__attribute__((unused)) static inline int64_t aotc_fmod(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

)";
  out_ +=
      R"(// Size arithmetic with overflow checks: check_symbols() evaluates every
// size the wrapper computes this way before any is used.
__attribute__((unused)) static inline int64_t aotc_ck_add(int64_t a, int64_t b, bool *ovf) {
  int64_t r;
  *ovf |= __builtin_add_overflow(a, b, &r);
  return r;
}
__attribute__((unused)) static inline int64_t aotc_ck_sub(int64_t a, int64_t b, bool *ovf) {
  int64_t r;
  *ovf |= __builtin_sub_overflow(a, b, &r);
  return r;
}
__attribute__((unused)) static inline int64_t aotc_ck_mul(int64_t a, int64_t b, bool *ovf) {
  int64_t r;
  *ovf |= __builtin_mul_overflow(a, b, &r);
  return r;
}
__attribute__((unused)) static inline int64_t aotc_ck_fdiv(int64_t a, int64_t b, bool *ovf) {
  if (b == 0 || (b == -1 && a == (-9223372036854775807LL - 1))) {
    *ovf = true;
    return 0;
  }
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
// A float value symbol's slot holds a double's bits.
__attribute__((unused)) static inline double aotc_f64(int64_t bits) {
  double d;
  __builtin_memcpy(&d, &bits, sizeof d);
  return d;
}
// A size computed in double, truncated toward zero; NaN or a value outside
// 64 bits overflows.
__attribute__((unused)) static inline int64_t aotc_ck_f2i(double v, bool *ovf) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
    *ovf = true;
    return 0;
  }
  return (int64_t)v;
}
__attribute__((unused)) static inline int64_t aotc_ck_mod(int64_t a, int64_t b, bool *ovf) {
  if (b == 0 || b == -1) {
    *ovf |= b == 0;
    return 0;
  }
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

)";
  AOTC_RETURN_IF_ERROR(checkSymbols());
  AOTC_RETURN_IF_ERROR(emitTensors(m_.inputs, true));
  AOTC_RETURN_IF_ERROR(emitTensors(m_.outputs, false));
  AOTC_RETURN_IF_ERROR(emitConstants());
  emitFrozen();
  AOTC_RETURN_IF_ERROR(emitFolds());
  AOTC_RETURN_IF_ERROR(emitInputSlots());
  emitKernelNamesAndMetadata();
  emitErrors();
  AOTC_RETURN_IF_ERROR(emitDeriveSymbols());
  AOTC_RETURN_IF_ERROR(emitCheckSymbols());
  AOTC_RETURN_IF_ERROR(emitKernelCosts());
  AOTC_RETURN_IF_ERROR(emitArenaBytes());
  AOTC_RETURN_IF_ERROR(emitOutputShapes());
  AOTC_RETURN_IF_ERROR(emitRun());
  AOTC_RETURN_IF_ERROR(emitRunFold());
  emitProgramBinaries();
  emitDesc();
  return out_;
}

} // namespace

std::string programBinarySymbol(size_t i) {
  return "aotc_program_binary_" + std::to_string(i);
}

Expected<std::string> emitWrapper(const LoopModule &m,
                                  const WrapperOptions &opts) {
  return WrapperEmitter(m, opts).emit();
}

} // namespace aotc
