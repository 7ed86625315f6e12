/// \file
/// LoopModule -> OpenCL C. One KernelPrinter per kernel walks the statement
/// tree, renames every IR name to a sanitized, unique identifier, checks what
/// the scheduler promised (no Access left, every name bound, parallel loops
/// outermost) and prints indented C.
#include "codegen/opencl/cl_printer.h"

#include "codegen/opencl/identifiers.h"
#include "ir/visitor.h"

#include <algorithm>
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
  void visitLocalDecl(const LocalDecl *op) override {
    found |= op->type == DType::Float64;
    IRVisitor::visitLocalDecl(op);
  }
};

bool usesF64(const Kernel &k) {
  for (const KernelBuffer &b : k.buffers)
    if (b.dtype == DType::Float64)
      return true;
  F64Finder f;
  f.visit(k.body);
  return f.found;
}

/// What an IR name is bound to inside a kernel.
struct Binding {
  enum Kind { LoopVar, Let, Local, Symbol } kind;
  std::string ident;
  DType type;
};

struct BufferInfo {
  std::string ident;
  DType dtype;
  bool written;
};

class KernelPrinter;

/// Rewrites an expression for printing: IR names become identifiers, integer
/// literals inside overloaded builtins get an explicit type (OpenCL's
/// `min(long, int)` is ambiguous), and Access nodes or unbound names are
/// recorded as errors.
class ExprRewriter : public IRMutator {
public:
  explicit ExprRewriter(const KernelPrinter &p) : p_(p) {}
  Status status;

protected:
  Expr mutateVar(const Var *op, const Expr &self) override;
  Expr mutateLoad(const Load *op, const Expr &self) override;
  Expr mutateAccess(const Access *op, const Expr &self) override;
  Expr mutateBinary(const Binary *op, const Expr &self) override;
  Expr mutateCall(const Call *op, const Expr &self) override;

private:
  void fail(Status s) {
    if (status.isOk())
      status = std::move(s);
  }
  const KernelPrinter &p_;
};

/// Gives an explicit type to an integer literal that is not an int.
Expr typedLiteral(const Expr &e) {
  const IntImm *imm = e.as<IntImm>();
  if (!imm || imm->type == DType::Int32)
    return e;
  return Expr(std::make_shared<Cast>(imm->type, e));
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

/// \p s in parentheses, without doubling them.
std::string parenthesized(const std::string &s) {
  return isParenthesized(s) ? s : "(" + s + ")";
}

class KernelPrinter {
public:
  explicit KernelPrinter(const Kernel &k) : k_(k) {}

  Status print(std::string &out);

  const Binding *lookup(const std::string &name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->first == name)
        return &it->second;
    return nullptr;
  }
  const BufferInfo *buffer(const std::string &name) const {
    auto it = buffers_.find(name);
    return it == buffers_.end() ? nullptr : &it->second;
  }
  Status error(const std::string &msg) const {
    return Status::error("kernel '" + k_.name + "': " + msg);
  }

private:
  Status declareParams();
  Status printOuter(const Stmt &body);
  Status printStmt(const Stmt &s);
  Status printStore(const Store *st);
  Status printSerialFor(const For *f);
  Status printIf(const IfThenElse *i);
  Expected<std::string> expr(const Expr &e, const char *what);

  /// A fresh identifier for \p name (and for name+suffix for each suffix)
  /// that no live name uses and that is not reserved.
  std::string fresh(const std::string &name,
                    const std::vector<std::string> &suffixes = {});
  void bind(const std::string &name, Binding b) {
    scope_.emplace_back(name, std::move(b));
  }
  void unbind() { scope_.pop_back(); }
  void openBlock() { blocks_.emplace_back(); }
  void closeBlock() {
    for (const std::string &id : blocks_.back())
      live_.erase(id);
    blocks_.pop_back();
  }
  void line(const std::string &s) {
    body_ += std::string(2 * indent_, ' ') + s + "\n";
  }

  const Kernel &k_;
  std::map<std::string, BufferInfo> buffers_;
  /// Bindings in IR scope order; the innermost is last.
  std::vector<std::pair<std::string, Binding>> scope_;
  /// Identifiers visible in the C code being printed, and those each open C
  /// block declared.
  std::set<std::string> live_;
  std::vector<std::vector<std::string>> blocks_;
  std::string params_;
  std::string body_;
  int indent_ = 1;
};

