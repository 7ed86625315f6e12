/// \file
/// LoopModule -> OpenCL C. One KernelPrinter per kernel walks the statement
/// tree with one Namer, which issues every identifier the kernel uses: IR
/// variables are objects, bound by identity, so a model's names never reach
/// the output and never clash. The printer checks what the scheduler promised
/// (no Access left, every variable bound before use, parallel loops
/// outermost), linearizes multi-dimensional loads and stores, and prints
/// indented C.
#include "codegen/opencl/cl_printer.h"

#include "codegen/opencl/cl_math.h"
#include "codegen/opencl/cl_scalar.h"
#include "codegen/opencl/index_width.h"
#include "codegen/opencl/identifiers.h"
#include "ir/indexing.h"
#include "ir/verify.h"
#include "ir/visitor.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace aotc {

namespace {

/// True if any expression, local or buffer of \p k has type f64.
class F64Finder : public IRVisitor {
public:
  bool found = false;

protected:
#define AOTC_X(n)                                                              \
  void visit##n(const n *op) override {                                        \
    found |= op->type == DType::Float64;                                       \
    IRVisitor::visit##n(op);                                                   \
  }
  AOTC_FOR_EACH_EXPR(AOTC_X)
#undef AOTC_X
};

bool usesF64(const Kernel &k) {
  for (const KernelBuffer &b : k.buffers)
    if (b.dtype == DType::Float64)
      return true;
  F64Finder f;
  f.visit(k.body);
  return f.found;
}

/// The kernel's name in a canonical print (kernelText).
const std::string kCanonicalName = "KERNEL";

/// What a variable is bound to inside a kernel.
struct Binding {
  enum Kind { LoopVar, Let, Local, Symbol } kind;
  std::string ident;
};

struct BufferInfo {
  std::string ident;
  const KernelBuffer *buffer;
  bool local = false; ///< a __local array (declared kLocalAlign aligned)
};

/// The alignment in bytes of every __local array: the widest vector
/// (16 x float32) a load through a vector pointer may read.
constexpr int64_t kLocalAlign = 64;

class KernelPrinter;

/// Rewrites an expression for printing: loads are linearized over their
/// buffer's kernel shape, integer literals inside overloaded builtins get an
/// explicit type (OpenCL's `min(long, int)` is ambiguous), and Access nodes,
/// unbound variables and unknown buffers are recorded as errors.
class ExprRewriter : public IRMutator {
public:
  ExprRewriter(const KernelPrinter &p, ClHelpers &used, bool trustedIndex)
      : p_(p), used_(used), trusted_(trustedIndex ? 1 : 0) {}
  Status status;

protected:
  Expr mutateVar(const Var *op, const Expr &self) override;
  Expr mutateLoad(const Load *op, const Expr &self) override;
  Expr mutateVectorLoad(const VectorLoad *op, const Expr &self) override;
  Expr mutateAccess(const Access *op, const Expr &self) override;
  Expr mutateBinary(const Binary *op, const Expr &self) override;
  Expr mutateCall(const Call *op, const Expr &self) override;
  Expr mutateIndexCheck(const IndexCheck *op, const Expr &self) override;
  Expr mutateCast(const Cast *op, const Expr &self) override;

private:
  void fail(Status s) {
    if (status.isOk())
      status = std::move(s);
  }
  /// Runs \p f outside any trusted index (data values inside an index).
  template <typename F> Expr untrusted(F &&f) {
    int saved = trusted_;
    trusted_ = 0;
    Expr e = f();
    trusted_ = saved;
    return e;
  }
  const KernelPrinter &p_;
  ClHelpers &used_;
  /// > 0 while rewriting the linearized index of a verified load or store.
  int trusted_;
};

/// True if \p e, an integer expression, may print as an int whatever its
/// type: a literal, a ?: (C promotes arms narrower than int, and literal
/// arms are ints), arithmetic on such operands only or on types narrower
/// than int (C promotes both operands).
bool printsAsInt(const Expr &e) {
  if (e.as<IntImm>() || e.as<Select>())
    return true;
  const Binary *b = e.as<Binary>();
  // min and max print as builtins of their operands' type, which
  // typedLiteral gave them.
  if (!b || isComparison(b->op) || b->op == BinOp::Min || b->op == BinOp::Max)
    return false;
  if (dtypeSize(e.type()) < 4)
    return true;
  return printsAsInt(b->a) && printsAsInt(b->b);
}

/// Gives an explicit type to an integer expression that prints as an int
/// but is not one.
Expr typedLiteral(const Expr &e) {
  // A call to an overloaded builtin (min, max) would otherwise mix types,
  // which OpenCL compilers reject as ambiguous: NVIDIA's for max(long, 4),
  // PoCL's for max((c ? 4 : 7) * (c ? 4 : 7), long) (fuzz seed 20263900).
  if (isFloat(e.type()) || e.type() == DType::Bool ||
      e.type() == DType::Int32 || !printsAsInt(e))
    return e;
  return Expr(std::make_shared<Cast>(e.type(), e));
}

/// The OpenCL C type of \p e's value: `float`, or `float16` for a vector.
std::string clTypeName(const Expr &e) {
  // A vector of bools is a mask of int lanes (VectorLoad of Bool).
  if (e.type() == DType::Bool && e.lanes() > 1)
    return "int" + std::to_string(e.lanes());
  std::string t = dtypeCLName(e.type());
  return e.lanes() > 1 ? t + std::to_string(e.lanes()) : t;
}

/// True if \p s is one parenthesized group: "(a + b)" but not "(a) + (b)".
bool isParenthesized(const std::string &s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')')
    return false;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 < s.size())
      return false;
  }
  return true;
}

/// \p s in parentheses, without doubling them; a lone identifier or number
/// needs none.
std::string parenthesized(const std::string &s) {
  bool atom = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  return atom || isParenthesized(s) ? s : "(" + s + ")";
}

class KernelPrinter {
public:
  /// \p index32: print the index math in int (index_width.h), proving on
  /// the way that it fits (fitsInt32() says whether it did; if not, the
  /// text is wrong and the caller prints the kernel again without).
  /// \p canonical: the kernel's name and its buffer parameters spelled by
  /// position (kernelText).
  KernelPrinter(const Kernel &k, const LoopModule &m, ClHelpers &helpers,
                const ClOptions &options, bool index32 = false,
                bool canonical = false)
      : k_(k), m_(m), helpers_(helpers), ownMath_(options.ownMath),
        index32_(index32), canonical_(canonical) {
    spelling_.laneMaskSelects = options.laneMaskSelects;
    for (const Symbol &s : m.symbols)
      env_.set(s.var, s.range);
  }

