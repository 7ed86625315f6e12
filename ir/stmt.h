/// \file
/// Statements of the Loop IR and the Kernel they form.
///
/// A kernel body is a tree of For loops (Parallel ones map to OpenCL work-item
/// ids), Stores into buffers, local scalar declarations and assignments (the
/// accumulators of reductions) and conditionals. Nodes are immutable and
/// shared, like Expr nodes.
#pragma once

#include "ir/expr.h"

#include <memory>
#include <string>
#include <vector>

namespace aotc {

#define AOTC_FOR_EACH_STMT(X)                                                  \
  X(Store)                                                                     \
  X(For)                                                                       \
  X(Block)                                                                     \
  X(LetStmt)                                                                   \
  X(LocalDecl)                                                                 \
  X(LocalAssign)                                                               \
  X(IfThenElse)                                                                \
  X(Barrier)                                                                   \
  X(Prefetch)

enum class StmtKind {
#define AOTC_X(n) n,
  AOTC_FOR_EACH_STMT(AOTC_X)
#undef AOTC_X
};

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
};

class Stmt {
public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode *get() const { return node_.get(); }
  bool sameAs(const Stmt &o) const { return node_ == o.node_; }
  StmtKind kind() const { return node_->kind; }
  template <typename T> const T *as() const {
    if (!node_ || node_->kind != T::kKind)
      return nullptr;
    return static_cast<const T *>(node_.get());
  }

private:
  std::shared_ptr<const StmtNode> node_;
};

/// buffer[indices...] = value: one component per dimension of the buffer's
/// shape in the kernel, like Load. A vector value (lanes > 1, float) writes
/// that many consecutive elements along the last dimension, like
/// VectorLoad reads them.
struct Store : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Store(std::string b, std::vector<Expr> i, Expr v)
      : StmtNode(kKind), buffer(std::move(b)), indices(std::move(i)),
        value(std::move(v)) {}
  std::string buffer;
  std::vector<Expr> indices;
  Expr value;
  static Stmt make(const std::string &buffer, std::vector<Expr> indices,
                   Expr value);
};

/// Serial: an ordinary loop. Parallel: the loop runs on work-items of the
/// ND-range dimension `dim`; min must be 0. Several nested Parallel loops may
/// share one dimension: they are flattened onto it, the outermost loop most
/// significant, so a kernel can iterate over a tensor of any rank.
enum class ForKind { Serial, Parallel };

struct For : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  For(Expr v, Expr mn, Expr ext, ForKind k, int d, Stmt b)
      : StmtNode(kKind), var(std::move(v)), min(std::move(mn)),
        extent(std::move(ext)), forKind(k), dim(d), body(std::move(b)) {}
  Expr var; ///< the loop variable (a Var of type i64) this loop defines
  Expr min, extent;
  ForKind forKind;
  int dim;
  Stmt body;
  static Stmt make(Expr var, Expr min, Expr extent, ForKind kind, int dim,
                   Stmt body);
};

struct Block : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Block;
  explicit Block(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  std::vector<Stmt> stmts;
  static Stmt make(std::vector<Stmt> stmts);
};

/// An immutable scalar binding of \p var, visible in body.
struct LetStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;
  LetStmt(Expr v, Expr val, Stmt b)
      : StmtNode(kKind), var(std::move(v)), value(std::move(val)),
        body(std::move(b)) {}
  Expr var;
  Expr value;
  Stmt body;
  static Stmt make(Expr var, Expr value, Stmt body);
};

/// A mutable scalar local (an accumulator) \p var, initialized, visible in
/// body. Its type is the Var's type.
struct LocalDecl : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LocalDecl;
  LocalDecl(Expr v, Expr i, Stmt b)
      : StmtNode(kKind), var(std::move(v)), init(std::move(i)),
        body(std::move(b)) {}
  Expr var;
  Expr init;
  Stmt body;
  DType type() const { return var.type(); }
  static Stmt make(Expr var, Expr init, Stmt body);
};

struct LocalAssign : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LocalAssign;
  LocalAssign(Expr v, Expr val)
      : StmtNode(kKind), var(std::move(v)), value(std::move(val)) {}
  Expr var;
  Expr value;
  static Stmt make(Expr var, Expr value);
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  IfThenElse(Expr c, Stmt t, Stmt e, bool r)
      : StmtNode(kKind), cond(std::move(c)), thenCase(std::move(t)),
        elseCase(std::move(e)), rareElse(r) {}
  Expr cond;
  Stmt thenCase, elseCase; // elseCase may be undefined
  /// The else arm runs only for exceptional values (a finite-or-sum's
  /// direct sum, expand_fallbacks.cpp): work estimates count the then arm
  /// (kernel_cost.cpp), as a run over ordinary data executes.
  bool rareElse = false;
  static Stmt make(Expr cond, Stmt thenCase, Stmt elseCase = Stmt(),
                   bool rareElse = false);
};