Expr ExprRewriter::mutateVar(const Var *op, const Expr &self) {
  const Binding *b = p_.lookup(op->name);
  if (!b) {
    fail(p_.error("variable '" + op->name +
                  "' is neither bound in the kernel nor one of its symbols"));
    return self;
  }
  return b->ident == op->name ? self : Var::make(b->ident, op->type);
}

Expr ExprRewriter::mutateLoad(const Load *op, const Expr &self) {
  const BufferInfo *b = p_.buffer(op->buffer);
  if (!b) {
    fail(p_.error("load from buffer '" + op->buffer +
                  "' that is not a parameter of the kernel"));
    return self;
  }
  if (std::string(dtypeCLName(op->type)) != dtypeCLName(b->dtype))
    fail(p_.error(std::string("load of ") + dtypeName(op->type) +
                  " from buffer '" + op->buffer + "' of type " +
                  dtypeName(b->dtype)));
  Expr index = mutate(op->index);
  if (b->ident == op->buffer && index.sameAs(op->index))
    return self;
  return Load::make(op->type, b->ident, index);
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
  if ((op->op == BinOp::Min || op->op == BinOp::Max) && !isFloat(op->type)) {
    a = typedLiteral(a);
    b = typedLiteral(b);
  }
  if (a.sameAs(op->a) && b.sameAs(op->b))
    return self;
  return Expr(std::make_shared<Binary>(op->type, op->op, a, b));
}

Expr ExprRewriter::mutateCall(const Call *op, const Expr &self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr &a : op->args) {
    args.push_back(typedLiteral(mutate(a)));
    changed |= !args.back().sameAs(a);
  }
  return changed ? Call::make(op->type, op->name, args) : self;
}

std::string KernelPrinter::fresh(const std::string &name,
                                 const std::vector<std::string> &suffixes) {
  std::string base = sanitizeIdentifier(name);
  auto usable = [&](const std::string &id) {
    if (live_.count(id) || isReservedIdentifier(id))
      return false;
    for (const std::string &s : suffixes)
      if (live_.count(id + s) || isReservedIdentifier(id + s))
        return false;
    return true;
  };
  std::string id = base;
  for (int n = 1; !usable(id); ++n)
    id = base + "_" + std::to_string(n);
  live_.insert(id);
  blocks_.back().push_back(id);
  for (const std::string &s : suffixes) {
    live_.insert(id + s);
    blocks_.back().push_back(id + s);
  }
  return id;
}

Expected<std::string> KernelPrinter::expr(const Expr &e, const char *what) {
  if (!e.defined())
    return error(std::string("undefined ") + what);
  ExprRewriter r(*this);
  Expr out = r.mutate(e);
  if (!r.status.isOk())
    return r.status;
  return printExpr(out, PrintDialect::OpenCL);
}

Status KernelPrinter::declareParams() {
  // Symbols first: their identifiers are fixed, so buffers and locals give
  // way to them.
  std::vector<std::string> symbolParams;
  for (const std::string &s : k_.symbols) {
    std::string id = symbolIdent(s);
    if (lookup(s))
      return error("symbol '" + s + "' is listed twice");
    if (live_.count(id))
      return error("symbols '" + s + "' and another symbol both print as '" +
                   id + "'");
    live_.insert(id);
    blocks_.back().push_back(id);
    bind(s, {Binding::Symbol, id, DType::Int64});
    symbolParams.push_back("const long " + id);
  }
  std::vector<std::string> params;
  for (const KernelBuffer &b : k_.buffers) {
    if (buffers_.count(b.name))
      return error("buffer '" + b.name + "' is listed twice");
    std::string id = fresh(b.name, {"_base", "_off"});
    buffers_[b.name] = {id, b.dtype, b.written};
    std::string elem =
        std::string(b.written ? "" : "const ") + dtypeCLName(b.dtype);
    params.push_back("__global " + elem + " *" + id + "_base, ulong " + id +
                     "_off");
    line("__global " + elem + " *" + id + " = (__global " + elem +
         " *)((__global " + (b.written ? "" : "const ") + "char *)" + id +
         "_base + " + id + "_off);");
  }
  params.insert(params.end(), symbolParams.begin(), symbolParams.end());
  for (size_t i = 0; i < params.size(); ++i)
    params_ += "    " + params[i] + (i + 1 < params.size() ? ",\n" : "");
  return Status::ok();
}

