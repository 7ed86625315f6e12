/// \file
/// Building a model's OpenCL program at compile time: see prebuild.h. The
/// child process is the runtime's (runtime/src/program_builder.h), run with
/// --select and --key-out.
#include "compiler/driver/prebuild.h"

#include "program_builder.h"

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
  return p;
}

} // namespace aotc
