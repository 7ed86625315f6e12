/// \file
/// The on-disk cache of OpenCL program binaries.
///
/// A cache entry is one file, named by a hash of its key, that holds the key
/// text itself (to rule out hash collisions), the binary and a checksum of the
/// binary:
///
///   "AOTCBIN" 0x01 | u64 keyLength | u64 binaryLength | u64 binaryHashA |
///   u64 binaryHashB | key bytes | binary bytes
///
/// The key covers the OpenCL C source (by two hashes and its length), the
/// build options and the device's key (deviceKey(): the platform name and
/// version, the device name and version, the driver version, the address
/// bits and, for a CPU device, the host's instruction set extensions).
/// Entries are written to a temporary file and
/// renamed into place, so readers never see a partial entry.
///
/// The cache directory is private (0700, owned by the user); one owned by
/// someone else is not used at all. An entry is read only if it is a regular
/// file (no symlink, FIFO or device: opened without following links and
/// without blocking) owned by the user and writable by nobody else, so no
/// other user can plant a binary for this process to run. Anything else is
/// ignored and the program is built from source.
#include "program_cache.h"

#include "program_builder.h"
#include "program_split.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aotc::rt {
namespace {

constexpr char kMagic[8] = {'A', 'O', 'T', 'C', 'B', 'I', 'N', 1};
constexpr size_t kHeaderSize = 8 + 4 * 8;
/// Larger files are not cache entries of ours.
constexpr uint64_t kMaxEntrySize = uint64_t(1) << 31;

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

/// Keeps [A-Za-z0-9_-] of a model name, at most 40 characters.
std::string sanitize(const char *name) {
  std::string result;
  for (const char *p = name; p && *p && result.size() < 40; ++p) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-';
    result += ok ? c : '_';
  }
  return result.empty() ? "model" : result;
}

/// mkdir -p, the last directory private (0700); returns false unless
/// \p path is then a real directory (not a symlink) owned by this user and
/// accessible to nobody else (a directory of ours with looser permissions is
/// made private).
bool makePrivateDirectory(const std::string &path) {
  if (path.empty())
    return false;
  std::string prefix;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    prefix = path.substr(0, pos);
    if (prefix.empty())
      continue;
    mode_t mode = pos == std::string::npos ? 0700 : 0755;
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST)
      return false;
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid())
    return false;
  if ((st.st_mode & 077) != 0 && ::chmod(path.c_str(), 0700) != 0)
    return false;
  return true;
}

/// Reads a cache entry file: only a regular file of ours that nobody else
/// can write; never follows a link, never blocks on a FIFO.
bool readFile(const std::string &path, std::vector<unsigned char> &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == ::geteuid() && (st.st_mode & 022) == 0 &&
            static_cast<uint64_t>(st.st_size) <= kMaxEntrySize;
  if (ok) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        ok = false;
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

bool writeAll(int fd, const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// Writes a cache entry atomically; failures are ignored (caching is an
/// optimization, never a reason to fail a load).
void writeEntry(const std::string &dir, const std::string &path,
                const std::string &key, const unsigned char *binary,
                size_t binarySize) {
  if (!makePrivateDirectory(dir))
    return;
  static std::atomic<unsigned> counter{0};
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(counter.fetch_add(1));
  int fd = ::open(temp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  uint64_t header[4] = {key.size(), binarySize, hashFnv1a(binary, binarySize),
                        hashMix(binary, binarySize)};
  bool ok = writeAll(fd, kMagic, sizeof(kMagic)) &&
            writeAll(fd, header, sizeof(header)) &&
            writeAll(fd, key.data(), key.size()) &&
            writeAll(fd, binary, binarySize);
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0)
    ::unlink(temp.c_str());
}

/// Reads a cache entry; false if it is missing, corrupt or for another key.
bool readEntry(const std::string &path, const std::string &key,
               std::vector<unsigned char> &file, size_t &binaryOffset,
               size_t &binarySize) {
  if (!readFile(path, file) || file.size() < kHeaderSize ||
      std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0)
    return false;
  uint64_t header[4];
  std::memcpy(header, file.data() + sizeof(kMagic), sizeof(header));
  uint64_t keySize = header[0], size = header[1];
  if (keySize != key.size() || size == 0 ||
      file.size() - kHeaderSize < keySize ||
      file.size() - kHeaderSize - keySize != size)
    return false;
  if (std::memcmp(file.data() + kHeaderSize, key.data(), keySize) != 0)
    return false;
  binaryOffset = kHeaderSize + keySize;
  binarySize = size;
  const unsigned char *binary = file.data() + binaryOffset;
  return hashFnv1a(binary, binarySize) == header[2] &&
         hashMix(binary, binarySize) == header[3];
}

std::string buildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                            &size) != CL_SUCCESS ||
      size == 0)
    return "(no build log)";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size,
                            log.data(), nullptr) != CL_SUCCESS)
    return "(no build log)";
  log.resize(std::strlen(log.c_str()));
  while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
    log.pop_back();
  return log;
}

