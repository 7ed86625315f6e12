/// \file
/// The ONNX frontend: reads a model (binary protobuf or ONNX textual syntax)
/// into a Graph with symbolic input dims and inferred result types.
///
/// The importer validates the model with ONNX's checker, runs ONNX's shape
/// inference (its static dims are cross-checked against aotc's own symbolic
/// inference), maps every node to an OpKind and checks its attributes,
/// converts initializers and Constant nodes into graph constants (keeping
/// their ONNX names) and gives graph inputs symbolic dims. Every problem a
/// model can have is returned as an error naming the file, node, op,
/// attribute or input; nothing user-caused aborts or throws.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

#include <map>
#include <memory>
#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace aotc {

struct ImportOptions {
  /// Ranges of named symbolic dims (ONNX dim_param), e.g. from
  /// `--dim batch=1:64`.
  std::map<std::string, Range> dimRanges;
  /// Range of every other symbolic dim.
  Range defaultRange{0, 65536};
};

/// Reads a binary .onnx file. Errors start with \p path.
Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string &path,
                                                const ImportOptions &opts);

/// Parses a model written in ONNX textual syntax (onnx::OnnxParser), as tests
/// write them inline. A missing ir_version defaults to the one the ONNX library
/// writes. Errors start with "<text>".
Expected<std::unique_ptr<Graph>> importOnnxText(const std::string &text,
                                                const ImportOptions &opts);

/// Imports a parsed model; \p origin (a file name) prefixes every error.
/// The result has inferred types (inferShapes has run) and verifies.
Expected<std::unique_ptr<Graph>> importOnnxModel(const onnx::ModelProto &model,
                                                 const std::string &origin,
                                                 const ImportOptions &opts);

} // namespace aotc
