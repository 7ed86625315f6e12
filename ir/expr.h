/// \file
/// Expressions of the Loop IR, which are also the symbolic dimensions of the
/// Graph IR: immutable, reference-counted nodes behind the value handle Expr.
///
/// Integer expressions over named symbols (`batch`) and loop variables use
/// + - * floordiv mod min max; the simplifier (simplify.h) rewrites them. The
/// same expressions print as C++ (wrapper) and OpenCL C (kernels) through
/// printExpr, so both sides always agree on a size or an index.
#pragma once

#include "ir/dtype.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace aotc {

#define AOTC_FOR_EACH_EXPR(X)                                                  \
  X(IntImm)                                                                    \
  X(FloatImm)                                                                  \
  X(Var)                                                                       \
  X(Binary)                                                                    \
  X(Not)                                                                       \
  X(Select)                                                                    \
  X(Cast)                                                                      \
  X(Call)                                                                      \
  X(Load)                                                                      \
  X(Access)                                                                    \
  X(IndexCheck)                                                                \
  X(Broadcast)                                                                 \
  X(VectorLoad)                                                                \
  X(Lane)                                                                      \
  X(FiniteOrSum)

enum class ExprKind {
#define AOTC_X(n) n,
  AOTC_FOR_EACH_EXPR(AOTC_X)
#undef AOTC_X
};

/// Binary operators. Div is C division for floats; FloorDiv/Mod are floor
/// division and its remainder on integers (index math only divides
/// non-negative values, so they print as / and %).
enum class BinOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Min,
  Max,
  Pow,
  EQ,
  NE,
  LT,
  LE,
  GT,
  GE,
  And,
  Or,
};

const char *binOpName(BinOp op);
bool isComparison(BinOp op);

struct ExprNode;
class ExprVisitor;

/// A value handle to an immutable expression node. Copies share the node.
class Expr {
public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  /// Integer literal of type i64.
  Expr(int64_t v);
  Expr(int v) : Expr(static_cast<int64_t>(v)) {}

  bool defined() const { return node_ != nullptr; }
  const ExprNode *get() const { return node_.get(); }
  const ExprNode *operator->() const { return node_.get(); }
  bool sameAs(const Expr &o) const { return node_ == o.node_; }
  ExprKind kind() const;
  DType type() const;
  /// 1 for a scalar; the number of elements of a vector value (Broadcast,
  /// VectorLoad, a vector local, and arithmetic and calls on them).
  int lanes() const;
  template <typename T> const T *as() const;
  /// True for an IntImm; sets \p v.
  bool isConst(int64_t &v) const;
  bool isConstValue(int64_t v) const;

private:
  std::shared_ptr<const ExprNode> node_;
};

struct ExprNode {
  ExprNode(ExprKind k, DType t, int l = 1) : kind(k), type(t), lanes(l) {}
  virtual ~ExprNode() { delete key.load(std::memory_order_relaxed); }
  ExprNode(const ExprNode &) = delete;
  ExprNode &operator=(const ExprNode &) = delete;
  const ExprKind kind;
  const DType type;
  /// Elements of the value: 1 for a scalar. Vectors exist only inside
  /// kernels (register_tile.cpp's vectorized tiles): float arithmetic, calls
  /// and selects by a scalar condition on them; no comparison, cast or
  /// index is a vector.
  const int lanes;
  /// exprKey's text, computed once per node (the simplifier keys its linear
  /// terms by it). Set at most once, by whichever thread finishes first.
  mutable std::atomic<const std::string *> key{nullptr};
};

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  IntImm(DType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  int64_t value;
  static Expr make(int64_t v, DType t = DType::Int64);
};

struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  FloatImm(DType t, double v) : ExprNode(kKind, t), value(v) {}
  double value;
  static Expr make(double v, DType t = DType::Float32);
};

/// A scalar variable: a symbolic size (`batch`), a loop variable or a local.
/// A variable is an object: two Vars are the same variable only if they are
/// the same node (equal `id`), whatever their names. `name` is a hint for
/// printers, which ask a Namer for the identifier they emit, so no string
/// from a model ever becomes an identifier and no two variables can clash.
struct Var : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  Var(DType t, std::string n, uint64_t i, int l = 1)
      : ExprNode(kKind, t, l), name(std::move(n)), id(i) {}
  std::string name;
  uint64_t id; ///< unique in the process; creation order within one thread
  /// A fresh variable, distinct from every other (a vector of \p lanes
  /// elements when lanes > 1: a local accumulator of a vectorized tile).
  static Expr make(const std::string &hint, DType t = DType::Int64,
                   int lanes = 1);
};

