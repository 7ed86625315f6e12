/// \file
/// Helpers of the frontend tests.
#include "tests/frontend/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace aotc {
namespace test {

std::unique_ptr<Graph> importOk(const std::string &text,
                                const ImportOptions &opts) {
  auto g = importOnnxText(text, opts);
  if (!g) {
    ADD_FAILURE() << "import failed: " << g.status().message();
    return nullptr;
  }
  return g.take();
}

std::string importError(const std::string &text, const ImportOptions &opts) {
  auto g = importOnnxText(text, opts);
  return g ? "" : g.status().message();
}

std::string typeOf(const Graph &g, const std::string &name) {
  const Value *v = g.findValue(name);
  return v ? v->type().str() : "<missing>";
}

std::string dataOf(const Graph &g, const std::string &name) {
  const Value *v = g.findValue(name);
  if (!v || !v->symbolicData())
    return "<none>";
  return printExprs(*v->symbolicData());
}

std::string model(const std::string &graph, int opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         "]>\n" + graph;
}

std::string writeTempFile(const std::string &name, const std::string &bytes) {
  std::string dir = ::testing::TempDir();
  std::string path =
      dir + "/aotc_frontend_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return path;
}

namespace {

/// \p e in double over the symbols in \p values, as the wrapper's
/// derive_symbols computes a derived size (float arithmetic, floor, ceil,
/// truncating conversions); nullopt for anything else.
std::optional<double> evalDouble(const Expr &e,
                                 const std::vector<std::pair<Expr, int64_t>> &values) {
  if (const IntImm *i = e.as<IntImm>())
    return double(i->value);
  if (const FloatImm *f = e.as<FloatImm>())
    return f->value;
  if (const Var *v = e.as<Var>()) {
    for (const auto &[var, value] : values)
      if (var.as<Var>()->id == v->id)
        return double(value);
    return std::nullopt;
  }
  if (const Cast *c = e.as<Cast>()) {
    auto x = evalDouble(c->value, values);
    if (!x)
      return x;
    if (c->type == DType::Float32)
      return double(float(*x));
    return isFloat(c->type) ? *x : std::trunc(*x);
  }
  if (const Call *c = e.as<Call>(); c && c->args.size() == 1) {
    auto x = evalDouble(c->args[0], values);
    if (!x || (c->name != "floor" && c->name != "ceil"))
      return std::nullopt;
    return c->name == "floor" ? std::floor(*x) : std::ceil(*x);
  }
  if (const Binary *b = e.as<Binary>()) {
    auto x = evalDouble(b->a, values), y = evalDouble(b->b, values);
    if (!x || !y)
      return std::nullopt;
    switch (b->op) {
    case BinOp::Add: return *x + *y;
    case BinOp::Sub: return *x - *y;
    case BinOp::Mul: return *x * *y;
    case BinOp::Div: return *x / *y;
    case BinOp::FloorDiv: return std::floor(*x / *y);
    case BinOp::Min: return std::min(*x, *y);
    case BinOp::Max: return std::max(*x, *y);
    default: return std::nullopt;
    }
  }
  return std::nullopt;
}

} // namespace

std::vector<std::pair<Expr, int64_t>>
symbolValues(const Graph &g, const std::map<std::string, int64_t> &byName) {
  std::vector<std::pair<Expr, int64_t>> out;
  for (const auto &[name, value] : byName)
    if (const Symbol *s = g.findSymbol(name))
      out.emplace_back(s->var, value);
  // Derived symbols, in order (each reads those before it).
  for (const Symbol &s : g.symbols()) {
    if (!s.isDerived())
      continue;
    if (auto v = evaluate(s.definition, out))
      out.emplace_back(s.var, *v);
    else if (auto d = evalDouble(s.definition, out))
      out.emplace_back(s.var, static_cast<int64_t>(*d));
  }
  return out;
}

} // namespace test
} // namespace aotc
