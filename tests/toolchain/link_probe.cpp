/// \file
/// Child process of the toolchain tests: builds DIR/probe.so with the
/// in-process toolchain. The test runs it with an environment holding only
/// "PATH=", proving that compiling and linking never look for a program.
///
/// Usage: aotc_toolchain_link_probe DIR
/// Exit codes: 0 built, 1 toolchain error (printed), 2 usage, 3 PATH not empty.

#include "tests/toolchain/probe_source.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char *path = std::getenv("PATH");
  if (path && std::strlen(path) != 0) {
    std::fprintf(stderr, "PATH is not empty: '%s'\n", path);
    return 3;
  }
  std::string dir = argv[1];
  aotc::Status status = aotc::toolchain::testing::buildProbeLibrary(
      dir, aotc::toolchain::testing::randomBytes(4099, 7), dir + "/probe.so");
  if (!status.isOk()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
