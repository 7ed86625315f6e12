/// \file
/// Shape inference: computes the TensorType of every node result, with
/// symbolic dims (Exprs over the graph's symbols, simplified with their
/// ranges), following ONNX semantics for opsets 7 to 17.
///
/// Small integer tensors that hold shapes get `symbolicData` (their elements
/// as Exprs), propagated through Shape, Gather, Concat, Unsqueeze, Squeeze,
/// Slice, Cast, Identity, Reshape, integer Add/Sub/Mul/Div/Max/Min, Equal,
/// Where and ConstantOfShape, so exporters' `Shape -> Gather -> Unsqueeze ->
/// Concat -> Reshape` chains become compile-time shape expressions.
///
/// The pass also makes a few attributes explicit, so that lowering reads them
/// without re-deriving ONNX defaults:
///  - `axis` of Softmax, LogSoftmax, Concat, Gather and Flatten is set and
///    non-negative; Softmax/LogSoftmax of a model with opset < 13 whose axis
///    is not the last one get `aotc_opset` (the opset: coerce-to-2D
///    semantics);
///  - reductions get `axes` (sorted, non-negative, exactly the reduced axes:
///    empty means no reduction) and `keepdims`, whatever the opset put in an
///    input or left to defaults;
///  - Transpose gets `perm`;
///  - Conv/MaxPool/AveragePool with auto_pad VALID/SAME_* get explicit `pads`
///    and `auto_pad` "NOTSET" (SAME with a stride > 1 needs a static input
///    size for this; otherwise it is an error).
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

namespace aotc {

/// Infers the type of every node result of \p g in order, replacing the
/// previous types. Errors name the node: incompatible shapes, a shape input
/// that is not known at compile time, unsupported attribute values.
Status inferShapes(Graph &g);

} // namespace aotc
