/// \file
/// Locating the crt objects and libraries a model .so is linked with.

#include "codegen/toolchain/toolchain_info.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>

// Configure-time paths (codegen/toolchain/CMakeLists.txt); empty if unknown.
#ifndef AOTC_CRTI_PATH
#define AOTC_CRTI_PATH ""
#endif
#ifndef AOTC_CRTN_PATH
#define AOTC_CRTN_PATH ""
#endif
#ifndef AOTC_CRTBEGINS_PATH
#define AOTC_CRTBEGINS_PATH ""
#endif
#ifndef AOTC_CRTENDS_PATH
#define AOTC_CRTENDS_PATH ""
#endif
#ifndef AOTC_LIBSTDCXX_PATH
#define AOTC_LIBSTDCXX_PATH ""
#endif
#ifndef AOTC_LIBM_PATH
#define AOTC_LIBM_PATH ""
#endif
#ifndef AOTC_LIBC_PATH
#define AOTC_LIBC_PATH ""
#endif
#ifndef AOTC_LIBGCC_S_PATH
#define AOTC_LIBGCC_S_PATH ""
#endif
#ifndef AOTC_LIBGCC_PATH
#define AOTC_LIBGCC_PATH ""
#endif
#ifndef AOTC_LIBOPENCL_PATH
#define AOTC_LIBOPENCL_PATH ""
#endif

namespace fs = std::filesystem;

namespace aotc::toolchain {

namespace {

const char *const kDebianGccRoot = "/usr/lib/gcc/x86_64-linux-gnu";

const char *const kSystemLibDirs[] = {
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/lib",
};

bool isFile(const std::string &path) {
  std::error_code ec;
  return !path.empty() && fs::exists(path, ec) && !fs::is_directory(path, ec);
}

/// Parses "12" or "12.2.0" into comparable numbers; non-numeric parts are 0.
std::vector<long> versionKey(const std::string &name) {
  std::vector<long> key;
  std::istringstream in(name);
  std::string part;
  while (std::getline(in, part, '.')) {
    char *end = nullptr;
    long value = std::strtol(part.c_str(), &end, 10);
    key.push_back(end == part.c_str() ? 0 : value);
  }
  return key;
}

/// GCC's per-version library directories under \p gccRoot, newest first.
std::vector<std::string> gccLibDirs(const std::string &gccRoot) {
  std::vector<std::string> dirs;
  std::error_code ec;
  fs::directory_iterator it(gccRoot, ec);
  if (ec)
    return dirs;
  for (const fs::directory_entry &entry : it) {
    std::error_code entryEc;
    if (entry.is_directory(entryEc))
      dirs.push_back(entry.path().string());
  }
  std::sort(dirs.begin(), dirs.end(),
            [](const std::string &a, const std::string &b) {
              return versionKey(fs::path(a).filename().string()) >
                     versionKey(fs::path(b).filename().string());
            });
  return dirs;
}

/// Returns \p preferred if it exists, else the first of \p names found in
/// \p dirs, else an error naming the file and the places searched.
Expected<std::string> locate(const std::string &preferred,
                             const std::vector<std::string> &names,
                             const std::vector<std::string> &dirs,
                             const char *providedBy) {
  if (isFile(preferred))
    return fs::path(preferred).lexically_normal().string();
  for (const std::string &name : names)
    for (const std::string &dir : dirs) {
      std::string candidate = dir + "/" + name;
      if (isFile(candidate))
        return candidate;
    }
  std::ostringstream msg;
  msg << "cannot find '" << names.front()
      << "', which every model .so is linked with: ";
  if (!preferred.empty())
    msg << "'" << preferred << "' does not exist, ";
  msg << "and no ";
  for (size_t i = 0; i < names.size(); ++i)
    msg << (i ? " or '" : "'") << names[i] << "'";
  msg << " is in ";
  if (dirs.empty())
    msg << "(no candidate directories)";
  for (size_t i = 0; i < dirs.size(); ++i)
    msg << (i ? ", " : "") << dirs[i];
  msg << " (install " << providedBy << ")";
  return Status::error(msg.str());
}

void addUniqueDir(std::vector<std::string> &dirs, const std::string &file) {
  std::string dir = fs::path(file).parent_path().string();
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec))
    return;
  if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
    dirs.push_back(dir);
}

} // namespace

