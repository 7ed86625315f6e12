// libFuzzer target: the ONNX textual syntax parser (.onnxtxt), import, and
// the compiler up to the emitted text (fuzz_pipeline.h).
#include "compiler/frontend/onnx_import.h"
#include "fuzz_pipeline.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  auto graph = aotc::importOnnxText(text, aotc::ImportOptions());
  if (graph)
    aotc::fuzz::compileToText(graph.take());
  return 0;
}
