/// \file
/// Helpers of the frontend tests.
#include "tests/frontend/test_util.h"

#include <gtest/gtest.h>

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

std::vector<std::pair<Expr, int64_t>>
symbolValues(const Graph &g, const std::map<std::string, int64_t> &byName) {
  std::vector<std::pair<Expr, int64_t>> out;
  for (const auto &[name, value] : byName)
    if (const Symbol *s = g.findSymbol(name))
      out.emplace_back(s->var, value);
  return out;
}

} // namespace test
} // namespace aotc
