/// \file
/// Identifier rules shared by the OpenCL printer and the wrapper emitter.
///
/// Names in the IR (ONNX tensor names, symbolic dims such as `batch_size` or
/// `unk__12`) are not always valid C identifiers, and some valid ones clash
/// with OpenCL keywords (`global`, `constant`) or builtins (`exp`, `min`).
/// Everything printed as an identifier goes through these helpers so both
/// emitted languages spell a name the same way.
#pragma once

#include <string>

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

/// The identifier of a symbolic size in kernels and in the wrapper: "s_"
/// followed by \p name with every character outside [A-Za-z0-9_] replaced by
/// '_' (`batch` -> `s_batch`, `seq.len` -> `s_seq_len`). The prefix keeps
/// symbols apart from keywords and from every other generated name. Distinct
/// names can map to one identifier; the emitters reject such modules.
std::string symbolIdent(const std::string &name);

/// \p s as a C/C++/OpenCL string literal, quotes included. Quotes, backslashes
/// and non-printable bytes are escaped (octal, so no escape runs into the next
/// character).
std::string cStringLiteral(const std::string &s);

/// \p s made safe for a `//` comment: newlines and other control characters
/// become spaces.
std::string commentText(const std::string &s);

} // namespace aotc
