/// \file
/// Per-run profiling (profile.h).
#include "profile.h"

#include <algorithm>
#include <chrono>

namespace aotc::rt {

uint64_t hostNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void RunProfile::begin(uint64_t startNs) {
  clear();
  start_ = startNs;
  enqueueStart_ = enqueueEnd_ = startNs;
}

void RunProfile::add(int32_t kind, int32_t index, double flops, double bytes) {
  if (!pending_)
    return; // nothing was enqueued (an empty range) or no profiling
  commands_.push_back({kind, index, flops, bytes, pending_, hostNowNs()});
  pending_ = nullptr;
}

void RunProfile::clear() {
  for (Command &c : commands_)
    clReleaseEvent(c.event);
  commands_.clear();
  if (pending_)
    clReleaseEvent(pending_);
  pending_ = nullptr;
}

std::vector<aotc_profile_record_t> RunProfile::finish(uint64_t endNs) {
  auto rel = [&](uint64_t t) { return t > start_ ? t - start_ : 0; };
  std::vector<aotc_profile_record_t> out;
  out.push_back({AOTC_PROFILE_RUN, 0, 0, rel(endNs), 0, 0});
  out.push_back({AOTC_PROFILE_ENQUEUE, 0, rel(enqueueStart_),
                 rel(enqueueEnd_), 0, 0});
  // Device clock -> host clock: the first command was queued on the device
  // clock at (about) the host time its enqueue call returned.
  bool haveOffset = false;
  int64_t offset = 0;
  for (const Command &c : commands_) {
    cl_ulong queued = 0, startT = 0, endT = 0;
    bool ok = clGetEventProfilingInfo(c.event, CL_PROFILING_COMMAND_QUEUED,
                                      sizeof(queued), &queued,
                                      nullptr) == CL_SUCCESS &&
              clGetEventProfilingInfo(c.event, CL_PROFILING_COMMAND_START,
                                      sizeof(startT), &startT,
                                      nullptr) == CL_SUCCESS &&
              clGetEventProfilingInfo(c.event, CL_PROFILING_COMMAND_END,
                                      sizeof(endT), &endT,
                                      nullptr) == CL_SUCCESS;
    if (!ok)
      continue; // the driver has no times for it: leave it out
    if (!haveOffset) {
      offset = static_cast<int64_t>(rel(c.hostEnqueuedNs)) -
               static_cast<int64_t>(queued);
      haveOffset = true;
    }
    auto map = [&](cl_ulong t) {
      int64_t v = static_cast<int64_t>(t) + offset;
      return static_cast<uint64_t>(std::max<int64_t>(v, 0));
    };
    uint64_t s = map(startT);
    uint64_t e = std::max(map(endT), s);
    out.push_back({c.kind, c.index, s, e, c.flops, c.bytes});
  }
  clear();
  return out;
}

} // namespace aotc::rt
