/// \file
/// Stmt construction and the Loop IR text printer (--emit=loop).
#include "ir/stmt.h"

#include "ir/status.h"

namespace aotc {

Stmt Store::make(const std::string &buffer, std::vector<Expr> indices,
                 Expr value) {
  AOTC_CHECK(value.defined(), "store of an undefined value into " << buffer);
  for (const Expr &i : indices)
    AOTC_CHECK(i.defined(),
               "store into '" << buffer << "' with undefined index");
  return Stmt(
      std::make_shared<Store>(buffer, std::move(indices), std::move(value)));
}
Stmt For::make(Expr var, Expr min, Expr extent, ForKind kind, int dim,
               Stmt body) {
  AOTC_CHECK(var.as<Var>(), "loop variable is not a Var");
  AOTC_CHECK(kind == ForKind::Serial || min.isConstValue(0),
             "parallel loop must start at 0");
  return Stmt(std::make_shared<For>(std::move(var), std::move(min),
                                    std::move(extent), kind, dim,
                                    std::move(body)));
}
Stmt Block::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt &s : stmts) {
    if (!s.defined())
      continue;
    if (const Block *b = s.as<Block>())
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1)
    return flat[0];
  return Stmt(std::make_shared<Block>(std::move(flat)));
}
Stmt LetStmt::make(Expr var, Expr value, Stmt body) {
  AOTC_CHECK(var.as<Var>(), "let of a non-variable");
  AOTC_CHECK(value.defined() && value.type() == var.type(),
             "let " << var.as<Var>()->name << " of another type");
  return Stmt(std::make_shared<LetStmt>(std::move(var), std::move(value),
                                        std::move(body)));
}
Stmt LocalDecl::make(Expr var, Expr init, Stmt body) {
  AOTC_CHECK(var.as<Var>(), "local that is not a variable");
  return Stmt(std::make_shared<LocalDecl>(std::move(var), std::move(init),
                                          std::move(body)));
}
Stmt LocalAssign::make(Expr var, Expr value) {
  AOTC_CHECK(var.as<Var>(), "assignment to a non-variable");
  return Stmt(std::make_shared<LocalAssign>(std::move(var), std::move(value)));
}

Stmt Barrier::make() { return Stmt(std::make_shared<Barrier>()); }

Stmt Prefetch::make(const std::string &buffer, std::vector<Expr> indices) {
  return Stmt(std::make_shared<Prefetch>(buffer, std::move(indices)));
}

const KernelBuffer *Kernel::findLocal(const std::string &n) const {
  for (const KernelBuffer &b : locals)
    if (b.name == n)
      return &b;
  return nullptr;
}
const KernelBuffer *Kernel::findPrivate(const std::string &n) const {
  for (const KernelBuffer &b : privates)
    if (b.name == n)
      return &b;
  return nullptr;
}
const KernelBuffer *Kernel::findBuffer(const std::string &n) const {
  for (const KernelBuffer &b : buffers)
    if (b.name == n)
      return &b;
  return nullptr;
}
Stmt IfThenElse::make(Expr cond, Stmt thenCase, Stmt elseCase,
                      bool rareElse) {
  return Stmt(std::make_shared<IfThenElse>(std::move(cond), std::move(thenCase),
                                           std::move(elseCase), rareElse));
}

std::string printStmt(const Stmt &s, int indent) {
  std::string pad(indent * 2, ' ');
  if (!s.defined())
    return "";
  switch (s.kind()) {
  case StmtKind::Store: {
    auto *st = s.as<Store>();
    std::string idx;
    for (size_t i = 0; i < st->indices.size(); ++i)
      idx += (i ? ", " : "") + printExpr(st->indices[i]);
    std::string target = st->buffer + "[" + idx + "]";
    if (st->value.lanes() > 1)
      target = "store" + std::to_string(st->value.lanes()) + "(" + target + ")";
    return pad + target + " = " + printExpr(st->value) + "\n";
  }
  case StmtKind::For: {
    auto *f = s.as<For>();
    std::string head = f->forKind == ForKind::Parallel
                           ? "parallel<" + std::to_string(f->dim) + "> "
                           : "for ";
    return pad + head + printExpr(f->var) + " in [" + printExpr(f->min) + ", " +
           printExpr(f->min) + " + " + printExpr(f->extent) + ") {\n" +
           printStmt(f->body, indent + 1) + pad + "}\n";
  }
  case StmtKind::Block: {
    std::string out;
    for (const Stmt &c : s.as<Block>()->stmts)
      out += printStmt(c, indent);
    return out;
  }
  case StmtKind::LetStmt: {
    auto *l = s.as<LetStmt>();
    return pad + "let " + printExpr(l->var) + " = " + printExpr(l->value) +
           "\n" + printStmt(l->body, indent);
  }
  case StmtKind::LocalDecl: {
    auto *l = s.as<LocalDecl>();
    std::string type = dtypeName(l->type());
    if (l->var.lanes() > 1)
      type += "x" + std::to_string(l->var.lanes());
    return pad + "var " + printExpr(l->var) + ": " + type + " = " +
           printExpr(l->init) + "\n" + printStmt(l->body, indent);
  }
  case StmtKind::LocalAssign: {
    auto *l = s.as<LocalAssign>();
    return pad + printExpr(l->var) + " = " + printExpr(l->value) + "\n";
  }
  case StmtKind::IfThenElse: {
    auto *i = s.as<IfThenElse>();
    std::string out = pad + "if (" + printExpr(i->cond) + ") {\n" +
                      printStmt(i->thenCase, indent + 1) + pad + "}";
    if (i->elseCase.defined())
      out += std::string(i->rareElse ? " else (rare) {\n" : " else {\n") +
             printStmt(i->elseCase, indent + 1) + pad + "}";
    return out + "\n";
  }
  case StmtKind::Barrier:
    return pad + "barrier\n";
  case StmtKind::Prefetch: {
    auto *p = s.as<Prefetch>();
    return pad + "prefetch " + p->buffer + "[" + printExprs(p->indices) +
           "]\n";
  }
  }
  return "";
}

std::string printKernel(const Kernel &k) {
  std::string out = "kernel " + k.name + "(";
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const KernelBuffer &b = k.buffers[i];
    out += (i ? ", " : "") + b.name + ": " + (b.written ? "out " : "") +
           dtypeName(b.dtype) + "[" + printExprs(b.shape) + "]";
  }
  for (const Expr &s : k.symbols)
    out += ", " + printExpr(s) + ": i64";
  out += std::string(")") +
         (k.indexBits ? " [index" + std::to_string(k.indexBits) + "]"
                      : std::string()) +
         (k.workGroupSize ? " [group " + std::to_string(k.workGroupSize) + "]"
                          : std::string()) +
         (k.reportsErrors ? " [errors]" : "") +
         (k.launchIf.defined() ? " [when " + printExpr(k.launchIf) + "]"
                               : std::string()) +
         " {\n";
  for (const KernelBuffer &b : k.locals)
    out += "  local " + b.name + ": " + dtypeName(b.dtype) + "[" +
           printExprs(b.shape) + "]\n";
  for (const KernelBuffer &b : k.privates)
    out += "  private " + b.name + ": " + dtypeName(b.dtype) + "[" +
           printExprs(b.shape) + "]\n";
  out += printStmt(k.body, 1);
  return out + "}\n";
}

} // namespace aotc
