/// \file
/// What aotc knows about each op's attributes, in one place: the attributes
/// it accepts (name and kind), the opsets that have them, and ONNX's default
/// value of each (which may depend on the opset and on the input ranks).
///
/// The frontend checks names and kinds against this table;
/// canonicalizeAttributes() (run by shape inference on each node, when its
/// input ranks are known) writes every defaulted attribute out explicitly, so
/// shape inference and lowering read explicit values only (Node::intAttr and
/// friends, which require presence) and no default is written twice.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

#include <functional>
#include <optional>
#include <vector>

namespace aotc {

enum class AttrKind {
  Int,
  Float,
  String,
  Ints,
  Floats,
  Strings,
  Tensor,
  Sparse
};

const char *attrKindName(AttrKind k); ///< "an int", "a list of floats", ...

struct AttrSchema {
  const char *name;
  AttrKind kind;
  /// Defaulted: ONNX gives a default, written out by canonicalization.
  /// Optional: absence has a meaning of its own (Clip's min, Reduce's axes).
  /// Required: the model must give it.
  enum Presence { Defaulted, Optional, Required } presence;
  /// The default for a node at an opset; Defaulted only. May fail (e.g. a
  /// kernel shape taken from a weight whose dims are not static).
  std::function<Expected<Attribute>(const Node &, int64_t opset)> makeDefault;
  /// Opsets that have the attribute (inclusive).
  int64_t sinceOpset = 1;
  int64_t untilOpset = 1 << 30;
  /// Outside those opsets the op behaves as if the attribute had its default
  /// (ceil_mode before opset 10 is 0): canonicalization writes it there too,
  /// though a model may not give it. Every Defaulted attribute is treated
  /// so (canonicalizeAttributes); the flag marks the ones written for that.
  bool impliedElsewhere = false;
};

/// The attributes of \p op (every opset).
const std::vector<AttrSchema> &opAttributes(OpKind op);

/// The schema of \p name for \p op at \p opset, or null if the op has no
/// such attribute there.
const AttrSchema *findAttribute(OpKind op, const std::string &name,
                                int64_t opset);

/// Checks that every attribute of \p n is known at \p opset with the right
/// kind and that required ones are present, then sets every absent
/// defaulted attribute to its default. Errors name the node and attribute.
Status canonicalizeAttributes(Node &n, int64_t opset);

} // namespace aotc