  Status print(std::string &out);
  /// Prints the kernel as a part of a persistent kernel
  /// (persistent_kernels.h): `void <function>(<its parameters>, const long
  /// aotc_tile)`, whose work-item is aotc_tile instead of get_global_id(0).
  void asPart(const std::string &function) { partFunction_ = function; }
  /// Prints persistent group \p g of the module as its kernel (this
  /// printer's kernel is LoopModule::persistentSignature(g)): the parts in
  /// order, calling \p functions (each part's, printed by asPart).
  Status printPersistent(int g, const std::vector<std::string> &functions,
                         std::string &out);
  /// Prints the kernel as a launch of its part function \p function, one
  /// work-item each: what devices other than CPUs run instead of its
  /// persistent kernel (persistent_kernels.h).
  Status printPartKernel(const std::string &function, std::string &out);
  /// The arguments that pass kernel \p k's parameters to its part function
  /// from this printer's own (the same buffers, error record and symbols
  /// by name), each followed by ", ".
  Expected<std::string> partCallArgs(const Kernel &k);
  /// After an index32 print: true if every Int64 value it printed is
  /// proven to fit in int.
  bool fitsInt32() const { return fits32_; }
  /// ClOptions::ownMath.
  bool ownMath() const { return ownMath_; }

  const Binding *lookup(const Var *v) const {
    auto it = scope_.find(v->id);
    return it == scope_.end() ? nullptr : &it->second;
  }
  const BufferInfo *buffer(const std::string &name) const {
    auto it = buffers_.find(name);
    return it == buffers_.end() ? nullptr : &it->second;
  }
  const RangeEnv &env() const { return env_; }
  /// A variable standing for the error record parameter in helper calls.
  const Expr &errorsVar() const { return errorsVar_; }
  Status error(const std::string &msg) const {
    return Status::error("kernel '" + k_.name + "': " + msg);
  }

private:
  Status declareParams();
  Status printOuter(const Stmt &body);
  Status printStmt(const Stmt &s);
  /// `const T v = value;` for \p l, T the value's type and width, and its
  /// range into env_ (the caller restores env_ and unbinds after the body).
  Status printLet(const LetStmt *l);
  Status printStore(const Store *st);
  /// The parameter \p name that a \p verb ("store into", "prefetch of")
  /// names; an error if the kernel has none.
  Expected<const BufferInfo *> param(const std::string &verb,
                                     const std::string &name) const;
  /// The index of \p indices into \p b, one per dimension, linearized and
  /// printed (\p what names it in errors).
  Expected<std::string> flatIndex(const std::string &verb, const BufferInfo &b,
                                  const std::string &name,
                                  const std::vector<Expr> &indices,
                                  const char *what);
  Status printSerialFor(const For *f);
  Status printIf(const IfThenElse *i);
  /// \p e as OpenCL C; \p trustedIndex: the linearization of a verified
  /// store index.
  Expected<std::string> expr(const Expr &e, const char *what,
                             bool trustedIndex = false);

  /// Binds \p var to a fresh identifier; fails if it is already bound (a
  /// variable is defined once).
  Expected<std::string> bind(const Expr &var, Binding::Kind kind,
                             const std::string &prefix = "",
                             const std::vector<std::string> &suffixes = {});
  void unbind(const Expr &var) { scope_.erase(var.as<Var>()->id); }
  void line(const std::string &s) {
    body_ += std::string(2 * indent_, ' ') + s + "\n";
  }
  /// Range of a loop variable over [min, min + extent), if derivable.
  void learnLoopRange(const Expr &var, const Expr &min, const Expr &extent);
  /// The type of index variables: int in a 32-bit kernel, else long.
  std::string indexType() const { return index32_ ? "int" : "long"; }
  /// In an index32 print: \p e (an Int64 value the printer computes
  /// outside any expression, as a work-item's flat id) must fit in int,
  /// \p margin to spare.
  void proveFits(const Expr &e, int64_t margin = 0) {
    if (!index32_ || !fits32_)
      return;
    auto r = boundsOf(e, env_);
    fits32_ = r && rangeFitsInt32(Range{r->min, r->max + margin});
  }

  const Kernel &k_;
  const LoopModule &m_;
  ClHelpers &helpers_;
  bool ownMath_;
  ClSpelling spelling_;
  Namer namer_;
  Expr errorsVar_ = Var::make("errors");
  std::map<std::string, BufferInfo> buffers_;
  /// Variables in scope, by identity.
  std::map<uint64_t, Binding> scope_;
  /// Every variable ever bound in this kernel (each is defined once).
  std::set<uint64_t> defined_;
  RangeEnv env_;
  std::string params_;
  std::string body_;
  int indent_ = 1;
  bool index32_ = false;
  bool canonical_ = false;
  bool fits32_ = true;
  /// asPart: the function's name; empty for a kernel.
  std::string partFunction_;
  /// printPersistent: the counters' parameter after the buffers.
  bool counters_ = false;
};

Expr ExprRewriter::mutateVar(const Var *op, const Expr &self) {
  if (!p_.lookup(op))
    fail(p_.error("variable '" + op->name +
                  "' is neither bound in the kernel nor one of its symbols"));
  return self;
}

Expr ExprRewriter::mutateLoad(const Load *op, const Expr &self) {
  const BufferInfo *b = p_.buffer(op->buffer);
  if (!b) {
    fail(p_.error("load from buffer '" + op->buffer +
                  "' that is not a parameter of the kernel"));
    return self;
  }
  // The value types must agree, and a 16-bit float is read only as itself
  // (a float16 load prints vload_half, which a float buffer cannot take).
  if (std::string(dtypeCLName(op->type)) != dtypeCLName(b->buffer->dtype) ||
      std::string(dtypeCLStorageName(op->type)) !=
          dtypeCLStorageName(b->buffer->dtype))
    fail(p_.error(std::string("load of ") + dtypeName(op->type) +
                  " from buffer '" + op->buffer + "' of type " +
                  dtypeName(b->buffer->dtype)));
  if (op->indices.size() != b->buffer->shape.size()) {
    fail(p_.error("load from buffer '" + op->buffer + "' with " +
                  std::to_string(op->indices.size()) +
                  " indices; its shape has rank " +
                  std::to_string(b->buffer->shape.size())));
    return self;
  }
  // Linearize first: the simplifier would fold the typed literals that the
  // rewrite adds. The linearization of a verified index stays below the
  // buffer size, which check_symbols keeps below 2^63: plain arithmetic.
  Expr flat = simplify(linearize(op->indices, b->buffer->shape), p_.env());
  ++trusted_;
  Expr index = mutate(flat);
  --trusted_;
  return Load::make(op->type, op->buffer, {index});
}

Expr ExprRewriter::mutateVectorLoad(const VectorLoad *op, const Expr &self) {
  // The same checks and linearization as a scalar load of its first lane.
  Expr scalar = Load::make(op->type, op->buffer, op->indices);
  Expr first = mutateLoad(scalar.as<Load>(), scalar);
  const Load *l = first.as<Load>();
  if (!l)
    return self;
  // From a local array at an element index that is a multiple of the lanes
  // (every value the variables take): through a vector pointer, which says
  // the vector's alignment (VectorLoad::localAligned).
  const BufferInfo *b = p_.buffer(op->buffer);
  const int64_t bytes = op->lanes * dtypeSize(op->type);
  int64_t rem = -1;
  if (b && b->local && op->stride == 1 &&
      (op->type == DType::Float32 || op->type == DType::Float64) &&
      bytes <= kLocalAlign &&
      simplify(mod(linearize(op->indices, b->buffer->shape), Expr(op->lanes)),
               p_.env())
          .isConst(rem) &&
      rem == 0)
    return VectorLoad::makeLocalAligned(op->type, op->buffer, l->indices,
                                        op->lanes);
  return VectorLoad::make(op->type, op->buffer, l->indices, op->lanes,
                          op->stride);
}

