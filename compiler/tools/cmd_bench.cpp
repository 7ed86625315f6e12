/// \file
/// `aotc bench MODEL.onnx`: compiles, loads, checks against ONNX Runtime and
/// times aotc beside the installed peers (ONNX Runtime, IREE), through the
/// CPU benchmark's driver (bench/cpu/run.py, with its environment made by
/// scripts/bench_env.sh). This binary only hands the request over.
#include "compiler/tools/commands.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace aotc::cli {

int benchCommand(const BenchArgs &args) {
  char model[PATH_MAX];
  if (!realpath(args.model.c_str(), model)) {
    std::fprintf(stderr, "aotc: error: bench: %s: %s\n", args.model.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::string m = model;
  if (m.size() >= 8 && m.compare(m.size() - 8, 8, ".onnxtxt") == 0) {
    std::fprintf(stderr,
                 "aotc: error: bench: %s: the peers read binary ONNX only "
                 "(write it as .onnx first)\n",
                 args.model.c_str());
    return 1;
  }
  const char *src = std::getenv("AOTC_SOURCE_DIR");
  std::string root = src && *src ? src : AOTC_SOURCE_DIR;
  std::string script = root + "/bench/cpu.sh";
  if (access(script.c_str(), R_OK) != 0) {
    std::fprintf(stderr,
                 "aotc: error: bench: %s not found (set AOTC_SOURCE_DIR to the "
                 "aotc source tree)\n",
                 script.c_str());
    return 1;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    std::fprintf(stderr, "aotc: error: bench: cannot find this binary: %s\n",
                 std::strerror(errno));
    return 1;
  }
  self[n] = '\0';
  std::vector<std::string> argv = {"bash", script, "--onnx", model,
                                   "--batches", args.batches};
  for (const std::string &d : args.dims) {
    argv.push_back("--dim");
    argv.push_back(d);
  }
  if (!args.systems.empty()) {
    argv.push_back("--systems");
    argv.push_back(args.systems);
  }
  if (args.budget > 0) {
    argv.push_back("--budget");
    argv.push_back(std::to_string(args.budget));
  }
  if (args.threads > 0) {
    argv.push_back("--threads");
    argv.push_back(std::to_string(args.threads));
  }
  setenv("AOTC", self, 1);
  std::vector<char *> cargv;
  for (std::string &a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  execvp("bash", cargv.data());
  std::fprintf(stderr, "aotc: error: bench: cannot run bash: %s\n",
               std::strerror(errno));
  return 1;
}

} // namespace aotc::cli
