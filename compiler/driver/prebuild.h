/// \file
/// Building a model's OpenCL program at compile time (`aotc compile
/// --prebuild DEVICE`), so that the binary is embedded in the .so and a
/// load on that device compiles nothing.
///
/// Without it, the first load of a model on a machine compiles its OpenCL C
/// (PoCL: ResNet-50's 66 kernels in about 22-29 s on the 2-core VM, in two
/// parts at once: runtime/src/program_split.h) before
/// the on-disk cache holds the binary. A deployment that starts fresh
/// containers pays that on every start. With it, the runtime finds the
/// binary for its device in the .so (AotcModelDesc::program_binaries) and
/// loads it (runtime/src/program_cache.h).
///
/// The build runs in aotc-build-program (runtime/tools/build_program.cpp),
/// in its own process: PoCL's compiler crashes in a process that has
/// loaded another LLVM, as aotc has (runtime/src/program_builder.h). The
/// tool selects the device as the runtime does, builds with the runtime's
/// PoCL settings and writes the binary and the device's key, the text the
/// runtime compares before it loads the binary.
#pragma once

#include "ir/status.h"

#include <cstddef>
#include <string>
#include <vector>

namespace aotc {

struct PrebuiltProgram {
  std::string deviceKey; ///< the runtime's deviceKey() of its device
  std::string binary;    ///< the OpenCL program binary
  /// Where the program was built in parts (prebuildProgram): this one's
  /// index and their count; 0 of 1 for a whole program.
  size_t part = 0, parts = 1;
};

/// A binary built elsewhere by aotc-build-program --key-out \p keyPath
/// --out \p binPath (`aotc compile --program-binary KEY,BIN`): checked to
/// have been built from \p clSource with \p options, the source and options
/// this compile embeds; an error says which file differs and how.
Expected<PrebuiltProgram> readProgramBinary(const std::string &keyPath,
                                            const std::string &binPath,
                                            const std::string &clSource,
                                            const std::string &options);

/// "DEVICE NAME, driver VERSION: N bytes" of \p p (for messages and the
/// aotc.prebuilt metadata that aotc inspect shows).
std::string describePrebuilt(const PrebuiltProgram &p);

/// The aotc-build-program tool: $AOTC_PROGRAM_BUILDER if set, else the one
/// beside this executable, else the first on $PATH; "" if none.
std::string findProgramBuilderTool();

/// Compiles \p clSource with \p options for the OpenCL device named by
/// \p spec (cpu, gpu, gpu:N, a name substring: what aotc run --device
/// takes) on this machine, through the tool at \p builder. Where \p jobs
/// is 2 or more and the source splits (runtime/src/program_split.h), as
/// many tools build its parts at once, each part one binary for the same
/// device (the runtime loads them all and creates each kernel from its
/// part); else one binary. An error names the device string and carries
/// the tool's message (no such device, with the devices there are; the
/// build log).
Expected<std::vector<PrebuiltProgram>> prebuildProgram(
    const std::string &spec, const std::string &clSource,
    const std::string &options, const std::string &builder, size_t jobs);

/// How many tools prebuildProgram runs at once: $AOTC_BUILD_JOBS (1 or 0:
/// one program), else this machine's online CPUs, at most 8.
size_t prebuildJobs();

} // namespace aotc
