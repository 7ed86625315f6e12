/// \file
/// Shared helpers of the shape inference pass and the per-family entry points
/// (shape_inference_{elementwise,nn,tensor,resize,generate,data_dependent}.cpp).
/// Not a public header.
#pragma once

#include "ir/graph.h"
#include "ir/indexing.h"
#include "ir/simplify.h"
#include "ir/status.h"

#include <string>
#include <vector>

namespace aotc {
namespace shape_inference {

struct Context {
  Graph &graph;
  /// The symbols' ranges; grows as results get derived symbols.
  mutable RangeEnv env;
  int64_t opset;
};

Expr simplifyDim(const Context &c, const Expr &e);

/// The type of input \p i, which must be present.
const TensorType &inputType(const Node &n, size_t i);
/// "input 1 ('shape_out')": how errors name an input.
std::string inputLabel(const Node &n, size_t i);

/// Fails unless inputs \p i and \p j have the same dtype.
Status requireSameDType(const Node &n, size_t i, size_t j);
/// Fails unless input \p i is a float tensor.
Status requireFloat(const Node &n, size_t i);

/// Sets result \p i of \p n (dims simplified) and clears its symbolic data.
/// A derived symbol (Graph::addDerivedSymbol) for a size \p d >= 0 that
/// the wrapper computes once per run, named after \p name; the one already
/// declared with the same definition if any.
Expr deriveSymbol(const Context &c, const std::string &name, const Expr &d);
/// As deriveSymbol, declared at most \p max (a Resize's output dim: its
/// products stay inside 64 bits where its value has no bound the prover
/// can compute, as a size computed from floats).
Expr deriveBoundedSymbol(const Context &c, const std::string &name,
                         const Expr &d, int64_t max);
/// As deriveSymbol for a value that may be negative (a Slice's step).
Expr deriveSignedSymbol(const Context &c, const std::string &name,
                        const Expr &d);
/// Axes given at run time (value symbols) of a tensor of rank \p rank: the
/// run refuses an element outside [-rank, rank) or an axis named twice.
void requireRuntimeAxes(const Context &c, const Node &n,
                        const std::vector<Expr> &axes, int64_t rank);
void setResult(const Context &c, Node &n, size_t i, DType dtype,
               std::vector<Expr> dims);
/// Sets the symbolic data of result \p i (elements simplified).
void setResultData(const Context &c, Node &n, size_t i, std::vector<Expr> data);

/// NumPy broadcasting of two shapes: a dim against 1 gives the dim; two
/// other dims must be provably equal.
Expected<std::vector<Expr>> broadcastShapes(const Context &c, const Node &n,
                                            const std::vector<Expr> &a,
                                            const std::vector<Expr> &b);

/// Fails unless \p a and \p b are provably equal; \p what names them.
Status requireEqual(const Context &c, const Node &n, const Expr &a,
                    const Expr &b, const std::string &what);

/// min/max that decide by bounds where they can.
Expr minOf(const Context &c, const Expr &a, const Expr &b);
Expr maxOf(const Context &c, const Expr &a, const Expr &b);

/// Compile-time known elements of input \p i; an error naming \p what if the
/// input is not known at compile time.
Expected<std::vector<Expr>> knownData(const Node &n, size_t i,
                                      const std::string &what);
/// Like knownData, but every element must be an integer constant.
Expected<std::vector<int64_t>> knownInts(const Node &n, size_t i,
                                         const std::string &what);

/// \p numer's product divided by \p denom's product, cancelling common
/// factors first: [batch,3,4] / [batch] -> 12.
Expr divideProducts(const Context &c, const std::vector<Expr> &numer,
                    const std::vector<Expr> &denom);

// Per-family inference.
Status inferElementwise(Context &c, Node &n);
Status inferNN(Context &c, Node &n);
Status inferTensorOp(Context &c, Node &n);
Status inferResize(Context &c, Node &n);
/// EyeLike and OneHot (shape_inference_generate.cpp).
Status inferGenerate(Context &c, Node &n);
/// QuantizeLinear and DequantizeLinear (shape_inference_quantize.cpp).
Status inferQuantize(Context &c, Node &n);
Status inferDataDependent(Context &c, Node &n);

} // namespace shape_inference
} // namespace aotc
