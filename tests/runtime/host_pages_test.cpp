// Large buffers of PoCL's CPU device in huge pages (host_pages.h): which
// buffers are mapped so, that kernels see the memory as a buffer, and that
// the mapping goes when OpenCL deletes the buffer, not before.
#include "host_pages.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using aotc::rt::createHostPagesBuffer;
using aotc::rt::DeviceInfo;
using aotc::rt::kHugePageBytes;
using aotc::rt::wantsHostPages;

namespace {

/// PoCL's CPU device, or none (the test skips).
bool findPoclCpu(cl_platform_id &platform, cl_device_id &device) {
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0)
    return false;
  std::vector<cl_platform_id> platforms(n);
  clGetPlatformIDs(n, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    char name[256] = {0};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(name) - 1, name, nullptr);
    if (!std::strstr(name, "Portable Computing Language"))
      continue;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &device, nullptr) ==
        CL_SUCCESS) {
      platform = p;
      return true;
    }
  }
  return false;
}

/// True while \p p lies in a mapping of this process.
bool mapped(const void *p) {
  long page = sysconf(_SC_PAGESIZE);
  auto at = reinterpret_cast<uintptr_t>(p) & ~static_cast<uintptr_t>(page - 1);
  unsigned char resident = 0;
  return mincore(reinterpret_cast<void *>(at), static_cast<size_t>(page),
                 &resident) == 0;
}

} // namespace

TEST(HostPages, OnlyLargeBuffersOfPoclsCpuDeviceWhenAsked) {
  DeviceInfo cpu;
  cpu.isPocl = cpu.isCpu = true;
  DeviceInfo gpu;
  gpu.isGpu = true;
  DeviceInfo otherCpu;
  otherCpu.isCpu = true;
  // Not by default, nor for anything but "1".
  unsetenv("AOTC_HUGE_PAGES");
  EXPECT_FALSE(wantsHostPages(cpu, 64 * kHugePageBytes));
  setenv("AOTC_HUGE_PAGES", "0", 1);
  EXPECT_FALSE(wantsHostPages(cpu, 64 * kHugePageBytes));
  setenv("AOTC_HUGE_PAGES", "1", 1);
  EXPECT_TRUE(wantsHostPages(cpu, kHugePageBytes));
  EXPECT_TRUE(wantsHostPages(cpu, 100 * kHugePageBytes + 1));
  EXPECT_FALSE(wantsHostPages(cpu, kHugePageBytes - 1));
  EXPECT_FALSE(wantsHostPages(gpu, 64 * kHugePageBytes));
  EXPECT_FALSE(wantsHostPages(otherCpu, 64 * kHugePageBytes));
  unsetenv("AOTC_HUGE_PAGES");
}

TEST(HostPages, BufferIsTheMappingUntilOpenClDeletesIt) {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (!findPoclCpu(platform, device))
    GTEST_SKIP() << "no PoCL CPU device";
  cl_int err = CL_SUCCESS;
  cl_context context =
      clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  // Not a multiple of the huge page: the buffer has the asked size.
  const size_t bytes = 3 * kHugePageBytes + 4100;
  cl_mem mem = createHostPagesBuffer(context, CL_MEM_READ_WRITE, bytes, err);
  ASSERT_NE(mem, nullptr);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem_flags flags = 0;
  void *host = nullptr;
  size_t size = 0;
  clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof(flags), &flags, nullptr);
  clGetMemObjectInfo(mem, CL_MEM_HOST_PTR, sizeof(host), &host, nullptr);
  clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
  EXPECT_TRUE(flags & CL_MEM_USE_HOST_PTR);
  EXPECT_TRUE(flags & CL_MEM_READ_WRITE);
  EXPECT_EQ(size, bytes);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % kHugePageBytes, 0u);
  // What the device writes is the host memory, to the last byte.
  std::vector<uint8_t> pattern(bytes);
  for (size_t i = 0; i < bytes; ++i)
    pattern[i] = static_cast<uint8_t>(i * 131 + 7);
  ASSERT_EQ(clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, bytes,
                                 pattern.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(std::memcmp(host, pattern.data(), bytes), 0);
  std::vector<uint8_t> back(bytes, 0);
  ASSERT_EQ(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, bytes, back.data(), 0,
                                nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(back, pattern);
  // Released while a command still uses it: the memory stays until the
  // command is done, then goes.
  cl_event gate = clCreateUserEvent(context, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::vector<uint8_t> late(bytes, 0);
  ASSERT_EQ(clEnqueueReadBuffer(queue, mem, CL_FALSE, 0, bytes, late.data(),
                                1, &gate, nullptr),
            CL_SUCCESS);
  clReleaseMemObject(mem);
  EXPECT_TRUE(mapped(host));
  clSetUserEventStatus(gate, CL_COMPLETE);
  clFinish(queue);
  EXPECT_EQ(late, pattern);
  clReleaseEvent(gate);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  EXPECT_FALSE(mapped(host));
}
