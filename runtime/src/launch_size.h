/// \file
/// The work-group size of a launch whose kernel leaves it to the runtime.
#ifndef AOTC_RUNTIME_SRC_LAUNCH_SIZE_H
#define AOTC_RUNTIME_SRC_LAUNCH_SIZE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace aotc::rt {

/// Work-groups a CPU launch aims for per compute unit: with fewer, a core
/// that draws one group more than the others idles the rest of the launch
/// (a 128-row LayerNorm in one group of 256 ran on one of two cores).
constexpr uint64_t kCpuGroupsPerUnit = 8;

/// The most work-items by which the compute units' last round of groups
/// may exceed an even share of a launch, as a fraction of it (1/32).
constexpr uint64_t kCpuImbalanceDivisor = 32;

/// The work (estimated flops) a CPU work-group must hold for cpuLocalSize
/// to split groups for balance: 2 MFLOP, about 10 us of one core; the
/// halves keep 1 MFLOP or more, many times PoCL's cost of a group.
constexpr double kCpuBalanceGroupFlops = 2e6;

/// The local size of a CPU launch of \p global work-items: the largest
/// power of two up to \p limit that still gives kCpuGroupsPerUnit groups
/// per compute unit, at least 1. A power of two keeps the distinct sizes a
/// kernel launches with to nine, for a host that turns PoCL's per-size
/// work-group specialization back on (POCL_WORK_GROUP_SPECIALIZATION=1:
/// each new size compiles once); by default PoCL runs one generic
/// work-group function for every size (device.cpp).
///
/// Where the launch's \p flops (the kernel's estimate, 0: unknown) give a
/// group kCpuBalanceGroupFlops or more, the size is then halved while the
/// groups' last round would leave units idle for more than
/// 1/kCpuImbalanceDivisor of the launch. PoCL hands whole groups to its
/// threads, so the unit that draws one more group than the others sets the
/// launch's time: a 128 x 768 x 768 GEMM's 264 tiles in 17 groups of 16
/// kept one core of 2 busy for 9 groups' time where 8.25 were due, and
/// BERT-base's GEMMs (264, 792 and 1,056 tiles) ran the model 4-8% slower
/// at batch 1 (stop 49). Light kernels keep their groups: halving those of
/// MobileNetV2's small layers cost more in PoCL's per-group work than the
/// balance saved (its kernels 3% slower).
inline size_t cpuLocalSize(uint64_t global, size_t limit, uint32_t units,
                           double flops = 0) {
  const uint64_t u = std::max<uint32_t>(units, 1);
  uint64_t want = global / (kCpuGroupsPerUnit * u);
  size_t l = 1;
  while (l * 2 <= limit && l * 2 <= want)
    l *= 2;
  if (global == 0 || !(flops > 0))
    return l;
  const double perItem = flops / static_cast<double>(global);
  for (; l > 1 && static_cast<double>(l) * perItem >= kCpuBalanceGroupFlops;
       l /= 2) {
    uint64_t groups = (global + l - 1) / l;
    uint64_t rounds = (groups + u - 1) / u;
    if (rounds * l * u <= global + global / kCpuImbalanceDivisor)
      break;
  }
  return l;
}

} // namespace aotc::rt

#endif
