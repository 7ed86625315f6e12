/// \file
/// Per-run profiling: OpenCL events of one run's commands, turned into
/// aotc_profile_record_t after the run's clFinish.
#ifndef AOTC_RUNTIME_SRC_PROFILE_H
#define AOTC_RUNTIME_SRC_PROFILE_H

#include "aotc/aotc_runtime.h"
#include "device.h"

#include <cstdint>
#include <vector>

namespace aotc::rt {

/// Nanoseconds on the host's monotonic clock.
uint64_t hostNowNs();

/// The events of one run on one instance (an instance runs one run at a
/// time, so it owns one of these). Inactive unless the container profiles.
class RunProfile {
public:
  RunProfile() = default;
  RunProfile(const RunProfile &) = delete;
  RunProfile &operator=(const RunProfile &) = delete;
  ~RunProfile() { clear(); }

  /// Starts a run at host time \p startNs.
  void begin(uint64_t startNs);
  /// The event slot of a command about to be enqueued; null when not
  /// profiling (OpenCL then makes no event).
  cl_event *next(bool active) { return active ? &pending_ : nullptr; }
  /// Records the command just enqueued with the event next() handed out.
  void add(int32_t kind, int32_t index, double flops, double bytes);
  /// Host spans of the wrapper's enqueueing.
  void setEnqueue(uint64_t startNs, uint64_t endNs) {
    enqueueStart_ = startNs;
    enqueueEnd_ = endNs;
  }
  /// After clFinish: reads every event (the run ended at host time \p endNs)
  /// and returns the records, releasing the events.
  std::vector<aotc_profile_record_t> finish(uint64_t endNs);
  void clear();

private:
  struct Command {
    int32_t kind, index;
    double flops, bytes;
    cl_event event;
    uint64_t hostEnqueuedNs;
  };
  cl_event pending_ = nullptr;
  std::vector<Command> commands_;
  uint64_t start_ = 0, enqueueStart_ = 0, enqueueEnd_ = 0;
};

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_PROFILE_H
