/// \file
/// Identifier rules shared by the OpenCL printer and the wrapper emitter.
///
/// Names in the IR (ONNX tensor names, symbolic dims such as `batch_size` or
/// `unk__12`) are not always valid C identifiers, and some valid ones clash
/// with OpenCL keywords (`global`, `constant`) or builtins (`exp`, `min`).
/// Everything printed as an identifier goes through these helpers so both
/// emitted languages spell a name the same way.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace aotc {

/// True if \p s is a non-empty [A-Za-z_][A-Za-z0-9_]* string.
bool isCIdentifier(const std::string &s);

/// True if \p s is a C, C++ or OpenCL C keyword, an OpenCL type name or a
/// builtin function that generated code may call, or a name reserved to the
/// implementation (a leading `__`), so it must not name a variable.
bool isReservedIdentifier(const std::string &s);

/// Maps \p s to an identifier by replacing every character outside
/// [A-Za-z0-9_] with '_' and prefixing "v_" when the result is empty or
/// starts with a digit. Not injective; callers uniquify.
std::string sanitizeIdentifier(const std::string &s);

/// Issues the identifiers of one emitted scope (one kernel, the wrapper): the
/// only source of names in emitted code. Every identifier it returns is a
/// valid C identifier, is not reserved (isReservedIdentifier), and differs
/// from every identifier it issued or was told to reserve, so IR variables
/// (which are objects, not names) can never clash in the output, whatever
/// names the model used.
class Namer {
public:
  /// Marks \p ident (a fixed name the emitted code uses) as taken.
  void reserve(const std::string &ident) { used_.insert(ident); }
  bool taken(const std::string &ident) const { return used_.count(ident) != 0; }
  /// A fresh identifier derived from \p hint (sanitized and shortened);
  /// the identifier followed by each of \p suffixes is fresh and taken too.
  std::string fresh(const std::string &hint,
                    const std::vector<std::string> &suffixes = {});

private:
  std::set<std::string> used_;
};

/// \p s as a C/C++/OpenCL string literal, quotes included. Quotes, backslashes
/// and non-printable bytes are escaped (octal, so no escape runs into the next
/// character).
std::string cStringLiteral(const std::string &s);

/// \p s made safe for a `//` comment: newlines and other control characters
/// become spaces.
std::string commentText(const std::string &s);

} // namespace aotc
