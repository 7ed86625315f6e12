/// \file
/// Hand-made LoopModules that the codegen tests and aotc_codegen_dump share.
///
/// Each module is small enough to check by hand and covers one shape of
/// scheduled code:
///  - pointwiseModule(): a 2-D ND-range over a symbolic batch with LetStmts
///    between the parallel loops, a clamped index (integer min), a float
///    select with exp, a Bool output stored into a uchar buffer, and an
///    output whose dim is an expression (batch * 16).
///  - reductionModule(): per-row mean, max and "any negative" of
///    x[4, seq.len] with LocalDecl accumulators (one Bool), a serial loop and
///    an IfThenElse; the symbol's name is not a C identifier.
///  - constArenaModule(): three kernels that read two constants, write two
///    arena buffers at symbolic offsets and finally an output.
#pragma once

#include "ir/module.h"

#include <cstdint>
#include <string>
#include <vector>

namespace aotc::test {

LoopModule pointwiseModule();
LoopModule reductionModule();
LoopModule constArenaModule();

/// The modules above by name ("pointwise", "reduction", "const_arena");
/// false if \p name is unknown.
bool moduleByName(const std::string &name, LoopModule &out);
std::vector<std::string> moduleNames();

/// The weights of constArenaModule(): w[8] at offset 0, b[8] at offset 64.
std::vector<float> constArenaWeights();
std::vector<float> constArenaBias();

} // namespace aotc::test
