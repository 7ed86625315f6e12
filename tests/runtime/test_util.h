/// \file
/// Helpers shared by the runtime tests.
#ifndef AOTC_TESTS_RUNTIME_TEST_UTIL_H
#define AOTC_TESTS_RUNTIME_TEST_UTIL_H

#include "aotc/aotc_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <ftw.h>
#include <unistd.h>

namespace aotc::test {

/// The build's shared program cache (kept between test processes, so only the
/// first test compiles OpenCL C).
inline const char *sharedCacheDir() { return AOTC_TEST_CACHE_DIR; }

/// The device the tests run on: $AOTC_TEST_DEVICE, else "cpu" (PoCL).
inline const char *testDevice() {
  const char *device = std::getenv("AOTC_TEST_DEVICE");
  return device && *device ? device : "cpu";
}

struct ContainerDeleter {
  void operator()(aotc_container_t *c) const { aotc_container_delete(c); }
};
using ContainerPtr = std::unique_ptr<aotc_container_t, ContainerDeleter>;

/// A fresh directory, removed with its contents at scope exit.
class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/aotc-runtime-test-XXXXXX";
    const char *dir = mkdtemp(pattern);
    path_ = dir ? dir : "";
  }
  ~TempDir() {
    if (!path_.empty())
      nftw(
          path_.c_str(),
          [](const char *p, const struct stat *, int, struct FTW *) {
            return std::remove(p);
          },
          16, FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Runs a shell command and returns its standard output.
inline std::string capture(const std::string &command,
                           int *exitCode = nullptr) {
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  int status = pclose(pipe);
  if (exitCode)
    *exitCode = status;
  return output;
}

/// Lines of \p text.
inline std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> result;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    result.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return result;
}

} // namespace aotc::test

#endif // AOTC_TESTS_RUNTIME_TEST_UTIL_H
