/// \file
/// Row panels of a large GEMM's activation. A CPU register tile of tm
/// rows reads, at each reduction step, one element of each of its rows of
/// A [M, K]: tm streams K elements apart, which the hardware prefetchers
/// and the TLB serve worse as K and M grow (at 4096 x 4096, 16 KB apart
/// over 64 MB), and worse when the kernel before just wrote A by rows
/// over the cores. Where A is large enough, the lowering reads it through
/// a copy in panels [ceil(M / tm), K, tm] (lower_contraction.cpp,
/// rowPanelCopy): then a tile's rows are one contiguous stream. The copy
/// is one pass over A per run; the GEMM rereads A once per tile column
/// (N / tn times).
#pragma once

#include "compiler/schedule/device_profile.h"
#include "ir/dtype.h"

#include <cstdint>

namespace aotc {

/// The rows per panel of the copy of A [m, k] (a batch's rows) of element
/// type \p t that a GEMM by a constant B [k, n] (packed in panels of the
/// vector lanes, compiler/passes/pack_weights.h) reads on \p target: the
/// rows of the register tile chooseRegisterTile gives that GEMM, so that
/// each tile reads one panel; 0 where A stays in place (a GPU profile, a
/// profile without row panels (DeviceProfile::rowPanels: zen5-avx512), a
/// float type other than float32, or an A below kMinRowPanelBytes -- below
/// kMinComputedRowPanelBytes where \p computed: a kernel of the model
/// computes A -- or an N below kMinRowPanelColumns, where the copy costs
/// what it saves). With \p anySize, those sizes and the profile's choice
/// do not count (`aotc
/// compile --row-panels-always`: the fuzzer's small graphs take the panels
/// too).
int64_t gemmRowPanel(const DeviceProfile &target, int64_t m, int64_t n,
                     int64_t k, DType t, bool computed = false,
                     bool anySize = false);

} // namespace aotc
