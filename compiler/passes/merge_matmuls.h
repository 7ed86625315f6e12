/// \file
/// Sibling MatMuls merged into one (horizontal fusion).
///
/// MatMuls that read the same activation A with weights W_1 .. W_n of one
/// reduction extent K (attention's query, key and value projections) become
/// one MatMul of A by Concat(W_1, .., W_n) along the columns, each old result
/// a Slice of the merged one (a view: no kernel). A bias Add that follows
/// every one of them with a weight of its columns merges the same way, so
/// that it stays the merged kernel's epilogue. The GEMM then has n times the
/// columns (BERT's 1024 x 768 x 768 three times becomes 1024 x 2304 x 768):
/// larger tiles fill the device, and A is read once.
///
/// The concatenated weights read weights alone: the folding program
/// (fold_program.h) computes them at load and again when any of the
/// initializers is updated, so updates by name work as before.
///
/// Merged only where it is exact in meaning: float32 A of rank 2 or more,
/// float32 weights of rank 2 computable at load (not per-run defaults), the
/// same K, results and biases that are not graph outputs and have no other
/// reader.
#pragma once

#include "ir/graph.h"

namespace aotc {

/// Merges every group of sibling MatMuls of \p g; returns how many groups.
int mergeSiblingMatMuls(Graph &g);

} // namespace aotc
