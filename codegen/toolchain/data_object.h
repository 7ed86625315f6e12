/// \file
/// Writing raw bytes (weights, kernel source) into an ELF object file through
/// LLVM, so they are linked into the model .so as read-only data: never as C
/// arrays that the C++ compiler would have to parse.
#pragma once

#include "ir/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace aotc::toolchain {

/// One symbol of a data object: \p size bytes at \p data, which must stay
/// valid for the duration of writeDataObject().
struct DataSymbol {
  /// The symbol's name; a C identifier, so generated C++ can declare it
  /// (extern "C" const unsigned char name[]).
  std::string name;
  const void *data = nullptr; ///< may be null when size is 0
  uint64_t size = 0;
  /// A power of two (64 for weights); 0 means 1.
  uint64_t alignment = 1;
  /// Put the symbol in section .lrodata.aotc (for big blobs) rather than
  /// .rodata.aotc.
  bool largeSection = false;
};

/// Emits an x86-64 ELF relocatable object that defines every symbol of
/// \p symbols as read-only data holding exactly its bytes, with the given
/// alignment, global binding and hidden visibility (the model .so links to
/// it but does not export it). Output is deterministic.
///
/// The payload is copied once, into the returned string: LLVM emits a
/// zero-filled placeholder of each symbol's size and the bytes are patched in
/// afterwards, so blobs of hundreds of MB cost about their own size in memory.
///
/// Fails on an invalid or duplicate name, an alignment that is not a power of
/// two, or null data with a non-zero size.
Expected<std::string> writeDataObject(const std::vector<DataSymbol> &symbols);

} // namespace aotc::toolchain
