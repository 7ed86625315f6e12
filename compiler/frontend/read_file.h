/// \file
/// Reading a file the user names (a model, a tensor): it must be a regular
/// file of bounded size. A directory, a FIFO or a device (/dev/zero) is a
/// clear error, never a hang, an unbounded read or an exception.
#pragma once

#include "ir/status.h"

#include <cstdint>
#include <string>

namespace aotc {

/// The bytes of \p path, which must be a regular file of at most
/// \p maxBytes. Errors start with the path.
Expected<std::string> readRegularFile(const std::string &path,
                                      uint64_t maxBytes);

/// Protobuf's limit on one message: a model or tensor file beyond it cannot
/// be parsed.
constexpr uint64_t kMaxProtobufBytes = (uint64_t{2} << 30) - 1;

} // namespace aotc
