/// \file
/// Explicit vectors from scalar Loop IR expressions (vectorize.cpp): the
/// register tiler (register_tile.cpp) and the row kernels
/// (row_reduction.cpp) write an element's expression once as a function of
/// a lane variable and ask for its vector form here.
#pragma once

#include "ir/expr.h"
#include "ir/simplify.h"
#include "ir/stmt.h"

#include <map>
#include <string>
#include <vector>

namespace aotc {

/// OpenCL builtins that take and give float vectors lane by lane.
bool isLanewiseBuiltin(const std::string &name);

/// \p e, an expression of the lane variable \p lane, as a vector of
/// \p lanes values, lane k being \p e at lane = k: a load whose last index
/// steps by one with the lane (and no other) becomes a VectorLoad, one
/// whose last index steps by two a strided one (float32/float64),
/// float arithmetic, lanewise builtins and selects (by a float comparison,
/// or by bools loaded from memory between float32 vectors, when the
/// condition depends on the lane) are applied to vectors, and
/// what does not depend on the lane stays scalar (broadcast where it meets
/// a vector). Variables in \p vectors (by id) stand for those vectors.
/// Anything else that depends on the lane (a gather, another stride, a
/// cast): no vector form, an undefined Expr.
Expr vectorizeLanes(const Expr &e, const Expr &lane, int lanes,
                    const RangeEnv &ranges,
                    const std::map<uint64_t, Expr> &vectors = {});

/// The widest vector group (16, 8 or 4 lanes, at most \p limit) of the
/// columns from \p c on, of \p cols; 1 (a scalar column) where none fits.
int groupWidth(int64_t c, int64_t cols, int limit);

/// \p value stored at \p indices (both expressions of \p lane) as one
/// vector of \p width lanes from lane 0: where the last index steps by one
/// with the lane and the value vectorizes (vectorizeLanes, with \p vectors);
/// else undefined.
Stmt vectorStore(const std::string &buffer, const std::vector<Expr> &indices,
                 const Expr &value, const Expr &lane, int width,
                 const RangeEnv &ranges,
                 const std::map<uint64_t, Expr> &vectors = {});

} // namespace aotc