bool programBinary(cl_program program, std::vector<unsigned char> &out) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size,
                       nullptr) != CL_SUCCESS ||
      size == 0)
    return false;
  out.resize(size);
  unsigned char *pointers[1] = {out.data()};
  return clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(pointers),
                          pointers, nullptr) == CL_SUCCESS;
}

/// Tries to create and build the program from a cached binary.
cl_program loadFromBinary(cl_context context, const DeviceInfo &device,
                          const unsigned char *binary, size_t size,
                          const char *options) {
  cl_int binaryStatus = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithBinary(
      context, 1, &device.device, &size, &binary, &binaryStatus, &err);
  if (err != CL_SUCCESS || binaryStatus != CL_SUCCESS || !program) {
    if (program)
      clReleaseProgram(program);
    return nullptr;
  }
  if (clBuildProgram(program, 1, &device.device, options, nullptr, nullptr) !=
      CL_SUCCESS) {
    clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

/// The device's part of a cache key: platform, device and driver.
std::string deviceLines(const DeviceInfo &device) {
  std::string key = "platform: " + device.platformName + "\n";
  key += "platform version: " + device.platformVersion + "\n";
  key += "device: " + device.deviceName + "\n";
  key += "device version: " + device.deviceVersion + "\n";
  key += "driver version: " + device.driverVersion + "\n";
  key += formatString("address bits: %u\n", device.addressBits);
  return key;
}

/// The program's part of a key: the source (its size and two hashes) and
/// the build options.
std::string sourceLines(const char *source, size_t sourceSize,
                        const char *options) {
  return formatString("source: %zu bytes, %s%s\n", sourceSize,
                      hex64(hashFnv1a(source, sourceSize)).c_str(),
                      hex64(hashMix(source, sourceSize)).c_str()) +
         "options: " + std::string(options ? options : "") + "\n";
}

/// The kernels \p program defines (CL_PROGRAM_KERNEL_NAMES).
std::vector<std::string> kernelNamesOf(cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0)
    return {};
  std::string text(size, '\0');
  if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, text.data(),
                       nullptr) != CL_SUCCESS)
    return {};
  text.resize(std::strlen(text.c_str()));
  std::vector<std::string> names;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(';', start);
    if (end == std::string::npos)
      end = text.size();
    if (end > start)
      names.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

/// Releases \p programs; false (for the loaders' failure returns).
bool releaseAll(std::vector<cl_program> &programs) {
  for (cl_program p : programs)
    clReleaseProgram(p);
  programs.clear();
  return false;
}

/// The program of each of \p names, from the kernels each program defines
/// (\p defined[i] for programs[i]); false where a kernel is defined twice
/// or one of \p names by none.
bool assignKernels(const std::vector<std::vector<std::string>> &defined,
                   const std::vector<std::string> &names,
                   std::vector<size_t> &programOf) {
  std::map<std::string, size_t> where;
  for (size_t i = 0; i < defined.size(); ++i)
    for (const std::string &name : defined[i])
      if (!where.emplace(name, i).second)
        return false;
  programOf.assign(names.size(), 0);
  for (size_t k = 0; k < names.size(); ++k) {
    auto it = where.find(names[k]);
    if (it == where.end())
      return false;
    programOf[k] = it->second;
  }
  return true;
}

