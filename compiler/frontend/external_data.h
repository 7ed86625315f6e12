/// \file
/// External data: an initializer whose bytes live in a separate file beside
/// the model (`model.onnx` + `model.onnx.data`, ONNX's `external_data`
/// entries `location`, `offset`, `length`). Each file is mapped once and
/// read in place: a tensor's TensorData is a view into the mapping, so the
/// weights are not held twice while compiling.
///
/// A location must name a regular file inside the model's folder: absolute
/// paths, `..`, and symlinks that resolve outside the folder are refused, as
/// are missing files, ranges past the end of the file and lengths that do
/// not match the tensor's type.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>

namespace aotc {
namespace onnx_import {

class ExternalData {
public:
  /// \p modelDir: the folder of the model file; empty when the model did
  /// not come from a file (then every external tensor is an error).
  explicit ExternalData(std::string modelDir);

  /// The \p bytes bytes of external tensor \p t. Errors name the tensor and
  /// the file.
  Expected<TensorData> read(const onnx::TensorProto &t, int64_t bytes);

  /// The resolved path of \p t's location, checked to stay inside the
  /// model's folder (no mapping).
  Expected<std::string> resolve(const onnx::TensorProto &t) const;

private:
  struct Mapping;
  Expected<std::shared_ptr<const Mapping>> map(const std::string &path);

  std::string modelDir_;
  std::string realModelDir_;
  std::map<std::string, std::shared_ptr<const Mapping>> files_;
};

} // namespace onnx_import
} // namespace aotc
