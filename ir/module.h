/// \file
/// LoopModule: the scheduled program that code generation consumes.
///
/// The scheduler turns a lowered graph into kernels (Loop IR) over named
/// buffers; the memory planner gives every intermediate buffer a byte offset
/// in one arena per model instance. Code generation prints the kernels as
/// OpenCL C and the rest (tables, launch sequence, arena size, output shapes)
/// as the C++ wrapper. Everything symbolic is an Expr over the module's
/// symbols, so the wrapper evaluates it at run time from the input shapes.
#pragma once

#include "ir/graph.h"
#include "ir/stmt.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace aotc {

/// \p e with every data symbol (Symbol::isData) replaced by its bound and
/// every derived symbol computed from one by its definition, so that it no
/// longer depends on a count read mid-run; an error naming \p what if \p e
/// may shrink as a count grows (the bound would then not bound it).
Expected<Expr> boundDataSymbols(const Expr &e, const std::vector<Symbol> &symbols,
                                const RangeEnv &env, const std::string &what);

/// A buffer that kernels read or write, referenced by name from
/// KernelBuffer::name, Load::buffer and Store::buffer.
struct ModuleBuffer {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<Expr> shape;
  BufferRole role = BufferRole::Arena;
  /// Input/Output: the model input/output number. Constant: index into
  /// LoopModule::constants.
  int index = -1;
  /// Arena: byte offset of this buffer in the instance arena (a multiple of
  /// kArenaAlignment for every symbol value).
  Expr arenaOffset;
  /// Arena: the bytes planned for it when its size depends on a data
  /// symbol (LoopModule::Sync): bytes() at the symbols' bounds, which holds
  /// it for every count the run can read; undefined: bytes().
  Expr capacity = Expr();

  Expr bytes() const { return product(shape) * Expr(dtypeSize(dtype)); }
  Expr plannedBytes() const { return capacity.defined() ? capacity : bytes(); }
};

/// A weight in the constants blob.
struct ModuleConstant {
  std::string name;     ///< buffer name in kernels
  std::string onnxName; ///< initializer name users update by; may be empty
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  TensorData data;
  uint64_t offset = 0; ///< byte offset in the blob, kConstantAlignment-aligned
  bool folded = false;
  /// Written by the folding program at load (LoopModule::foldProgram): no
  /// data and no room in the blob; the runtime gives it its own buffer.
  bool computed = false;
  std::string valueName = {}; ///< the Graph IR value it was made from
};

/// A model input or output.
struct ModuleTensor {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<Expr> dims; ///< inputs: constants or single symbols
  std::string buffer;     ///< the ModuleBuffer holding it
};

/// One input as the ONNX graph lists it: a model input, or a constant whose
/// data is a default the caller may override per run.
struct ModuleInputSlot {
  std::string name;
  int input = -1;    ///< index into LoopModule::inputs, or -1 for a default
  int constant = -1; ///< a default: index into LoopModule::constants
  /// A default that kernels read from the constant (overridable); false when
  /// it is compiled into the code as shape data or read by nothing.
  bool readByKernels = false;
  bool foldedIn = false; ///< compiled in as shape data: cannot change
};

struct LoopModule {
  static constexpr int64_t kArenaAlignment = 256;
  static constexpr int64_t kConstantAlignment = 64;

