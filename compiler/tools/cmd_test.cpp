/// \file
/// `aotc test CASE_DIR...`: compiles and runs directories in ONNX's
/// backend-test layout (model.onnx, test_data_set_*/input_*.pb, output_*.pb)
/// and compares with tolerances. The last line is `N passed, N failed`.
#include "compiler/tools/commands.h"
#include "compiler/tools/tensor_io.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace aotc::cli {

namespace {

std::vector<std::string> listDir(const std::string &dir,
                                 const std::string &prefix) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind(prefix, 0) == 0)
        out.push_back(n);
    }
    closedir(d);
  }
  // input_10 after input_9: sort by length, then text.
  std::sort(out.begin(), out.end(),
            [](const std::string &a, const std::string &b) {
              return a.size() != b.size() ? a.size() < b.size() : a < b;
            });
  return out;
}

std::string caseName(const std::string &dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/')
    d.pop_back();
  size_t s = d.find_last_of('/');
  return s == std::string::npos ? d : d.substr(s + 1);
}

/// One OpenCL context for every case of the run: the first model's, kept
/// for the others (ModelOptions::clContext). PoCL loads its kernel library
/// (10 MB of bitcode) into each context it builds a program in: ONNX's node
/// tests took 580 s of CPU on a cold PoCL cache in a context each, 290 s in
/// one.
struct SharedContext {
  void *context = nullptr;
  SharedContext() = default;
  SharedContext(const SharedContext &) = delete;
  SharedContext &operator=(const SharedContext &) = delete;
  ~SharedContext() {
    if (context)
      clReleaseContext(static_cast<cl_context>(context));
  }
};

/// Runs one case; returns an empty string when it passed, else why not.
std::string runCase(const std::string &dir, const TestArgs &args,
                    const std::string &tmpDir, int index,
                    SharedContext &shared) {
  CompileOptions co;
  co.modelPath = dir + "/model.onnx";
  co.outputPath = tmpDir + "/case" + std::to_string(index) + ".so";
  co.schedule.registerTiling = !args.naiveKernels;
  if (args.fuseAttention)
    co.fuseAttention = CompileOptions::Fuse::On;
  if (args.narrowIndices)
    co.indexBits = CompileOptions::IndexBits::Narrow;
  co.winograd = !args.noWinograd;
  co.rowPanelsAlways = args.rowPanelsAlways;
  auto profile = resolveDeviceProfile(args.deviceProfile);
  if (!profile)
    return "compile: " + profile.status().message();
  co.schedule.profile = *profile;
  if (!args.kernelConfigs.empty()) {
    auto configs = readKernelConfigs(args.kernelConfigs);
    if (!configs)
      return "compile: " + configs.status().message();
    co.schedule.kernelConfigs = *configs;
  }
  auto compiled = compileModel(co);
  if (!compiled)
    return "compile: " + compiled.status().message();
  struct Cleanup {
    std::string path;
    ~Cleanup() { unlink(path.c_str()); }
  } cleanup{co.outputPath};
  try {
    aotc::ModelOptions mo;
    if (!args.device.empty())
      mo.device = args.device;
    mo.clContext = shared.context;
    aotc::Model model = aotc::Model::load(co.outputPath, mo);
    if (!shared.context) {
      void *context = model.openclHandles().first;
      if (clRetainContext(static_cast<cl_context>(context)) == CL_SUCCESS)
        shared.context = context;
    }
    std::vector<std::string> sets = listDir(dir, "test_data_set_");
    if (sets.empty())
      return "no test_data_set_* directories";
    std::string worst;
    for (const std::string &set : sets) {
      std::string sd = dir + "/" + set;
      std::vector<aotc::HostTensor> inputs, expected;
      for (const std::string &f : listDir(sd, "input_")) {
        auto t = readTensorFile(sd + "/" + f);
        if (!t)
          return t.status().message();
        inputs.push_back(t.take());
      }
      for (const std::string &f : listDir(sd, "output_")) {
        auto t = readTensorFile(sd + "/" + f);
        if (!t)
          return t.status().message();
        expected.push_back(t.take());
      }
      std::vector<aotc::HostTensor> got = model.run(inputs);
      if (got.size() != expected.size())
        return set + ": " + std::to_string(got.size()) + " outputs, expected " +
               std::to_string(expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        Comparison c =
            compareTensors(got[i], expected[i], args.rtol, args.atol);
        if (!c.ok)
          return set + " output " + std::to_string(i) + ": " + c.message +
                 " (worst |error| " + std::to_string(c.worstError) + ")";
      }
    }
    return "";
  } catch (const std::exception &e) {
    return std::string("run: ") + e.what();
  }
}

} // namespace

int testCommand(const TestArgs &args) {
  std::vector<std::string> cases = args.cases;
  if (!args.casesFrom.empty()) {
    std::ifstream in(args.casesFrom);
    if (!in) {
      std::fprintf(stderr, "aotc: error: %s: cannot open file\n",
                   args.casesFrom.c_str());
      return 1;
    }
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#')
        continue;
      cases.push_back(
          line[0] == '/' || args.root.empty() ? line : args.root + "/" + line);
    }
  }
  if (cases.empty()) {
    std::fprintf(stderr, "aotc: error: no test cases selected%s\n",
                 args.casesFrom.empty()
                     ? ""
                     : (" (" + args.casesFrom + " lists none)").c_str());
    return 1;
  }
  const char *tmp = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/aotc-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::fprintf(stderr, "aotc: error: cannot create a temporary directory\n");
    return 1;
  }
  std::string tmpDir = buf.data();
  int passed = 0, failed = 0;
  SharedContext shared;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string why =
        runCase(cases[i], args, tmpDir, static_cast<int>(i), shared);
    if (why.empty()) {
      ++passed;
      if (args.verbose)
        std::printf("PASS %s\n", caseName(cases[i]).c_str());
    } else {
      ++failed;
      std::printf("FAIL %s: %s\n", caseName(cases[i]).c_str(), why.c_str());
    }
    std::fflush(stdout);
  }
  rmdir(tmpDir.c_str());
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

} // namespace aotc::cli
