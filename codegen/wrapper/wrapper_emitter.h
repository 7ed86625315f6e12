/// \file
/// C++ wrapper emission (--emit=cpp): the descriptor tables and launch code
/// that the runtime reads through aotc_model_desc().
///
/// The wrapper includes only <aotc/model_desc.h> and is compiled with
/// -ffreestanding -nostdinc -DAOTC_FREESTANDING -fno-exceptions -fno-rtti
/// -fvisibility=hidden, so it is plain constant tables and a few functions: no
/// standard headers, templates or static constructors. The data object linked
/// beside it defines the two symbols named below.
#pragma once

#include "ir/module.h"
#include "ir/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace aotc {

/// `extern "C" const uint8_t aotc_constants_blob[]`: the weights,
/// 64-byte aligned, LoopModule::constantsBytes long. Absent in a weightless
/// model, whose wrapper does not reference it.
constexpr const char *kConstantsBlobSymbol = "aotc_constants_blob";
/// `extern "C" const char aotc_kernels_source[]`: the OpenCL C source from
/// emitOpenCL, WrapperOptions::clSourceSize bytes plus a terminating NUL.
constexpr const char *kKernelsSourceSymbol = "aotc_kernels_source";

/// `extern "C" const uint8_t aotc_program_binary_<i>[]`: the i-th program
/// binary built at compile time (WrapperOptions::programBinaries).
std::string programBinarySymbol(size_t i);

/// The value of the "aotc.version" metadata key of every model.
constexpr const char *kAotcVersion = "0.1.0";

struct WrapperOptions {
  /// Bytes of the OpenCL source, without the terminating NUL.
  uint64_t clSourceSize = 0;
  /// Build options of the OpenCL program (buildOptions() of cl_printer.h).
  std::string clBuildOptions;
  /// The updatable weights are supplied at load: the blob holds only the
  /// prefix before them (LoopModule::constantsStoredBytes), null if empty.
  bool weightless = false;
  /// The side file holding the whole blob (a name in the .so's folder), or
  /// empty; weightsId is written in its header.
  std::string weightsFile;
  uint64_t weightsId = 0;
  /// Program binaries built at compile time (aotc compile --prebuild), in
  /// the order of their symbols (programBinarySymbol): the key of the
  /// device each was built for and its size in bytes.
  struct ProgramBinary {
    std::string deviceKey;
    uint64_t size = 0;
  };
  std::vector<ProgramBinary> programBinaries;
};

/// Emits the C++ wrapper of \p m: symbol, input, output, constant, kernel and
/// metadata tables, arena_bytes(), output_shapes(), run() (one
/// aotc_rt_launch per kernel, in order, returning the first error) and
/// `aotc_model_desc()`. Symbol identifiers come from one Namer. Deterministic.
/// Returns an error when the module is inconsistent: a kernel buffer or
/// symbol the module does not declare, an expression over something other
/// than symbols, an input dim that is neither a constant nor a symbol, a
/// constant outside the blob, two symbols with one identifier, or a kernel
/// name that is not a usable identifier.
Expected<std::string> emitWrapper(const LoopModule &m,
                                  const WrapperOptions &opts);

} // namespace aotc
