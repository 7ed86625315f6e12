/// \file
/// Padded copies read through their selects (inline_padding.cpp).
///
/// Lowering reads a padded window (Conv, pools) from a zero- or
/// -inf-padded copy, a pointwise def that fusion materializes so that the
/// reduction's loads need no bounds test: where the reduction vectorizes
/// along its innermost output dimension and the padding is along it (NCHW:
/// the columns), a select per lane would keep the term scalar. Where the
/// channels are innermost instead (channel_blocks.h: [N, C/B, H, W, B]),
/// the padding's conditions are on the rows and columns of the window,
/// the same for every lane of a vector, and the copy is only a pass over
/// memory: one read and one write of the whole activation (MobileNetV2's
/// 18 copies before its depthwise convolutions were 22% of its kernel
/// time). inlinePaddedReads substitutes such a copy's body (`inside ?
/// x[clamped] : pad`) into the reduction that reads it, when
///  - the copy is read by that reduction alone,
///  - its select's condition does not read its innermost index (the lanes
///    of a vector take one arm together), and
///  - the reduction reads it at its own innermost index (each element it
///    loads serves one output lane, as in a depthwise convolution or a
///    pool; a dense convolution broadcasts an input element over its
///    output channels, where the select would be paid per output row and
///    step, and keeps its copy).
/// The value read is the same element the copy would hold, so the rewrite
/// cannot change a result. Its producer (a Clip after the expanding
/// convolution) then becomes that convolution's epilogue, as fusion makes
/// any pointwise consumer of a reduction.
#pragma once

#include "compiler/lowering/lowering.h"

namespace aotc {

/// Inlines the padded copies of \p lg that its reductions can read through
/// their selects (see above), and removes those copies from \p lg (the
/// other defs renumbered). Returns the number inlined.
int inlinePaddedReads(LoweredGraph &lg);

} // namespace aotc