  std::string name;
  std::vector<Symbol> symbols;
  std::vector<ModuleTensor> inputs;
  /// The ONNX input order, defaults included; empty when the graph has no
  /// initializer listed as an input.
  std::vector<ModuleInputSlot> inputSlots;
  std::vector<ModuleTensor> outputs;
  std::vector<ModuleConstant> constants;
  uint64_t constantsBytes = 0; ///< size of the blob
  /// The blob's prefix before the first updatable constant (those are laid
  /// out last): what a weightless .so stores.
  uint64_t constantsStoredBytes = 0;
  /// ONNX initializers whose values were used at compile time, with why:
  /// the runtime refuses updates of them.
  std::vector<std::pair<std::string, std::string>> frozen;
  /// Folded constants that permute an initializer (packed weights): what
  /// the runtime recomputes when the initializer is updated.
  struct Fold {
    std::string source; ///< the initializer's ONNX name
    DType dtype = DType::Float32;
    std::vector<int64_t> sourceShape;
    int target = -1; ///< index into constants
    std::vector<int> perm; ///< target dim k is view dim perm[k]
    /// With split > 0 the view splits source dim splitDim into
    /// [size / split, split] (weight panels); else the view is the source.
    int splitDim = -1;
    int64_t split = 0;
  };
  std::vector<Fold> folds;
  /// The folding program: kernels that compute the `computed` constants
  /// from the others (BatchNormalization folded into a Conv's weights, a
  /// packed copy of such a weight, any subgraph of weights alone). The
  /// runtime runs it when the model is loaded and whenever an update
  /// changes a set of constants. Its buffers of role Constant index this
  /// module's constants (it reads and writes the same ones); its Arena
  /// buffers live in an arena of their own (its arenaBytes). It has no
  /// inputs, outputs or symbols. Null when the model folds nothing.
  std::shared_ptr<LoopModule> foldProgram;
  std::vector<ModuleBuffer> buffers;
  /// Kernels in launch order. Each kernel's body is a nest whose outermost
  /// Parallel loops (dims 0, 1, 2) form its ND-range.
  std::vector<Kernel> kernels;
  Expr arenaBytes;
  std::map<std::string, std::string> metadata;
  /// Messages of the run-time errors kernels can record (IndexCheck::code
  /// indexes this). "{value}" and "{extent}" stand for the recorded numbers.
  std::vector<std::string> errors;
  /// Conditions on the symbols the code relies on; check_symbols() in the
  /// wrapper tests them before a run.
  std::vector<Assumption> assumptions;
  /// Sync points, in kernel order: after kernel `afterKernel` the run waits
  /// for the device, reads the int64 count kernel `afterKernel` wrote to
  /// arena buffer `buffer` and binds it to data symbol `symbol` (an index
  /// into symbols); kernels after it may read the symbol, none before.
  struct Sync {
    int afterKernel = -1;
    int symbol = -1;
    std::string buffer;
  };
  std::vector<Sync> syncs;
  /// Consecutive kernels the run launches as one persistent kernel
  /// (compiler/schedule/persistent_kernels.h): kernels first..last, each a
  /// part that the launch's work-groups run in turn, claiming its
  /// work-items from a counter and waiting at its end until every one of
  /// them is done. `counterOffset` is where its counters start in the
  /// instance's counter buffer (counterBytes in all). Ordered, disjoint.
  struct Persistent {
    std::string name;
    int first = -1, last = -1;
    int64_t counterOffset = 0;
    /// The OpenCL function its launches run, where an earlier persistent
    /// kernel's code is the same with its parameters in the same places
    /// (codegen/opencl/share_kernels.h): that one's name. Empty: its own.
    std::string function = {};
    /// The kernels it runs.
    int parts() const { return last - first + 1; }
    /// Bytes of counters a group of \p parts kernels uses: per part a
    /// done counter and a claim counter for each of kClaimRanges ranges of
    /// its work-items; one exit counter; each on its own line.
    static int64_t counterBytes(int parts) {
      return ((1 + kClaimRanges) * int64_t{parts} + 1) * kCounterStride;
    }
    static constexpr int64_t kCounterStride = 64;
    /// The ranges a part's work-items are split into, at most: work-group
    /// w claims from range w mod min(groups, kClaimRanges) first, then
    /// from the others (persistent_kernels.h).
    static constexpr int64_t kClaimRanges = 8;
  };
  std::vector<Persistent> persistent;
  int64_t counterBytes = 0;
  /// One launch of a run: kernel `kernel` alone (group -1), or persistent
  /// group `group` (kernel: its first).
  struct Launch {
    int kernel = -1;
    int group = -1;
  };
  /// The run's launches in order: each kernel outside a persistent group,
  /// each group once.
  std::vector<Launch> launches() const;
  /// The persistent group kernel \p k belongs to, or -1.
  int groupOf(int k) const;
  /// What the launch of persistent group \p g takes as parameters: the
  /// buffers of its parts (each once, in first use order, written where
  /// any part writes it), the error record where any part reports errors,
  /// and their symbols (each once). The name is the group's; no body.
  Kernel persistentSignature(int g) const;

  const ModuleBuffer *findBuffer(const std::string &name) const;
  /// The sync after which symbol \p i is known (a data symbol, or a derived
  /// one computed from one), or -1 if the inputs bind it.
  int syncOfSymbol(int i) const;
  /// The sync after which \p e (over the symbols) is known, or -1.
  int syncOf(const Expr &e) const;
  /// Every kernel of the .so in its order (the model's, then its folding
  /// program's), each with the module whose buffers it names.
  std::vector<std::pair<const Kernel *, const LoopModule *>>
  allKernels() const;
  /// How many OpenCL kernel functions the .so has: each persistent group's,
  /// and each other kernel's, its parts' too (launched one by one on devices
  /// other than CPUs), without a Kernel::function of another kernel's.
  size_t numFunctions() const;
  /// Global size of each ND-range dimension of a kernel, from its Parallel
  /// loops (dimension order).
  static std::vector<Expr> globalSize(const Kernel &k);
  /// Stable text form for --emit=loop and FileCheck tests.
  std::string print() const;
};

} // namespace aotc
