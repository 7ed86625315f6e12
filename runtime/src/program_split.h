/// \file
/// A model's OpenCL program split into parts that build in parallel.
///
/// PoCL compiles a program's kernels one after another on one core, and
/// two programs built in one process do not overlap (its compiler is
/// serialized within the process): ResNet-18's 28 kernels took 21.1 s as
/// one program and 21.9 s as two halves built by two threads of one
/// process, but 13.0 s as the same two halves built by two processes at
/// once (bench/cpu, stop 59). So where a load must build from source, the
/// runtime splits the program into parts and has aotc-build-program build
/// each in its own process at once (program_cache.cpp), then loads the
/// parts' binaries; each part's binary is cached on its own.
///
/// The compiler writes the OpenCL C as a shared head (helper functions,
/// macros) and then one section per kernel, each starting with a line
/// "// Kernel N: NAME" (codegen's OpenCL emitter). A part is the head and
/// a subset of the sections in their order; the sections go to parts by
/// size, largest first to the smallest part, so that the builds end
/// together.
#ifndef AOTC_RUNTIME_SRC_PROGRAM_SPLIT_H
#define AOTC_RUNTIME_SRC_PROGRAM_SPLIT_H

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace aotc::rt {

/// Fewest kernels a part holds: each part pays the head's compile and the
/// builder process's start (about 2 s of one core for ResNet-18's head
/// under PoCL), which a few kernels do not repay. A persistent kernel
/// (compiler/schedule/persistent_kernels.h) counts as the kernels it runs:
/// its marker line ends in "(persistent: P kernels)".
constexpr size_t kMinKernelsPerPart = 4;

struct ProgramPart {
  std::string source; ///< the head and this part's kernel sections
  std::vector<std::string> kernels; ///< the kernels it defines
};

/// Splits the OpenCL C \p source into at most \p maxParts parts, and at
/// most one per kMinKernelsPerPart kernels. Returns no parts (build it whole)
/// where fewer than two would result, or where the source is not laid out
/// as the compiler writes it: a section whose marker line does not name
/// the kernel it defines, a name twice, or one of \p kernelNames (the
/// kernels the model creates) not defined by exactly one section.
std::vector<ProgramPart> splitProgram(const char *source, size_t size,
                                      const std::vector<std::string> &kernelNames,
                                      size_t maxParts);

/// \p source without the sections that define the kernels \p leaveOut
/// names, in \p out: the program a container builds for the kernels of one
/// of run()'s paths (AotcModelDesc::kernel_paths). False, with \p out
/// empty, where the source is not laid out as splitProgram expects (with
/// \p kernelNames, the kernels kept, each defined), or a kernel of
/// \p leaveOut has no section.
bool withoutKernels(const char *source, size_t size,
                    const std::vector<std::string> &kernelNames,
                    const std::set<std::string> &leaveOut, std::string &out);

} // namespace aotc::rt

#endif // AOTC_RUNTIME_SRC_PROGRAM_SPLIT_H
