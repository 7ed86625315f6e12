/// \file
/// Building a model's OpenCL program at compile time: see prebuild.h.
#include "compiler/driver/prebuild.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace aotc {
namespace {

bool executable(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return !in.bad();
}

/// A private temporary folder and the files in it, removed on destruction.
class BuildDir {
public:
  BuildDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/aotc-prebuild-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()))
      path_ = buf.data();
  }
  ~BuildDir() {
    for (const char *f : {"program.cl", "program.bin", "device.key", "log.txt"})
      ::unlink((path_ + "/" + f).c_str());
    if (!path_.empty())
      ::rmdir(path_.c_str());
  }
  BuildDir(const BuildDir &) = delete;
  BuildDir &operator=(const BuildDir &) = delete;
  bool ok() const { return !path_.empty(); }
  std::string file(const char *name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

} // namespace

std::string describePrebuilt(const PrebuiltProgram &p) {
  // The key's "device: " and "driver version: " lines.
  auto line = [&](const std::string &name) {
    size_t at = p.deviceKey.find("\n" + name + ": ");
    if (at == std::string::npos)
      return std::string("?");
    at += name.size() + 3;
    return p.deviceKey.substr(at, p.deviceKey.find('\n', at) - at);
  };
  return line("device") + ", driver " + line("driver version") + ": " +
         std::to_string(p.binary.size()) + " bytes";
}

std::string findProgramBuilderTool() {
  if (const char *env = std::getenv("AOTC_PROGRAM_BUILDER"); env && *env)
    return env;
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    if (executable(dir + "/aotc-build-program"))
      return dir + "/aotc-build-program";
  }
  if (const char *path = std::getenv("PATH")) {
    std::string dirs = path;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos)
        end = dirs.size();
      std::string dir = dirs.substr(start, end - start);
      if (!dir.empty() && executable(dir + "/aotc-build-program"))
        return dir + "/aotc-build-program";
      start = end + 1;
    }
  }
  return std::string();
}

Expected<PrebuiltProgram> prebuildProgram(const std::string &spec,
                                          const std::string &clSource,
                                          const std::string &options,
                                          const std::string &builder) {
  std::string what = "--prebuild " + spec;
  if (builder.empty())
    return makeError(what,
                     ": the aotc-build-program tool was not found beside "
                     "aotc or on PATH (set AOTC_PROGRAM_BUILDER to its path)");
  BuildDir dir;
  if (!dir.ok())
    return makeError(what, ": cannot make a temporary folder: ",
                     std::strerror(errno));
  std::string src = dir.file("program.cl"), bin = dir.file("program.bin"),
              key = dir.file("device.key"), log = dir.file("log.txt");
  {
    std::ofstream out(src, std::ios::binary);
    out.write(clSource.data(), static_cast<std::streamsize>(clSource.size()));
    if (!out)
      return makeError(what, ": cannot write ", src);
  }
  std::vector<std::string> args = {builder,   "--select",  spec,
                                   "--options", options,   "--source",
                                   src,         "--out",   bin,
                                   "--key-out", key};
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  int err = posix_spawn(&pid, builder.c_str(), &actions, nullptr, argv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0)
    return makeError(what, ": cannot run '", builder,
                     "': ", std::strerror(err));
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  std::string message;
  readFile(log, message);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
    message.pop_back();
  PrebuiltProgram p;
  p.spec = spec;
  bool exited = waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!exited || !readFile(bin, p.binary) || p.binary.empty() ||
      !readFile(key, p.deviceKey) || p.deviceKey.empty()) {
    std::string how =
        waited == pid && WIFSIGNALED(status)
            ? "killed by signal " + std::to_string(WTERMSIG(status))
        : waited == pid && WIFEXITED(status)
            ? "exit code " + std::to_string(WEXITSTATUS(status))
            : std::string("no program binary");
    return makeError(what, ": building the OpenCL program failed (", how,
                     ")", message.empty() ? "" : ": ", message);
  }
  return p;
}

} // namespace aotc
