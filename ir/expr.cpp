/// \file
/// Expr construction, structural equality and printing.
#include "ir/expr.h"

#include "ir/scalar_ops.h"
#include "ir/status.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_set>
#include <sstream>

namespace aotc {

const char *binOpName(BinOp op) {
  switch (op) {
  case BinOp::Add:
    return "+";
  case BinOp::Sub:
    return "-";
  case BinOp::Mul:
    return "*";
  case BinOp::Div:
    return "/";
  case BinOp::FloorDiv:
    return "floordiv";
  case BinOp::Mod:
    return "mod";
  case BinOp::Min:
    return "min";
  case BinOp::Max:
    return "max";
  case BinOp::Pow:
    return "pow";
  case BinOp::EQ:
    return "==";
  case BinOp::NE:
    return "!=";
  case BinOp::LT:
    return "<";
  case BinOp::LE:
    return "<=";
  case BinOp::GT:
    return ">";
  case BinOp::GE:
    return ">=";
  case BinOp::And:
    return "&&";
  case BinOp::Or:
    return "||";
  }
  return "?";
}

bool isComparison(BinOp op) {
  return op == BinOp::EQ || op == BinOp::NE || op == BinOp::LT ||
         op == BinOp::LE || op == BinOp::GT || op == BinOp::GE;
}

Expr::Expr(int64_t v) : Expr(IntImm::make(v)) {}

ExprKind Expr::kind() const { return node_->kind; }
DType Expr::type() const { return node_->type; }
int Expr::lanes() const { return node_->lanes; }

bool Expr::isConst(int64_t &v) const {
  if (const IntImm *i = as<IntImm>()) {
    v = i->value;
    return true;
  }
  return false;
}

bool Expr::isConstValue(int64_t v) const {
  int64_t c;
  return isConst(c) && c == v;
}

Expr IntImm::make(int64_t v, DType t) {
  AOTC_CHECK(!isFloat(t), "integer literal of type " << dtypeName(t));
  // A literal holds a value of its type: folding wraps like the device does.
  return Expr(std::make_shared<IntImm>(t, scalar::wrapSigned(t, v)));
}
Expr FloatImm::make(double v, DType t) {
  return Expr(std::make_shared<FloatImm>(t, v));
}
Expr Var::make(const std::string &hint, DType t, int lanes) {
  static std::atomic<uint64_t> next{1};
  AOTC_CHECK(lanes == 1 || isVectorWidth(lanes),
             "vector variable of " << lanes << " x " << dtypeName(t));
  return Expr(std::make_shared<Var>(t, hint, next.fetch_add(1), lanes));
}

Expr Broadcast::make(Expr value, int lanes) {
  AOTC_CHECK(value.defined() && value.lanes() == 1 && isVectorWidth(lanes) &&
                 value.type() != DType::Bool,
             "broadcast to " << lanes << " lanes");
  return Expr(std::make_shared<Broadcast>(std::move(value), lanes));
}

Expr VectorLoad::make(DType t, const std::string &buffer,
                      std::vector<Expr> indices, int lanes, int stride) {
  AOTC_CHECK(isVectorWidth(lanes) &&
                 !indices.empty(),
             "vector load of " << lanes << " x " << dtypeName(t));
  AOTC_CHECK(allowsStride(t, stride),
             "vector load of " << dtypeName(t) << " with stride " << stride);
  return Expr(std::make_shared<VectorLoad>(t, buffer, std::move(indices),
                                           lanes, stride));
}

Expr VectorLoad::makeLocalAligned(DType t, const std::string &buffer,
                                  std::vector<Expr> indices, int lanes) {
  AOTC_CHECK(isVectorWidth(lanes) &&
                 (t == DType::Float32 || t == DType::Float64) &&
                 !indices.empty(),
             "aligned local vector load of " << lanes << " x "
                                             << dtypeName(t));
  auto node =
      std::make_shared<VectorLoad>(t, buffer, std::move(indices), lanes, 1);
  node->localAligned = true;
  return Expr(std::move(node));
}

Expr Lane::make(Expr vector, int lane) {
  AOTC_CHECK(vector.defined() && lane >= 0 && lane < vector.lanes() &&
                 vector.lanes() > 1,
             "lane " << lane << " of a " << vector.lanes() << "-lane value");
  return Expr(std::make_shared<Lane>(std::move(vector), lane));
}

Expr FiniteOrSum::make(Expr value, Expr body, std::vector<Expr> vars,
                       std::vector<Expr> extents, Expr lane) {
  AOTC_CHECK(value.defined() && body.defined() && isFloat(value.type()) &&
                 body.type() == value.type() && body.lanes() == 1 &&
                 vars.size() == extents.size() && !vars.empty() &&
                 (value.lanes() == 1) == !lane.defined(),
             "finite-or-sum of a " << value.lanes() << "-lane value");
  for (const Expr &v : vars)
    AOTC_CHECK(v.as<Var>(), "finite-or-sum over a non-variable");
  return Expr(std::make_shared<FiniteOrSum>(std::move(value), std::move(body),
                                            std::move(vars),
                                            std::move(extents),
                                            std::move(lane)));
}

Expr Binary::make(BinOp op, Expr a, Expr b) {
  AOTC_CHECK(a.defined() && b.defined(), "binary operand undefined");
  AOTC_CHECK(a.type() == b.type(), "binary " << binOpName(op) << " of "
                                             << dtypeName(a.type()) << " and "
                                             << dtypeName(b.type()));
  DType t = (isComparison(op) || op == BinOp::And || op == BinOp::Or)
                ? DType::Bool
                : a.type();
  // Vectors: float arithmetic, and float comparisons (a lane-by-lane
  // condition for a vector select).
  AOTC_CHECK(a.lanes() == b.lanes() &&
                 (a.lanes() == 1 || t == a.type() ||
                  (isComparison(op) && isFloat(a.type()))),
             "binary " << binOpName(op) << " of " << a.lanes() << " and "
                       << b.lanes() << " lanes");
  return Expr(std::make_shared<Binary>(t, op, std::move(a), std::move(b)));
}

Expr Not::make(Expr a) { return Expr(std::make_shared<Not>(std::move(a))); }

Expr Select::make(Expr c, Expr t, Expr f) {
  AOTC_CHECK(c.type() == DType::Bool, "select condition must be bool");
  AOTC_CHECK(t.type() == f.type(), "select branches differ in type");
  AOTC_CHECK((c.lanes() == 1 || c.lanes() == t.lanes()) &&
                 t.lanes() == f.lanes(),
             "select of " << t.lanes() << " and " << f.lanes() << " lanes");
  return Expr(
      std::make_shared<Select>(std::move(c), std::move(t), std::move(f)));
}

Expr Cast::make(DType t, Expr v) {
  if (v.type() == t)
    return v;
  // A vector converts lane by lane (convert_T<n>); the code printer lowers
  // only the conversions C defines exactly (vectorize.cpp makes no other).
  // Constants fold with the semantics of scalar_ops.h.
  if (const IntImm *i = v.as<IntImm>()) {
    if (!isFloat(t))
      return IntImm::make(i->value, t);
  }
  if (const FloatImm *f = v.as<FloatImm>()) {
    if (!isFloat(t))
      return IntImm::make(scalar::fromFloat(t, f->value), t);
  }
  return Expr(std::make_shared<Cast>(t, std::move(v)));
}

Expr Call::make(DType t, const std::string &name, std::vector<Expr> args) {
  // A call on vectors (an OpenCL builtin: fma, exp, ...) takes vectors of
  // one width and gives one.
  int lanes = args.empty() ? 1 : args[0].lanes();
  for (const Expr &a : args)
    AOTC_CHECK(a.lanes() == lanes, "call of " << name << " mixes widths");
  return Expr(std::make_shared<Call>(t, name, std::move(args), lanes));
}

Expr Load::make(DType t, const std::string &buffer, std::vector<Expr> indices) {
  for (const Expr &i : indices)
    AOTC_CHECK(i.defined(), "load of '" << buffer << "' with undefined index");
  return Expr(std::make_shared<Load>(t, buffer, std::move(indices)));
}

Expr Access::make(DType t, int tensor, std::vector<Expr> indices) {
  return Expr(std::make_shared<Access>(t, tensor, std::move(indices)));
}

Expr IndexCheck::make(Expr value, Expr extent, int code, bool wrapNegative) {
  AOTC_CHECK(value.defined() && value.type() == DType::Int64,
             "checked index must be i64");
  AOTC_CHECK(extent.defined() && extent.type() == DType::Int64,
             "checked index extent must be i64");
  return Expr(std::make_shared<IndexCheck>(std::move(value), std::move(extent),
                                           code, wrapNegative));
}

namespace {

Expr foldInt(BinOp op, const Expr &a, const Expr &b) {
  int64_t x, y;
  if (!a.isConst(x) || !b.isConst(y) || a.type() == DType::Bool)
    return Expr();
  DType t = a.type();
  switch (op) {
  case BinOp::Add:
    return IntImm::make(scalar::add(t, x, y), t);
  case BinOp::Sub:
    return IntImm::make(scalar::sub(t, x, y), t);
  case BinOp::Mul:
    return IntImm::make(scalar::mul(t, x, y), t);
  case BinOp::FloorDiv:
    if (y == 0)
      return Expr(); // left to run time, which defines it (scalar_ops.h)
    return IntImm::make(scalar::floorDiv(t, x, y), t);
  case BinOp::Mod:
    if (y == 0)
      return Expr();
    return IntImm::make(scalar::floorMod(t, x, y), t);
  case BinOp::Min:
    return IntImm::make(std::min(x, y), a.type());
  case BinOp::Max:
    return IntImm::make(std::max(x, y), a.type());
  default:
    return Expr();
  }
}

Expr intBinary(BinOp op, const Expr &a, const Expr &b) {
  if (Expr f = foldInt(op, a, b); f.defined())
    return f;
  return Binary::make(op, a, b);
}

} // namespace

Expr operator+(const Expr &a, const Expr &b) {
  if (a.isConstValue(0) && !isFloat(b.type()))
    return b;
  if (b.isConstValue(0) && !isFloat(a.type()))
    return a;
  return intBinary(BinOp::Add, a, b);
}
Expr operator-(const Expr &a, const Expr &b) {
  if (b.isConstValue(0) && !isFloat(a.type()))
    return a;
  return intBinary(BinOp::Sub, a, b);
}
Expr operator*(const Expr &a, const Expr &b) {
  if (a.isConstValue(1))
    return b;
  if (b.isConstValue(1))
    return a;
  return intBinary(BinOp::Mul, a, b);
}
Expr operator-(const Expr &a) { return IntImm::make(0, a.type()) - a; }
Expr floorDiv(const Expr &a, const Expr &b) {
  if (b.isConstValue(1))
    return a;
  return intBinary(BinOp::FloorDiv, a, b);
}
Expr mod(const Expr &a, const Expr &b) {
  if (b.isConstValue(1))
    return IntImm::make(0, a.type());
  return intBinary(BinOp::Mod, a, b);
}
Expr minExpr(const Expr &a, const Expr &b) {
  return intBinary(BinOp::Min, a, b);
}
Expr maxExpr(const Expr &a, const Expr &b) {
  return intBinary(BinOp::Max, a, b);
}
Expr cmp(BinOp op, const Expr &a, const Expr &b) {
  return Binary::make(op, a, b);
}
Expr logicalAnd(const Expr &a, const Expr &b) {
  if (!a.defined())
    return b;
  if (!b.defined())
    return a;
  return Binary::make(BinOp::And, a, b);
}
Expr logicalOr(const Expr &a, const Expr &b) {
  if (!a.defined())
    return b;
  if (!b.defined())
    return a;
  return Binary::make(BinOp::Or, a, b);
}
Expr product(const std::vector<Expr> &dims) {
  Expr p = IntImm::make(1);
  for (const Expr &d : dims)
    p = p * d;
  return p;
}

void collectFactors(const Expr &e, std::vector<Expr> &out) {
  if (const Binary *b = e.as<Binary>()) {
    if (b->op == BinOp::Mul) {
      collectFactors(b->a, out);
      collectFactors(b->b, out);
      return;
    }
  }
  out.push_back(e);
}

bool structurallyEqual(const Expr &a, const Expr &b) {
  if (a.sameAs(b))
    return true;
  if (!a.defined() || !b.defined())
    return false;
  if (a.kind() != b.kind() || a.type() != b.type() || a.lanes() != b.lanes())
    return false;
  switch (a.kind()) {
  case ExprKind::IntImm:
    return a.as<IntImm>()->value == b.as<IntImm>()->value;
  case ExprKind::FloatImm:
    return a.as<FloatImm>()->value == b.as<FloatImm>()->value;
  case ExprKind::Var:
    return a.as<Var>()->id == b.as<Var>()->id;
  case ExprKind::Binary: {
    auto *x = a.as<Binary>(), *y = b.as<Binary>();
    return x->op == y->op && structurallyEqual(x->a, y->a) &&
           structurallyEqual(x->b, y->b);
  }
  case ExprKind::Not:
    return structurallyEqual(a.as<Not>()->a, b.as<Not>()->a);
  case ExprKind::Select: {
    auto *x = a.as<Select>(), *y = b.as<Select>();
    return structurallyEqual(x->cond, y->cond) &&
           structurallyEqual(x->trueValue, y->trueValue) &&
           structurallyEqual(x->falseValue, y->falseValue);
  }
  case ExprKind::Cast:
    return structurallyEqual(a.as<Cast>()->value, b.as<Cast>()->value);
  case ExprKind::Call: {
    auto *x = a.as<Call>(), *y = b.as<Call>();
    if (x->name != y->name || x->args.size() != y->args.size())
      return false;
    for (size_t i = 0; i < x->args.size(); ++i)
      if (!structurallyEqual(x->args[i], y->args[i]))
        return false;
    return true;
  }
  case ExprKind::FiniteOrSum: {
    auto *x = a.as<FiniteOrSum>(), *y = b.as<FiniteOrSum>();
    if (x->vars.size() != y->vars.size() ||
        !structurallyEqual(x->value, y->value) ||
        !structurallyEqual(x->body, y->body) ||
        x->lane.defined() != y->lane.defined() ||
        (x->lane.defined() && !structurallyEqual(x->lane, y->lane)))
      return false;
    for (size_t i = 0; i < x->vars.size(); ++i)
      if (!structurallyEqual(x->vars[i], y->vars[i]) ||
          !structurallyEqual(x->extents[i], y->extents[i]))
        return false;
    return true;
  }
  case ExprKind::Load: {
    auto *x = a.as<Load>(), *y = b.as<Load>();
    if (x->buffer != y->buffer || x->indices.size() != y->indices.size())
      return false;
    for (size_t i = 0; i < x->indices.size(); ++i)
      if (!structurallyEqual(x->indices[i], y->indices[i]))
        return false;
    return true;
  }
  case ExprKind::Access: {
    auto *x = a.as<Access>(), *y = b.as<Access>();
    if (x->tensor != y->tensor || x->indices.size() != y->indices.size())
      return false;
    for (size_t i = 0; i < x->indices.size(); ++i)
      if (!structurallyEqual(x->indices[i], y->indices[i]))
        return false;
    return true;
  }
  case ExprKind::IndexCheck: {
    auto *x = a.as<IndexCheck>(), *y = b.as<IndexCheck>();
    return x->code == y->code && x->wrapNegative == y->wrapNegative &&
           structurallyEqual(x->value, y->value) &&
           structurallyEqual(x->extent, y->extent);
  }
  case ExprKind::Broadcast:
    return structurallyEqual(a.as<Broadcast>()->value,
                             b.as<Broadcast>()->value);
  case ExprKind::VectorLoad: {
    auto *x = a.as<VectorLoad>(), *y = b.as<VectorLoad>();
    if (x->buffer != y->buffer || x->stride != y->stride ||
        x->localAligned != y->localAligned ||
        x->indices.size() != y->indices.size())
      return false;
    for (size_t i = 0; i < x->indices.size(); ++i)
      if (!structurallyEqual(x->indices[i], y->indices[i]))
        return false;
    return true;
  }
  case ExprKind::Lane:
    return a.as<Lane>()->lane == b.as<Lane>()->lane &&
           structurallyEqual(a.as<Lane>()->vector, b.as<Lane>()->vector);
  }
  return false;
}

namespace {

std::string floatLiteral(double v, DType t, PrintDialect d) {
  if (std::isnan(v))
    return d == PrintDialect::OpenCL ? "NAN" : "nan";
  if (std::isinf(v)) {
    if (d == PrintDialect::OpenCL)
      return v > 0 ? "INFINITY" : "(-INFINITY)";
    return v > 0 ? "inf" : "-inf";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (t == DType::Float64)
    std::snprintf(buf, sizeof buf, "%.17g", v), s = buf;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  if (d != PrintDialect::Text && isFloat32Valued(t))
    s += "f";
  if (v < 0)
    s = "(" + s + ")";
  return s;
}

/// Whether \p e can be evaluated whatever the value of the condition beside
/// it: no memory access or index check (a guard may be what keeps it in
/// bounds) and no integer division (a guard may be what keeps it from 0).
static bool eagerSafe(const Expr &e) {
  switch (e.kind()) {
  case ExprKind::IntImm:
  case ExprKind::FloatImm:
  case ExprKind::Var:
    return true;
  case ExprKind::Binary: {
    const Binary *b = e.as<Binary>();
    if ((b->op == BinOp::Div || b->op == BinOp::FloorDiv ||
         b->op == BinOp::Mod) &&
        !isFloat(b->a.type()))
      return false;
    return eagerSafe(b->a) && eagerSafe(b->b);
  }
  case ExprKind::Not:
    return eagerSafe(e.as<Not>()->a);
  case ExprKind::Select: {
    const Select *s = e.as<Select>();
    return eagerSafe(s->cond) && eagerSafe(s->trueValue) &&
           eagerSafe(s->falseValue);
  }
  case ExprKind::Cast:
    return eagerSafe(e.as<Cast>()->value);
  case ExprKind::Call:
    for (const Expr &a : e.as<Call>()->args)
      if (!eagerSafe(a))
        return false;
    return true;
  default:
    return false;
  }
}

/// True if \p e is the literal +0.0 (or a vector of it): all bits zero.
static bool isPositiveZero(const Expr &e) {
  const Expr &v = e.as<Broadcast>() ? e.as<Broadcast>()->value : e;
  const FloatImm *f = v.as<FloatImm>();
  return f && f->value == 0.0 && !std::signbit(f->value);
}

class Printer {
public:
  Printer(PrintDialect d, const VarNamer *namer, bool keys = false,
          bool typed = false, ClSpelling cl = {})
      : d_(d), namer_(namer), keys_(keys), typed_(typed), cl_(cl) {}

  std::string print(const Expr &e) {
    if (typed_)
      return printNode(e) + "'" + dtypeName(e.type()) +
             (e.lanes() > 1 ? "x" + std::to_string(e.lanes()) : "");
    if (!keys_ || e.kind() == ExprKind::IntImm)
      return printNode(e);
    return key(e);
  }

  /// Keys are cached on the node: the simplifier asks for the same atoms'
  /// keys over and over, and an atom's key contains its children's.
  const std::string &key(const Expr &e) {
    if (const std::string *k = e->key.load(std::memory_order_acquire))
      return *k;
    auto *fresh = new std::string(printNode(e));
    const std::string *expected = nullptr;
    if (!e->key.compare_exchange_strong(expected, fresh,
                                        std::memory_order_acq_rel)) {
      delete fresh;
      return *expected;
    }
    return *fresh;
  }

private:
  std::string printNode(const Expr &e) {
    switch (e.kind()) {
    case ExprKind::IntImm: {
      int64_t v = e.as<IntImm>()->value;
      std::string s = std::to_string(v);
      if (d_ != PrintDialect::Text && e.type() == DType::Int64 &&
          (v > INT32_MAX || v < INT32_MIN))
        s += "L";
      if (d_ != PrintDialect::Text && e.type() == DType::UInt32 &&
          v > INT32_MAX)
        s += "u";
      if (v < 0 && d_ != PrintDialect::Text)
        s = "(" + s + ")";
      return s;
    }
    case ExprKind::FloatImm:
      return floatLiteral(e.as<FloatImm>()->value, e.type(), d_);
    case ExprKind::Var: {
      const Var *v = e.as<Var>();
      if (keys_) {
        char id[24];
        std::snprintf(id, sizeof id, "#%020llu",
                      static_cast<unsigned long long>(v->id));
        return v->name + id;
      }
      if (namer_)
        return (*namer_)(*v);
      AOTC_CHECK(d_ == PrintDialect::Text,
                 "variable '" << v->name
                              << "' printed as code without a namer");
      return v->name;
    }
    case ExprKind::Binary:
      return printBinary(e.as<Binary>());
    case ExprKind::Not:
      return "!(" + print(e.as<Not>()->a) + ")";
    case ExprKind::Select: {
      auto *s = e.as<Select>();
      if (d_ == PrintDialect::Text)
        return "select(" + print(s->cond) + ", " + print(s->trueValue) + ", " +
               print(s->falseValue) + ")";
      const bool zeroFalse = isPositiveZero(s->falseValue);
      if (d_ == PrintDialect::OpenCL && cl_.laneMaskSelects &&
          s->cond.lanes() == 1 && s->lanes > 1 &&
          (s->type == DType::Float32 || s->type == DType::Float64) &&
          (zeroFalse || isPositiveZero(s->trueValue))) {
        // ClSpelling::laneMaskSelects: the other arm's bits anded with a
        // mask of its element size, all ones where that arm is taken (+0
        // is all zeros).
        const std::string lanes = std::to_string(s->lanes);
        const std::string i = s->type == DType::Float32 ? "int" : "long";
        const std::string f = s->type == DType::Float32 ? "float" : "double";
        return "as_" + f + lanes + "(as_" + i + lanes + "(" +
               print(zeroFalse ? s->trueValue : s->falseValue) + ") & (" + i +
               lanes + ")(-(" + i + ")((" + print(s->cond) + ") " +
               (zeroFalse ? "!=" : "==") + " 0)))";
      }
      return "(" + print(s->cond) + " ? " + print(s->trueValue) + " : " +
             print(s->falseValue) + ")";
    }
    case ExprKind::Cast: {
      auto *c = e.as<Cast>();
      if (d_ == PrintDialect::Text)
        return std::string(dtypeName(c->type)) + "(" + print(c->value) + ")";
      if (c->type == DType::Bool)
        return "((" + print(c->value) + ") != 0)";
      if (c->lanes > 1) {
        AOTC_CHECK(d_ == PrintDialect::OpenCL, "vector printed as C++");
        return "convert_" + typeName(c->type) + std::to_string(c->lanes) +
               "(" + print(c->value) + ")";
      }
      return "((" + typeName(c->type) + ")(" + print(c->value) + "))";
    }
    case ExprKind::Call: {
      auto *c = e.as<Call>();
      std::string s = c->name + "(";
      for (size_t i = 0; i < c->args.size(); ++i)
        s += (i ? ", " : "") + print(c->args[i]);
      return s + ")";
    }
    case ExprKind::Load: {
      auto *l = e.as<Load>();
      // Code printers linearize loads first (one flat index).
      AOTC_CHECK(d_ == PrintDialect::Text || l->indices.size() == 1,
                 "multi-dimensional load of '" << l->buffer
                                               << "' printed as code");
      if (l->type == DType::Float16 && d_ == PrintDialect::OpenCL)
        return "vload_half(" + print(l->indices[0]) + ", " + l->buffer + ")";
      if (l->type == DType::BFloat16 && d_ == PrintDialect::OpenCL)
        return "as_float((uint)" + l->buffer + "[" + print(l->indices[0]) +
               "] << 16)";
      std::string s = l->buffer + "[";
      for (size_t i = 0; i < l->indices.size(); ++i)
        s += (i ? ", " : "") + print(l->indices[i]);
      return s + "]";
    }
    case ExprKind::Access: {
      auto *a = e.as<Access>();
      std::string s = "%t" + std::to_string(a->tensor) + "[";
      for (size_t i = 0; i < a->indices.size(); ++i)
        s += (i ? ", " : "") + print(a->indices[i]);
      return s + "]";
    }
    case ExprKind::IndexCheck: {
      auto *c = e.as<IndexCheck>();
      AOTC_CHECK(d_ == PrintDialect::Text,
                 "index check printed as code (the kernel printer does it)");
      return std::string(c->wrapNegative ? "checked_wrap(" : "checked(") +
             print(c->value) + ", " + print(c->extent) + ", #" +
             std::to_string(c->code) + ")";
    }
    case ExprKind::Broadcast: {
      auto *b = e.as<Broadcast>();
      std::string v = print(b->value);
      if (d_ == PrintDialect::Text)
        return "broadcast" + std::to_string(b->lanes) + "(" + v + ")";
      AOTC_CHECK(d_ == PrintDialect::OpenCL, "vector printed as C++");
      return "((" + typeName(b->type) + std::to_string(b->lanes) + ")(" + v +
             "))";
    }
    case ExprKind::VectorLoad: {
      auto *l = e.as<VectorLoad>();
      std::string n = std::to_string(l->lanes);
      if (d_ == PrintDialect::Text) {
        std::string s = "load" + n +
                        (l->stride != 1 ? "s" + std::to_string(l->stride)
                                        : std::string()) +
                        "(" + l->buffer + "[";
        for (size_t i = 0; i < l->indices.size(); ++i)
          s += (i ? ", " : "") + print(l->indices[i]);
        return s + "])";
      }
      AOTC_CHECK(d_ == PrintDialect::OpenCL && l->indices.size() == 1,
                 "vector load of '" << l->buffer << "' printed as code");
      if (l->stride == 2) {
        // Lanes i, i + 2, ..., i + 2 (n - 1): the even half of the n
        // elements from i and the odd half of the n from i + n - 1 (which
        // ends at the last lane's element, not one past it).
        std::string at = print(l->indices[0]);
        return "((" + typeName(l->type) + n + ")(vload" + n + "(0, " +
               l->buffer + " + " + at + ").even, vload" + n + "(0, " +
               l->buffer + " + (" + at + ") + " +
               std::to_string(l->lanes - 1) + ").odd))";
      }
      if (l->localAligned)
        return "(*(__local const " + typeName(l->type) + n + " *)(" +
               l->buffer + " + " + print(l->indices[0]) + "))";
      if (l->type == DType::Bool) // a mask of int lanes (-1 or 0)
        return "(convert_int" + n + "(vload" + n + "(0, " + l->buffer + " + " +
               print(l->indices[0]) + ")) != (int" + n + ")(0))";
      if (l->type == DType::BFloat16) // the bits, shifted into floats
        return "as_float" + n + "(convert_uint" + n + "(vload" + n + "(0, " +
               l->buffer + " + " + print(l->indices[0]) + ")) << 16)";
      if (l->type == DType::Float16 && l->lanes > 4) {
        // Four halves at a time: PoCL's vload_half8 and vload_half16 read
        // their 16 or 32 bytes as an aligned vector, and a load whose value
        // the kernel keeps in a register (x * x) became vmovdqa, which
        // faulted at an element index that is not a multiple of 8 (an LRN
        // over [n, 5, 4, 5], tests/e2e/check_lrn.py). Loads of 8 bytes have
        // no alignment to fault on.
        std::string at = print(l->indices[0]), s = "((float" + n + ")(";
        for (int k = 0; k < l->lanes; k += 4)
          s += std::string(k ? ", " : "") + "vload_half4(0, " + l->buffer +
               " + " + (k ? "(" + at + ") + " + std::to_string(k) : at) + ")";
        return s + "))";
      }
      return (l->type == DType::Float16 ? "vload_half" : "vload") + n + "(0, " +
             l->buffer + " + " + print(l->indices[0]) + ")";
    }
    case ExprKind::Lane: {
      auto *l = e.as<Lane>();
      std::string v = print(l->vector);
      if (d_ == PrintDialect::Text)
        return v + ".lane" + std::to_string(l->lane);
      AOTC_CHECK(d_ == PrintDialect::OpenCL, "vector printed as C++");
      return "(" + v + ").s" + "0123456789abcdef"[l->lane];
    }
    case ExprKind::FiniteOrSum: {
      // Turned into statements before any code is printed.
      auto *f = e.as<FiniteOrSum>();
      AOTC_CHECK(d_ == PrintDialect::Text,
                 "finite-or-sum printed as code (expand_fallbacks.cpp)");
      std::string s = "finite_or_sum(" + print(f->value) + ", sum";
      for (size_t i = 0; i < f->vars.size(); ++i)
        s += " " + print(f->vars[i]) + " < " + print(f->extents[i]);
      if (f->lane.defined())
        s += " lane " + print(f->lane);
      return s + " of " + print(f->body) + ")";
    }
    }
    return "?";
  }

  std::string typeName(DType t) {
    if (d_ == PrintDialect::OpenCL)
      return dtypeCLName(t);
    switch (t) {
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    case DType::Float16: // computed in float
    case DType::BFloat16:
      return "float";
    case DType::Int8:
      return "int8_t";
    case DType::UInt8:
      return "uint8_t";
    case DType::Int16:
      return "int16_t";
    case DType::UInt16:
      return "uint16_t";
    case DType::UInt32:
      return "uint32_t";
    case DType::Int32:
      return "int32_t";
    case DType::Int64:
      return "int64_t";
    case DType::Bool:
      return "uint8_t";
    }
    return "?";
  }

  std::string printBinary(const Binary *b) {
    std::string x = print(b->a), y = print(b->b);
    bool flt = isFloat(b->a.type());
    switch (b->op) {
    case BinOp::FloorDiv:
      if (d_ == PrintDialect::Text)
        return "(" + x + " floordiv " + y + ")";
      // The wrapper's sizes may divide negative values (a Slice size before
      // its max with 0): floor semantics through a helper, never C's
      // truncation. The OpenCL printer lowers these itself (cl_scalar.cpp).
      if (d_ == PrintDialect::Cxx)
        return "aotc_fdiv(" + x + ", " + y + ")";
      return "(" + x + " / " + y + ")";
    case BinOp::Mod:
      if (d_ == PrintDialect::Text)
        return "(" + x + " mod " + y + ")";
      if (d_ == PrintDialect::Cxx)
        return "aotc_fmod(" + x + ", " + y + ")";
      return "(" + x + " % " + y + ")";
    case BinOp::Min:
    case BinOp::Max: {
      const char *n = b->op == BinOp::Min ? "min" : "max";
      if (d_ == PrintDialect::OpenCL && flt)
        return std::string(b->op == BinOp::Min ? "fmin" : "fmax") + "(" + x +
               ", " + y + ")";
      if (d_ == PrintDialect::Cxx)
        return std::string("aotc_") + n + "(" + x + ", " + y + ")";
      return std::string(n) + "(" + x + ", " + y + ")";
    }
    case BinOp::Pow:
      return "pow(" + x + ", " + y + ")";
    case BinOp::And:
    case BinOp::Or:
      // OpenCL C's && and || branch; with nothing to guard, both sides are
      // evaluated and combined bitwise (0 or 1 each), which stays
      // vectorizable: (v > acc) | isnan(v) in a max.
      if (d_ == PrintDialect::OpenCL && eagerSafe(b->a) && eagerSafe(b->b))
        return "(" + x + (b->op == BinOp::And ? " & " : " | ") + y + ")";
      return "(" + x + " " + binOpName(b->op) + " " + y + ")";
    default:
      return "(" + x + " " + binOpName(b->op) + " " + y + ")";
    }
  }

  PrintDialect d_;
  const VarNamer *namer_;
  bool keys_;
  bool typed_; ///< every node followed by its type (exprKeyRenamed)
  ClSpelling cl_;
};

struct VarOrder {
  bool operator()(const Expr &a, const Expr &b) const {
    const Var *x = a.as<Var>(), *y = b.as<Var>();
    return x->name != y->name ? x->name < y->name : x->id < y->id;
  }
};

/// True if \p pred holds for \p e or any expression inside it (a walk
/// that allocates nothing without \p seen: the bound prover asks this per
/// scope entry). With \p seen, a node (by identity) already in it is not
/// visited again, nor its operands: each shared subexpression once.
template <typename Pred>
bool anySubExpr(const Expr &e, const Pred &pred,
                std::unordered_set<const ExprNode *> *seen = nullptr) {
  if (!e.defined())
    return false;
  if (seen && !seen->insert(e.get()).second)
    return false;
  if (pred(e))
    return true;
  auto any = [&](const std::vector<Expr> &es) {
    for (const Expr &x : es)
      if (anySubExpr(x, pred, seen))
        return true;
    return false;
  };
  switch (e.kind()) {
  case ExprKind::IntImm:
  case ExprKind::FloatImm:
  case ExprKind::Var:
    return false;
  case ExprKind::Binary:
    return anySubExpr(e.as<Binary>()->a, pred, seen) ||
           anySubExpr(e.as<Binary>()->b, pred, seen);
  case ExprKind::Not:
    return anySubExpr(e.as<Not>()->a, pred, seen);
  case ExprKind::Select: {
    auto *s = e.as<Select>();
    return anySubExpr(s->cond, pred, seen) || anySubExpr(s->trueValue, pred, seen) ||
           anySubExpr(s->falseValue, pred, seen);
  }
  case ExprKind::Cast:
    return anySubExpr(e.as<Cast>()->value, pred, seen);
  case ExprKind::Call:
    return any(e.as<Call>()->args);
  case ExprKind::Load:
    return any(e.as<Load>()->indices);
  case ExprKind::Access:
    return any(e.as<Access>()->indices);
  case ExprKind::IndexCheck: {
    auto *c = e.as<IndexCheck>();
    return anySubExpr(c->value, pred, seen) || anySubExpr(c->extent, pred, seen);
  }
  case ExprKind::Broadcast:
    return anySubExpr(e.as<Broadcast>()->value, pred, seen);
  case ExprKind::VectorLoad:
    return any(e.as<VectorLoad>()->indices);
  case ExprKind::Lane:
    return anySubExpr(e.as<Lane>()->vector, pred, seen);
  case ExprKind::FiniteOrSum: {
    auto *f = e.as<FiniteOrSum>();
    return anySubExpr(f->value, pred, seen) || anySubExpr(f->body, pred, seen) ||
           any(f->extents);
  }
  }
  return false;
}

void collectVars(const Expr &e, std::set<Expr, VarOrder> &out) {
  anySubExpr(e, [&](const Expr &x) {
    if (x.kind() == ExprKind::Var)
      out.insert(x);
    return false;
  });
}

} // namespace

std::string printExpr(const Expr &e, PrintDialect d, const VarNamer *namer) {
  if (!e.defined())
    return "<undef>";
  return Printer(d, namer).print(e);
}

std::string printClExpr(const Expr &e, const VarNamer *namer,
                        const ClSpelling &spelling) {
  if (!e.defined())
    return "<undef>";
  return Printer(PrintDialect::OpenCL, namer, false, false, spelling).print(e);
}

std::string printExprs(const std::vector<Expr> &es, PrintDialect d,
                       const VarNamer *namer) {
  std::string s;
  for (size_t i = 0; i < es.size(); ++i)
    s += (i ? "," : "") + printExpr(es[i], d, namer);
  return s;
}

std::string exprKey(const Expr &e) {
  if (!e.defined())
    return "<undef>";
  return Printer(PrintDialect::Text, nullptr, /*keys=*/true).print(e);
}

const std::string &exprKeyRef(const Expr &e) {
  return Printer(PrintDialect::Text, nullptr, /*keys=*/true).key(e);
}

std::string exprKeyRenamed(const Expr &e, const VarNamer &namer) {
  if (!e.defined())
    return "<undef>";
  return Printer(PrintDialect::Text, &namer, /*keys=*/false, /*typed=*/true)
      .print(e);
}

std::vector<Expr> freeVars(const Expr &e) {
  std::set<Expr, VarOrder> s;
  if (e.defined())
    collectVars(e, s);
  return {s.begin(), s.end()};
}

bool hasIndexCheck(const Expr &e) {
  return anySubExpr(
      e, [](const Expr &x) { return x.kind() == ExprKind::IndexCheck; });
}

bool hasSelect(const Expr &e) {
  return anySubExpr(e,
                    [](const Expr &x) { return x.kind() == ExprKind::Select; });
}

bool exprLargerThan(const Expr &e, size_t limit) {
  size_t n = 0;
  return anySubExpr(e, [&](const Expr &) { return ++n > limit; });
}

bool distinctNodesMoreThan(const Expr &e, size_t limit) {
  size_t n = 0;
  std::unordered_set<const ExprNode *> seen;
  return anySubExpr(e, [&](const Expr &) { return ++n > limit; }, &seen);
}

bool usesVar(const Expr &e, const Var *var) {
  return anySubExpr(e, [var](const Expr &x) {
    const Var *v = x.as<Var>();
    return v && v->id == var->id;
  });
}

namespace {

/// The operands of a chain of \p op (And or Or), in order.
void operandsOf(BinOp op, const Expr &c, std::vector<Expr> &out) {
  if (const Binary *b = c.as<Binary>(); b && b->op == op) {
    operandsOf(op, b->a, out);
    operandsOf(op, b->b, out);
    return;
  }
  out.push_back(c);
}

} // namespace

void conjuncts(const Expr &c, std::vector<Expr> &out) {
  operandsOf(BinOp::And, c, out);
}

void disjuncts(const Expr &c, std::vector<Expr> &out) {
  operandsOf(BinOp::Or, c, out);
}

} // namespace aotc
