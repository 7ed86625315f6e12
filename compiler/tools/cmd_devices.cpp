/// \file
/// `aotc devices`: the OpenCL platforms and devices this machine has, and
/// their DeviceProfiles (`aotc devices --profile`, `aotc compile
/// --device-profile cl:DEVICE`).
#include "compiler/tools/commands.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

struct Found {
  cl_device_id device = nullptr;
  std::string id; ///< cpu:N or gpu:N
  bool isGpu = false;
};

struct Platform {
  cl_platform_id platform = nullptr;
  std::vector<Found> devices;
};

/// Every platform and its devices, the devices numbered per family over
/// all platforms (what --device and --profile specs name).
std::vector<Platform> allPlatforms() {
  std::vector<Platform> out;
  cl_uint np = 0;
  if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0)
    return out;
  std::vector<cl_platform_id> platforms(np);
  clGetPlatformIDs(np, platforms.data(), nullptr);
  int cpu = 0, gpu = 0;
  for (cl_platform_id p : platforms) {
    out.push_back({p, {}});
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS)
      continue;
    std::vector<cl_device_id> devs(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr);
    for (cl_device_id d : devs) {
      bool isGpu = deviceValue<cl_device_type>(d, CL_DEVICE_TYPE) &
                   CL_DEVICE_TYPE_GPU;
      out.back().devices.push_back(
          {d,
           isGpu ? "gpu:" + std::to_string(gpu++)
                 : "cpu:" + std::to_string(cpu++),
           isGpu});
    }
  }
  return out;
}

std::vector<Found> allDevices() {
  std::vector<Found> out;
  for (const Platform &p : allPlatforms())
    out.insert(out.end(), p.devices.begin(), p.devices.end());
  return out;
}

/// True on an AMD CPU of family 0x1A (Zen 5) or later.
bool hostIsZen5OrLater() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  // "AuthenticAMD" in ebx, edx, ecx.
  if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u ||
      d != 0x69746e65u || c != 0x444d4163u)
    return false;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return false;
  unsigned family = (a >> 8) & 0xf;
  if (family == 0xf)
    family += (a >> 20) & 0xff;
  return family >= 0x1a;
#else
  return false;
#endif
}

DeviceProfile profileOf(const Found &f) {
  cl_device_id d = f.device;
  // OpenCL does not say how many vector registers a CPU device has, what
  // accumulator budgets suit it, nor its cache; PoCL's CPU devices are this
  // machine's cores, so all of that is the host CPU's profile's
  // (hostCpuProfile). A GPU starts from the defaults, without registers.
  DeviceProfile p = f.isGpu ? DeviceProfile() : hostCpuProfile();
  if (f.isGpu)
    p.vectorRegisters = 0;
  p.name = deviceString(d, CL_DEVICE_NAME);
  p.family = f.isGpu ? "gpu" : "cpu";
  p.vectorLanes = std::max<cl_uint>(
      1, deviceValue<cl_uint>(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT));
  p.computeUnits = deviceValue<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
  p.localMemBytes =
      static_cast<int64_t>(deviceValue<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE));
  p.maxWorkGroupSize = static_cast<int64_t>(
      deviceValue<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  return p;
}

} // namespace

std::string hostCpuProfileName() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f"))
    return hostIsZen5OrLater() ? "zen5-avx512" : "generic-avx512";
#endif
  return "generic-avx2";
}

namespace {

/// The bytes of a sysfs cache size ("32768K", "1024K", "32M", "512"), 0
/// where it is not one.
int64_t sysfsSize(const std::string &text) {
  size_t end = 0;
  int64_t n = 0;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9' &&
         n < (int64_t{1} << 40))
    n = n * 10 + (text[end++] - '0');
  if (end == 0)
    return 0;
  const std::string unit =
      text.substr(end, text.find_first_of("\n ", end) - end);
  if (unit.empty())
    return n;
  if (unit == "K")
    return n << 10;
  if (unit == "M")
    return n << 20;
  if (unit == "G")
    return n << 30;
  return 0;
}

std::string readLine(const std::string &path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

/// The size of one instance of CPU 0's data or unified cache of the
/// highest level (\p highest) or the lowest as sysfs describes it (what
/// the cores that share it have), 0 where sysfs does not say.
int64_t sysfsCacheBytes(bool highest = true) {
  int bestLevel = 0;
  int64_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string d =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = readLine(d + "level");
    if (level.empty())
      continue;
    if (readLine(d + "type") == "Instruction")
      continue;
    const int lv = std::atoi(level.c_str());
    const int64_t size = sysfsSize(readLine(d + "size"));
    if (size > 0 && (bestLevel == 0 || (highest ? lv > bestLevel
                                                : lv < bestLevel))) {
      bestLevel = lv;
      best = size;
    }
  }
  return best;
}

/// One core's L1 data cache in bytes (sysfs, else sysconf), 0 if the
/// system does not say.
int64_t hostL1DataBytes() {
  if (int64_t sysfs = sysfsCacheBytes(/*highest=*/false); sysfs > 0)
    return sysfs;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (l1 > 0)
    return l1;
#endif
  return 0;
}