Expr ExprRewriter::mutateAccess(const Access *op, const Expr &self) {
  fail(p_.error("tensor access %t" + std::to_string(op->tensor) +
                " was not resolved to a buffer load (scheduler bug)"));
  return self;
}

Expr ExprRewriter::mutateBinary(const Binary *op, const Expr &self) {
  if (!op->a.defined() || !op->b.defined()) {
    fail(p_.error("undefined operand of " + std::string(binOpName(op->op))));
    return self;
  }
  Expr a = mutate(op->a), b = mutate(op->b);
  // x == x of an integer or bool (two reads of the same element, once the
  // indices simplified to the same one) is a constant; clang rejects the
  // self-comparison. Floats keep it (a NaN test), index checks their side
  // effect.
  if (isComparison(op->op) && !isFloat(a.type()) && !hasIndexCheck(a) &&
      structurallyEqual(a, b)) {
    bool eq = op->op == BinOp::EQ || op->op == BinOp::LE || op->op == BinOp::GE;
    return IntImm::make(eq ? 1 : 0, DType::Bool);
  }
  if ((op->op == BinOp::Min || op->op == BinOp::Max) && !isFloat(op->type)) {
    a = typedLiteral(a);
    b = typedLiteral(b);
  }
  // Integer arithmetic with the semantics of ir/scalar_ops.h.
  if (!isFloat(op->type) && op->type != DType::Bool &&
      (op->op == BinOp::Add || op->op == BinOp::Sub || op->op == BinOp::Mul ||
       op->op == BinOp::Div || op->op == BinOp::FloorDiv ||
       op->op == BinOp::Mod))
    return lowerIntBinary(op, a, b, p_.env(), trusted_ > 0, used_);
  if (a.sameAs(op->a) && b.sameAs(op->b))
    return self;
  return Expr(std::make_shared<Binary>(op->type, op->op, a, b));
}

Expr ExprRewriter::mutateCast(const Cast *op, const Expr &self) {
  Expr v = untrusted([&] { return mutate(op->value); });
  return lowerCast(op->type, v, p_.env(), used_);
}

Expr ExprRewriter::mutateCall(const Call *op, const Expr &self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr &a : op->args) {
    args.push_back(typedLiteral(mutate(a)));
    changed |= !args.back().sameAs(a);
  }
  if (Expr bitwise = lowerBitwiseCall(op, args, used_); bitwise.defined())
    return bitwise;
  if (op->name == "aotc_dot2") { // register_tile.cpp's pairProduct
    std::string name = "aotc_dot2_i" + std::to_string(op->lanes);
    used_.insert(name);
    return Call::make(op->type, name, args);
  }
  if (Expr math = lowerMathCall(op, args, p_.ownMath(), used_); math.defined())
    return math;
  return changed ? Call::make(op->type, op->name, args) : self;
}

Expr ExprRewriter::mutateIndexCheck(const IndexCheck *op, const Expr &self) {
  if (!p_.lookup(p_.errorsVar().as<Var>())) {
    fail(p_.error("an index check in a kernel that does not report errors"));
    return self;
  }
  // aotc_check_index[_wrap](value, extent, errors, code): see cl_scalar.cpp.
  // The value comes from data: nothing about it is trusted.
  const char *name =
      op->wrapNegative ? "aotc_check_index_wrap" : "aotc_check_index";
  used_.insert(name);
  Expr v = untrusted([&] { return mutate(op->value); });
  Expr n = untrusted([&] { return mutate(op->extent); });
  return Call::make(
      DType::Int64, name,
      {v, n, p_.errorsVar(), IntImm::make(op->code, DType::Int32)});
}

Expected<std::string> KernelPrinter::bind(
    const Expr &var, Binding::Kind kind, const std::string &prefix,
    const std::vector<std::string> &suffixes) {
  const Var *v = var.as<Var>();
  if (!v)
    return error("a binding of something that is not a variable");
  if (!defined_.insert(v->id).second)
    return error("variable '" + v->name + "' is defined twice");
  std::string id = namer_.fresh(prefix + v->name, suffixes);
  scope_[v->id] = Binding{kind, id};
  return id;
}

void KernelPrinter::learnLoopRange(const Expr &var, const Expr &min,
                                   const Expr &extent) {
  auto rm = boundsOf(min, env_), re = boundsOf(extent, env_);
  if (rm && re && re->max >= 1)
    env_.set(var, Range{rm->min, rm->max + re->max - 1});
}

Expected<std::string> KernelPrinter::expr(const Expr &e, const char *what,
                                          bool trustedIndex) {
  if (!e.defined())
    return error(std::string("undefined ") + what);
  ExprRewriter r(*this, helpers_, trustedIndex);
  Expr out = r.mutate(e);
  if (!r.status.isOk())
    return r.status;
  // Narrowed only while proven: past the first failure the text is
  // dropped, and an unproven expression may hold what narrowing does not
  // take (Int64 vectors).
  if (index32_ && fits32_) {
    fits32_ = aotc::fitsInt32(out, env_);
    if (fits32_)
      out = narrowToInt32(out, helpers_);
  }
  VarNamer names = [this](const Var &v) {
    const Binding *b = lookup(&v);
    return b ? b->ident : std::string("<unbound>");
  };
  // Loads were rewritten to flat indices over their buffer's identifier.
  struct BufferRenamer : IRMutator {
    const KernelPrinter *p;
    Expr mutateLoad(const Load *op, const Expr &self) override {
      Expr e = IRMutator::mutateLoad(op, self);
      const Load *l = e.as<Load>();
      return Load::make(l->type, p->buffer(l->buffer)->ident, l->indices);
    }
    Expr mutateVectorLoad(const VectorLoad *op, const Expr &self) override {
      Expr e = IRMutator::mutateVectorLoad(op, self);
      const VectorLoad *l = e.as<VectorLoad>();
      const std::string &id = p->buffer(l->buffer)->ident;
      return l->localAligned ? VectorLoad::makeLocalAligned(
                                   l->type, id, l->indices, l->lanes)
                             : VectorLoad::make(l->type, id, l->indices,
                                                l->lanes, l->stride);
    }
  } renamer;
  renamer.p = this;
  return printClExpr(renamer.mutate(out), &names, spelling_);
}

