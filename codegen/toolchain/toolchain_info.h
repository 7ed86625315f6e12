/// \file
/// Where the in-process toolchain finds the system files a model .so is
/// linked with (crt objects, the C/C++ runtime libraries, the OpenCL ICD
/// loader), and the target every object is built for.
///
/// The paths are found when aotc is configured (by asking the host C++
/// compiler and find_package(OpenCL)) and baked into the library, so linking
/// needs neither a compiler driver nor PATH. If a baked path no longer exists
/// (the compiler runs on another machine), Debian's standard locations are
/// probed instead.
#pragma once

#include "ir/status.h"

#include <string>
#include <vector>

namespace aotc::toolchain {

/// Target triple of every object the toolchain produces.
inline constexpr const char *kTargetTriple = "x86_64-pc-linux-gnu";

/// Absolute paths of the files every model .so is linked with.
struct SystemLinkFiles {
  std::string crti;      ///< crti.o (glibc)
  std::string crtbeginS; ///< crtbeginS.o (libgcc)
  std::string crtendS;   ///< crtendS.o (libgcc)
  std::string crtn;      ///< crtn.o (glibc)
  std::string libStdCxx; ///< libstdc++.so, else libstdc++.so.6
  std::string libM;      ///< libm.so (a linker script), else libm.so.6
  std::string libC;      ///< libc.so (a linker script), else libc.so.6
  std::string libGccS;   ///< libgcc_s.so (a linker script), else .so.1
  std::string libGcc;    ///< libgcc.a
  std::string libOpenCL; ///< libOpenCL.so, else libOpenCL.so.1
  /// Directories for what the linker scripts above name by relative path or
  /// -l (libgcc_s.so says "libgcc_s.so.1 -lgcc"), in search order.
  std::vector<std::string> librarySearchDirs;
};

/// Locates every file of SystemLinkFiles: the path baked in at configure time
/// when it still exists, else the first match in Debian's standard locations
/// (/usr/lib/gcc/x86_64-linux-gnu/<N>/ newest first,
/// /usr/lib/x86_64-linux-gnu/, /lib/x86_64-linux-gnu/, ...). Fails naming the
/// first file that cannot be found and the places that were searched. Does not
/// read PATH.
Expected<SystemLinkFiles> findSystemLinkFiles();

/// As findSystemLinkFiles(), with the starting points given: each file of
/// \p preferred that exists is taken as is (empty ones are skipped), the rest
/// are searched for in \p gccRoot/<version>/ (crt*S.o, libgcc, libstdc++,
/// libgcc_s) and \p systemDirs.
Expected<SystemLinkFiles>
findSystemLinkFiles(const SystemLinkFiles &preferred,
                    const std::string &gccRoot,
                    const std::vector<std::string> &systemDirs);

} // namespace aotc::toolchain
