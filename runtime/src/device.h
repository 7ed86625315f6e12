/// \file
/// OpenCL device discovery and selection by a device string.
#ifndef AOTC_RUNTIME_SRC_DEVICE_H
#define AOTC_RUNTIME_SRC_DEVICE_H

#include "error.h"

#include <string>

namespace aotc::rt {

/// What the runtime needs to know about the device it runs on.
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  bool isCpu = false;
  bool isGpu = false;
  /// PoCL (platform "Portable Computing Language"), whose CPU devices
  /// compile work-group functions on a kernel's first launch unless told
  /// otherwise (preferPrebuiltWorkGroups).
  bool isPocl = false;
  std::string platformName;
  std::string platformVersion;
  std::string deviceName;
  std::string deviceVersion;
  std::string driverVersion;
  /// "platform name / device name": what device strings match against.
  std::string fullName;
  size_t maxWorkGroupSize = 1;
  size_t maxWorkItemSizes[3] = {1, 1, 1};
  cl_uint computeUnits = 1; ///< CL_DEVICE_MAX_COMPUTE_UNITS (at least 1)
  cl_uint memBaseAddrAlignBits = 0;
  cl_uint addressBits = 0;
  cl_ulong maxMemAllocSize = 0;
  /// CL_DEVICE_EXTENSIONS, space separated.
  std::string extensions;
};

/// Selects the device named by \p spec (see aotc_container_options_t::device;
/// a null \p spec reads AOTC_DEVICE) and fills \p out. Returns
/// AOTC_ERROR_NOT_FOUND with the list of available devices if nothing
/// matches.
aotc_status_t selectDevice(const char *spec, DeviceInfo &out);

/// Sets POCL_AFFINITY=1 once per process, unless the host set it, where
/// that is safe: the calling thread may run on every online CPU (numbered
/// 0 .. n-1, at least 2). PoCL's CPU device then pins its worker thread i
/// to CPU i. Unpinned, Linux often left both workers of a 2-CPU machine on
/// one CPU after the other had been busy, and a single long kernel ran at
/// half speed for many runs (a 128 x 3072 x 768 GEMM: 2.4-2.6 ms per run
/// instead of 1.3; docs/PERFORMANCE.md). Called by selectDevice before
/// its first OpenCL call; PoCL reads the variable when it starts its
/// threads, so a host that initialized OpenCL itself is not affected.
/// Other OpenCL implementations ignore the variable.
void pinPoclWorkersWhereSafe();

/// On a PoCL CPU device: sets POCL_WORK_GROUP_SPECIALIZATION=0 once per
/// process unless the host set it, so that launches run the work-group
/// functions built with the program (the runtime fetches the program binary
/// right after building it, which makes PoCL compile them then) instead of
/// compiling a specialized one on each kernel's first launch.
void preferPrebuiltWorkGroups(const DeviceInfo &device);

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_DEVICE_H
