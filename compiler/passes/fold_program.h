/// \file
/// The folding program: the part of the graph that reads weights alone,
/// moved out of the per-run graph into a graph of its own that the model
/// runs on the device when it is loaded and whenever an update changes the
/// weights (LoopModule::foldProgram, aotc_container_run_const_fold).
///
/// A value is foldable when it is a weight no run can replace (an
/// initializer or a Constant's value, not a per-run default) or the result
/// of a node whose inputs are all foldable, with a static shape, that no
/// compile-time shape arithmetic reads. The program holds the foldable
/// nodes worth computing ahead, those that read a weight tensor (more than
/// one element, not shape data; values made from scalars and shapes alone,
/// such as ConstantOfShape, stay literals in the kernels), directly or
/// through another: every one that is not a view (a view of
/// weights, such as the Transpose that reads a packed weight back, costs
/// nothing where a kernel inlines it), a view only feeding those, and a
/// value marked foldTarget (a packed copy). Each program value that the
/// rest of the graph reads becomes a constant computedAtLoad in the main
/// graph, with no data and no room in the blob.
///
/// How a new fold enters: a pass writes the computation as ordinary graph
/// nodes over weights (fold_batchnorm.h does), and this extraction moves it.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aotc {

/// True if \p v depends on weights alone and can be computed at load.
bool isFoldable(const Value *v);

/// N if \p w is a float32 [\p k, N] matrix of static shape computable at
/// load (a MatMul weight the graph passes may rewrite through the folding
/// program: merge_matmuls.h, split_k.h), else 0.
int64_t foldableMatrixColumns(const Value *w, int64_t k);

/// The Cast that widens an integer value to \p v's wider integer type, \p v
/// being that Cast or the Cast plus or minus a scalar the compiler knows
/// (MatMulInteger's B or ConvInteger's W cast to int32 less its zero
/// point); null otherwise. What the Cast reads is the caller's to check
/// (a weight: kernels widen it as they load it, fold_program.cpp,
/// pack_weights.cpp).
Node *integerWidening(const Value *v);

struct FoldProgram {
  /// The program: its constants are the weights it reads (initializers
  /// keep their ONNX names), its outputs are the computed values.
  std::unique_ptr<Graph> graph;
  /// Per output of graph: the name of the computedAtLoad constant of the
  /// main graph that holds it.
  std::vector<std::string> targets;
};

/// Moves the folding program out of \p g (see the file comment); the
/// program's graph is null when there is nothing to fold.
Expected<FoldProgram> extractFoldProgram(Graph &g);

} // namespace aotc
