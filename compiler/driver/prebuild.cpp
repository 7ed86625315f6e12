/// \file
/// Building a model's OpenCL program at compile time: see prebuild.h. The
/// child process is the runtime's (runtime/src/program_builder.h), run with
/// --select and --key-out.
#include "compiler/driver/prebuild.h"

#include "program_builder.h"
#include "program_cache.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace aotc {

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

namespace {

/// The device's key in \p programKey (programKeyText), after checking that
/// the binary was built from \p clSource with \p options.
Expected<std::string> deviceKeyOf(const std::string &programKey,
                                  const std::string &clSource,
                                  const std::string &options,
                                  const std::string &what) {
  // programKeyText's header for this compile, then the device's key.
  std::string expected = rt::programKeyText(clSource.data(), clSource.size(),
                                            options.c_str(), "");
  if (programKey.compare(0, expected.size(), expected) != 0) {
    auto line = [](const std::string &text, const char *name) {
      size_t at = text.find(std::string("\n") + name);
      if (at == std::string::npos)
        return std::string("none");
      at += 1;
      return text.substr(at, text.find('\n', at) - at);
    };
    if (programKey.rfind("aotc program key v1\n", 0) != 0)
      return makeError(what, ": not a program key of aotc-build-program "
                             "--key-out");
    return makeError(
        what, ": the binary was built from another OpenCL program than this "
              "compile's (", line(programKey, "source: "), ", ",
        line(programKey, "options: "), "; this compile: ",
        line(expected, "source: "), ", ", line(expected, "options: "),
        "): build it from `aotc compile --emit=cl` with the same model and "
        "flags");
  }
  std::string device = programKey.substr(expected.size());
  if (device.rfind("platform: ", 0) != 0)
    return makeError(what, ": the program key names no device");
  return device;
}

bool readWhole(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return !in.bad();
}

} // namespace

Expected<PrebuiltProgram> readProgramBinary(const std::string &keyPath,
                                            const std::string &binPath,
                                            const std::string &clSource,
                                            const std::string &options) {
  std::string what = "--program-binary " + keyPath + "," + binPath;
  std::string key;
  PrebuiltProgram p;
  p.spec = binPath;
  if (!readWhole(keyPath, key))
    return makeError(what, ": cannot read the key file '", keyPath, "'");
  if (!readWhole(binPath, p.binary) || p.binary.empty())
    return makeError(what, ": cannot read the binary '", binPath,
                     "' (or it is empty)");
  AOTC_ASSIGN_OR_RETURN(p.deviceKey, deviceKeyOf(key, clSource, options, what));
  return p;
}

std::string findProgramBuilderTool() {
  return rt::findProgramBuilder(/*besideFirst=*/true);
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
  PrebuiltProgram p;
  p.spec = spec;
  std::vector<unsigned char> binary;
  if (rt::runProgramBuilder(builder, {"--select", spec}, clSource.data(),
                            clSource.size(), options.c_str(),
                            what + ": building the OpenCL program", binary,
                            &p.deviceKey) != AOTC_OK) {
    std::string message = rt::lastError();
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    return makeError(message);
  }
  p.binary.assign(binary.begin(), binary.end());
  AOTC_ASSIGN_OR_RETURN(p.deviceKey,
                        deviceKeyOf(p.deviceKey, clSource, options, what));
  return p;
}

} // namespace aotc
