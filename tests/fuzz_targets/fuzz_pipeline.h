/// \file
/// What the ONNX fuzz targets run on every model that imports: the compiler
/// from the graph to the emitted OpenCL C and C++ wrapper text, with the
/// Loop IR verifier after every scheduler pass (clang and lld are not
/// fuzzed). A
/// refusal is a Status; a verifier failure is a compiler bug and aborts, so
/// libFuzzer reports it like a crash.
#pragma once

#include "codegen/opencl/cl_printer.h"
#include "codegen/wrapper/wrapper_emitter.h"
#include "compiler/lowering/lowering.h"
#include "compiler/schedule/schedule.h"
#include "ir/graph.h"
#include "ir/verify.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace aotc::fuzz {

inline void checkVerified(const Status &s, const char *where) {
  if (s.isOk())
    return;
  std::fprintf(stderr, "Loop IR verifier failed %s: %s\n", where,
               s.message().c_str());
  std::abort();
}

inline void compileToText(std::unique_ptr<Graph> graph) {
  graph->removeDeadNodes();
  if (!graph->verify().isOk())
    return;
  auto lowered = lowerGraph(*graph);
  if (!lowered)
    return;
  LoopPassHook afterPass = [](const std::string &, const LoopModule &m) {
    checkVerified(verifyModule(m), "after a pass");
    return Status::ok();
  };
  // The hook verified the module after the scheduler's last pass, which is
  // the final module (kernel costs aside): no second verification.
  auto module = scheduleGraph(*graph, lowered.take(), afterPass);
  if (!module)
    return;
  auto cl = emitOpenCL(*module);
  if (!cl)
    return;
  WrapperOptions wo;
  wo.clSourceSize = cl->size();
  wo.clBuildOptions = buildOptions(*module);
  (void)emitWrapper(*module, wo);
}

} // namespace aotc::fuzz