Status KernelPrinter::declareParams() {
  namer_.reserve(canonical_ ? kCanonicalName : k_.name);
  std::vector<std::string> params;
  for (const KernelBuffer &b : k_.buffers) {
    if (buffers_.count(b.name))
      return error("buffer '" + b.name + "' is listed twice");
    std::string id = namer_.fresh(
        canonical_ ? "p" + std::to_string(buffers_.size()) : b.name,
        {"_base", "_off"});
    buffers_[b.name] = {id, &b};
    std::string elem =
        std::string(b.written ? "" : "const ") + dtypeCLStorageName(b.dtype);
    params.push_back("__global " + elem + " *" + id + "_base, ulong " + id +
                     "_off");
    line("__global " + elem + " *" + id + " = (__global " + elem +
         " *)((__global " + (b.written ? "" : "const ") + "char *)" + id +
         "_base + " + id + "_off);");
  }
  // A persistent kernel's counters follow the buffers
  // (persistent_kernels.h).
  if (counters_) {
    params.push_back("__global int *aotc_counters_base, ulong "
                     "aotc_counters_off");
    line("__global int *aotc_c = (__global int *)((__global char *)"
         "aotc_counters_base + aotc_counters_off);");
  }
  // The error record follows the buffers.
  if (k_.reportsErrors) {
    AOTC_ASSIGN_OR_RETURN(std::string id, bind(errorsVar_, Binding::Symbol));
    params.push_back("__global int *" + id + "_base, ulong " + id + "_off");
    line("__global int *" + id + " = (__global int *)((__global char *)" + id +
         "_base + " + id + "_off);");
  }
  // Symbols follow, in Kernel::symbols order.
  for (const Expr &s : k_.symbols) {
    const Var *v = s.as<Var>();
    if (!v)
      return error("a symbol that is not a variable");
    bool known = false;
    for (const Symbol &sym : m_.symbols)
      known |= sym.var.as<Var>()->id == v->id;
    if (!known)
      return error("symbol '" + v->name + "' is not a symbol of the module");
    if (lookup(v))
      return error("symbol '" + v->name + "' is listed twice");
    // In a 32-bit kernel the argument stays a long (the wrapper passes 8
    // bytes) and an int copy of it is what the body reads.
    AOTC_ASSIGN_OR_RETURN(std::string id,
                          bind(s, Binding::Symbol, "s_", {"_arg"}));
    if (index32_) {
      params.push_back("const long " + id + "_arg");
      line("const int " + id + " = (int)" + id + "_arg;");
    } else {
      params.push_back("const long " + id);
    }
    proveFits(s);
  }
  for (size_t i = 0; i < params.size(); ++i)
    params_ += "    " + params[i] + (i + 1 < params.size() ? ",\n" : "");
  // Local arrays: static shapes, declared at the kernel's scope (OpenCL
  // allows __local variables nowhere else).
  if (!k_.locals.empty() && k_.workGroupSize <= 0)
    return error("local arrays in a kernel without a fixed work-group");
  // Private arrays likewise, one per work-item, without an address space
  // (vector loads from them need no more than their element's alignment;
  // the 64 bytes let LLVM use aligned vector moves).
  for (bool local : {true, false})
    for (const KernelBuffer &b : local ? k_.locals : k_.privates) {
      const std::string what = local ? "local array '" : "private array '";
      if (buffers_.count(b.name))
        return error(what + b.name + "' is also a buffer");
      int64_t elems = 1, d;
      for (const Expr &e : b.shape) {
        if (!e.isConst(d) || d <= 0)
          return error(what + b.name + "' has a non-static shape");
        elems *= d;
      }
      std::string id = namer_.fresh(b.name);
      buffers_[b.name] = {id, &b, local};
      line(std::string(local ? "__local " : "") +
           dtypeCLStorageName(b.dtype) + " " + id + "[" +
           std::to_string(elems) + "] __attribute__((aligned(" +
           std::to_string(kLocalAlign) + ")));");
    }
  // Buffer shapes may read symbols; they must be parameters.
  for (const KernelBuffer &b : k_.buffers)
    for (const Expr &d : b.shape)
      for (const Expr &v : freeVars(d))
        if (!lookup(v.as<Var>()))
          return error("the shape of buffer '" + b.name + "' reads '" +
                       v.as<Var>()->name + "', which is not a kernel symbol");
  return Status::ok();
}

Status KernelPrinter::print(std::string &out) {
  if (!isCIdentifier(k_.name) || isReservedIdentifier(k_.name))
    return error("the name is not a usable OpenCL identifier");
  if (!k_.body.defined())
    return error("the kernel has no body");
  if (!partFunction_.empty()) {
    if (LoopModule::globalSize(k_).size() > 1)
      return error("a part of a persistent kernel has more than one "
                   "ND-range dimension");
    namer_.reserve(partFunction_);
    namer_.reserve("aotc_tile");
  }
  AOTC_RETURN_IF_ERROR(declareParams());
  AOTC_RETURN_IF_ERROR(printOuter(k_.body));
  if (!partFunction_.empty()) {
    out += "void " + partFunction_ + "(";
    out += params_.empty() ? "" : "\n" + params_ + ",\n    ";
    out += "const long aotc_tile) {\n" + body_ + "}\n";
    return Status::ok();
  }
  out += "__kernel void " + (canonical_ ? kCanonicalName : k_.name) + "(";
  out += params_.empty() ? "void" : "\n" + params_;
  out += ") {\n" + body_ + "}\n";
  return Status::ok();
}

Status KernelPrinter::printPartKernel(const std::string &function,
                                      std::string &out) {
  if (!isCIdentifier(k_.name) || isReservedIdentifier(k_.name))
    return error("the name is not a usable OpenCL identifier");
  namer_.reserve(function);
  AOTC_RETURN_IF_ERROR(declareParams());
  AOTC_ASSIGN_OR_RETURN(std::string args, partCallArgs(k_));
  out += "__kernel void " + k_.name + "(";
  out += params_.empty() ? "void" : "\n" + params_;
  out += ") {\n  " + function + "(" + args + "get_global_id(0));\n}\n";
  return Status::ok();
}

Expected<std::string> KernelPrinter::partCallArgs(const Kernel &k) {
  std::string args;
  for (const KernelBuffer &b : k.buffers) {
    const BufferInfo *info = buffer(b.name);
    if (!info)
      return error("buffer '" + b.name + "' is not a parameter");
    args += info->ident + "_base, " + info->ident + "_off, ";
  }
  if (k.reportsErrors) {
    const Binding *e = lookup(errorsVar_.as<Var>());
    if (!e)
      return error("the error record is not a parameter");
    args += e->ident + "_base, " + e->ident + "_off, ";
  }
  for (const Expr &sym : k.symbols) {
    const Binding *b = lookup(sym.as<Var>());
    if (!b)
      return error("symbol '" + sym.as<Var>()->name + "' is not a parameter");
    args += b->ident + ", ";
  }
  return args;
}

