// libFuzzer target: the ONNX binary loader and everything import runs
// (ONNX's checker and shape inference, aotc's attribute checks, symbolic
// shape inference), then the compiler up to the emitted text for a model
// that imports (fuzz_pipeline.h). Any input must give a model or a Status,
// never a crash, a hang, a verifier failure or a sanitizer report.
#include "compiler/frontend/onnx_import.h"
#include "fuzz_pipeline.h"

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  auto graph = aotc::importOnnxModel(model, "<fuzz>", aotc::ImportOptions());
  if (graph)
    aotc::fuzz::compileToText(graph.take());
  return 0;
}
