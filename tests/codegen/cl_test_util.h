/// \file
/// A small OpenCL harness for the codegen tests: the first device of the
/// first platform (PoCL here), program builds with their log, and kernel
/// arguments in aotc's convention (a buffer is `T *x_base, ulong x_off`,
/// symbols follow as long).
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aotc::test {

/// The process-wide OpenCL context; null members when there is no device
/// (error() says why).
struct ClEnv {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string error;

  static ClEnv &get();
};

/// Builds \p source with \p options; returns null and fills \p log (the build
/// log, or the failing call) on failure.
cl_program buildProgram(const std::string &source, const std::string &options,
                        std::string &log);

/// A device buffer of \p bytes, optionally filled from \p init.
cl_mem makeBuffer(size_t bytes, const void *init = nullptr);
void readBuffer(cl_mem m, size_t offset, size_t bytes, void *out);

/// Sets kernel arguments in aotc's order and enqueues the kernel over
/// \p global work-items, then waits. Returns the first OpenCL error.
struct KernelArg {
  cl_mem buffer = nullptr; ///< a buffer argument when set
  uint64_t offset = 0;     ///< its byte offset
  int64_t scalar = 0;      ///< a long argument otherwise
};
cl_int launch(cl_program program, const std::string &kernel,
              const std::vector<KernelArg> &args,
              const std::vector<size_t> &global);

} // namespace aotc::test