Status KernelPrinter::printPersistent(int g,
                                      const std::vector<std::string> &functions,
                                      std::string &out) {
  const LoopModule::Persistent &p = m_.persistent.at(static_cast<size_t>(g));
  if (!isCIdentifier(k_.name) || isReservedIdentifier(k_.name))
    return error("the name is not a usable OpenCL identifier");
  const int parts = p.parts();
  if (static_cast<int>(functions.size()) != parts)
    return error("a function per part is missing");
  for (const char *id :
       {"aotc_counters_base", "aotc_counters_off", "aotc_c", "aotc_g", "aotc_n",
        "aotc_next", "aotc_done", "aotc_t", "aotc_left", "aotc_k", "aotc_i",
        "aotc_r", "aotc_w", "aotc_s", "aotc_q", "aotc_lo", "aotc_size",
        "aotc_ran"})
    namer_.reserve(id);
  for (const std::string &f : functions)
    namer_.reserve(f);
  counters_ = true;
  AOTC_RETURN_IF_ERROR(declareParams());
  const int64_t ranges = LoopModule::Persistent::kClaimRanges;
  const int64_t stride = LoopModule::Persistent::kCounterStride / 4;
  line("const long aotc_g = get_num_groups(0);");
  // The ranges of each part's work-items, and this work-group's own.
  line("const long aotc_r = min(aotc_g, " + std::to_string(ranges) + "L);");
  line("const long aotc_w = (long)get_group_id(0) % aotc_r;");
  for (int i = 0; i < parts; ++i) {
    const Kernel &k = m_.kernels.at(static_cast<size_t>(p.first + i));
    // The part's work-items over the symbols (lets above its Parallel loops
    // substituted), as the wrapper counts them.
    VarBindings lets;
    for (Stmt s = k.body; const LetStmt *l = s.as<LetStmt>(); s = l->body)
      lets.emplace_back(l->var, l->value);
    Expr tiles = Expr(int64_t{1});
    for (const Expr &e : LoopModule::globalSize(k))
      tiles = tiles * e;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
      tiles = substitute(tiles, {*it});
    AOTC_ASSIGN_OR_RETURN(std::string n, expr(tiles, "work-item count"));
    std::string when;
    if (k.launchIf.defined()) {
      AOTC_ASSIGN_OR_RETURN(when, expr(k.launchIf, "launch condition"));
    }
    AOTC_ASSIGN_OR_RETURN(std::string args, partCallArgs(k));
    const int64_t base = i * (1 + ranges) * stride;
    const std::string done = std::to_string(base);
    line("// Part " + std::to_string(i) + (canonical_ ? "" : ": " + k.name));
    line(when.empty() ? "{" : "if (" + when + ") {");
    ++indent_;
    line("const long aotc_n = " + n + ";");
    line("volatile __global int *aotc_done = aotc_c + " + done + ";");
    line("int aotc_ran = 0;");
    // Its own range first, then the others' (persistent_kernels.h).
    line("for (long aotc_s = 0; aotc_s < aotc_r; ++aotc_s) {");
    ++indent_;
    line("const long aotc_q = (aotc_w + aotc_s) % aotc_r;");
    line("const long aotc_lo = aotc_n * aotc_q / aotc_r;");
    line("const long aotc_size = aotc_n * (aotc_q + 1) / aotc_r - aotc_lo;");
    line("volatile __global int *aotc_next = aotc_c + " +
         std::to_string(base + stride) + " + " + std::to_string(stride) +
         " * aotc_q;");
    line("for (;;) {");
    ++indent_;
    line("const int aotc_t = aotc_counter_load(aotc_next);");
    line("const long aotc_left = aotc_size - aotc_t;");
    line("if (aotc_left <= 0) break;");
    // Guided: a quarter of what is left of the range.
    line("const int aotc_k = (int)max(aotc_left / 4, 1L);");
    line("if (aotc_counter_claim(aotc_next, aotc_t, aotc_t + aotc_k) != "
         "aotc_t) continue;");
    line("for (long aotc_i = aotc_lo + aotc_t; aotc_i < aotc_lo + aotc_t + "
         "aotc_k; ++aotc_i)");
    line("  " + functions[i] + "(" + args + "aotc_i);");
    line("aotc_ran += aotc_k;");
    --indent_;
    line("}");
    --indent_;
    line("}");
    line("aotc_counter_add(aotc_done, aotc_ran);");
    line("while (aotc_counter_load(aotc_done) < aotc_n) {}");
    --indent_;
    line("}");
  }
  // The last work-group out zeroes the counters for the next launch.
  const std::string exitAt = std::to_string(parts * (1 + ranges) * stride);
  line("if (aotc_counter_add(aotc_c + " + exitAt + ", 1) == (int)aotc_g - 1)");
  line("  for (int aotc_i = 0; aotc_i <= " + exitAt +
       "; aotc_i += " + std::to_string(stride) + ") aotc_c[aotc_i] = 0;");
  out += "__kernel void " + (canonical_ ? kCanonicalName : k_.name) + "(";
  out += params_.empty() ? "void" : "\n" + params_;
  out += ") {\n" + body_ + "}\n";
  return Status::ok();
}

Status KernelPrinter::printLet(const LetStmt *l) {
  AOTC_ASSIGN_OR_RETURN(std::string v, expr(l->value, "let value"));
  AOTC_ASSIGN_OR_RETURN(std::string id, bind(l->var, Binding::Let));
  // The value's own width: a vector load that speculate-loads binds before
  // the store of a work-item of one vector is a floatN (the outer nest once
  // printed it as a float, which no OpenCL compiler accepts).
  bool index = index32_ && l->value.type() == DType::Int64 &&
               l->value.lanes() == 1;
  line("const " + (index ? std::string("int") : clTypeName(l->value)) + " " +
       id + " = " + v + ";");
  if (auto r = boundsOf(l->value, env_))
    env_.set(l->var, *r);
  return Status::ok();
}