struct Binary : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;
  Binary(DType t, BinOp o, Expr x, Expr y)
      : ExprNode(kKind, t, x.lanes()), op(o), a(std::move(x)),
        b(std::move(y)) {}
  BinOp op;
  Expr a, b;
  /// Operands must have the same type; comparisons and logic yield Bool.
  static Expr make(BinOp op, Expr a, Expr b);
};

struct Not : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  explicit Not(Expr x) : ExprNode(kKind, DType::Bool), a(std::move(x)) {}
  Expr a;
  static Expr make(Expr a);
};

struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Select(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t.type(), t.lanes()), cond(std::move(c)),
        trueValue(std::move(t)), falseValue(std::move(f)) {}
  Expr cond, trueValue, falseValue;
  static Expr make(Expr cond, Expr t, Expr f);
};

struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Cast(DType t, Expr v)
      : ExprNode(kKind, t, v.lanes()), value(std::move(v)) {}
  Expr value;
  static Expr make(DType t, Expr v);
};

/// A pure math function: exp, log, sqrt, erf, tanh, fabs, floor, ceil, ...
struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Call(DType t, std::string n, std::vector<Expr> a, int l = 1)
      : ExprNode(kKind, t, l), name(std::move(n)), args(std::move(a)) {}
  std::string name;
  std::vector<Expr> args;
  static Expr make(DType t, const std::string &name, std::vector<Expr> args);
};

/// A read of one element of a kernel buffer at a multi-dimensional index, one
/// component per dimension of the buffer's shape in the kernel
/// (KernelBuffer::shape). Printers linearize it (row-major); the verifier
/// proves each component inside its dimension.
struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Load(DType t, std::string b, std::vector<Expr> i)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(i)) {}
  std::string buffer;
  std::vector<Expr> indices;
  static Expr make(DType t, const std::string &buffer,
                   std::vector<Expr> indices);
};

/// A read of tensor \p tensor (an id of the lowering) at a multi-dimensional
/// index. Exists only between lowering and scheduling: the scheduler either
/// inlines the tensor's definition or turns the access into a Load.
struct Access : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Access;
  Access(DType t, int id, std::vector<Expr> i)
      : ExprNode(kKind, t), tensor(id), indices(std::move(i)) {}
  int tensor;
  std::vector<Expr> indices;
  static Expr make(DType t, int tensor, std::vector<Expr> indices);
};

/// An index that comes from data (Gather's indices, ...), checked where it
/// is used: with `wrapNegative`, a negative value first has `extent` added
/// (ONNX's negative indices). If the result lies in [0, extent) it is the
/// value of the expression; otherwise the kernel records error `code` (an
/// index into LoopModule::errors) with the offending value and extent in the
/// instance's error buffer, which the runtime reports after the run, and
/// the expression is 0. So a load indexed by it stays inside the buffer
/// whenever extent >= 1. Never folded or dropped by the simplifier.
struct IndexCheck : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IndexCheck;
  IndexCheck(Expr v, Expr n, int c, bool w)
      : ExprNode(kKind, DType::Int64), value(std::move(v)),
        extent(std::move(n)), code(c), wrapNegative(w) {}
  Expr value, extent;
  int code;
  bool wrapNegative;
  static Expr make(Expr value, Expr extent, int code, bool wrapNegative);
};

/// A vector of \p lanes copies of the scalar \p value.
struct Broadcast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Broadcast(Expr v, int l) : ExprNode(kKind, v.type(), l), value(std::move(v)) {}
  Expr value;
  static Expr make(Expr value, int lanes);
};

