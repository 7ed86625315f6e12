/// \file
/// aotc-build-program: compiles OpenCL C for one device and writes the
/// program binary. The model runtime runs it in a child process when its
/// host has loaded an LLVM that would crash PoCL's compiler
/// (runtime/src/program_builder.h); `aotc compile --prebuild DEVICE` runs
/// it to embed a binary in the .so (compiler/driver/prebuild.h). It links
/// OpenCL and the model runtime's archive (for its device selection and
/// device key), no LLVM.
///
///   aotc-build-program (--platform NAME --device NAME | --select SPEC)
///                      [--options TEXT] --source FILE.cl --out FILE.bin
///                      [--key-out FILE.key]
///
/// Without --options, the options are those the source's header names
/// ("// Build options: ..." in `aotc compile --emit=cl`'s output).
/// --platform and --device name the first device whose platform and device
/// names are exactly these (the runtime's child builds). --select takes a
/// device string as aotc_container_options_t::device does (cpu, gpu:1, a
/// name substring) and sets up PoCL as the runtime does before it builds
/// (work-group functions built with the program). --key-out (with
/// --select) writes the program key (programKeyText, program_cache.h: the
/// source's hashes, the options and the device's key): `aotc compile
/// --program-binary KEY,BIN` embeds the binary after checking that its
/// source is the one it compiles, and the runtime loads it only where its
/// device has that key. So a binary can be built on the machine that has
/// the device (it needs only this tool and OpenCL there):
///
///   aotc compile m.onnx --emit=cl [FLAGS] > m.cl        # anywhere
///   aotc-build-program --select gpu --source m.cl --out m.bin --key-out m.key
///   aotc compile m.onnx -o m.so --program-binary m.key,m.bin [FLAGS]
///
/// Exit status 0: the binary was written; 1: the build failed (the build
/// log on stderr); 2: bad arguments, no such device, or an I/O or OpenCL
/// error (the reason on stderr).
#include "device.h" // first: sets the OpenCL version <CL/cl.h> targets
#include "program_cache.h"

#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int usage(const char *why) {
  std::fprintf(stderr,
               "aotc-build-program: %s\nusage: aotc-build-program (--platform "
               "NAME --device NAME | --select SPEC) --options TEXT --source "
               "FILE.cl --out FILE.bin [--key-out FILE.key]\n",
               why);
  return 2;
}

std::string platformInfo(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0)
    return std::string();
  std::string s(size, '\0');
  clGetPlatformInfo(p, what, size, s.data(), nullptr);
  return s.c_str();
}

std::string deviceInfo(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0)
    return std::string();
  std::string s(size, '\0');
  clGetDeviceInfo(d, what, size, s.data(), nullptr);
  return s.c_str();
}

/// The first device named \p device on a platform named \p platform.
cl_device_id findDevice(const std::string &platform, const std::string &device) {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0)
    return nullptr;
  std::vector<cl_platform_id> platforms(np);
  clGetPlatformIDs(np, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    if (platformInfo(p, CL_PLATFORM_NAME) != platform)
      continue;
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS)
      continue;
    std::vector<cl_device_id> devices(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
    for (cl_device_id d : devices)
      if (deviceInfo(d, CL_DEVICE_NAME) == device)
        return d;
  }
  return nullptr;
}

