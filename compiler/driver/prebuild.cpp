/// \file
/// Building a model's OpenCL program at compile time: see prebuild.h. The
/// child process is the runtime's (runtime/src/program_builder.h), run with
/// --select and --key-out.
#include "compiler/driver/prebuild.h"

#include "compiler/frontend/read_file.h"

#include "program_builder.h"
#include "program_cache.h"
#include "program_split.h"

#include <vector>

namespace aotc {

namespace {

/// The value of the line "NAME: value" of a key's text, or \p absent.
std::string keyLine(const std::string &key, const std::string &name,
                    const char *absent) {
  std::string tag = name + ": ";
  size_t at = key.rfind(tag, 0) == 0 ? 0 : key.find("\n" + tag);
  if (at == std::string::npos)
    return absent;
  at += at == 0 ? tag.size() : tag.size() + 1;
  return key.substr(at, key.find('\n', at) - at);
}

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
    if (programKey.rfind("aotc program key v1\n", 0) != 0)
      return makeError(what, ": not a program key of aotc-build-program "
                             "--key-out");
    auto program = [](const std::string &key) {
      return "source: " + keyLine(key, "source", "none") +
             ", options: " + keyLine(key, "options", "none");
    };
    return makeError(
        what, ": the binary was built from another OpenCL program than this "
              "compile's (", program(programKey), "; this compile: ",
        program(expected),
        "): build it from `aotc compile --emit=cl` with the same model and "
        "flags");
  }
  std::string device = programKey.substr(expected.size());
  if (device.rfind("platform: ", 0) != 0)
    return makeError(what, ": the program key names no device");
  return device;
}

} // namespace

std::string describePrebuilt(const PrebuiltProgram &p) {
  return keyLine(p.deviceKey, "device", "?") + ", driver " +
         keyLine(p.deviceKey, "driver version", "?") + ": " +
         std::to_string(p.binary.size()) + " bytes" +
         (p.parts > 1 ? " (part " + std::to_string(p.part + 1) + " of " +
                            std::to_string(p.parts) + ")"
                      : std::string());
}

Expected<PrebuiltProgram> readProgramBinary(const std::string &keyPath,
                                            const std::string &binPath,
                                            const std::string &clSource,
                                            const std::string &options) {
  std::string what = "--program-binary " + keyPath + "," + binPath;
  // Key files are a few hundred bytes; a binary is limited as a model is.
  Expected<std::string> key = readRegularFile(keyPath, 1 << 20);
  if (!key)
    return key.status().withContext(what + ": the key file");
  Expected<std::string> binary = readRegularFile(binPath, kMaxProtobufBytes);
  if (!binary)
    return binary.status().withContext(what + ": the binary");
  if (binary->empty())
    return makeError(what, ": the binary '", binPath, "' is empty");
  PrebuiltProgram p;
  p.binary = binary.take();
  AOTC_ASSIGN_OR_RETURN(p.deviceKey, deviceKeyOf(*key, clSource, options, what));
  return p;
}

std::string findProgramBuilderTool() {
  return rt::findProgramBuilder(/*besideFirst=*/true);
}

size_t prebuildJobs() { return rt::builderJobs(rt::onlineCpus()); }

Expected<std::vector<PrebuiltProgram>> prebuildProgram(
    const std::string &spec, const std::string &clSource,
    const std::string &options, const std::string &builder, size_t jobs) {
  std::string what = "--prebuild " + spec;
  if (builder.empty())
    return makeError(what,
                     ": the aotc-build-program tool was not found beside "
                     "aotc or on PATH (set AOTC_PROGRAM_BUILDER to its path)");
  // The parts, or the whole program, each built by its own tool, at once.
  std::vector<rt::BuilderJob> built;
  for (rt::ProgramPart &part :
       rt::splitProgram(clSource.data(), clSource.size(), {}, jobs)) {
    built.emplace_back();
    built.back().source = std::move(part.source);
  }
  if (built.empty()) {
    built.emplace_back();
    built.back().source = clSource;
  }
  rt::runProgramBuildersAtOnce(builder, {"--select", spec}, options.c_str(),
                               what + ": building the OpenCL program",
                               /*wantKey=*/true, built);
  std::vector<PrebuiltProgram> out;
  for (size_t i = 0; i < built.size(); ++i) {
    rt::BuilderJob &b = built[i];
    if (b.status != AOTC_OK)
      return makeError(b.message);
    PrebuiltProgram p;
    p.binary.assign(b.binary.begin(), b.binary.end());
    AOTC_ASSIGN_OR_RETURN(p.deviceKey,
                          deviceKeyOf(b.key, b.source, options, what));
    if (!out.empty() && p.deviceKey != out.front().deviceKey)
      return makeError(what, ": the parts of the program were built for "
                             "different devices");
    p.part = i;
    p.parts = built.size();
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace aotc
