// On PoCL's CPU device the runtime asks PoCL to pin its worker threads, one
// per CPU (POCL_AFFINITY=1), where that is safe: the process may run on
// every online CPU. A value the host set is kept, and a process restricted
// to fewer CPUs is left alone (PoCL would abort it pinning a worker to a
// CPU it may not use). Each test runs in its own process (ctest runs every
// discovered test alone), so the runtime's once-per-process setting and
// PoCL's threads start fresh in each.
#include "model_test_util.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

using namespace aotc::e2e;

namespace {

/// The threads of this process allowed on one CPU only.
int pinnedThreads() {
  int pinned = 0;
  DIR *dir = opendir("/proc/self/task");
  if (!dir)
    return -1;
  while (dirent *e = readdir(dir)) {
    if (e->d_name[0] == '.')
      continue;
    std::ifstream status(std::string("/proc/self/task/") + e->d_name +
                         "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        std::string list = line.substr(line.find(':') + 1);
        list.erase(0, list.find_first_not_of(" \t"));
        if (list.find_first_not_of("0123456789") == std::string::npos)
          ++pinned;
      }
  }
  closedir(dir);
  return pinned;
}

/// True if this thread may run on every online CPU, and there are two or
/// more.
bool mayRunEverywhere() {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  return online >= 2 && sched_getaffinity(0, sizeof mask, &mask) == 0 &&
         CPU_COUNT(&mask) == online;
}

TEST(PoclAffinity, WorkersArePinnedOnePerCpu) {
  unsetenv("POCL_AFFINITY");
  if (!mayRunEverywhere())
    GTEST_SKIP() << "this process may not run on every CPU, or there is one";
  ASSERT_EQ(pinnedThreads(), 0);
  aotc::Model m = loadSmallRelu("pocl_affinity");
  if (!onPocl(m))
    GTEST_SKIP() << "not PoCL: " << m.deviceName();
  const char *v = std::getenv("POCL_AFFINITY");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v), "1");
  expectSmallRelu(m);
  // PoCL starts one worker per CPU, each pinned to its CPU.
  EXPECT_EQ(pinnedThreads(), sysconf(_SC_NPROCESSORS_ONLN));
}

TEST(PoclAffinity, AValueTheHostSetIsKept) {
  setenv("POCL_AFFINITY", "0", 1);
  aotc::Model m = loadSmallRelu("pocl_affinity");
  const char *v = std::getenv("POCL_AFFINITY");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v), "0");
  expectSmallRelu(m);
  if (mayRunEverywhere()) {
    EXPECT_EQ(pinnedThreads(), 0);
  }
}

TEST(PoclAffinity, AProcessOnFewerCpusIsLeftAlone) {
  unsetenv("POCL_AFFINITY");
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    GTEST_SKIP() << "one CPU";
  // Only the last CPU: pinning worker 0 to CPU 0 would abort the process.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  CPU_SET(static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN) - 1), &mask);
  ASSERT_EQ(sched_setaffinity(0, sizeof mask, &mask), 0);
  aotc::Model m = loadSmallRelu("pocl_affinity");
  EXPECT_EQ(std::getenv("POCL_AFFINITY"), nullptr);
  expectSmallRelu(m);
}

} // namespace