/// The outermost nest: Parallel loops, which become work-items, and the
/// LetStmts between them. Loops that share an ND-range dimension are
/// flattened onto it (the outermost most significant); the variables of one
/// dimension are all computed where its first loop is, so their extents must
/// not depend on anything bound later. LoopModule::globalSize reads the same
/// nest.
Status KernelPrinter::printOuter(const Stmt &body) {
  std::map<int, std::vector<const For *>> dims;
  Stmt s = body;
  for (;;) {
    if (const LetStmt *l = s.as<LetStmt>()) {
      s = l->body;
      continue;
    }
    const For *f = s.as<For>();
    if (!f || f->forKind != ForKind::Parallel)
      break;
    if (f->dim < 0 || f->dim > 2)
      return error("parallel loop '" + f->var.as<Var>()->name +
                   "' has dimension " + std::to_string(f->dim) +
                   " (must be 0, 1 or 2)");
    if (!f->min.isConstValue(0))
      return error("parallel loop '" + f->var.as<Var>()->name +
                   "' does not start at 0");
    dims[f->dim].push_back(f);
    s = f->body;
  }
  Stmt inner = s;
  // A statically empty iteration space (a zero-sized output): no work-item
  // ever runs the body, and printing it would divide by the zero extent.
  for (const auto &[d, loops] : dims)
    for (const For *f : loops)
      if (f->extent.isConstValue(0)) {
        line("return; // no elements");
        return Status::ok();
      }
  int expect = 0;
  for (const auto &[d, loops] : dims)
    if (d != expect++)
      return error("parallel loop dimensions are not 0.." +
                   std::to_string(dims.size() - 1));
  if (dims.empty()) {
    // One work-item does the work; the runtime may launch more.
    line(partFunction_.empty() ? "if (get_global_id(0) != 0) return;"
                               : "if (aotc_tile != 0) return;");
  }
  std::set<int> done;
  for (s = body; !s.sameAs(inner);) {
    if (const LetStmt *l = s.as<LetStmt>()) {
      AOTC_RETURN_IF_ERROR(printLet(l));
      s = l->body;
      continue;
    }
    const For *first = s.as<For>();
    s = first->body;
    if (!done.insert(first->dim).second)
      continue;
    const std::vector<const For *> &loops = dims[first->dim];
    std::vector<std::string> ext;
    for (const For *f : loops) {
      AOTC_ASSIGN_OR_RETURN(std::string e, expr(f->extent, "loop extent"));
      ext.push_back(parenthesized(e));
    }
    std::string d = std::to_string(first->dim);
    std::string gid = namer_.fresh("gid" + d);
    std::string total;
    for (const std::string &e : ext)
      total += (total.empty() ? "" : " * ") + e;
    // The runtime may round the global size up by less than a work-group.
    Expr count = Expr(int64_t{1});
    for (const For *f : loops)
      count = count * f->extent;
    proveFits(count, 1 << 16);
    const std::string id =
        partFunction_.empty() ? "get_global_id(" + d + ")" : "aotc_tile";
    line(index32_ ? "const int " + gid + " = (int)" + id + ";"
                  : "const long " + gid + " = " + id + ";");
    // A kernel of fixed work-groups is launched with exactly its global
    // size (a whole number of groups): no work-item is past the end, and a
    // return before its barriers is not allowed.
    if (k_.workGroupSize <= 0)
      line("if (" + gid + " >= " + total + ") return;");
    // Innermost first: i_n = g % E_n, then g / E_n for the next.
    std::string rest = gid;
    for (size_t j = loops.size(); j-- > 0;) {
      const For *f = loops[j];
      AOTC_ASSIGN_OR_RETURN(std::string id, bind(f->var, Binding::LoopVar));
      learnLoopRange(f->var, f->min, f->extent);
      if (j == 0) {
        line("const " + indexType() + " " + id + " = " + rest + ";");
      } else {
        line("const " + indexType() + " " + id + " = " + rest + " % " +
             ext[j] + ";");
        rest = "(" + rest + " / " + ext[j] + ")";
      }
    }
  }
  // The kernel returns here, so the outer bindings need no unwinding.
  return printStmt(inner);
}

Expected<const BufferInfo *>
KernelPrinter::param(const std::string &verb, const std::string &name) const {
  if (const BufferInfo *b = buffer(name))
    return b;
  return error(verb + " buffer '" + name +
               "' that is not a parameter of the kernel");
}

Expected<std::string> KernelPrinter::flatIndex(const std::string &verb,
                                               const BufferInfo &b,
                                               const std::string &name,
                                               const std::vector<Expr> &indices,
                                               const char *what) {
  if (indices.size() != b.buffer->shape.size())
    return error(verb + " buffer '" + name + "' with " +
                 std::to_string(indices.size()) +
                 " indices; its shape has rank " +
                 std::to_string(b.buffer->shape.size()));
  Expr flat = simplify(linearize(indices, b.buffer->shape), env_);
  return expr(flat, what, true);
}

Status KernelPrinter::printStore(const Store *st) {
  AOTC_ASSIGN_OR_RETURN(const BufferInfo *b, param("store into", st->buffer));
  if (!b->buffer->written)
    return error("store into buffer '" + st->buffer +
                 "' that the kernel declares read-only");
  AOTC_ASSIGN_OR_RETURN(std::string idx, flatIndex("store into", *b, st->buffer,
                                                   st->indices, "store index"));
  AOTC_ASSIGN_OR_RETURN(std::string val, expr(st->value, "stored value"));
  DType vt = st->value.type();
  if (std::string(dtypeCLName(vt)) != dtypeCLName(b->buffer->dtype))
    return error(std::string("store of a ") + dtypeName(vt) +
                 " value into buffer '" + st->buffer + "' of type " +
                 dtypeName(b->buffer->dtype));
  if (vt == DType::Bool)
    val = "(uchar)" + parenthesized(val);
  bool half = b->buffer->dtype == DType::Float16;
  if (b->buffer->dtype == DType::BFloat16) { // store the rounded bits
    std::string n = st->value.lanes() > 1 ? std::to_string(st->value.lanes())
                                          : std::string();
    helpers_.insert("aotc_bf16_bits" + n);
    val = "aotc_bf16_bits" + n + "(" + val + ")";
  }
  if (int lanes = st->value.lanes(); lanes > 1) {
    if (vt == DType::Bool)
      return error("vector store of bools into '" + st->buffer + "'");
    std::string n = std::to_string(lanes);
    if (half && lanes > 4) {
      // Four halves at a time, as float16 vector loads are printed (ir/
      // expr.cpp: PoCL's vstore_half8/16 assume their vector's alignment).
      line("{");
      line("  const float" + n + " aotc_h = " + val + ";");
      for (int k = 0; k < lanes; k += 4)
        line("  vstore_half4_rte(aotc_h.s" +
             std::string("0123456789abcdef").substr(k, 4) + ", 0, " + b->ident +
             " + " + (k ? "(" + idx + ") + " + std::to_string(k) : idx) + ");");
      line("}");
      return Status::ok();
    }
    line((half ? "vstore_half" + n + "_rte(" : "vstore" + n + "(") + val +
         ", 0, " + b->ident + " + " + idx + ");");
    return Status::ok();
  }
  if (half) // rounds to nearest even, as Cast<f16> does
    line("vstore_half_rte(" + val + ", " + idx + ", " + b->ident + ");");
  else
    line(b->ident + "[" + idx + "] = " + val + ";");
  return Status::ok();
}

Status KernelPrinter::printSerialFor(const For *f) {
  AOTC_ASSIGN_OR_RETURN(std::string mn, expr(f->min, "loop min"));
  Expr end = f->min.isConstValue(0) ? f->extent : f->min + f->extent;
  AOTC_ASSIGN_OR_RETURN(std::string bound, expr(end, "loop extent"));
  AOTC_ASSIGN_OR_RETURN(std::string id, bind(f->var, Binding::LoopVar));
  line("for (" + indexType() + " " + id + " = " + mn + "; " + id + " < " +
       bound + "; ++" + id + ") {");
  RangeEnv saved = env_;
  learnLoopRange(f->var, f->min, f->extent);
  ++indent_;
  Status st = printStmt(f->body);
  --indent_;
  env_ = saved;
  unbind(f->var);
  line("}");
  return st;
}

Status KernelPrinter::printIf(const IfThenElse *i) {
  AOTC_ASSIGN_OR_RETURN(std::string c, expr(i->cond, "condition"));
  line("if " + (isParenthesized(c) ? c : "(" + c + ")") + " {");
  Stmt cases[2] = {i->thenCase, i->elseCase};
  for (int n = 0; n < 2; ++n) {
    if (n == 1) {
      if (!cases[1].defined())
        break;
      line("} else {");
    }
    ++indent_;
    Status st = printStmt(cases[n]);
    --indent_;
    AOTC_RETURN_IF_ERROR(st);
  }
  line("}");
  return Status::ok();
}