Status KernelPrinter::print(std::string &out) {
  if (!isCIdentifier(k_.name) || isReservedIdentifier(k_.name))
    return error("the name is not a usable OpenCL identifier");
  if (!k_.body.defined())
    return error("the kernel has no body");
  openBlock();
  AOTC_RETURN_IF_ERROR(declareParams());
  AOTC_RETURN_IF_ERROR(printOuter(k_.body));
  closeBlock();
  out += "__kernel void " + k_.name + "(";
  out += params_.empty() ? "void" : "\n" + params_;
  out += ") {\n" + body_ + "}\n";
  return Status::ok();
}

/// The outermost nest: LetStmts and Parallel loops, which become work-item
/// ids. LoopModule::globalSize reads the same nest.
Status KernelPrinter::printOuter(const Stmt &body) {
  Stmt s = body;
  std::vector<int> dims;
  while (s.defined()) {
    if (const LetStmt *l = s.as<LetStmt>()) {
      AOTC_ASSIGN_OR_RETURN(std::string v, expr(l->value, "let value"));
      std::string id = fresh(l->name);
      line("const " + std::string(dtypeCLName(l->value.type())) + " " + id +
           " = " + v + ";");
      bind(l->name, {Binding::Let, id, l->value.type()});
      s = l->body;
      continue;
    }
    const For *f = s.as<For>();
    if (!f || f->forKind != ForKind::Parallel)
      break;
    if (f->dim < 0 || f->dim > 2)
      return error("parallel loop '" + f->var + "' has dimension " +
                   std::to_string(f->dim) + " (must be 0, 1 or 2)");
    if (std::find(dims.begin(), dims.end(), f->dim) != dims.end())
      return error("two parallel loops use dimension " +
                   std::to_string(f->dim));
    if (!f->min.isConstValue(0))
      return error("parallel loop '" + f->var + "' does not start at 0");
    dims.push_back(f->dim);
    AOTC_ASSIGN_OR_RETURN(std::string ext, expr(f->extent, "loop extent"));
    std::string id = fresh(f->var);
    line("const long " + id + " = get_global_id(" + std::to_string(f->dim) +
         ");");
    line("if (" + id + " >= " + ext + ") return;");
    bind(f->var, {Binding::LoopVar, id, DType::Int64});
    s = f->body;
  }
  std::sort(dims.begin(), dims.end());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int>(i))
      return error("parallel loop dimensions are not 0.." +
                   std::to_string(dims.size() - 1));
  // The kernel returns here, so the outer bindings need no unwinding.
  return printStmt(s);
}

Status KernelPrinter::printStore(const Store *st) {
  const BufferInfo *b = buffer(st->buffer);
  if (!b)
    return error("store into buffer '" + st->buffer +
                 "' that is not a parameter of the kernel");
  if (!b->written)
    return error("store into buffer '" + st->buffer +
                 "' that the kernel declares read-only");
  AOTC_ASSIGN_OR_RETURN(std::string idx, expr(st->index, "store index"));
  AOTC_ASSIGN_OR_RETURN(std::string val, expr(st->value, "stored value"));
  DType vt = st->value.type();
  if (std::string(dtypeCLName(vt)) != dtypeCLName(b->dtype))
    return error(std::string("store of a ") + dtypeName(vt) +
                 " value into buffer '" + st->buffer + "' of type " +
                 dtypeName(b->dtype));
  if (vt == DType::Bool)
    val = "(uchar)" + parenthesized(val);
  line(b->ident + "[" + idx + "] = " + val + ";");
  return Status::ok();
}

Status KernelPrinter::printSerialFor(const For *f) {
  AOTC_ASSIGN_OR_RETURN(std::string mn, expr(f->min, "loop min"));
  Expr end = f->min.isConstValue(0) ? f->extent : f->min + f->extent;
  AOTC_ASSIGN_OR_RETURN(std::string bound, expr(end, "loop extent"));
  openBlock();
  std::string id = fresh(f->var);
  line("for (long " + id + " = " + mn + "; " + id + " < " + bound + "; ++" +
       id + ") {");
  bind(f->var, {Binding::LoopVar, id, DType::Int64});
  ++indent_;
  Status st = printStmt(f->body);
  --indent_;
  unbind();
  closeBlock();
  line("}");
  return st;
}

