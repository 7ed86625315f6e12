/// \file
/// OpenCL device discovery and selection by a device string.
#include "device.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#endif

namespace aotc::rt {
namespace {

std::string platformString(cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0)
    return std::string();
  std::string value(size, '\0');
  if (clGetPlatformInfo(platform, param, size, value.data(), nullptr) !=
      CL_SUCCESS)
    return std::string();
  value.resize(std::strlen(value.c_str()));
  return value;
}

std::string deviceString(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0)
    return std::string();
  std::string value(size, '\0');
  if (clGetDeviceInfo(device, param, size, value.data(), nullptr) != CL_SUCCESS)
    return std::string();
  value.resize(std::strlen(value.c_str()));
  return value;
}

template <typename T> T deviceValue(cl_device_id device, cl_device_info param) {
  T value{};
  if (clGetDeviceInfo(device, param, sizeof(T), &value, nullptr) != CL_SUCCESS)
    return T{};
  return value;
}

std::string toLower(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool startsWith(const std::string &text, const char *prefix) {
  return text.compare(0, std::strlen(prefix), prefix) == 0;
}

/// Parses "N" as a non-negative index; -1 if it is not one.
long parseIndex(const std::string &text) {
  if (text.empty() || text.size() > 9)
    return -1;
  long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

void fillDetails(DeviceInfo &info) {
  cl_device_id d = info.device;
  info.platformName = platformString(info.platform, CL_PLATFORM_NAME);
  info.platformVersion = platformString(info.platform, CL_PLATFORM_VERSION);
  info.deviceName = deviceString(d, CL_DEVICE_NAME);
  info.deviceVersion = deviceString(d, CL_DEVICE_VERSION);
  info.driverVersion = deviceString(d, CL_DRIVER_VERSION);
  info.fullName = info.platformName + " / " + info.deviceName;
  cl_device_type type = deviceValue<cl_device_type>(d, CL_DEVICE_TYPE);
  info.isCpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  info.isPocl =
      info.platformName.find("Portable Computing Language") != std::string::npos;
  info.isGpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  info.maxWorkGroupSize = deviceValue<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  if (info.maxWorkGroupSize == 0)
    info.maxWorkGroupSize = 1;
  cl_uint dims = deviceValue<cl_uint>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  if (dims > 0) {
    std::vector<size_t> sizes(dims, 1);
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                        sizes.size() * sizeof(size_t), sizes.data(),
                        nullptr) == CL_SUCCESS) {
      for (cl_uint i = 0; i < 3 && i < dims; ++i)
        info.maxWorkItemSizes[i] = sizes[i] ? sizes[i] : 1;
    }
  }
  info.computeUnits =
      std::max<cl_uint>(1, deviceValue<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.memBaseAddrAlignBits =
      deviceValue<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
  info.addressBits = deviceValue<cl_uint>(d, CL_DEVICE_ADDRESS_BITS);
  info.maxMemAllocSize = deviceValue<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info.extensions = deviceString(d, CL_DEVICE_EXTENSIONS);
}

} // namespace

void pinPoclWorkersWhereSafe() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef __linux__
    // The host decides where it set the variable (0 keeps PoCL's threads
    // free).
    if (std::getenv("POCL_AFFINITY"))
      return;
    // PoCL pins worker i to CPU i and aborts the process if that CPU is
    // not allowed: only where the calling thread (whose mask PoCL's threads
    // inherit) may run on every online CPU, numbered 0 .. n-1, and PoCL
    // starts at most n workers.
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 2 || online > CPU_SETSIZE)
      return;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) != 0 ||
        CPU_COUNT(&mask) != online)
      return;
    for (long cpu = 0; cpu < online; ++cpu)
      if (!CPU_ISSET(static_cast<int>(cpu), &mask))
        return;
    if (const char *min = std::getenv("POCL_PTHREAD_MIN_THREADS");
        min && std::atol(min) > online)
      return;
    setenv("POCL_AFFINITY", "1", 0);