/// barrier(CLK_LOCAL_MEM_FENCE): every work-item of the work-group waits
/// here until all have arrived, and the local arrays' stores before it are
/// visible to the loads after it. Only in a kernel with a fixed work-group
/// (Kernel::workGroupSize), and only where every work-item of the group
/// reaches it (the verifier checks: not under a condition, in loops whose
/// extents do not depend on the work-item).
struct Barrier : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Barrier;
  Barrier() : StmtNode(kKind) {}
  static Stmt make();
};

/// A hint that buffer[indices] will be read soon: its cache line is fetched
/// ahead (a CPU's prefetch instruction; nothing where the device has none).
/// It reads nothing and cannot fault, so its index need not lie inside the
/// buffer (the verifier checks only that the buffer exists and the rank):
/// register_tile.cpp prefetches the next tile's rows, past the end at the
/// last tile.
struct Prefetch : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Prefetch;
  Prefetch(std::string b, std::vector<Expr> i)
      : StmtNode(kKind), buffer(std::move(b)), indices(std::move(i)) {}
  std::string buffer;
  std::vector<Expr> indices;
  static Stmt make(const std::string &buffer, std::vector<Expr> indices);
};

/// How a kernel uses one of its buffer parameters.
enum class BufferRole { Input, Output, Constant, Arena };

/// A buffer parameter of a kernel: the module buffer it names (Loads and
/// Stores use that name) and the shape the kernel indexes it with, which
/// must not hold more elements than the module buffer.
struct KernelBuffer {
  std::string name;
  DType dtype;
  bool written;
  std::vector<Expr> shape;
};

/// One OpenCL kernel: buffers, the symbols it reads, and its body. The body's
/// Parallel loops are the ND-range; their extents are the global sizes.
struct Kernel {
  std::string name;
  std::vector<KernelBuffer> buffers;
  /// The symbol Vars (of LoopModule::symbols) the kernel reads, passed as
  /// long arguments in this order.
  std::vector<Expr> symbols;
  Stmt body;
  /// Index math in 32 or 64 bits as `--kernel-configs` asks (`index_bits`):
  /// 32 is an error where the printer cannot prove that it fits
  /// (codegen/opencl/index_width.h); 0: the compile's choice.
  int indexBits = 0;
  /// The body holds IndexChecks: the kernel takes the instance's error
  /// buffer as an extra argument after its buffers.
  bool reportsErrors = false;
  /// What the kernel computes, for people (profiles, `aotc inspect`): its
  /// ONNX ops, producers first, and its output, "Conv+Relu -> f32[n,64,7,7]".
  std::string summary = {};
  /// The template and configuration it was built with, as JSON
  /// (compiler/schedule/device_profile.h: KernelConfig); recorded in the
  /// .so and shown by `aotc inspect`.
  std::string config = {};
  /// Work estimates over the module's symbols (compiler/schedule/
  /// kernel_cost.cpp): floating-point operations one launch performs, and
  /// bytes of the buffers it reads and writes, each counted once.
  Expr flops = {}, bytes = {};
  /// Arrays in the work-group's local memory (OpenCL `__local`), shared by
  /// the work-items of a group: static shapes, read and written by Load and
  /// Store by name like buffers, not parameters. Only with a fixed
  /// work-group.
  std::vector<KernelBuffer> locals = {};
  /// Arrays in each work-item's private memory (OpenCL's default address
  /// space): static shapes, read and written by Load and Store by name like
  /// buffers, not parameters; any work-group. A CPU tile keeps the
  /// accumulators of the rows it walks itself here between reduction blocks
  /// (RegisterTile::rowLoop).
  std::vector<KernelBuffer> privates = {};
  /// The work-group size the kernel must be launched with (0: the runtime
  /// picks). Then the innermost Parallel loop is the work-item's place in
  /// its group (dimension 0, extent exactly this constant), so that the
  /// global size is a whole number of groups and the loops outside it
  /// number the groups.
  int64_t workGroupSize = 0;
  /// A condition on the module's symbols (Bool): the run launches the
  /// kernel only where it holds (one of a kernel's size variants,
  /// ScheduleOptions::sizeVariantAt, which write the same buffers);
  /// undefined: always.
  Expr launchIf = {};
  /// The OpenCL function the kernel's launches run, where it is another
  /// kernel's of the same program whose code is identical with the buffers
  /// and symbols passed in the same places (codegen/opencl/share_kernels.h):
  /// that kernel's name, which comes earlier in launch order. Empty: the
  /// kernel's own function, named after it.
  std::string function = {};
  /// The kernels this one runs as one (compiler/schedule/chain_kernels.h),
  /// in order: each one's name and configuration, which `--emit=
  /// kernel-configs` and `aotc inspect` list (and `--kernel-configs` sets by
  /// those names). Empty: the kernel is itself.
  std::vector<std::pair<std::string, std::string>> chained = {};

  const KernelBuffer *findBuffer(const std::string &name) const;
  const KernelBuffer *findLocal(const std::string &name) const;
  const KernelBuffer *findPrivate(const std::string &name) const;
};

std::string printStmt(const Stmt &s, int indent = 0);
std::string printKernel(const Kernel &k);

} // namespace aotc
