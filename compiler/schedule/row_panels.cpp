/// \file
/// Row panels of a large GEMM's activation (row_panels.h).
#include "compiler/schedule/row_panels.h"

#include "compiler/schedule/schedule.h"
#include "ir/stmt.h"

#include <algorithm>

namespace aotc {

namespace {

/// The smallest A read through a panel copy. Measured on the 2-core Zen 3
/// VM (ab_models.cpp, alternated blocks, two sessions, stop 78): with the
/// copy a 1024^3 GEMM (4 MiB of A) took 0.88-0.93 of its time with A in
/// place, 2048^3 0.90-0.94, 4096^3 0.95-0.99; 512^3 (1 MiB) 0.98 (within
/// the noise), and the 128-row GEMMs of BERT's shapes (0.4-1.5 MiB)
/// 1.03-1.07: their A stays in the L2 and L3 while the tiles reread it, and
/// the copy is a pass more.
constexpr int64_t kMinRowPanelBytes = int64_t{4} << 20;

/// The smallest A read through a panel copy where a kernel of the model
/// computes A (a LayerNormalization, a GEMM's GELU, attention's output):
/// then A arrives spread over the cores' caches by rows as its kernel
/// wrote it, and BERT-base's GEMMs over 128 rows a batch (384 KiB to
/// 1.5 MiB of A at batch 1) read their panels 4-12% faster than the rows
/// in place at batches 1 and 8 (bench/cpu/kernel_profile.py, stop 79); the
/// model in the benchmark's harness, beside ONNX Runtime, 0.90 against
/// 0.94 of its time at batch 1 and 0.95 against 0.99 at batch 8 (two
/// alternated runs each). Smaller A were not measured and stay in place.
constexpr int64_t kMinComputedRowPanelBytes = int64_t{256} << 10;

/// The narrowest N: the GEMM rereads A N / tn times, the copy once.
constexpr int64_t kMinRowPanelColumns = 256;

} // namespace

int64_t gemmRowPanel(const DeviceProfile &target, int64_t m, int64_t n,
                     int64_t k, DType t, bool computed, bool anySize) {
  if (target.family == "gpu" || t != DType::Float32 || m <= 0 || k <= 0 ||
      n <= 0)
    return 0;
  const int64_t minBytes =
      computed ? kMinComputedRowPanelBytes : kMinRowPanelBytes;
  if (!anySize && (!target.rowPanels || m * k * dtypeSize(t) < minBytes ||
                   n < kMinRowPanelColumns))
    return 0;
  // The GEMM as its kernel's nest reads it (A by rows, B in panels of the
  // lanes where compiler/passes/pack_weights.h packs it so: N above the
  // lanes), for the heuristic's tile.
  const int64_t lanes = std::max<int64_t>(target.vectorLanes, 1);
  const bool panels = lanes >= 4 && n > lanes;
  ReductionNest nest;
  nest.shape = {Expr(m), Expr(n)};
  nest.accType = t;
  nest.init = FloatImm::make(0.0, t);
  nest.reduceExtents = {Expr(k)};
  nest.contraction = true;
  nest.blockedSum = true;
  nest.term = [t, lanes, panels](const std::vector<Expr> &at,
                                 const std::vector<Expr> &r) {
    Expr a = Load::make(t, "a", {at[0], r[0]});
    Expr b = panels ? Load::make(t, "b",
                                 {floorDiv(at[1], Expr(lanes)), r[0],
                                  mod(at[1], Expr(lanes))})
                    : Load::make(t, "b", {r[0], at[1]});
    return Binary::make(BinOp::Mul, a, b);
  };
  nest.combine = [](const Expr &acc, const Expr &term) {
    return Binary::make(BinOp::Add, acc, term);
  };
  nest.finish = [](const std::vector<Expr> &at, const Expr &v) {
    return Store::make("y", at, v);
  };
  const RegisterTile tile = chooseRegisterTile(nest, target, 1);
  return tile.m == 0 && tile.n == 1 && tile.tm > 1 && tile.tm <= m ? tile.tm
                                                                   : 0;
}

} // namespace aotc
