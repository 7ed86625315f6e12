/// \file
/// A contraction seen as a GEMM (implicit GEMM, the GPU style of issue 9).
///
/// A 3 x 3 convolution over [batch, co, h, w] multiplies a weight that
/// varies along co by an input that varies along batch, h and w; its
/// reduction runs over (ci, kh, kw). As a register tile it has one
/// dimension per side to tile, and where the map is small (ResNet's 7 x 7
/// layer: 512 channels by 49 pixels, 4608 steps) the tiles are few and
/// long: 784 work-items of 4 outputs at batch 1 on a device of 132
/// compute units. Seen as the GEMM [co] x [batch * h * w] it has one
/// column dimension of every pixel of every image, which the work-group
/// tile (local_tile.cpp) blocks like any GEMM's: staged blocks of both
/// operands in local memory, split K inside the group where the blocks
/// are few.
///
/// The view is only an indexing: its column p is unflattened into the
/// output's other dimensions (batch = p / (h * w), h = p / w mod h,
/// w = p mod w) wherever the term or the finish reads an index, so the
/// kernel still reads and writes the buffers with their own shapes. Its
/// stores are element by element (a float4 of columns crosses rows), which
/// costs little beside thousands of reduction steps.
#include "compiler/schedule/schedule.h"

namespace aotc {

ReductionNest gemmView(const ReductionNest &nest, int m) {
  const int rank = static_cast<int>(nest.shape.size());
  std::vector<int> others;
  std::vector<Expr> otherExtents;
  Expr columns(1);
  for (int d = 0; d < rank; ++d)
    if (d != m) {
      others.push_back(d);
      otherExtents.push_back(nest.shape[d]);
      columns = columns * nest.shape[d];
    }
  // The output index of the view's [row, column].
  auto full = [m, rank, others,
               otherExtents](const std::vector<Expr> &at) -> std::vector<Expr> {
    std::vector<Expr> idx(rank);
    idx[m] = at[0];
    std::vector<Expr> cols = unflattenIndex(at[1], otherExtents);
    for (size_t j = 0; j < others.size(); ++j)
      idx[others[j]] = cols[j];
    return idx;
  };
  ReductionNest view = nest;
  view.shape = {nest.shape[m], simplify(columns)};
  const auto term = nest.term;
  const auto finish = nest.finish;
  view.term = [term, full](const std::vector<Expr> &at,
                           const std::vector<Expr> &r) {
    return term(full(at), r);
  };
  view.finish = [finish, full](const std::vector<Expr> &at, const Expr &acc) {
    return finish(full(at), acc);
  };
  return view;
}

} // namespace aotc