bool readFile(const char *path, std::string &out) {
  FILE *f = std::fopen(path, "rb");
  if (!f)
    return false;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    out.append(chunk, n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

bool writeFile(const char *path, const void *data, size_t size) {
  FILE *f = std::fopen(path, "wb");
  if (!f)
    return false;
  bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

} // namespace

int main(int argc, char **argv) {
  const char *platform = nullptr, *device = nullptr, *options = nullptr,
             *source = nullptr, *out = nullptr, *select = nullptr,
             *keyOut = nullptr;
  for (int i = 1; i < argc; ++i) {
    const char **slot = std::strcmp(argv[i], "--platform") == 0 ? &platform
                        : std::strcmp(argv[i], "--device") == 0 ? &device
                        : std::strcmp(argv[i], "--select") == 0 ? &select
                        : std::strcmp(argv[i], "--key-out") == 0 ? &keyOut
                        : std::strcmp(argv[i], "--options") == 0 ? &options
                        : std::strcmp(argv[i], "--source") == 0 ? &source
                        : std::strcmp(argv[i], "--out") == 0    ? &out
                                                                : nullptr;
    if (!slot)
      return usage((std::string("unknown argument '") + argv[i] + "'").c_str());
    if (i + 1 >= argc)
      return usage((std::string(argv[i]) + " needs a value").c_str());
    *slot = argv[++i];
  }
  if (select ? (platform || device) : (!platform || !device))
    return usage("give --platform and --device, or --select");
  if (keyOut && !select)
    return usage("--key-out needs --select");
  if (!source || !out)
    return usage("--source and --out are required");

  std::string text;
  if (!readFile(source, text)) {
    std::fprintf(stderr, "aotc-build-program: cannot read %s\n", source);
    return 2;
  }
  // The options aotc's source header names, unless given.
  std::string headerOptions;
  if (!options) {
    const std::string tag = "\n// Build options: ";
    size_t at = text.find(tag);
    if (at == std::string::npos || at > 4096)
      return usage("no --options, and the source names none (a \"// Build "
                   "options: \" line, as aotc compile --emit=cl writes)");
    at += tag.size();
    headerOptions = text.substr(at, text.find('\n', at) - at);
    options = headerOptions.c_str();
  }
  cl_device_id dev = nullptr;
  std::string key;
  if (select) {
    aotc::rt::DeviceInfo info;
    if (aotc::rt::selectDevice(select, info) != AOTC_OK) {
      std::fprintf(stderr, "aotc-build-program: %s\n", aotc::rt::lastError());
      return 2;
    }
    // The environment the runtime gives PoCL before it builds.
    aotc::rt::preferPrebuiltWorkGroups(info);
    dev = info.device;
    key = aotc::rt::programKeyText(text.data(), text.size(), options,
                                   aotc::rt::deviceKey(info));
  } else {
    dev = findDevice(platform, device);
    if (!dev) {
      std::fprintf(stderr, "aotc-build-program: no device '%s' on a platform '%s'\n",
                   device, platform);
      return 2;
    }
  }
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) {
    std::fprintf(stderr, "aotc-build-program: clCreateContext failed (%d)\n", err);
    return 2;
  }
  const char *src = text.data();
  size_t size = text.size();
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, &size, &err);
  if (err != CL_SUCCESS) {
    std::fprintf(stderr, "aotc-build-program: clCreateProgramWithSource failed (%d)\n", err);
    return 2;
  }
  err = clBuildProgram(prog, 1, &dev, options, nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    if (n)
      clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    std::fprintf(stderr, "aotc-build-program: the build failed (%d); build log:\n%s\n",
                 err, log.c_str());
    return 1;
  }
  // Asking for the binary is also what makes PoCL compile the kernels'
  // work-group functions into it (runtime/src/device.cpp).
  size_t binSize = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(binSize), &binSize,
                       nullptr) != CL_SUCCESS ||
      binSize == 0) {
    std::fprintf(stderr, "aotc-build-program: the device returned no program binary\n");
    return 2;
  }
  std::vector<unsigned char> bin(binSize);
  unsigned char *ptrs[1] = {bin.data()};
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(ptrs), ptrs, nullptr) !=
      CL_SUCCESS) {
    std::fprintf(stderr, "aotc-build-program: reading the program binary failed\n");
    return 2;
  }
  if (!writeFile(out, bin.data(), bin.size()) ||
      (keyOut && !writeFile(keyOut, key.data(), key.size()))) {
    std::fprintf(stderr, "aotc-build-program: cannot write %s\n",
                 keyOut ? keyOut : out);
    return 2;
  }
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  return 0;
}
