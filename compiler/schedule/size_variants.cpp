/// \file
/// Size variants (ScheduleOptions::sizeVariantAt): a kernel planned at two
/// values of its symbols, launched by the value the run has.
///
/// The heuristics plan a symbolic size with its symbols at 1 (plannedExtent):
/// a tile chosen so that a batch of 1 fills the device. At a batch of 8 the
/// same tile may split its reduction across a work-group that now has
/// work-groups enough, or keep blocks too small for the rows there are
/// (on the H200, ResNet's 56 x 56 layers at batch 8 ran 0.106 ms with the
/// batch-1 tile, 0.076 with one planned for 8). Where the heuristic's
/// configuration at sizeVariantAt differs, both kernels are built; each gets
/// a launch condition on the kernel's output elements, split at the
/// geometric mean of their counts at the two planning points (a batch of 3
/// and up takes the second when the output grows with the batch).
#include "compiler/schedule/schedule.h"

#include "ir/simplify.h"

#include <cmath>

namespace aotc {

int64_t geometricMeanCeil(int64_t a, int64_t b) {
  long double m = std::sqrt(static_cast<long double>(a)) *
                  std::sqrt(static_cast<long double>(b));
  auto t = static_cast<int64_t>(std::ceil(m));
  while (t > 1 && static_cast<long double>(t - 1) * (t - 1) >=
                      static_cast<long double>(a) * b)
    --t;
  return std::max<int64_t>(t, 1);
}

Expected<std::vector<Kernel>> buildSizeVariants(const LoweredGraph &lg,
                                                const FusionPlan &plan,
                                                int def, int kernelIndex,
                                                const LoopModule &m,
                                                const ScheduleOptions &opts) {
  AOTC_ASSIGN_OR_RETURN(Kernel first,
                        buildKernel(lg, plan, def, kernelIndex, m, opts));
  std::vector<Kernel> out;
  const Expr elements = simplify(product(lg.defs[def].shape));
  const int64_t at = opts.sizeVariantAt;
  const int64_t lo = plannedExtent(elements, 1);
  const int64_t hi = at > 1 ? plannedExtent(elements, at) : lo;
  // On CPUs the tiles are planned for a batch of 1 and serve every batch,
  // except a row loop (RegisterTile::rowLoop, the kernel's private array),
  // which pays only where one work-item reads a weight slice: at a batch
  // of 8 its kernel is planned again.
  const bool planned =
      tilesDependOnPlannedSizes(opts.profile) || !first.privates.empty();
  if (at <= 1 || !opts.registerTiling || !planned ||
      freeVars(elements).empty() || hi <= lo) {
    out.push_back(std::move(first));
    return out;
  }
  ScheduleOptions large = opts;
  large.planSymbolsAt = at;
  AOTC_ASSIGN_OR_RETURN(Kernel second,
                        buildKernel(lg, plan, def, kernelIndex, m, large));
  // The same configuration: one kernel serves both. A configuration given
  // for the variant by name keeps it (an autotuner's file round-trips).
  if (second.config == first.config && !opts.kernelConfigs.count(second.name)) {
    out.push_back(std::move(first));
    return out;
  }
  const Expr threshold(geometricMeanCeil(lo, hi));
  first.launchIf = cmp(BinOp::LT, elements, threshold);
  second.launchIf = cmp(BinOp::GE, elements, threshold);
  first.summary += ", launched when " + printExpr(first.launchIf);
  second.summary += ", launched when " + printExpr(second.launchIf);
  out.push_back(std::move(first));
  out.push_back(std::move(second));
  return out;
}

} // namespace aotc