/// The size of this machine's last-level CPU cache in bytes (its L3, else
/// its L2), 0 if the system does not say (DeviceProfile::cacheBytes): one
/// instance, as sysfs gives it. glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) is
/// only the fallback: on an AMD EPYC VM whose 2 vCPUs share one 32 MB L3
/// it said 384 MB (the host's 12 of them), so gemm_4096's rows "fit" and
/// ran without row groups (register_tile.cpp, rowGroup): 356 ms against
/// ONNX Runtime's 315.
int64_t hostCacheBytes() {
  if (int64_t sysfs = sysfsCacheBytes(); sysfs > 0)
    return sysfs;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0)
    return l3;
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 > 0)
    return l2;
#endif
  return 0;
}

} // namespace

DeviceProfile hostCpuProfile() {
  DeviceProfile p = *builtinDeviceProfile(hostCpuProfileName());
  p.cacheBytes = hostCacheBytes();
  p.rowPanels = p.rowPanels && rowPanelsForL1(hostL1DataBytes());
  return p;
}

Expected<DeviceProfile> queryDeviceProfile(const std::string &spec) {
  std::vector<Found> devs = allDevices();
  if (devs.empty())
    return makeError("no OpenCL device found to query for '", spec,
                     "' (is an ICD installed? e.g. pocl-opencl-icd)");
  std::string want = spec.empty() ? "cpu" : spec;
  for (const Found &f : devs)
    if (f.id == want || f.id == want + ":0")
      return profileOf(f);
  for (const Found &f : devs)
    if (deviceString(f.device, CL_DEVICE_NAME).find(want) != std::string::npos)
      return profileOf(f);
  std::string ids;
  for (const Found &f : devs)
    ids += (ids.empty() ? "" : ", ") + f.id;
  return makeError("no OpenCL device '", want, "' (this machine has: ", ids,
                   ")");
}

namespace {

/// A profile spec that asks OpenCL (cl:DEVICE, cl).
bool namesQuery(const std::string &spec) {
  return spec.rfind("cl:", 0) == 0 || spec == "cl";
}

/// A profile spec that names a JSON file (a path with '/' or a .json name).
bool namesFile(const std::string &spec) {
  return spec.find(".json") != std::string::npos ||
         spec.find('/') != std::string::npos;
}

} // namespace

Expected<DeviceProfile> resolveDeviceProfile(const std::string &spec) {
  if (namesQuery(spec))
    return queryDeviceProfile(spec.size() > 3 ? spec.substr(3) : "");
  if (namesFile(spec)) {
    std::optional<std::string> text = readTextFile(spec);
    if (!text)
      return makeError("cannot read device profile '", spec, "'");
    auto p = parseDeviceProfile(*text);
    if (!p)
      return p.status().withContext("'" + spec + "'");
    return p;
  }
  return builtinDeviceProfile(spec);
}

namespace {

/// The profile `aotc devices --profile SPEC` prints: a built-in profile by
/// name, `host` (what `--vector-lanes host` compiles for: this CPU's
/// built-in profile with its cache size), a JSON file or cl:DEVICE as
/// --device-profile takes them, else an OpenCL device (cpu, gpu, gpu:N, a
/// name substring). Printing a built-in gives a starting point for a JSON
/// profile of a device that is not here.
Expected<DeviceProfile> profileForSpec(const std::string &spec) {
  if (spec == "host")
    return hostCpuProfile();
  if (Expected<DeviceProfile> builtin = builtinDeviceProfile(spec))
    return builtin;
  if (namesQuery(spec) || namesFile(spec))
    return resolveDeviceProfile(spec);
  Expected<DeviceProfile> device = queryDeviceProfile(spec);
  if (!device)
    return makeError(device.status().message(),
                     "; or a built-in profile: generic-avx2, generic-avx512, "
                     "zen5-avx512, generic-gpu, host");
  return device;
}

} // namespace

int devicesCommand(const std::string &profileSpec) {
  if (!profileSpec.empty()) {
    auto p = profileForSpec(profileSpec);
    if (!p) {
      std::fprintf(stderr, "aotc: error: %s\n", p.status().message().c_str());
      return 1;
    }
    std::printf("%s\n", deviceProfileJson(*p, true).c_str());
    return 0;
  }
  std::vector<Platform> platforms = allPlatforms();
  if (platforms.empty()) {
    std::printf("no OpenCL platform found (is an ICD installed? e.g. "
                "pocl-opencl-icd)\n");
    return 1;
  }
  for (size_t p = 0; p < platforms.size(); ++p) {
    cl_platform_id platform = platforms[p].platform;
    std::printf("platform %zu: %s (%s)\n", p,
                platformString(platform, CL_PLATFORM_NAME).c_str(),
                platformString(platform, CL_PLATFORM_VERSION).c_str());
    for (const Found &f : platforms[p].devices) {
      cl_device_id d = f.device;
      bool isGpu = f.isGpu;
      std::printf("  %s  %s\n", f.id.c_str(),
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
