/// \file
/// Building an OpenCL program in another process: see program_builder.h.
#include "program_builder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <thread>

#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace aotc::rt {
namespace {

/// The file names of the libLLVM libraries loaded in this process.
std::set<std::string> loadedLlvmLibraries() {
  std::set<std::string> names;
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) {
        const char *path = info->dlpi_name;
        if (!path || !*path)
          return 0;
        const char *base = std::strrchr(path, '/');
        base = base ? base + 1 : path;
        if (std::strncmp(base, "libLLVM", 7) == 0 && std::strstr(base, ".so"))
          static_cast<std::set<std::string> *>(data)->insert(base);
        return 0;
      },
      &names);
  return names;
}

bool readFile(const std::string &path, std::vector<unsigned char> &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  out.clear();
  unsigned char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    out.insert(out.end(), chunk, chunk + n);
  }
  ::close(fd);
  return true;
}

bool writeFile(const std::string &path, const char *data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return ::close(fd) == 0;
}

bool executable(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

/// A private temporary folder and the files in it, removed on destruction.
class TempDir {
public:
  TempDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/aotc-build-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()))
      path_ = buf.data();
  }
  ~TempDir() {
    for (const std::string &f : files_)
      ::unlink(f.c_str());
    if (!path_.empty())
      ::rmdir(path_.c_str());
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  bool ok() const { return !path_.empty(); }
  std::string file(const char *name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }

private:
  std::string path_;
  std::vector<std::string> files_;
};

/// aotc-build-program in the folder of this process's executable, or "".
std::string builderBesideExecutable() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return std::string();
  self[n] = '\0';
  std::string dir = self;
  dir = dir.substr(0, dir.rfind('/'));
  return executable(dir + "/aotc-build-program") ? dir + "/aotc-build-program"
                                                 : std::string();
}

} // namespace

bool buildOutOfProcess(const DeviceInfo &device, std::string &why) {
  const char *force = std::getenv("AOTC_BUILD_OUT_OF_PROCESS");
  if (force && std::strcmp(force, "1") == 0) {
    why = "AOTC_BUILD_OUT_OF_PROCESS=1";
    return true;
  }
  if ((force && std::strcmp(force, "0") == 0) || !device.isPocl)
    return false;
  std::set<std::string> llvm = loadedLlvmLibraries();
  if (llvm.size() < 2)
    return false;
  why = "this process has loaded";
  for (const std::string &name : llvm)
    why += (name == *llvm.begin() ? " " : " and ") + name;
  why += ", and PoCL's compiler crashes beside another LLVM";
  return true;
}

std::string findProgramBuilder(bool besideFirst) {
  if (const char *env = std::getenv("AOTC_PROGRAM_BUILDER"); env && *env)
    return env;
  std::string beside = builderBesideExecutable();
  if (besideFirst && !beside.empty())
    return beside;
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
  return beside;
}

