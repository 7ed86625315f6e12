/// \file
/// Large device buffers of PoCL's CPU device in the host's huge pages
/// (host_pages.h).
#include "host_pages.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14
#endif

namespace aotc::rt {

namespace {

/// A mapping made for one buffer (unmapped when the buffer is deleted).
struct Mapping {
  void *base = nullptr;
  size_t length = 0;
};

void CL_CALLBACK unmapWhenDeleted(cl_mem, void *user) {
  auto *m = static_cast<Mapping *>(user);
  munmap(m->base, m->length);
  delete m;
}

} // namespace

bool wantsHostPages(const DeviceInfo &device, uint64_t bytes) {
  if (!device.isPocl || !device.isCpu || bytes < kHugePageBytes)
    return false;
  const char *env = std::getenv("AOTC_HUGE_PAGES");
  return env && std::strcmp(env, "1") == 0;
}

cl_mem createHostPagesBuffer(cl_context context, cl_mem_flags flags,
                             uint64_t bytes, cl_int &err) {
  uint64_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes *
                     kHugePageBytes;
  // One huge page more than needed, to start on a huge-page boundary.
  auto *m = new Mapping;
  m->length = static_cast<size_t>(rounded + kHugePageBytes);
  m->base = mmap(nullptr, m->length, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m->base == MAP_FAILED) {
    delete m;
    err = CL_OUT_OF_HOST_MEMORY;
    return nullptr;
  }
  uintptr_t at = (reinterpret_cast<uintptr_t>(m->base) + kHugePageBytes - 1) &
                 ~static_cast<uintptr_t>(kHugePageBytes - 1);
  void *data = reinterpret_cast<void *>(at);
  // Advice only: a kernel without transparent huge pages, or without
  // MADV_POPULATE_WRITE, leaves 4 KB pages faulted on first touch.
  madvise(data, static_cast<size_t>(rounded), MADV_HUGEPAGE);
  madvise(data, static_cast<size_t>(rounded), MADV_POPULATE_WRITE);
  cl_mem mem = clCreateBuffer(context, flags | CL_MEM_USE_HOST_PTR,
                              static_cast<size_t>(bytes), data, &err);
  if (err == CL_SUCCESS && mem)
    err = clSetMemObjectDestructorCallback(mem, unmapWhenDeleted, m);
  if (err != CL_SUCCESS || !mem) {
    if (mem)
      clReleaseMemObject(mem); // no callback was set: unmapped below
    munmap(m->base, m->length);
    delete m;
    return nullptr;
  }
  return mem;
}

} // namespace aotc::rt
