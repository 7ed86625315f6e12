/// \file
/// Large device buffers of PoCL's CPU device in the host's huge pages, where
/// the host asks for them (AOTC_HUGE_PAGES=1).
///
/// PoCL allocates a buffer's memory with the C library: 4 KB pages, each
/// faulted in on its first touch, inside the kernel that first writes it.
/// Measured here (a Firecracker VM with nested paging, 2026-11-28): 1.5 us
/// per 4 KB page; the 13 MB arena of the 112 x 112 depthwise convolution at
/// batch 8 added 3 ms (3,251 faults) to its first run, whose steady run is
/// 2 ms. The same memory in transparent huge pages, faulted in when
/// allocated (MADV_POPULATE_WRITE), took 0.6 ms, and that first run 2.6-3.1
/// ms instead of 5.2 in 7 of 10 fresh processes; in the other 3 it took 35
/// ms. This VM reports free 8 MB blocks to its host (free page reporting,
/// page_reporting_order=11), and a huge page carved from a reported block
/// is faulted in again by the host. 4 KB pages come from recently freed
/// memory and never met that. So huge pages are the host's choice, not the
/// default: on a machine without free page reporting they halve a large
/// arena's first-touch cost.
///
/// A buffer of at least one huge page is then memory this file maps (2 MiB
/// aligned, advised MADV_HUGEPAGE, populated), wrapped as a
/// CL_MEM_USE_HOST_PTR buffer, which PoCL's CPU device uses in place; it is
/// unmapped when PoCL deletes the buffer (after the last command that uses
/// it), not when the runtime releases it.
#ifndef AOTC_RUNTIME_SRC_HOST_PAGES_H
#define AOTC_RUNTIME_SRC_HOST_PAGES_H

#include "device.h"

#include <CL/cl.h>

#include <cstdint>

namespace aotc::rt {

/// The smallest buffer createHostPagesBuffer maps: one huge page.
constexpr uint64_t kHugePageBytes = 2ull << 20;

/// True where createHostPagesBuffer serves a buffer of \p bytes: the
/// environment sets AOTC_HUGE_PAGES=1, the device is PoCL's CPU device, and
/// the buffer holds at least one huge page.
bool wantsHostPages(const DeviceInfo &device, uint64_t bytes);

/// A buffer of \p bytes over memory mapped for it (see the file comment).
/// Returns nullptr, and the mapping's or OpenCL's error in \p err, where
/// that fails; the caller then allocates as usual.
cl_mem createHostPagesBuffer(cl_context context, cl_mem_flags flags,
                             uint64_t bytes, cl_int &err);

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_HOST_PAGES_H