Status KernelPrinter::printIf(const IfThenElse *i) {
  AOTC_ASSIGN_OR_RETURN(std::string c, expr(i->cond, "condition"));
  line("if " + parenthesized(c) + " {");
  Stmt cases[2] = {i->thenCase, i->elseCase};
  for (int n = 0; n < 2; ++n) {
    if (n == 1) {
      if (!cases[1].defined())
        break;
      line("} else {");
    }
    openBlock();
    ++indent_;
    Status st = printStmt(cases[n]);
    --indent_;
    closeBlock();
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
      return error("parallel loop '" + f->var +
                   "' is not in the kernel's outermost loop nest");
    return printSerialFor(f);
  }
  case StmtKind::Block:
    for (const Stmt &c : s.as<Block>()->stmts)
      AOTC_RETURN_IF_ERROR(printStmt(c));
    return Status::ok();
  case StmtKind::LetStmt: {
    const LetStmt *l = s.as<LetStmt>();
    AOTC_ASSIGN_OR_RETURN(std::string v, expr(l->value, "let value"));
    std::string id = fresh(l->name);
    line("const " + std::string(dtypeCLName(l->value.type())) + " " + id +
         " = " + v + ";");
    bind(l->name, {Binding::Let, id, l->value.type()});
    Status st = printStmt(l->body);
    unbind();
    return st;
  }
  case StmtKind::LocalDecl: {
    const LocalDecl *d = s.as<LocalDecl>();
    AOTC_ASSIGN_OR_RETURN(std::string init, expr(d->init, "local init"));
    if (std::string(dtypeCLName(d->init.type())) != dtypeCLName(d->type))
      return error(std::string("local '") + d->name + "' of type " +
                   dtypeName(d->type) + " initialized with a " +
                   dtypeName(d->init.type()));
    std::string id = fresh(d->name);
    line(std::string(dtypeCLName(d->type)) + " " + id + " = " + init + ";");
    bind(d->name, {Binding::Local, id, d->type});
    Status st = printStmt(d->body);
    unbind();
    return st;
  }
  case StmtKind::LocalAssign: {
    const LocalAssign *a = s.as<LocalAssign>();
    const Binding *b = lookup(a->name);
    if (!b || b->kind != Binding::Local)
      return error("assignment to '" + a->name +
                   "', which is not a local in scope");
    AOTC_ASSIGN_OR_RETURN(std::string v, expr(a->value, "assigned value"));
    if (std::string(dtypeCLName(a->value.type())) != dtypeCLName(b->type))
      return error(std::string("assignment of a ") +
                   dtypeName(a->value.type()) + " to local '" + a->name +
                   "' of type " + dtypeName(b->type));
    line(b->ident + " = " + v + ";");
    return Status::ok();
  }
  case StmtKind::IfThenElse:
    return printIf(s.as<IfThenElse>());
  }
  return error("unknown statement");
}

} // namespace

std::string buildOptions(const LoopModule &) { return "-cl-std=CL1.2"; }

Expected<std::string> emitOpenCL(const LoopModule &m) {
  bool f64 = false;
  std::set<std::string> names;
  for (const Kernel &k : m.kernels) {
    if (!names.insert(k.name).second)
      return makeError("kernel '", k.name, "' is defined twice");
    f64 |= usesF64(k);
  }
  std::string out =
      "// OpenCL C kernels of model '" + commentText(m.name) +
      "', generated by aotc: " + std::to_string(m.kernels.size()) + " kernel" +
      (m.kernels.size() == 1 ? "" : "s") + ".\n";
  out += "// Build options: " + buildOptions(m) + "\n";
  if (f64)
    out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    out += "\n// Kernel " + std::to_string(i) + ": " + m.kernels[i].name + "\n";
    AOTC_RETURN_IF_ERROR(KernelPrinter(m.kernels[i]).print(out));
  }
  return out;
}

} // namespace aotc
