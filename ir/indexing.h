/// \file
/// Row-major index arithmetic shared by lowering (reshape views) and kernel
/// building (flat buffer indices): the simplifier undoes the pairs these
/// create.
#pragma once

#include "ir/expr.h"
#include "ir/graph.h"
#include "ir/simplify.h"
#include "ir/status.h"

#include <string>
#include <vector>

namespace aotc {

/// Row-major flat index of multi-index \p idx in a tensor of shape \p shape.
Expr linearize(const std::vector<Expr> &idx, const std::vector<Expr> &shape);

/// Multi-index of flat index \p flat in \p shape; the outermost dim has no
/// mod because flat is below the element count.
std::vector<Expr> delinearize(const Expr &flat, const std::vector<Expr> &shape);

/// NonZero and Compress count hits in blocks of kHitBlock positions:
/// hitBlocks(n) blocks over n positions. Shape inference declares it as a
/// derived size when n is not a constant, lowering finds that symbol by
/// this definition (n is the same expression in both).
constexpr int64_t kHitBlock = 256;
Expr hitBlocks(const Expr &n);

/// A Slice start or end as ONNX takes it, for sizes (shape inference) and
/// indices (lowering) alike: counted from the end of a dim of size \p dim
/// when negative, then clamped to [lo, dim + hiOffset]. Constants beyond
/// +-2^48 (INT64_MAX for "to the end") are clamped first, which keeps the
/// arithmetic far from overflow. Simplified over \p env.
Expr clampSliceIndex(const Expr &value, const Expr &dim, int64_t lo,
                     int64_t hiOffset, const RangeEnv &env);

/// Normalizes a possibly negative \p axis into [0, rank); an error naming
/// the node and \p what otherwise.
Expected<int64_t> normalizeAxis(const Node &n, int64_t axis, int64_t rank,
                                const std::string &what = "axis");
/// Normalizes a list of axes, rejecting duplicates; sorted when \p sort.
Expected<std::vector<int64_t>> normalizeAxes(const Node &n,
                                             std::vector<int64_t> axes,
                                             int64_t rank, bool sort,
                                             const std::string &what = "axes");

/// Pad's amounts for every axis of its input, begins then ends (2 * rank
/// values), for shape inference and lowering alike: from the pads input's
/// data (symbolic elements allowed: pads computed from dims, or given at
/// run time) or the attribute, placed by the axes input (opset 18; its
/// values must be constants). Errors name the node.
Expected<std::vector<Expr>> padAmounts(const Node &n);

/// The part of a dim of size \p dim that Pad keeps when pads \p begin and
/// \p end are negative (ONNX crops first, then pads what is left: edge,
/// reflect and wrap read the kept part only): it starts at `start` and has
/// `length` elements.
struct PadKept {
  Expr start, length;
};
PadKept padKept(const Expr &dim, const Expr &begin, const Expr &end,
                const RangeEnv &env);

/// The symbolic data of input \p i of \p n when an element of it is given
/// at run time (a value symbol, or arithmetic on one), else null (no input,
/// data unknown, or every element a constant): the test shape inference and
/// lowering both make before taking an op's run-time form.
const std::vector<Expr> *givenAtRunTime(const Node &n, size_t i);

/// Axes given at run time (a Reduce*'s `axes` input computed from a graph
/// input): for each of the \p rank dims, the condition that one of \p axes
/// (elements in [-rank, rank), a negative one counted from the end) names
/// it. The same expressions for shape inference and lowering, so that the
/// derived symbols each declares over them are one.
std::vector<Expr> runtimeAxisMask(const std::vector<Expr> &axes, int64_t rank);

/// The dims of a reduction over run-time axes seen as 2 * rank dims: for
/// each dim i, its kept extent (1 where reduced, the dim otherwise) then
/// its reduced extent (the dim where reduced, 1 otherwise). Either factor
/// of a dim is 1, so x read at [kept_i + reduced_i] covers it once.
std::vector<Expr> runtimeAxisExtents(const std::vector<Expr> &mask,
                                     const std::vector<Expr> &dims);

/// The length of the dim that \p mask (one axis) names: its element of
/// \p dims.
Expr runtimeAxisLength(const std::vector<Expr> &mask,
                       const std::vector<Expr> &dims);

/// The dims of a reduction's result over run-time axes without keepdims:
/// dim j is the j-th dim that no axis names (rank - axes.size() dims).
std::vector<Expr> runtimeAxisDroppedDims(const std::vector<Expr> &mask,
                                         const std::vector<Expr> &dims,
                                         size_t outRank);

/// One dim of a Slice whose axes or steps are given at run time: the
/// element of the input that output index 0 reads, the step between
/// output indices, and the output's size (0 or more); a dim no axis names
/// is whole (start 0, step 1). \p starts, \p ends, \p axes and \p steps
/// have one element per sliced axis; starts and ends are clamped as ONNX
/// says for each step's sign (clampSliceIndex, without ranges, so that
/// shape inference and lowering build the same expressions).
struct SliceDim {
  Expr start, step, size;
};
std::vector<SliceDim> runtimeSlice(const std::vector<Expr> &starts,
                                   const std::vector<Expr> &ends,
                                   const std::vector<Expr> &axes,
                                   const std::vector<Expr> &steps,
                                   const std::vector<Expr> &dims);

} // namespace aotc
