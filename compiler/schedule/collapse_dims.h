/// \file
/// Merging neighbouring output dimensions that every access reads as one
/// (collapse_dims.cpp).
///
/// A 1x1 convolution of stride 1 reads its input at [n, ci, h, w] and
/// stores [n, co, h, w]: for the kernel, h and w are one dimension p of
/// H*W elements (h = p floordiv W, w = p mod W), contiguous in both
/// buffers. Tiled as two dimensions, its vector tile along w has a 56-wide
/// row to cover (3 vectors of 16 and a partial one) and its tile along h
/// nothing to share; tiled along p (3136 = 196 x 16) every tile is whole.
/// The same holds for a pointwise kernel over [n, c, h, w], which then
/// stores whole vectors along n*c*h*w.
///
/// A pair of output dimensions (k, k+1) merges when, with fresh variables a
/// and b at k and k+1, every buffer access that reads a or b indexes them
/// as exactly [.., a, b, ..] at two neighbouring dimensions of the same
/// extents, and nothing else (a select on the padding, a value computed
/// from the index) reads them. The merged kernel then views each such
/// buffer with those two dimensions as one (KernelBuffer::shape; the
/// verifier checks that a view holds no more elements than its buffer)
/// and indexes it with p: no division, no remainder.
#pragma once

#include "compiler/schedule/schedule.h"

#include <map>
#include <string>
#include <vector>

namespace aotc {

/// A nest after merging and the kernel's views of the buffers it reads
/// with merged dimensions.
struct CollapsedNest {
  ReductionNest nest;
  /// Buffer name -> the shape the kernel views it with (only buffers whose
  /// view differs from their shape).
  std::map<std::string, std::vector<Expr>> views;
};

/// \p nest with its reduction loops of extent 1 dropped (their variables
/// read as 0; a 1x1 window's loops; one is kept when all are) and every
/// pair of neighbouring output dimensions merged that its accesses allow,
/// repeatedly. Buffer shapes are \p m's.
CollapsedNest collapseDims(const ReductionNest &nest, const LoopModule &m);

} // namespace aotc
