/// \file
/// The equation of an ONNX Einsum node, parsed once for the operands' ranks,
/// for shape inference and lowering alike.
#pragma once

#include "ir/status.h"

#include <string>
#include <vector>

namespace aotc {

/// The first label of the ellipsis's dims: labels 0-25 are the letters a-z,
/// 26-51 A-Z, and kEinsumEllipsisLabel + j the j-th of the dims the ellipses
/// stand for (NumPy broadcasting: an operand's ellipsis dims are the last of
/// them, right-aligned).
constexpr int kEinsumEllipsisLabel = 52;

/// An Einsum equation with its ellipses expanded.
struct EinsumSpec {
  /// Per operand, the label of each of its dims (a label twice in one
  /// operand: its diagonal).
  std::vector<std::vector<int>> operands;
  /// The label of each output dim.
  std::vector<int> output;
  /// The labels of no output dim, summed over, in order of first appearance.
  std::vector<int> summed;
  /// How many dims the ellipses stand for (the most of any operand).
  int ellipsisDims = 0;
};

/// Parses \p equation ("ij,jk->ik", "bhid,bhjd->bhij", "...ii->...i", or
/// implicit "ij,jk": the ellipsis's dims, then the letters named once, in
/// ASCII order as NumPy orders them) for operands of \p ranks. An error
/// (text to follow the node's name) for anything else: a character other
/// than letters, ',', '->' and '...', an operand count or rank that does not
/// match, an output letter no operand has or named twice, and an output that
/// leaves out the ellipsis the operands have.
Expected<EinsumSpec> parseEinsum(const std::string &equation,
                                 const std::vector<int> &ranks);

/// The label's spelling in messages: its letter, or "...[j]".
std::string einsumLabelName(int label);

} // namespace aotc
