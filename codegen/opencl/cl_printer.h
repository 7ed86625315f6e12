/// \file
/// OpenCL C printing of a LoopModule's kernels (--emit=cl).
///
/// Every Kernel becomes one `__kernel` function, except one that runs an
/// earlier kernel's (Kernel::function, share_kernels.h). A buffer parameter `x` is
/// passed as two arguments, `__global T *x_base` and `ulong x_off` (a byte
/// offset), and the kernel derives `x` from them; symbolic sizes follow the
/// buffers as `long` arguments in Kernel::symbols order. Index math is
/// `long`, or `int` in a kernel where the declared ranges prove that it
/// fits (index_width.h; the kernel's header comment says "32-bit indices"). The outermost
/// Parallel loops read get_global_id(dim) and return when past their extent,
/// because the runtime rounds the global size up. Names are sanitized with
/// a Namer (identifiers.h): no name from the model is used as is.
#pragma once

#include "ir/module.h"
#include "ir/status.h"

#include <string>

namespace aotc {

struct ClOptions {
  /// Index math in int in every kernel where the declared ranges prove that
  /// it fits (index_width.h); false: long everywhere. The pipeline's
  /// default is on for GPU profiles only (CompileOptions::indexBits).
  bool narrowIndices = false;
  /// Math functions on float values through aotc's own helpers where the
  /// builtin is slow on PoCL (cl_math.h: erf as aotc_erf); the pipeline
  /// sets it on CPU profiles.
  bool ownMath = false;
  /// Selects of float vectors on one bool through a lane mask
  /// (ClSpelling::laneMaskSelects, ir/expr.h); the pipeline sets it on CPU
  /// profiles.
  bool laneMaskSelects = false;
};

/// Prints every kernel of \p m as OpenCL C, in launch order, with a header
/// comment and the fp64 pragma when a kernel uses f64. Deterministic: the
/// same module gives the same bytes. Returns an error naming the kernel when
/// a kernel holds something that cannot be printed: an Access node (the
/// scheduler did not resolve it), a variable or buffer that is not bound, a
/// Parallel loop outside the outermost loop nest or with a bad dimension, a
/// store into a read-only buffer or of a value of another type, a kernel
/// name that is not a usable identifier, or a Kernel::function that
/// verifyKernelFunctions refuses.
Expected<std::string> emitOpenCL(const LoopModule &m,
                                 const ClOptions &options = {});

/// Kernel \p k of \p owner as emitOpenCL prints it (int index math where
/// \p options and the proofs allow, said in a first line), but with its name
/// and buffer parameters spelled by position (`KERNEL`, `p0`, `p1`, ...),
/// so that two kernels with equal texts compute the same from the same
/// arguments in the same places (share_kernels.h). Never compiled.
Expected<std::string> kernelText(const Kernel &k, const LoopModule &owner,
                                 const ClOptions &options = {});

/// Persistent kernel \p g of \p m (LoopModule::persistent) as emitOpenCL
/// prints it, but canonical as kernelText (its name and buffer parameters
/// by position, its parts' names left out) and calling its parts'
/// functions by place (`aotc_part_0`, ...): equal texts of groups whose
/// parts are equal compute the same (share_kernels.h). Never compiled.
Expected<std::string> persistentText(const LoopModule &m, int g,
                                     const ClOptions &options = {});

/// The options to build the program from emitOpenCL with. Never fast-math:
/// results must match the reference implementation to 1e-4.
std::string buildOptions(const LoopModule &m);

} // namespace aotc