/// Loads the binaries the compiler embedded for the device whose key is
/// \p key: one program, or the parts of one (aotc compile --prebuild on a
/// machine with several CPUs builds the parts at once: program_split.h),
/// each kernel then created from the part that defines it. False, with
/// nothing kept, where none is for this device, the driver refuses one, or
/// the parts do not define each of the model's kernels exactly once.
bool loadEmbedded(cl_context context, const DeviceInfo &device,
                  const std::string &key, const ProgramRequest &request,
                  const char *options, ProgramResult &out) {
  if (request.numEmbedded <= 0 || !request.embedded)
    return false;
  std::vector<cl_program> programs;
  for (int32_t i = 0; i < request.numEmbedded; ++i) {
    const AotcProgramBinaryDesc &b = request.embedded[i];
    if (!b.device_key || !b.binary || b.binary_size == 0 ||
        key != b.device_key)
      continue;
    cl_program program = loadFromBinary(
        context, device, b.binary, static_cast<size_t>(b.binary_size), options);
    if (!program)
      return releaseAll(programs);
    programs.push_back(program);
  }
  if (programs.empty())
    return false;
  std::vector<size_t> programOf(request.kernelNames.size(), 0);
  if (programs.size() > 1) {
    std::vector<std::vector<std::string>> defined;
    for (cl_program program : programs)
      defined.push_back(kernelNamesOf(program));
    if (!assignKernels(defined, request.kernelNames, programOf))
      return releaseAll(programs);
  }
  out.programs = std::move(programs);
  out.programOf = std::move(programOf);
  out.origin = ProgramOrigin::Embedded;
  return true;
}

} // namespace

std::string hostIsaText() {
  std::string text;
#if defined(__x86_64__) || defined(__i386__)
  // What LLVM may emit for a CPU device: a binary built where one of these
  // is present must not run where it is absent. (GCC's and clang's builtin
  // both know these names; f16c comes with AVX2 on every such CPU.)
#define AOTC_ISA(name)                                                         \
  if (__builtin_cpu_supports(name))                                            \
    text += text.empty() ? name : " " name;
  AOTC_ISA("sse4.2")
  AOTC_ISA("avx")
  AOTC_ISA("avx2")
  AOTC_ISA("fma")
  AOTC_ISA("bmi")
  AOTC_ISA("bmi2")
  AOTC_ISA("avx512f")
  AOTC_ISA("avx512cd")
  AOTC_ISA("avx512dq")
  AOTC_ISA("avx512bw")
  AOTC_ISA("avx512vl")
  AOTC_ISA("avx512ifma")
  AOTC_ISA("avx512vbmi")
  AOTC_ISA("avx512vbmi2")
  AOTC_ISA("avx512vnni")
  AOTC_ISA("avx512bitalg")
  AOTC_ISA("avx512vpopcntdq")
  AOTC_ISA("avx512bf16")
#undef AOTC_ISA
#endif
  return text;
}

std::string programKeyText(const char *source, size_t sourceSize,
                           const char *options, const std::string &deviceKey) {
  return "aotc program key v1\n" + sourceLines(source, sourceSize, options) +
         deviceKey;
}

std::string deviceKey(const DeviceInfo &device) {
  std::string key = deviceLines(device);
  if (device.isCpu)
    key += "host isa: " + hostIsaText() + "\n";
  return key;
}

