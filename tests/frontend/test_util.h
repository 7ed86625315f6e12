/// \file
/// Helpers of the frontend tests: import models written inline in ONNX
/// textual syntax and read back types and errors.
#pragma once

#include "compiler/frontend/onnx_import.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

/// A starts-with check that prints the full string on failure.
#define EXPECT_STARTS_WITH(str, prefix)                                        \
  EXPECT_EQ(std::string(str).substr(0, std::string(prefix).size()), prefix)    \
      << "full message: " << (str)

namespace aotc {
namespace test {

/// Imports \p text; fails the current test (and returns null) on error.
std::unique_ptr<Graph> importOk(const std::string &text,
                                const ImportOptions &opts = ImportOptions());

/// Imports \p text and returns the error message; "" if it imported.
std::string importError(const std::string &text,
                        const ImportOptions &opts = ImportOptions());

/// The printed type of value \p name ("f32[batch,12]"), or "<missing>".
std::string typeOf(const Graph &g, const std::string &name);

/// The printed symbolic data of value \p name ("batch,3,4"), or "<none>".
std::string dataOf(const Graph &g, const std::string &name);

/// A model header (`<ir_version: 8, opset_import: ["" : OPSET]>`) followed
/// by \p graph.
std::string model(const std::string &graph, int opset = 17);

/// Symbol values by symbol name, as Var bindings of \p g for evaluate().
/// Names that are not symbols of \p g are ignored.
std::vector<std::pair<Expr, int64_t>>
symbolValues(const Graph &g, const std::map<std::string, int64_t> &byName);

/// Writes \p bytes to a fresh temporary file and returns its path.
std::string writeTempFile(const std::string &name, const std::string &bytes);

} // namespace test
} // namespace aotc
