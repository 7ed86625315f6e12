/// \file
/// Function expansion before import: model-local functions, and every op
/// ONNX defines as a function (Attention, GroupNormalization,
/// MeanVarianceNormalization, ...) that aotc has no native lowering for,
/// are replaced by their bodies through ONNX's inliner. Ops aotc lowers
/// natively (LayerNormalization, Gelu, Softmax, ...) keep their native
/// lowering.
#pragma once

#include "ir/status.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace aotc {
namespace onnx_import {

/// True if \p model has local functions or calls a function-defined op
/// aotc does not lower natively.
bool needsFunctionExpansion(const onnx::ModelProto &model);

/// Expands them in place; errors (a body ONNX cannot build) start with
/// \p origin.
Status expandFunctions(onnx::ModelProto &model, const std::string &origin);

} // namespace onnx_import
} // namespace aotc