/// A read of \p lanes consecutive elements of a buffer: the element at
/// \p indices (one component per dimension, like Load) and the ones after
/// it along the last dimension, whose index plus lanes - 1 the verifier
/// proves inside that dimension.
struct VectorLoad : ExprNode {
  static constexpr ExprKind kKind = ExprKind::VectorLoad;
  VectorLoad(DType t, std::string b, std::vector<Expr> i, int l, int s)
      : ExprNode(kKind, t, l), buffer(std::move(b)), indices(std::move(i)),
        stride(s) {}
  std::string buffer;
  std::vector<Expr> indices;
  /// A load of float or integer lanes, or of Bool lanes: a mask that
  /// selects between float32 vectors (printed as int lanes, -1 where true,
  /// as a vector comparison gives).
  /// Lane k reads the last index plus stride * k: 1 (contiguous) or 2 (the
  /// even elements of a row: a stride-2 convolution's window, printed as
  /// two contiguous loads and their even/odd halves; float32/float64 only).
  int stride = 1;
  /// Set by the OpenCL printer alone (makeLocalAligned), on a contiguous
  /// float32/float64 load from a local array (declared 64-byte aligned)
  /// whose first lane's element index is a multiple of the lanes: printed
  /// as a dereference of a __local vector pointer. vloadN promises one
  /// element's alignment, and NVIDIA's compiler then reads local memory one
  /// element at a time (16 ld.shared.f32 per step of a 128 x 64 GEMM tile
  /// instead of 4 ld.shared.v4; on the H200 31.6 against 40.6 TFLOP/s at
  /// 4096^3, bench/gpu/probe).
  bool localAligned = false;
  /// Whether a load of \p t may have \p stride (make refuses the others).
  static bool allowsStride(DType t, int stride) {
    return stride == 1 ||
           (stride == 2 && (t == DType::Float32 || t == DType::Float64));
  }
  static Expr make(DType t, const std::string &buffer,
                   std::vector<Expr> indices, int lanes, int stride = 1);
  /// The same load marked localAligned (float32/float64, stride 1).
  static Expr makeLocalAligned(DType t, const std::string &buffer,
                               std::vector<Expr> indices, int lanes);
};

/// Element \p lane of the vector \p vector: a scalar.
struct Lane : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Lane;
  Lane(Expr v, int i) : ExprNode(kKind, v.type()), vector(std::move(v)), lane(i) {}
  Expr vector;
  int lane;
  static Expr make(Expr vector, int lane);
};

/// \p value where every lane of it is finite; else, in its place, the sum
/// over \p vars (each over [0, extent), the first outermost) of \p body,
/// computed only then: a Winograd convolution's output, which an infinity
/// or a huge input turns into NaN where the direct convolution it replaces
/// gives an infinity, falls back to that direct sum (compiler/passes/
/// winograd.h). \p body is a scalar; in a vector value of N lanes, lane k
/// of the sum is \p body with the Var \p lane = k (\p lane undefined for a
/// scalar value, vectorize.cpp sets it). \p vars are bound here, fresh for
/// this node. Exists from lowering to the end of kernel building, where
/// expand_fallbacks.cpp turns it into a branch and loops; the verifier and
/// printers refuse it.
struct FiniteOrSum : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FiniteOrSum;
  FiniteOrSum(Expr v, Expr b, std::vector<Expr> vs, std::vector<Expr> es,
              Expr l)
      : ExprNode(kKind, v.type(), v.lanes()), value(std::move(v)),
        body(std::move(b)), vars(std::move(vs)), extents(std::move(es)),
        lane(std::move(l)) {}
  Expr value, body;
  std::vector<Expr> vars, extents;
  Expr lane;
  static Expr make(Expr value, Expr body, std::vector<Expr> vars,
                   std::vector<Expr> extents, Expr lane = Expr());
};

/// The vector widths OpenCL C has (2, 3, 4, 8, 16); aotc uses 2, 4, 8, 16.
inline bool isVectorWidth(int lanes) {
  return lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16;
}

template <typename T> const T *Expr::as() const {
  if (!node_ || node_->kind != T::kKind)
    return nullptr;
  return static_cast<const T *>(node_.get());
}

