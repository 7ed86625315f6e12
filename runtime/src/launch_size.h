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

/// The local size of a CPU launch of \p global work-items: the largest
/// power of two up to \p limit that still gives kCpuGroupsPerUnit groups
/// per compute unit, at least 1. A power of two keeps the distinct sizes a
/// kernel launches with to nine, for a host that turns PoCL's per-size
/// work-group specialization back on (POCL_WORK_GROUP_SPECIALIZATION=1:
/// each new size compiles once); by default PoCL runs one generic
/// work-group function for every size (device.cpp).
inline size_t cpuLocalSize(uint64_t global, size_t limit, uint32_t units) {
  uint64_t want = global / (kCpuGroupsPerUnit * std::max<uint32_t>(units, 1));
  size_t l = 1;
  while (l * 2 <= limit && l * 2 <= want)
    l *= 2;
  return l;
}

} // namespace aotc::rt

#endif