Status KernelPrinter::printStmt(const Stmt &s) {
  if (!s.defined())
    return Status::ok();
  switch (s.kind()) {
  case StmtKind::Store:
    return printStore(s.as<Store>());
  case StmtKind::For: {
    const For *f = s.as<For>();
    if (f->forKind == ForKind::Parallel)
      return error("parallel loop '" + f->var.as<Var>()->name +
                   "' is not in the kernel's outermost loop nest");
    return printSerialFor(f);
  }
  case StmtKind::Block:
    for (const Stmt &c : s.as<Block>()->stmts)
      AOTC_RETURN_IF_ERROR(printStmt(c));
    return Status::ok();
  case StmtKind::LetStmt: {
    const LetStmt *l = s.as<LetStmt>();
    RangeEnv saved = env_;
    AOTC_RETURN_IF_ERROR(printLet(l));
    Status st = printStmt(l->body);
    env_ = saved;
    unbind(l->var);
    return st;
  }
  case StmtKind::LocalDecl: {
    const LocalDecl *d = s.as<LocalDecl>();
    AOTC_ASSIGN_OR_RETURN(std::string init, expr(d->init, "local init"));
    if (std::string(dtypeCLName(d->init.type())) != dtypeCLName(d->type()))
      return error(std::string("local '") + d->var.as<Var>()->name +
                   "' of type " + dtypeName(d->type()) +
                   " initialized with a " + dtypeName(d->init.type()));
    AOTC_ASSIGN_OR_RETURN(std::string id, bind(d->var, Binding::Local));
    if (index32_ && d->type() == DType::Int64)
      fits32_ = false; // a value the ranges do not follow
    if (d->init.lanes() != d->var.lanes())
      return error(std::string("local '") + d->var.as<Var>()->name +
                   "' initialized with a value of another width");
    line(clTypeName(d->var) + " " + id + " = " + init + ";");
    Status st = printStmt(d->body);
    unbind(d->var);
    return st;
  }
  case StmtKind::LocalAssign: {
    const LocalAssign *a = s.as<LocalAssign>();
    const Var *v = a->var.as<Var>();
    const Binding *b = v ? lookup(v) : nullptr;
    if (!b || b->kind != Binding::Local)
      return error("assignment to '" + (v ? v->name : std::string("?")) +
                   "', which is not a local in scope");
    AOTC_ASSIGN_OR_RETURN(std::string val, expr(a->value, "assigned value"));
    if (std::string(dtypeCLName(a->value.type())) != dtypeCLName(v->type) ||
        a->value.lanes() != v->lanes)
      return error(std::string("assignment of a ") +
                   dtypeName(a->value.type()) + " to local '" + v->name +
                   "' of type " + dtypeName(v->type));
    line(b->ident + " = " + val + ";");
    return Status::ok();
  }
  case StmtKind::IfThenElse:
    return printIf(s.as<IfThenElse>());
  case StmtKind::Prefetch: {
    const Prefetch *p = s.as<Prefetch>();
    AOTC_ASSIGN_OR_RETURN(const BufferInfo *b, param("prefetch of", p->buffer));
    AOTC_ASSIGN_OR_RETURN(std::string idx,
                          flatIndex("prefetch of", *b, p->buffer, p->indices,
                                    "prefetch index"));
    helpers_.insert("aotc_prefetch");
    line("aotc_prefetch(" + b->ident + " + " + idx + ");");
    return Status::ok();
  }
  case StmtKind::Barrier:
    if (k_.workGroupSize <= 0)
      return error("a barrier in a kernel without a fixed work-group");
    line("barrier(CLK_LOCAL_MEM_FENCE);");
    return Status::ok();
  }
  return error("unknown statement");
}

} // namespace

std::string buildOptions(const LoopModule &) { return "-cl-std=CL1.2"; }

namespace {

/// One kernel's text, in int where asked, proving on the way that every
/// index value fits (index_width.h); where that fails, printed again in
/// long. The int print's helpers are its own until it is kept.
struct PrintedKernel {
  std::string text;
  bool index32 = false;
};

Expected<PrintedKernel>
printKernelText(const Kernel &k, const LoopModule &owner, ClHelpers &helpers,
                const ClOptions &options, bool canonical,
                const std::string &part = "") {
  PrintedKernel out;
  if (k.indexBits == 32 || (k.indexBits == 0 && options.narrowIndices)) {
    ClHelpers narrowHelpers;
    KernelPrinter narrow(k, owner, narrowHelpers, options, true, canonical);
    if (!part.empty())
      narrow.asPart(part);
    out.index32 = narrow.print(out.text).isOk() && narrow.fitsInt32();
    if (out.index32) {
      helpers.insert(narrowHelpers.begin(), narrowHelpers.end());
      return out;
    }
    out.text.clear();
    if (k.indexBits == 32)
      return makeError(
          "kernel '", k.name,
          "': --kernel-configs asks for index_bits 32, but its index "
          "values are not proven to fit in 32 bits for every symbol "
          "value in its declared range (narrow the ranges with --dim)");
  }
  KernelPrinter wide(k, owner, helpers, options, false, canonical);
  if (!part.empty())
    wide.asPart(part);
  AOTC_RETURN_IF_ERROR(wide.print(out.text));
  return out;
}

/// The counters' operations of persistent kernels (persistent_kernels.h):
/// on CPUs compiled by clang (PoCL, Intel's CPU runtime) acquire loads,
/// claims and adds as clang's atomic builtins, whose ordering the compiler
/// keeps (OpenCL 1.2's atomic functions promise none); elsewhere OpenCL
/// 1.2's atomics with a fence: the runtime launches a persistent kernel as
/// one work-group on devices other than CPUs, and NVIDIA's compiler, clang
/// too, leaves the builtins as calls its assembler cannot resolve
/// (`__atomic_load_4`, H200, stop 69).
#define AOTC_CPU_CLANG                                                         \
  "#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))\n"
const char *kCounterHelpers =
    "int aotc_counter_load(volatile __global int *p) {\n" AOTC_CPU_CLANG
    "  return __atomic_load_n(p, __ATOMIC_ACQUIRE);\n"
    "#else\n"
    "  return atomic_add(p, 0);\n"
    "#endif\n"
    "}\n"
    "int aotc_counter_claim(volatile __global int *p, int expected, int "
    "desired) {\n" AOTC_CPU_CLANG
    "  __atomic_compare_exchange_n(p, &expected, desired, false, "
    "__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);\n"
    "  return expected;\n"
    "#else\n"
    "  return atomic_cmpxchg(p, expected, desired);\n"
    "#endif\n"
    "}\n"
    "int aotc_counter_add(volatile __global int *p, int v) {\n" AOTC_CPU_CLANG
    "  return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);\n"
    "#else\n"
    "  mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
    "  return atomic_add(p, v);\n"
    "#endif\n"
    "}\n";
#undef AOTC_CPU_CLANG

} // namespace