Expected<SystemLinkFiles> findSystemLinkFiles() {
  SystemLinkFiles baked;
  baked.crti = AOTC_CRTI_PATH;
  baked.crtn = AOTC_CRTN_PATH;
  baked.crtbeginS = AOTC_CRTBEGINS_PATH;
  baked.crtendS = AOTC_CRTENDS_PATH;
  baked.libGcc = AOTC_LIBGCC_PATH;
  baked.libStdCxx = AOTC_LIBSTDCXX_PATH;
  baked.libGccS = AOTC_LIBGCC_S_PATH;
  baked.libM = AOTC_LIBM_PATH;
  baked.libC = AOTC_LIBC_PATH;
  baked.libOpenCL = AOTC_LIBOPENCL_PATH;
  return findSystemLinkFiles(
      baked, kDebianGccRoot,
      std::vector<std::string>(std::begin(kSystemLibDirs),
                               std::end(kSystemLibDirs)));
}

Expected<SystemLinkFiles>
findSystemLinkFiles(const SystemLinkFiles &preferred,
                    const std::string &gccRoot,
                    const std::vector<std::string> &sysDirs) {
  const std::vector<std::string> gccDirs = gccLibDirs(gccRoot);
  std::vector<std::string> gccThenSys = gccDirs;
  gccThenSys.insert(gccThenSys.end(), sysDirs.begin(), sysDirs.end());
  const char *gccDev = "g++ (libgcc and libstdc++ development files)";
  const char *libcDev = "libc6-dev";

  SystemLinkFiles files;
  AOTC_ASSIGN_OR_RETURN(files.crti,
                        locate(preferred.crti, {"crti.o"}, sysDirs, libcDev));
  AOTC_ASSIGN_OR_RETURN(files.crtn,
                        locate(preferred.crtn, {"crtn.o"}, sysDirs, libcDev));
  AOTC_ASSIGN_OR_RETURN(
      files.crtbeginS,
      locate(preferred.crtbeginS, {"crtbeginS.o"}, gccDirs, gccDev));
  AOTC_ASSIGN_OR_RETURN(
      files.crtendS, locate(preferred.crtendS, {"crtendS.o"}, gccDirs, gccDev));
  AOTC_ASSIGN_OR_RETURN(
      files.libGcc, locate(preferred.libGcc, {"libgcc.a"}, gccDirs, gccDev));
  AOTC_ASSIGN_OR_RETURN(files.libStdCxx,
                        locate(preferred.libStdCxx,
                               {"libstdc++.so", "libstdc++.so.6"}, gccThenSys,
                               gccDev));
  AOTC_ASSIGN_OR_RETURN(files.libGccS, locate(preferred.libGccS,
                                              {"libgcc_s.so", "libgcc_s.so.1"},
                                              gccThenSys, gccDev));
  AOTC_ASSIGN_OR_RETURN(
      files.libM,
      locate(preferred.libM, {"libm.so", "libm.so.6"}, sysDirs, libcDev));
  AOTC_ASSIGN_OR_RETURN(
      files.libC,
      locate(preferred.libC, {"libc.so", "libc.so.6"}, sysDirs, libcDev));
  AOTC_ASSIGN_OR_RETURN(files.libOpenCL,
                        locate(preferred.libOpenCL,
                               {"libOpenCL.so", "libOpenCL.so.1"}, sysDirs,
                               "ocl-icd-opencl-dev or ocl-icd-libopencl1"));

  // libgcc_s.so names "libgcc_s.so.1" and "-lgcc"; libc.so and libm.so use
  // absolute paths but are searched the same way for safety.
  addUniqueDir(files.librarySearchDirs, files.libGcc);
  addUniqueDir(files.librarySearchDirs, files.libGccS);
  addUniqueDir(files.librarySearchDirs, files.libC);
  addUniqueDir(files.librarySearchDirs, files.libM);
  for (const std::string &dir : sysDirs) {
    std::error_code ec;
    if (fs::is_directory(dir, ec) &&
        std::find(files.librarySearchDirs.begin(),
                  files.librarySearchDirs.end(),
                  dir) == files.librarySearchDirs.end())
      files.librarySearchDirs.push_back(dir);
  }
  return files;
}

} // namespace aotc::toolchain