aotc_status_t runProgramBuilder(const std::string &builder,
                                const std::vector<std::string> &deviceArgs,
                                const char *source, size_t sourceSize,
                                const char *options, const std::string &what,
                                std::vector<unsigned char> &binary,
                                std::string *key) {
  TempDir tmp;
  if (!tmp.ok())
    return fail(AOTC_ERROR_DEVICE_ERROR,
                "%s: cannot make a temporary folder: %s", what.c_str(),
                std::strerror(errno));
  std::string src = tmp.file("program.cl"), bin = tmp.file("program.bin"),
              log = tmp.file("log.txt"),
              keyFile = key ? tmp.file("device.key") : std::string();
  if (!writeFile(src, source, sourceSize))
    return fail(AOTC_ERROR_DEVICE_ERROR, "%s: cannot write %s: %s",
                what.c_str(), src.c_str(), std::strerror(errno));

  std::vector<std::string> args = {builder};
  args.insert(args.end(), deviceArgs.begin(), deviceArgs.end());
  for (const char *a : {"--options", options ? options : "", "--source",
                        src.c_str(), "--out", bin.c_str()})
    args.push_back(a);
  if (key) {
    args.push_back("--key-out");
    args.push_back(keyFile);
  }
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // The environment without LD_PRELOAD, which may be what loaded the other
  // LLVM.
  std::vector<char *> envp;
  for (char **e = environ; e && *e; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0)
      envp.push_back(*e);
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  int err = posix_spawn(&pid, builder.c_str(), &actions, nullptr, argv.data(),
                        envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0)
    return fail(AOTC_ERROR_DEVICE_ERROR,
                "%s: cannot run '%s': %s (set AOTC_PROGRAM_BUILDER to the "
                "path of aotc-build-program)",
                what.c_str(), builder.c_str(), std::strerror(err));
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  // (A host that ignores SIGCHLD has its children reaped for it: ECHILD,
  // and then the output file alone tells.)
  bool exited = waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  bool unknown = waited < 0 && errno == ECHILD;
  std::vector<unsigned char> text;
  readFile(log, text);
  std::string message(text.begin(), text.end());
  while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
    message.pop_back();
  std::vector<unsigned char> keyText;
  if ((!exited && !unknown) || !readFile(bin, binary) || binary.empty() ||
      (key && (!readFile(keyFile, keyText) || keyText.empty()))) {
    std::string how =
        waited == pid && WIFSIGNALED(status)
            ? formatString("killed by signal %d", WTERMSIG(status))
        : waited == pid && WIFEXITED(status)
            ? formatString("exit code %d", WEXITSTATUS(status))
            : std::string("no program binary");
    return fail(AOTC_ERROR_DEVICE_ERROR, "%s ('%s') failed (%s); its output:\n%s",
                what.c_str(), builder.c_str(), how.c_str(), message.c_str());
  }
  if (key)
    key->assign(keyText.begin(), keyText.end());
  return AOTC_OK;
}

size_t builderJobs(size_t fallback) {
  if (const char *env = std::getenv("AOTC_BUILD_JOBS"); env && *env) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end && *end == '\0' && v >= 0)
      return static_cast<size_t>(std::clamp<long>(v, 1, 64));
  }
  return fallback;
}

size_t onlineCpus() {
  return static_cast<size_t>(
      std::clamp<long>(::sysconf(_SC_NPROCESSORS_ONLN), 1, 8));
}

std::vector<std::string> builderDeviceArgs(const DeviceInfo &device) {
  return {"--platform", device.platformName, "--device", device.deviceName};
}

void runProgramBuildersAtOnce(const std::string &builder,
                              const std::vector<std::string> &deviceArgs,
                              const char *options, const std::string &what,
                              bool wantKey, std::vector<BuilderJob> &jobs) {
  auto build = [&](BuilderJob &job) {
    job.status = runProgramBuilder(builder, deviceArgs, job.source.data(),
                                   job.source.size(), options, what,
                                   job.binary, wantKey ? &job.key : nullptr);
    if (job.status != AOTC_OK) {
      job.message = lastError(); // this thread's
      while (!job.message.empty() && job.message.back() == '\n')
        job.message.pop_back();
    }
  };
  if (jobs.empty())
    return;
  // The first job runs here; one thread per other job waits for its child.
  std::vector<std::thread> threads;
  size_t next = 1;
  try {
    for (; next < jobs.size(); ++next)
      threads.emplace_back(build, std::ref(jobs[next]));
  } catch (...) {
  }
  build(jobs[0]);
  for (std::thread &t : threads)
    t.join();
  for (; next < jobs.size(); ++next)
    build(jobs[next]);
}

aotc_status_t buildBinaryInChild(const std::string &builder,
                                 const DeviceInfo &device, const char *source,
                                 size_t sourceSize, const char *options,
                                 const char *modelName,
                                 std::vector<unsigned char> &binary) {
  return runProgramBuilder(
      builder, builderDeviceArgs(device), source, sourceSize, options,
      formatString("building the OpenCL program of model '%s' for '%s' in "
                   "another process",
                   modelName, device.fullName.c_str()),
      binary, nullptr);
}

} // namespace aotc::rt
