/// \file
/// Compiling generated C++ (the model wrapper) to an object file in process,
/// through the clang libraries: no compiler executable, no PATH, no system
/// header. The only header the source can include is <aotc/model_desc.h>,
/// whose text is embedded in aotc when it is built.
#pragma once

#include "ir/status.h"

#include <string>
#include <vector>

namespace aotc::toolchain {

struct CompileOptions {
  /// -O0 .. -O3.
  int optLevel = 2;
  /// Extra preprocessor definitions, "NAME" or "NAME=VALUE" (as after -D).
  std::vector<std::string> defines;
};

/// Compiles the C++17 translation unit \p source to an x86-64 ELF relocatable
/// object (PIC) and returns the object's bytes. \p bufferName names the
/// source in diagnostics ("wrapper.cpp:12:3: error: ...").
///
/// The compilation is freestanding and hermetic: -ffreestanding, no system or
/// builtin include paths, no file system access; AOTC_FREESTANDING is defined
/// and <aotc/model_desc.h> resolves to aotc's embedded copy. Code is built
/// with -fPIC -fvisibility=hidden -fno-exceptions -fno-rtti, so only symbols
/// marked visibility("default") are exported from the final .so.
///
/// On a compile error, returns an error whose message holds clang's
/// diagnostics verbatim; nothing is printed. Thread-safe.
Expected<std::string> compileCxxToObject(const std::string &source,
                                         const std::string &bufferName,
                                         const CompileOptions &opts = {});

} // namespace aotc::toolchain
