/// \file
/// Builds a model's OpenCL program, through an on-disk cache of program
/// binaries so that a second load runs no OpenCL C compiler.
#ifndef AOTC_RUNTIME_SRC_PROGRAM_CACHE_H
#define AOTC_RUNTIME_SRC_PROGRAM_CACHE_H

#include "device.h"

#include <cstdint>
#include <string>

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
};

struct ProgramResult {
  cl_program program = nullptr;
  bool fromCache = false;
  /// The cache file used or written ("" if caching is off).
  std::string cachePath;
};

/// Loads the program binary from the cache if a valid entry exists, else
/// builds from source and (best effort) writes the cache entry. A corrupt or
/// mismatching entry is rebuilt and rewritten. On a build failure the OpenCL
/// build log is part of the error message.
aotc_status_t buildProgram(cl_context context, const DeviceInfo &device,
                           const ProgramRequest &request, ProgramResult &out);

/// Resolves the cache directory: \p option, else $AOTC_CACHE_DIR, else
/// $XDG_CACHE_HOME/aotc, else $HOME/.cache/aotc; "" if none is known.
std::string resolveCacheDir(const char *option);

/// Two independent 64-bit hashes of \p size bytes (not cryptographic).
uint64_t hashFnv1a(const void *data, size_t size);
uint64_t hashMix(const void *data, size_t size);

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_PROGRAM_CACHE_H