// Builders. Integer builders fold constants on the spot; everything else is
// left to simplify().
Expr operator+(const Expr &a, const Expr &b);
Expr operator-(const Expr &a, const Expr &b);
Expr operator*(const Expr &a, const Expr &b);
Expr operator-(const Expr &a);
Expr floorDiv(const Expr &a, const Expr &b);
Expr mod(const Expr &a, const Expr &b);
Expr minExpr(const Expr &a, const Expr &b);
Expr maxExpr(const Expr &a, const Expr &b);
Expr cmp(BinOp op, const Expr &a, const Expr &b);
Expr logicalAnd(const Expr &a, const Expr &b);
Expr logicalOr(const Expr &a, const Expr &b);
Expr product(const std::vector<Expr> &dims);
/// Appends the multiplicative factors of \p e to \p out: a*(b*c) -> a, b, c.
void collectFactors(const Expr &e, std::vector<Expr> &out);

/// Structural equality (same tree, same leaves).
bool structurallyEqual(const Expr &a, const Expr &b);

/// How printExpr spells things that differ between the wrapper and kernels.
enum class PrintDialect { Text, Cxx, OpenCL };
/// The identifier a printer emits for a variable. Printers of emitted code
/// (OpenCL, C++) always pass one; without it, Text prints the name hints.
using VarNamer = std::function<std::string(const Var &)>;
std::string printExpr(const Expr &e, PrintDialect d = PrintDialect::Text,
                      const VarNamer *namer = nullptr);
/// How the OpenCL dialect spells what compiles differently on some devices.
struct ClSpelling {
  /// A select of float vectors on one bool against +0 (`c ? x : 0`, a
  /// padded read) as the other arm's bits anded with a lane mask,
  /// `as_float8(as_int8(x) & (int8)(-(int)((c) != 0)))`: the same lanes
  /// bit for bit. LLVM's x86 backend expands a vector select on a scalar
  /// condition into a branch around each one (its CMOV pseudo), which sinks
  /// the arms' loads into the branches and spills the accumulators of a
  /// register tile (a blocked depthwise convolution's row selects: 49
  /// branches, 0.24 -> 0.17 ms with the mask); the mask is one vpand. Other
  /// arms keep ?: (OpenCL's select on the mask was no faster in a max
  /// pool's -inf padding). Set for CPU profiles.
  bool laneMaskSelects = false;
};
/// printExpr in the OpenCL dialect, spelled as \p spelling says.
std::string printClExpr(const Expr &e, const VarNamer *namer,
                        const ClSpelling &spelling);
std::string printExprs(const std::vector<Expr> &es,
                       PrintDialect d = PrintDialect::Text,
                       const VarNamer *namer = nullptr);
/// A text key that identifies \p e up to structural equality (variables by
/// identity): equal keys mean structurally equal expressions. Sorting by keys
/// orders terms deterministically (by name hints, then creation order).
std::string exprKey(const Expr &e);
/// exprKey without the copy: the text is cached on the node and lives as
/// long as it. \p e must be defined.
const std::string &exprKeyRef(const Expr &e);
/// A key of \p e with every variable spelled by \p namer and every node's
/// type and lanes written out: equal keys mean the same expression up to the
/// renaming that \p namer makes (BoundsProver's ProofCache spells the
/// variables in scope by the place that binds them). Not cached on nodes.
std::string exprKeyRenamed(const Expr &e, const VarNamer &namer);

/// The Vars an expression reads, sorted by name hint, then creation order.
std::vector<Expr> freeVars(const Expr &e);
/// True if \p e reads \p var.
bool usesVar(const Expr &e, const Var *var);
/// True if \p e contains an IndexCheck (evaluating it may record an error).
bool hasIndexCheck(const Expr &e);
/// True if \p e contains a Select.
bool hasSelect(const Expr &e);
/// True if \p e has more than \p limit nodes (counted as a tree: a shared
/// subexpression counts each time it is read); stops counting past it.
bool exprLargerThan(const Expr &e, size_t limit);
/// Same, counting a node that \p e shares (one ExprNode reached by two
/// paths: a Relu's select reading its operand twice) once: the size of the
/// code that computes it.
bool distinctNodesMoreThan(const Expr &e, size_t limit);
/// Appends the Bool conjuncts of \p c to \p out: a && b && c -> {a, b, c}.
void conjuncts(const Expr &c, std::vector<Expr> &out);
/// Appends the Bool disjuncts of \p c to \p out: a || b -> {a, b}.
void disjuncts(const Expr &c, std::vector<Expr> &out);

} // namespace aotc
