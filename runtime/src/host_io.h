/// \file
/// A host run's tensors used in place on a CPU device: the caller's input
/// and output memory wrapped as buffers over that memory
/// (CL_MEM_USE_HOST_PTR), which the kernels then read and write directly,
/// as a device run binds the caller's buffers (DeviceIO), instead of the
/// run copying every input in and every output out.
#ifndef AOTC_RUNTIME_SRC_HOST_IO_H
#define AOTC_RUNTIME_SRC_HOST_IO_H

#include "container.h"

namespace aotc::rt {

/// Buffers over a run's host tensors; released when it goes (after the
/// run has finished with them).
class HostIOBuffers {
public:
  HostIOBuffers() = default;
  HostIOBuffers(const HostIOBuffers &) = delete;
  HostIOBuffers &operator=(const HostIOBuffers &) = delete;
  ~HostIOBuffers();

  /// Wraps the run's inputs (\p binding) and \p outputs (of \p outputBytes)
  /// where every condition holds, and returns true; else creates nothing
  /// and returns false (the run copies). The conditions:
  ///  - \p device is PoCL's CPU device, whose buffer over host memory is
  ///    that memory (its driver's allocation of a CL_MEM_USE_HOST_PTR
  ///    buffer takes the pointer as the device memory: nothing to map or
  ///    copy back after the kernels);
  ///  - the model sizes no output by a count it computes (no sync points);
  ///  - every tensor holds bytes and starts on a multiple of 256 bytes and
  ///    of the device's base alignment, as a device run's offsets must;
  ///  - no output overlaps an input or another output, and no inputs
  ///    overlap (an in-place call copies);
  ///  - the environment does not set AOTC_ZERO_COPY=0.
  bool wrap(cl_context context, const DeviceInfo &device,
            const AotcModelDesc &desc, const Binding &binding,
            const aotc_tensor_t *outputs,
            const std::vector<uint64_t> &outputBytes);

  /// The buffers as a device run's I/O, after a successful wrap.
  const DeviceIO &io() const { return io_; }

private:
  /// Releases the buffers made so far and forgets them.
  void release();

  DeviceIO io_; ///< its buffers are this object's
};

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_HOST_IO_H
