/// \file
/// `aotc devices`: the OpenCL platforms and devices this machine has.
#include "compiler/tools/commands.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <string>
#include <vector>

namespace aotc::cli {

namespace {

std::string platformString(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  clGetPlatformInfo(p, what, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

std::string deviceString(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  clGetDeviceInfo(d, what, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

template <typename T> T deviceValue(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
  return v;
}

} // namespace

int devicesCommand() {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) {
    std::printf("no OpenCL platform found (is an ICD installed? e.g. "
                "pocl-opencl-icd)\n");
    return 1;
  }
  std::vector<cl_platform_id> platforms(np);
  clGetPlatformIDs(np, platforms.data(), nullptr);
  int cpu = 0, gpu = 0;
  for (cl_uint p = 0; p < np; ++p) {
    std::printf("platform %u: %s (%s)\n", p,
                platformString(platforms[p], CL_PLATFORM_NAME).c_str(),
                platformString(platforms[p], CL_PLATFORM_VERSION).c_str());
    cl_uint nd = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) !=
        CL_SUCCESS)
      continue;
    std::vector<cl_device_id> devs(nd);
    clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr);
    for (cl_device_id d : devs) {
      auto type = deviceValue<cl_device_type>(d, CL_DEVICE_TYPE);
      bool isGpu = type & CL_DEVICE_TYPE_GPU;
      std::string id = isGpu ? "gpu:" + std::to_string(gpu++)
                             : "cpu:" + std::to_string(cpu++);
      std::printf("  %s  %s\n", id.c_str(),
                  deviceString(d, CL_DEVICE_NAME).c_str());
      std::printf(
          "      family %s, %u compute units, %llu MiB global, %llu KiB local, "
          "max work-group %zu\n",
          isGpu ? "gpu" : "cpu",
          deviceValue<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS),
          (unsigned long long)(deviceValue<cl_ulong>(
                                   d, CL_DEVICE_GLOBAL_MEM_SIZE) >>
                               20),
          (unsigned long long)(deviceValue<cl_ulong>(
                                   d, CL_DEVICE_LOCAL_MEM_SIZE) >>
                               10),
          deviceValue<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
      std::printf("      %s, driver %s\n",
                  deviceString(d, CL_DEVICE_VERSION).c_str(),
                  deviceString(d, CL_DRIVER_VERSION).c_str());
    }
  }
  return 0;
}

} // namespace aotc::cli
