/// \file
/// Building an OpenCL program in another process, for hosts whose own LLVM
/// would crash PoCL's compiler.
///
/// PoCL compiles OpenCL C in process with the libLLVM it links (Debian 12:
/// libLLVM-15.so.1). A host that has loaded another libLLVM (an LLVM 14
/// application, a Python module built on LLVM, LD_PRELOAD) makes it crash:
/// weak, unversioned template instances in libclang-cpp (the vtable of
/// llvm::detail::PassModel<Module, VerifierPass, ...>) bind to the first
/// LLVM loaded, so PoCL's LLVM 15 runs LLVM 14 code on its objects and the
/// host dies with SIGSEGV in clBuildProgram. A binary program needs no
/// compiler: loading one, and launching its kernels through the generic
/// work-group functions it carries (device.cpp), runs no LLVM.
///
/// So when the runtime must build from source on PoCL while another LLVM
/// is loaded, it does not call clBuildProgram on the source: it runs the
/// aotc-build-program tool (runtime/tools/build_program.cpp, which links
/// nothing but OpenCL) on the same device, which compiles the source and
/// writes the program binary, and loads that binary. The binary is cached
/// like any other (program_cache.h), so this happens once per model and
/// device. Where the tool is not found, the load fails with an error that
/// says how to provide it; it never builds in process.
#ifndef AOTC_RUNTIME_SRC_PROGRAM_BUILDER_H
#define AOTC_RUNTIME_SRC_PROGRAM_BUILDER_H

#include "device.h"
#include "error.h"

#include <string>
#include <vector>

namespace aotc::rt {

/// True if building OpenCL C for \p device must happen out of process:
/// AOTC_BUILD_OUT_OF_PROCESS=1 (any device) or, unless it is 0, a PoCL
/// device in a process that has loaded two different libLLVM libraries
/// (\p why names them).
bool buildOutOfProcess(const DeviceInfo &device, std::string &why);

/// The path of the aotc-build-program tool: $AOTC_PROGRAM_BUILDER if set,
/// else the first `aotc-build-program` on $PATH, else one in the folder of
/// this process's executable (with \p besideFirst, that one before $PATH:
/// aotc's own, built with it); "" if none is found.
std::string findProgramBuilder(bool besideFirst = false);

/// Runs aotc-build-program at \p builder in a child process on \p source
/// with \p options, for the device \p deviceArgs name ("--platform", P,
/// "--device", D, or "--select", SPEC), and returns the program binary in
/// \p binary and, when \p key is not null, the program key the tool wrote
/// (programKeyText: the source's hashes, the options, deviceKey(); it needs
/// --select). The child gets this process's environment without
/// LD_PRELOAD (which may be what loaded another LLVM). A failure (tool
/// missing or crashed, device not found, a build error: the tool's output)
/// is an AOTC_ERROR_DEVICE_ERROR whose message starts with \p what.
aotc_status_t runProgramBuilder(const std::string &builder,
                                const std::vector<std::string> &deviceArgs,
                                const char *source, size_t sourceSize,
                                const char *options, const std::string &what,
                                std::vector<unsigned char> &binary,
                                std::string *key);

/// Compiles \p source with \p options for \p device in a child process
/// running \p builder (runProgramBuilder) and returns the program binary in
/// \p binary.
aotc_status_t buildBinaryInChild(const std::string &builder,
                                 const DeviceInfo &device, const char *source,
                                 size_t sourceSize, const char *options,
                                 const char *modelName,
                                 std::vector<unsigned char> &binary);

/// How many builder processes to run at once: $AOTC_BUILD_JOBS where it is
/// a number (0 counts as 1; at most 64), else \p fallback.
size_t builderJobs(size_t fallback);

/// This machine's online CPUs, 1 to 8: the builder processes a cold build
/// runs at once by default.
size_t onlineCpus();

/// One build of runProgramBuildersAtOnce: its source in, its binary, key
/// (where asked for) and status out, with the error message on a failure.
struct BuilderJob {
  std::string source;
  std::vector<unsigned char> binary;
  std::string key;
  aotc_status_t status = AOTC_OK;
  std::string message;
};

/// Runs runProgramBuilder for every job of \p jobs at once, each in its own
/// child process with a thread waiting for it (where a thread cannot be
/// started, the rest run one after another in this one), with \p deviceArgs
/// and \p options, asking for the program key with \p wantKey. Each job's
/// outcome is in the job (its message is the failing thread's last error).
void runProgramBuildersAtOnce(const std::string &builder,
                              const std::vector<std::string> &deviceArgs,
                              const char *options, const std::string &what,
                              bool wantKey, std::vector<BuilderJob> &jobs);

/// The device arguments of aotc-build-program for \p device: "--platform",
/// its platform's name, "--device", its name.
std::vector<std::string> builderDeviceArgs(const DeviceInfo &device);

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_PROGRAM_BUILDER_H
