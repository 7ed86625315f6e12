/// \file
/// The Loop IR verifier: the invariants of DESIGN §2, checked on a scheduled
/// LoopModule after every Loop IR pass in tests and under --verify-each, and
/// once on the final module of every compile.
///
/// Per kernel:
///  - every variable is defined once (a loop, a let or a local), before it
///    is used, and used only in its scope; the only free variables are the
///    kernel's symbols, which are symbols of the module;
///  - types agree: operands of a binary op, the branches of a select, a
///    stored value and its buffer, a load and its buffer, a local and what
///    is assigned to it; conditions are Bool; indices are integers;
///  - buffers: each is a module buffer of the same dtype whose elements the
///    kernel's view does not exceed; read-only ones (inputs, constants) are
///    never stored to, and a kernel stores only into buffers it declares
///    written;
///  - every load and store index is provably inside its buffer, dimension
///    by dimension, for every symbol value in the declared ranges, or
///    guarded: inside a select branch, an if, or the right operand of && or
///    || whose condition implies it;
///  - parallel loops form the outermost nest, start at 0, use dimensions
///    0..n-1, and their extents read only symbols and outer lets; no Access
///    node is left.
/// Per module: kernel and buffer names are unique, arena buffers that are
/// live at the same time do not overlap and fit in the arena, and a kernel
/// that runs another's function has that function's parameters.
#pragma once

#include "ir/bounds.h"
#include "ir/module.h"
#include "ir/status.h"

namespace aotc {

/// The first violation, as "kernel 'k3_y': ..." (or naming the buffer for a
/// module-level problem); ok if none. The module's assumptions (checked by
/// the wrapper before every run) are facts for the bound proofs.
Status verifyKernel(const LoopModule &m, const Kernel &k);
/// \p proofs, if given, is the compile's (bounds.h): the proofs of earlier
/// passes answer the questions asked again.
Status verifyModule(const LoopModule &m, ProofCache *proofs = nullptr);
/// Kernel::function (codegen/opencl/share_kernels.h): each names a kernel
/// earlier in launch order (the model's, then the folding program's) that
/// runs its own function, with buffers of the same types, written in the
/// same places, as many symbols, and the same error record and work-group.
/// Part of verifyModule.
Status verifyKernelFunctions(const LoopModule &m);

/// A load or store whose index the verifier cannot prove inside the buffer.
struct UnprovenAccess {
  const void *node;         ///< the Load (ExprNode) or Store (StmtNode)
  std::vector<size_t> dims; ///< the components not proven
  /// A vector load or store: its check covers every lane (its first lane's
  /// index below the size less the lanes after it; guard_accesses.cpp).
  bool vector = false;
};

/// Every unproven access of \p k, scalar and vector (bounds only; other
/// violations are not reported). Empty when verifyKernel's bound checks all
/// pass. \p proofs, if given, is shared by the calls for a compile's
/// kernels (bounds.h).
std::vector<UnprovenAccess> unprovenAccesses(const LoopModule &m,
                                             const Kernel &k,
                                             ProofCache *proofs = nullptr);

} // namespace aotc
