/// \file
/// Builds a model's OpenCL program: from a binary the compiler embedded for
/// this device (aotc compile --prebuild), else through an on-disk cache of
/// program binaries so that a second load runs no OpenCL C compiler, else
/// from source.
#ifndef AOTC_RUNTIME_SRC_PROGRAM_CACHE_H
#define AOTC_RUNTIME_SRC_PROGRAM_CACHE_H

#include "device.h"

#include <aotc/model_desc.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aotc::rt {

/// What to build and where to cache it.
struct ProgramRequest {
  const char *source = nullptr;
  size_t sourceSize = 0;
  const char *options = "";
  /// Used only to make cache file names readable.
  const char *modelName = "";
  /// aotc_container_options_t::cache_dir (null or "" for the default).
  const char *cacheDirOption = nullptr;
  /// Binaries built at compile time (AotcModelDesc::program_binaries).
  const AotcProgramBinaryDesc *embedded = nullptr;
  int32_t numEmbedded = 0;
  /// The kernels the model creates from the program; where it is built
  /// from source in parts (program_split.h), each must be in one part.
  std::vector<std::string> kernelNames;
};

/// Where a container's program came from (aotc_container_program_source).
enum class ProgramOrigin {
  Source = 0,   ///< compiled from OpenCL C at this load
  Cache = 1,    ///< the on-disk binary cache
  Embedded = 2, ///< a binary the compiler embedded in the .so
};

struct ProgramResult {
  /// One program, or the parts built in parallel (program_split.h); the
  /// caller releases them.
  std::vector<cl_program> programs;
  /// The program of each of ProgramRequest::kernelNames (an index into
  /// programs).
  std::vector<size_t> programOf;
  /// Source if any part was compiled at this load.
  ProgramOrigin origin = ProgramOrigin::Source;
  /// The cache file used or written, the first part's for parts ("" if
  /// caching is off).
  std::string cachePath;
};

/// How many processes build a program's parts at once: $AOTC_BUILD_JOBS
/// for any device (1 or 0: one program, built as before), else for PoCL's
/// CPU device (whose build is the one measured to take tens of seconds)
/// this machine's online CPUs, at most 8, and 1 for other devices.
size_t buildJobs(const DeviceInfo &device);

/// Loads the program binary from the cache if a valid entry exists, else
/// builds from source and (best effort) writes the cache entry. A corrupt or
/// mismatching entry is rebuilt and rewritten. On a build failure the OpenCL
/// build log is part of the error message.
///
/// Building from source with buildJobs() of 2 or more and the
/// aotc-build-program tool found (program_builder.h), the program is split
/// (program_split.h) and its parts are built by that many processes at
/// once, each part cached on its own; where the parts cannot be made or
/// one fails to build or load, it is built whole as before.
aotc_status_t buildProgram(cl_context context, const DeviceInfo &device,
                           const ProgramRequest &request, ProgramResult &out);

/// Resolves the cache directory: \p option, else $AOTC_CACHE_DIR, else
/// $XDG_CACHE_HOME/aotc, else $HOME/.cache/aotc; "" if none is known.
std::string resolveCacheDir(const char *option);

/// The text naming what a program binary built for \p device runs on: its
/// platform, device and driver names and versions and address bits, and
/// for a CPU device the instruction set extensions of this host
/// (hostIsaText): a CPU device's binary is machine code, and two machines
/// whose drivers name their devices alike may still differ in the
/// extensions it may use. A binary embedded at compile time is loaded only
/// where this text is the one it was built with (AotcProgramBinaryDesc);
/// aotc-build-program --key-out writes it.
std::string deviceKey(const DeviceInfo &device);

/// What aotc-build-program --key-out writes and what a binary embedded at
/// compile time is checked against: "aotc program key v1", the source's
/// size and hashes and the build options (so that the compiler embeds a
/// binary only with the source it was built from), then deviceKey().
std::string programKeyText(const char *source, size_t sourceSize,
                           const char *options, const std::string &deviceKey);

/// The x86 instruction set extensions this host supports that compiled
/// code may use ("avx avx2 fma ... avx512f ..."), "" elsewhere.
std::string hostIsaText();

/// Two independent 64-bit hashes of \p size bytes (not cryptographic).
uint64_t hashFnv1a(const void *data, size_t size);
uint64_t hashMix(const void *data, size_t size);

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_PROGRAM_CACHE_H
