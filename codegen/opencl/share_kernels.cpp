/// \file
/// One OpenCL function for kernels whose code is the same (see
/// share_kernels.h).
#include "codegen/opencl/share_kernels.h"

#include <map>

namespace aotc {

Expected<int> shareKernels(LoopModule &m, const ClOptions &options) {
  // Persistent kernels' parts share only with parts: each is a kernel of
  // its own only on the path that launches parts (kernel_paths), where
  // the function it shares must be built too.
  std::vector<std::pair<Kernel *, const LoopModule *>> all, parts;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    m.kernels[i].function.clear();
    (m.groupOf(static_cast<int>(i)) < 0 ? all : parts)
        .emplace_back(&m.kernels[i], &m);
  }
  if (m.foldProgram)
    for (Kernel &k : m.foldProgram->kernels)
      all.emplace_back(&k, m.foldProgram.get());
  int shared = 0;
  for (auto *kernels : {&all, &parts}) {
    std::map<std::string, std::string> first; // canonical text -> kernel
    for (auto &[k, owner] : *kernels) {
      k->function.clear();
      AOTC_ASSIGN_OR_RETURN(std::string text, kernelText(*k, *owner, options));
      // Besides the text: the work-group the launch takes, and the element
      // types of the buffers, which the text spells by their storage (a
      // bool and a uint8 buffer are both uchar) and the verifier compares.
      std::string key = "work-group " + std::to_string(k->workGroupSize) +
                        (k->reportsErrors ? ", errors" : "") + ", buffers";
      for (const KernelBuffer &b : k->buffers)
        key += std::string(" ") + dtypeName(b.dtype);
      key += "\n" + text;
      auto [it, fresh] = first.emplace(std::move(key), k->name);
      if (!fresh) {
        k->function = it->second;
        ++shared;
      }
    }
  }
  return shared;
}

} // namespace aotc