Expected<std::string> kernelText(const Kernel &k, const LoopModule &owner,
                                 const ClOptions &options) {
  ClHelpers helpers;
  AOTC_ASSIGN_OR_RETURN(PrintedKernel p,
                        printKernelText(k, owner, helpers, options, true));
  return std::string(p.index32 ? "// 32-bit indices\n" : "") + p.text;
}

Expected<std::string> persistentText(const LoopModule &m, int g,
                                     const ClOptions &options) {
  const LoopModule::Persistent &p = m.persistent.at(static_cast<size_t>(g));
  // The parts' functions by place: their texts are compared apart.
  std::vector<std::string> functions;
  for (int i = 0; i < p.parts(); ++i)
    functions.push_back("aotc_part_" + std::to_string(i));
  ClHelpers helpers;
  const Kernel sig = m.persistentSignature(g);
  KernelPrinter printer(sig, m, helpers, options, false, true);
  std::string text;
  AOTC_RETURN_IF_ERROR(printer.printPersistent(g, functions, text));
  return text;
}

Expected<std::string> emitOpenCL(const LoopModule &m, const ClOptions &options) {
  // The model's launches (its kernels, each persistent group as one
  // kernel after its parts' functions), then its folding program's kernels
  // (one program). A kernel that runs another's function
  // (Kernel::function) is not printed.
  const auto all = m.allKernels();
  bool f64 = false;
  std::set<std::string> names;
  for (const auto &[k, owner] : all) {
    if (!names.insert(k->name).second)
      return makeError("kernel '", k->name, "' is defined twice");
    f64 |= usesF64(*k);
  }
  AOTC_RETURN_IF_ERROR(verifyKernelFunctions(m));
  const auto launches = m.launches();
  const size_t fold = m.foldProgram ? m.foldProgram->kernels.size() : 0;
  const size_t functions = m.numFunctions();
  // The .so's kernels: its launches, each persistent kernel's parts as
  // kernels of their own (so every kernel once, and each group), the
  // folding program's.
  const size_t launched = m.kernels.size() + m.persistent.size() + fold;
  std::string out =
      "// OpenCL C kernels of model '" + commentText(m.name) +
      "', generated by aotc: " + std::to_string(functions) + " kernel" +
      (functions == 1 ? "" : "s") +
      (functions != launched ? " for " + std::to_string(launched) + " launches"
                             : std::string()) +
      (m.foldProgram ? " (" + std::to_string(m.foldProgram->kernels.size()) +
                           " of them the folding program's)"
                     : std::string()) +
      ".\n";
  out += "// Build options: " + buildOptions(m) + "\n";
  if (f64)
    out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  std::string kernels;
  ClHelpers helpers;
  // The runtime's kernel numbers: the model's launches, then the folding
  // program's kernels.
  std::vector<std::pair<const Kernel *, const LoopModule *>> singles;
  for (const LoopModule::Launch &l : launches)
    singles.emplace_back(l.group < 0 ? &m.kernels[l.kernel] : nullptr, &m);
  // Then each persistent kernel's parts as kernels of their own, which
  // devices other than CPUs launch one by one (persistent_kernels.h).
  const size_t firstPart = singles.size();
  for (const LoopModule::Persistent &p : m.persistent)
    for (int k = p.first; k <= p.last; ++k)
      singles.emplace_back(&m.kernels[k], &m);
  const size_t firstFold = singles.size();
  std::map<std::string, std::string> functionOf; // part kernel -> function
  for (size_t i = m.kernels.size(); i < all.size(); ++i)
    singles.push_back(all[i]);
  // Parts whose code is the same (a network's repeated blocks) call one
  // function, as their kernels share one: a part kernel that runs an
  // earlier part's function (Kernel::function, set by shareKernels, which
  // verifyKernelFunctions checked above) calls that part's.
  // The parts' functions go in the program's head, which every part of a
  // program split for a parallel build compiles (runtime/src/
  // program_split.h): persistent kernels in different parts call them.
  std::string parts;
  for (size_t i = 0; i < singles.size(); ++i) {
    if (!singles[i].first) {
      const int g = launches[i].group;
      const LoopModule::Persistent &p = m.persistent[g];
      std::string text;
      std::vector<std::string> functions;
      for (int k = p.first; k <= p.last; ++k) {
        const Kernel &part = m.kernels[k];
        const bool fresh = part.function.empty();
        functions.push_back("aotc_part_" + (fresh ? part.name : part.function));
        functionOf[part.name] = functions.back();
        text += "// Part " + std::to_string(k - p.first) + ": " + part.name +
                " runs " + functions.back() + "\n";
        if (!fresh)
          continue;
        AOTC_ASSIGN_OR_RETURN(PrintedKernel pk,
                              printKernelText(part, m, helpers, options, false,
                                              functions.back()));
        parts += "\n// " + part.name + " as a part of " + p.name +
                 (pk.index32 ? " (32-bit indices)" : "") + "\n" + pk.text;
      }
      if (!p.function.empty())
        continue; // runs an earlier persistent kernel's (share_kernels.h)
      const Kernel sig = m.persistentSignature(g);
      KernelPrinter printer(sig, m, helpers, options);
      AOTC_RETURN_IF_ERROR(printer.printPersistent(g, functions, text));
      // The count weighs the section when a load splits the program
      // (runtime/src/program_split.h).
      kernels += "\n// Kernel " + std::to_string(i) + ": " + p.name +
                 " (persistent: " + std::to_string(p.parts()) + " kernels)\n" +
                 text;
      continue;
    }
    const Kernel &k = *singles[i].first;
    if (i >= firstPart && i < firstFold) {
      if (!k.function.empty())
        continue; // runs an earlier part kernel's (share_kernels.h)
      std::string text;
      KernelPrinter printer(k, m, helpers, options);
      AOTC_RETURN_IF_ERROR(
          printer.printPartKernel(functionOf.at(k.name), text));
      kernels += "\n// Kernel " + std::to_string(i) + ": " + k.name +
                 " (a persistent kernel's part, for devices other than "
                 "CPUs)\n" +
                 text;
      continue;
    }
    if (!k.function.empty())
      continue;
    AOTC_ASSIGN_OR_RETURN(
        PrintedKernel p,
        printKernelText(k, *singles[i].second, helpers, options, false));
    kernels += "\n// Kernel " + std::to_string(i) + ": " + k.name +
               (p.index32 ? " (32-bit indices)" : "") + "\n" + p.text;
  }
  std::string defined = clHelperDefinitions(helpers);
  if (!defined.empty())
    out += "\n// Integer arithmetic, conversions and index checks with defined "
           "results\n// everywhere (ir/scalar_ops.h).\n" +
           defined;
  if (std::string math = clMathDefinitions(helpers); !math.empty())
    out += "\n// Math functions computed by aotc (codegen/opencl/cl_math.h).\n" +
           math;
  if (!m.persistent.empty())
    out += "\n// Counters of persistent kernels "
           "(compiler/schedule/persistent_kernels.h).\n" +
           std::string(kCounterHelpers) +
           "\n// The kernels persistent kernels run, as functions of their "
           "work-item.\n" +
           parts;
  out += kernels;
  return out;
}

} // namespace aotc
