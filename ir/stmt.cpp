/// \file
/// Stmt construction and the Loop IR text printer (--emit=loop).
#include "ir/stmt.h"

#include "ir/status.h"

namespace aotc {

Stmt Store::make(const std::string &buffer, Expr index, Expr value) {
  return Stmt(
      std::make_shared<Store>(buffer, std::move(index), std::move(value)));
}
Stmt For::make(const std::string &var, Expr min, Expr extent, ForKind kind,
               int dim, Stmt body) {
  AOTC_CHECK(kind == ForKind::Serial || min.isConstValue(0),
             "parallel loop must start at 0");
  return Stmt(std::make_shared<For>(var, std::move(min), std::move(extent),
                                    kind, dim, std::move(body)));
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
Stmt LetStmt::make(const std::string &name, Expr value, Stmt body) {
  return Stmt(
      std::make_shared<LetStmt>(name, std::move(value), std::move(body)));
}
Stmt LocalDecl::make(const std::string &name, DType type, Expr init,
                     Stmt body) {
  return Stmt(std::make_shared<LocalDecl>(name, type, std::move(init),
                                          std::move(body)));
}
Stmt LocalAssign::make(const std::string &name, Expr value) {
  return Stmt(std::make_shared<LocalAssign>(name, std::move(value)));
}
Stmt IfThenElse::make(Expr cond, Stmt thenCase, Stmt elseCase) {
  return Stmt(std::make_shared<IfThenElse>(std::move(cond), std::move(thenCase),
                                           std::move(elseCase)));
}

std::string printStmt(const Stmt &s, int indent) {
  std::string pad(indent * 2, ' ');
  if (!s.defined())
    return "";
  switch (s.kind()) {
  case StmtKind::Store: {
    auto *st = s.as<Store>();
    return pad + st->buffer + "[" + printExpr(st->index) +
           "] = " + printExpr(st->value) + "\n";
  }
  case StmtKind::For: {
    auto *f = s.as<For>();
    std::string head = f->forKind == ForKind::Parallel
                           ? "parallel<" + std::to_string(f->dim) + "> "
                           : "for ";
    return pad + head + f->var + " in [" + printExpr(f->min) + ", " +
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
    return pad + "let " + l->name + " = " + printExpr(l->value) + "\n" +
           printStmt(l->body, indent);
  }
  case StmtKind::LocalDecl: {
    auto *l = s.as<LocalDecl>();
    return pad + "var " + l->name + ": " + dtypeName(l->type) + " = " +
           printExpr(l->init) + "\n" + printStmt(l->body, indent);
  }
  case StmtKind::LocalAssign: {
    auto *l = s.as<LocalAssign>();
    return pad + l->name + " = " + printExpr(l->value) + "\n";
  }
  case StmtKind::IfThenElse: {
    auto *i = s.as<IfThenElse>();
    std::string out = pad + "if (" + printExpr(i->cond) + ") {\n" +
                      printStmt(i->thenCase, indent + 1) + pad + "}";
    if (i->elseCase.defined())
      out += " else {\n" + printStmt(i->elseCase, indent + 1) + pad + "}";
    return out + "\n";
  }
  }
  return "";
}

std::string printKernel(const Kernel &k) {
  std::string out = "kernel " + k.name + "(";
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const KernelBuffer &b = k.buffers[i];
    out += (i ? ", " : "") + b.name + ": " + (b.written ? "out " : "") +
           dtypeName(b.dtype) + "*";
  }
  for (const std::string &s : k.symbols)
    out += ", " + s + ": i64";
  out += std::string(")") + (k.wideIndex ? " [index64]" : "") + " {\n";
  out += printStmt(k.body, 1);
  return out + "}\n";
}

} // namespace aotc