#endif
  });
}

aotc_status_t selectDevice(const char *spec, DeviceInfo &out) {
  // Before the first OpenCL call of the process (PoCL reads it when it
  // starts its threads, at platform discovery); no effect afterwards.
  pinPoclWorkersWhereSafe();
  if (!spec) {
    spec = std::getenv("AOTC_DEVICE");
    if (!spec)
      spec = "";
  }
  const std::string request = toLower(spec);

  cl_uint numPlatforms = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &numPlatforms);
  if (err != CL_SUCCESS || numPlatforms == 0)
    return fail(AOTC_ERROR_NOT_FOUND,
                "no OpenCL platform found (%s); is an OpenCL ICD installed "
                "(/etc/OpenCL/vendors)?",
                clErrorName(err));
  std::vector<cl_platform_id> platforms(numPlatforms);
  err = clGetPlatformIDs(numPlatforms, platforms.data(), nullptr);
  if (err != CL_SUCCESS)
    return fail(AOTC_ERROR_DEVICE_ERROR, "clGetPlatformIDs failed: %s",
                clErrorName(err));

  // Every device of every platform, in platform order.
  std::vector<DeviceInfo> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint numDevices = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &numDevices) !=
            CL_SUCCESS ||
        numDevices == 0)
      continue;
    std::vector<cl_device_id> ids(numDevices);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, numDevices, ids.data(),
                       nullptr) != CL_SUCCESS)
      continue;
    for (cl_device_id id : ids) {
      DeviceInfo info;
      info.platform = platform;
      info.device = id;
      fillDetails(info);
      devices.push_back(std::move(info));
    }
  }

  const DeviceInfo *chosen = nullptr;
  bool typed = false; // "cpu", "gpu", "cpu:N" or "gpu:N"
  if (request.empty()) {
    for (const DeviceInfo &d : devices) {
      if (d.isGpu) {
        chosen = &d;
        break;
      }
    }
    if (!chosen && !devices.empty())
      chosen = &devices.front();
  } else if (startsWith(request, "cpu") || startsWith(request, "gpu")) {
    bool wantCpu = startsWith(request, "cpu");
    long index = -1;
    if (request.size() == 3)
      index = 0;
    else if (request[3] == ':')
      index = parseIndex(request.substr(4));
    if (index >= 0) {
      typed = true;
      long seen = 0;
      for (const DeviceInfo &d : devices) {
        if (wantCpu ? !d.isCpu : !d.isGpu)
          continue;
        if (seen++ == index) {
          chosen = &d;
          break;
        }
      }
    }
  }
  if (!chosen && !typed && !request.empty()) {
    // A substring of "platform name / device name".
    for (const DeviceInfo &d : devices) {
      if (toLower(d.fullName).find(request) != std::string::npos) {
        chosen = &d;
        break;
      }
    }
  }

  if (!chosen) {
    std::string list;
    int cpus = 0, gpus = 0;
    for (const DeviceInfo &d : devices) {
      const char *kind = d.isCpu ? "cpu" : d.isGpu ? "gpu" : "other";
      int n = d.isCpu ? cpus++ : d.isGpu ? gpus++ : 0;
      list += formatString("\n  %s:%d  %s", kind, n, d.fullName.c_str());
    }
    if (devices.empty())
      list = " none";
    return fail(AOTC_ERROR_NOT_FOUND,
                "no OpenCL device matches '%s'; available devices:%s", spec,
                list.c_str());
  }
  out = *chosen;
  return AOTC_OK;
}

void preferPrebuiltWorkGroups(const DeviceInfo &device) {
  if (!device.isPocl || !device.isCpu)
    return;
  static std::once_flag once;
  std::call_once(once, [] {
    // Not overwritten: a host that set it (to 1, keeping specialization)
    // decides.
    setenv("POCL_WORK_GROUP_SPECIALIZATION", "0", 0);
  });
}

} // namespace aotc::rt