uint64_t hashFnv1a(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t hashMix(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (size * 0xff51afd7ed558ccdull);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h ^= w * 0x87c37b91114253d5ull;
    h = (h << 31) | (h >> 33);
    h *= 0x4cf5ad432745937full;
  }
  for (; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  // splitmix64 finalizer.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

std::string resolveCacheDir(const char *option) {
  if (option && *option)
    return option;
  if (const char *env = std::getenv("AOTC_CACHE_DIR"); env && *env)
    return env;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/aotc";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/aotc";
  return std::string();
}

namespace {

/// The cache key of a program built from \p source with \p options for the
/// device whose key is \p deviceKeyText. v2: the device's part is
/// deviceKey(), with the host's instruction set extensions of a CPU device,
/// so that an entry copied from another machine (a home folder shared over
/// the network, a cache baked into a container image) never runs machine
/// code this CPU lacks.
std::string cacheKey(const char *source, size_t sourceSize, const char *options,
                     const std::string &deviceKeyText) {
  return "aotc program cache v2\n" + sourceLines(source, sourceSize, options) +
         deviceKeyText;
}

/// The cache file of \p key in \p dir ("" if \p dir is "": no caching).
std::string entryPath(const std::string &dir, const char *modelName,
                      const std::string &key) {
  if (dir.empty())
    return std::string();
  return dir + "/" + sanitize(modelName) + "-" +
         hex64(hashFnv1a(key.data(), key.size())) +
         hex64(hashMix(key.data(), key.size())) + ".clbin";
}

/// One program for every kernel.
void setSingle(ProgramResult &out, cl_program program, ProgramOrigin origin,
               size_t numKernels) {
  out.programs = {program};
  out.programOf.assign(numKernels, 0);
  out.origin = origin;
}

/// Builds the program of \p request in parts, by \p jobs aotc-build-program
/// processes at once (program_split.h), each part from its cache entry in
/// \p dir where it has one (every part cached: no tool needed). False,
/// with nothing kept, where a part is not cached and the tool is not
/// found, the source does not split, or a part fails to build or load: the
/// caller then builds it whole (and reports a real build error with the
/// build log).
bool buildInParts(cl_context context, const DeviceInfo &device,
                  const ProgramRequest &request, const char *options,
                  const std::string &thisDevice, const std::string &dir,
                  size_t jobs, ProgramResult &out) {
  const std::vector<ProgramPart> parts = splitProgram(
      request.source, request.sourceSize, request.kernelNames, jobs);
  if (parts.empty())
    return false;
  // Each part from its cache entry, else built: the parts not cached, each
  // by its own process, all at once.
  std::vector<std::string> keys(parts.size()), paths(parts.size());
  std::vector<bool> cached(parts.size(), false);
  std::vector<BuilderJob> jobsToRun;
  std::vector<size_t> jobPart;
  std::vector<std::vector<unsigned char>> binaries(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    keys[i] = cacheKey(parts[i].source.data(), parts[i].source.size(),
                       options, thisDevice);
    paths[i] = entryPath(dir, request.modelName, keys[i]);
    std::vector<unsigned char> file;
    size_t offset = 0, size = 0;
    if (!paths[i].empty() && readEntry(paths[i], keys[i], file, offset, size)) {
      binaries[i].assign(file.begin() + offset, file.begin() + offset + size);
      cached[i] = true;
      continue;
    }
    BuilderJob job;
    job.source = parts[i].source;
    jobsToRun.push_back(std::move(job));
    jobPart.push_back(i);
  }
  // The tool only where a part is not cached: parts that an earlier load
  // built (with the tool on PATH) load without it, where the whole
  // program's entry, which that load never wrote, would be built again
  // from source in this process (ResNet-18: 16 s).
  const std::string builder =
      jobsToRun.empty() ? std::string() : findProgramBuilder();
  if (!jobsToRun.empty() && builder.empty())
    return false;
  runProgramBuildersAtOnce(
      builder, builderDeviceArgs(device), options,
      formatString("building part of the OpenCL program of model '%s' for "
                   "'%s' in another process",
                   request.modelName, device.fullName.c_str()),
      /*wantKey=*/false, jobsToRun);
  for (size_t j = 0; j < jobsToRun.size(); ++j) {
    if (jobsToRun[j].status != AOTC_OK)
      return false;
    binaries[jobPart[j]] = std::move(jobsToRun[j].binary);
  }

  std::vector<cl_program> programs;
  std::vector<std::vector<std::string>> defined;
  for (size_t i = 0; i < parts.size(); ++i) {
    cl_program program = loadFromBinary(context, device, binaries[i].data(),
                                        binaries[i].size(), options);
    if (!program)
      return releaseAll(programs);
    programs.push_back(program);
    defined.push_back(parts[i].kernels);
  }
  std::vector<size_t> programOf;
  if (!assignKernels(defined, request.kernelNames, programOf))
    return releaseAll(programs);
  bool built = false;
  for (size_t i = 0; i < parts.size(); ++i) {
    built = built || !cached[i];
    if (!cached[i] && !paths[i].empty())
      writeEntry(dir, paths[i], keys[i], binaries[i].data(),
                 binaries[i].size());
  }
  out.programs = std::move(programs);
  out.programOf = std::move(programOf);
  out.origin = built ? ProgramOrigin::Source : ProgramOrigin::Cache;
  out.cachePath = paths.front();
  return true;
}

} // namespace

size_t buildJobs(const DeviceInfo &device) {
  return builderJobs(device.isPocl && device.isCpu ? onlineCpus() : 1);
}

aotc_status_t buildProgram(cl_context context, const DeviceInfo &device,
                           const ProgramRequest &request, ProgramResult &out) {
  const char *options = request.options ? request.options : "";
  const std::string thisDevice = deviceKey(device);

  // A binary built for this device at compile time: no compiler, no disk.
  const size_t numKernels = request.kernelNames.size();
  if (loadEmbedded(context, device, thisDevice, request, options, out))
    return AOTC_OK;

  const std::string key =
      cacheKey(request.source, request.sourceSize, options, thisDevice);
  std::string dir = resolveCacheDir(request.cacheDirOption);
  // A directory that is not private to this user is not used at all.
  if (!dir.empty() && !makePrivateDirectory(dir))
    dir.clear();
  const std::string path = entryPath(dir, request.modelName, key);
  out.cachePath = path;

  if (!path.empty()) {
    std::vector<unsigned char> file;
    size_t offset = 0, size = 0;
    if (readEntry(path, key, file, offset, size)) {
      if (cl_program program = loadFromBinary(
              context, device, file.data() + offset, size, options)) {
        setSingle(out, program, ProgramOrigin::Cache, numKernels);
        return AOTC_OK;
      }
    }
  }

  // Build from source: in another process where PoCL's compiler would
  // crash this one (program_builder.h).
  std::string why;
  const bool outOfProcess = buildOutOfProcess(device, why);
  if (outOfProcess) {
    const char *spec = std::getenv("POCL_WORK_GROUP_SPECIALIZATION");
    if (device.isPocl && spec && std::strcmp(spec, "0") != 0)
      return fail(AOTC_ERROR_DEVICE_ERROR,
                  "model '%s' cannot run on '%s' in this process: %s, and "
                  "POCL_WORK_GROUP_SPECIALIZATION=%s makes PoCL compile on "
                  "each kernel's first launch (leave it unset or set it to 0)",
                  request.modelName, device.fullName.c_str(), why.c_str(),
                  spec);
  }
  // In parts, by several processes at once (program_split.h).
  if (const size_t jobs = buildJobs(device);
      jobs >= 2 && buildInParts(context, device, request, options, thisDevice,
                                dir, jobs, out))
    return AOTC_OK;
  if (outOfProcess) {
    std::string builder = findProgramBuilder();
    if (builder.empty())
      return fail(AOTC_ERROR_DEVICE_ERROR,
                  "the OpenCL program of model '%s' must be built in another "
                  "process (%s), but the aotc-build-program tool was not "
                  "found: set AOTC_PROGRAM_BUILDER to its path or put it on "
                  "PATH, or load the model once in a process without that "
                  "library, which fills the program cache (%s)",
                  request.modelName, why.c_str(),
                  path.empty() ? "off here" : path.c_str());
    std::vector<unsigned char> binary;
    AOTC_RT_RETURN_IF_ERROR(buildBinaryInChild(
        builder, device, request.source, request.sourceSize, options,
        request.modelName, binary));
    cl_program program =
        loadFromBinary(context, device, binary.data(), binary.size(), options);
    if (!program)
      return fail(AOTC_ERROR_DEVICE_ERROR,
                  "the program binary of model '%s' that '%s' built for '%s' "
                  "does not load",
                  request.modelName, builder.c_str(), device.fullName.c_str());
    setSingle(out, program, ProgramOrigin::Source, numKernels);
    if (!path.empty())
      writeEntry(dir, path, key, binary.data(), binary.size());
    return AOTC_OK;
  }
  cl_int err = CL_SUCCESS;
  const char *source = request.source;
  size_t sourceSize = request.sourceSize;
  cl_program program =
      clCreateProgramWithSource(context, 1, &source, &sourceSize, &err);
  if (err != CL_SUCCESS || !program)
    return fail(statusForClError(err),
                "clCreateProgramWithSource failed for model '%s': %s",
                request.modelName, clErrorName(err));
  err = clBuildProgram(program, 1, &device.device, options, nullptr, nullptr);
  if (err != CL_SUCCESS) {
    std::string log = buildLog(program, device.device);
    clReleaseProgram(program);
    return fail(err == CL_BUILD_PROGRAM_FAILURE ||
                        err == CL_INVALID_BUILD_OPTIONS
                    ? AOTC_ERROR_DEVICE_ERROR
                    : statusForClError(err),
                "building the OpenCL program of model '%s' for '%s' failed "
                "(%s, options '%s'); build log:\n%s",
                request.modelName, device.fullName.c_str(), clErrorName(err),
                options, log.c_str());
  }
  setSingle(out, program, ProgramOrigin::Source, numKernels);

  // The binary, for the cache; on PoCL's CPU device also without a cache,
  // because asking for it is what compiles the work-group functions now
  // rather than on each kernel's first launch (preferPrebuiltWorkGroups).
  if (!path.empty() || (device.isPocl && device.isCpu)) {
    std::vector<unsigned char> binary;
    if (programBinary(program, binary) && !path.empty())
      writeEntry(dir, path, key, binary.data(), binary.size());
  }
  return AOTC_OK;
}

} // namespace aotc::rt
