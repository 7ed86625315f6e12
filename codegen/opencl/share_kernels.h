/// \file
/// One OpenCL function for kernels whose code is the same.
///
/// A network repeats its blocks: BERT's twelve layers, ResNet-50's six
/// layer3 blocks. Their kernels differ only in the buffers they are given
/// (each block's weights and activations), so printing each one costs the
/// OpenCL compiler the same work again: PoCL compiles a program's kernels
/// one after another, 20-60 s for these models on a cold load, and
/// NVIDIA's driver JIT-compiles the PTX of every one at load.
///
/// shareKernels prints every kernel canonically (kernelText: its name and
/// buffer parameters spelled by position, symbols by name) and gives each
/// kernel whose text equals an earlier one's that kernel's function
/// (Kernel::function). Equal texts compute the same from the same arguments
/// in the same places, so the sharing kernel's launches pass their own
/// buffers to the earlier kernel's function: emitOpenCL prints the function
/// once, and the wrapper (kernel_functions) makes the runtime create each
/// kernel from it. Kernels list their buffers in the order their code first
/// names them (the scheduler's kernelBuffers), so that blocks of one shape
/// put their weights and activations in the same places.
///
/// A persistent kernel's parts (compiler/schedule/persistent_kernels.h)
/// are printed once more as kernels of their own, for devices that launch
/// the parts one by one; those share with each other alike (BERT's 111
/// parts: 10 functions), never with other kernels: only that path builds
/// them (AotcModelDesc::kernel_paths). On the persistent path a part's code
/// is a function its persistent kernel calls, shared by text as well
/// (emitOpenCL); PoCL inlines it into each persistent kernel all the same,
/// so persistent kernels whose parts and parameters are equal (the groups
/// of repeated blocks that persistentKernels cuts at the blocks' period)
/// share one function too.
///
/// Launch order, names, summaries, configurations and profiles stay each
/// kernel's own. The model's and the folding program's kernels share with
/// each other too: they are one program.
#pragma once

#include "codegen/opencl/cl_printer.h"

namespace aotc {

/// The share keys of a module's kernels (what must be equal for one to
/// run another's function), by kernel in order, as kernelClasses printed
/// them at the end of scheduling; shareKernels reuses them rather than
/// print every kernel again (ResNet-50: 84 kernels of 70-odd lines each).
struct ShareKeys {
  std::vector<std::string> names; ///< the kernels', in order
  std::vector<std::string> keys;
};

/// Sets Kernel::function of every kernel of \p m (and of its folding
/// program) whose canonical text equals an earlier kernel's, in launch
/// order (the model's kernels first), and Persistent::function of every
/// persistent kernel whose parts' and own canonical texts equal an earlier
/// one's; returns how many, or the error of a kernel that cannot be
/// printed. \p known, where its names are the model's kernels', gives
/// their keys; with \p recheck they are printed again all the same, and a
/// kernel whose key changed since is an error (a pass after kernelClasses
/// that changed a kernel would otherwise share a function that computes
/// something else: --verify-each turns the check on).
Expected<int> shareKernels(LoopModule &m, const ClOptions &options,
                           const ShareKeys *known = nullptr,
                           bool recheck = false);

/// A class per kernel of \p m, in order: equal where shareKernels would
/// let one run the other's function (the persistent grouping's
/// ScheduleOptions::kernelClasses); the keys behind them in \p keys
/// where given.
Expected<std::vector<int>> kernelClasses(const LoopModule &m,
                                         const ClOptions &options,
                                         ShareKeys *keys = nullptr);

} // namespace aotc
