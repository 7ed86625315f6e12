/// \file
/// aotc_codegen_dump: prints what code generation emits for one of the
/// hand-made modules of test_modules.h, for the FileCheck tests.
///
///   aotc_codegen_dump --module=pointwise|reduction|const_arena
///                     --emit=cl|cpp|loop [--weightless]
#include "codegen/opencl/cl_printer.h"
#include "codegen/wrapper/wrapper_emitter.h"
#include "test_modules.h"

#include <cstdio>
#include <string>

namespace {

int usage() {
  std::fprintf(stderr, "usage: aotc_codegen_dump --module=NAME "
                       "--emit=cl|cpp|loop [--weightless]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string module, emit;
  bool weightless = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--module=", 0) == 0)
      module = a.substr(9);
    else if (a.rfind("--emit=", 0) == 0)
      emit = a.substr(7);
    else if (a == "--weightless")
      weightless = true;
    else
      return usage();
  }
  aotc::LoopModule m;
  if (!aotc::test::moduleByName(module, m)) {
    std::fprintf(stderr, "error: unknown module '%s'\n", module.c_str());
    return usage();
  }
  if (emit == "loop") {
    std::fputs(m.print().c_str(), stdout);
    return 0;
  }
  aotc::Expected<std::string> cl = aotc::emitOpenCL(m);
  if (!cl) {
    std::fprintf(stderr, "error: %s\n", cl.status().message().c_str());
    return 1;
  }
  if (emit == "cl") {
    std::fputs(cl->c_str(), stdout);
    return 0;
  }
  if (emit != "cpp")
    return usage();
  aotc::WrapperOptions opts;
  opts.clSourceSize = cl->size();
  opts.clBuildOptions = aotc::buildOptions(m);
  opts.weightless = weightless;
  aotc::Expected<std::string> cpp = aotc::emitWrapper(m, opts);
  if (!cpp) {
    std::fprintf(stderr, "error: %s\n", cpp.status().message().c_str());
    return 1;
  }
  std::fputs(cpp->c_str(), stdout);
  return 0;
}
