/// \file
/// Linking objects into a model .so in process, through lld's ELF library:
/// no linker executable, no compiler driver, no PATH.
#pragma once

#include "ir/status.h"

#include <string>
#include <vector>

namespace aotc::toolchain {

struct LinkOptions {
  /// Object files (.o) and archives (.a), linked in this order.
  std::vector<std::string> inputs;
  /// The shared object to write; its directory must exist.
  std::string output;
  /// DT_SONAME; empty means the file name of \p output.
  std::string soname;
  /// Allow undefined symbols (-z undefs). By default every symbol must be
  /// resolved at link time (-z defs), so a missing definition fails here
  /// rather than at dlopen.
  bool allowUndefined = false;
  /// A version script (--version-script) that limits the exported symbols;
  /// empty exports everything with default visibility.
  std::string versionScript;
  /// Archives linked whole (--whole-archive), after \p inputs: every member
  /// is kept even when nothing references it (the runtime's exported ABI).
  std::vector<std::string> wholeArchives;
};

/// Links \p opts.inputs into the shared object \p opts.output with everything
/// a C++ shared library needs: crti.o/crtbeginS.o ... crtendS.o/crtn.o,
/// libstdc++, libm, libgcc_s/libgcc, libc and the OpenCL ICD loader, all as
/// absolute paths (see findSystemLinkFiles()). Libraries are linked
/// --as-needed, so DT_NEEDED lists only those actually used. Also passes
/// -z now, -z relro, --build-id, --hash-style=gnu and --eh-frame-hdr.
///
/// Fails, with lld's diagnostics in the message, on a missing or malformed
/// input, an undefined symbol or an unwritable output; nothing is printed.
/// Calls are serialized (lld keeps global state); any number of calls per
/// process is fine.
Status linkSharedObject(const LinkOptions &opts);

} // namespace aotc::toolchain
