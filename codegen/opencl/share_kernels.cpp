/// \file
/// One OpenCL function for kernels whose code is the same (see
/// share_kernels.h).
#include "codegen/opencl/share_kernels.h"

#include <map>

namespace aotc {
namespace {

/// What must be equal for two kernels to run one function: the canonical
/// text, the work-group the launch takes, and the element types of the
/// buffers, which the text spells by their storage (a bool and a uint8
/// buffer are both uchar) and the verifier compares.
Expected<std::string> shareKey(const Kernel &k, const LoopModule &owner,
                               const ClOptions &options) {
  AOTC_ASSIGN_OR_RETURN(std::string text, kernelText(k, owner, options));
  std::string key = "work-group " + std::to_string(k.workGroupSize) +
                    (k.reportsErrors ? ", errors" : "") + ", buffers";
  for (const KernelBuffer &b : k.buffers)
    key += std::string(" ") + dtypeName(b.dtype);
  return key + "\n" + text;
}

} // namespace

Expected<std::vector<int>>
kernelClasses(const LoopModule &m, const ClOptions &options, ShareKeys *keys) {
  std::map<std::string, int> classOf;
  std::vector<int> out;
  if (keys)
    *keys = ShareKeys();
  for (const Kernel &k : m.kernels) {
    AOTC_ASSIGN_OR_RETURN(std::string key, shareKey(k, m, options));
    out.push_back(
        classOf.emplace(key, static_cast<int>(classOf.size())).first->second);
    if (keys) {
      keys->names.push_back(k.name);
      keys->keys.push_back(std::move(key));
    }
  }
  return out;
}

Expected<int> shareKernels(LoopModule &m, const ClOptions &options,
                           const ShareKeys *known, bool recheck) {
  // The model's kernels' keys: those given, where they are of these
  // kernels, else printed.
  bool reuse = known && known->names.size() == m.kernels.size() &&
               known->keys.size() == m.kernels.size();
  for (size_t i = 0; reuse && i < m.kernels.size(); ++i)
    reuse = known->names[i] == m.kernels[i].name;
  std::map<const Kernel *, std::string> keyOf;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel &k = m.kernels[i];
    if (reuse && !recheck) {
      keyOf[&k] = known->keys[i];
      continue;
    }
    AOTC_ASSIGN_OR_RETURN(std::string key, shareKey(k, m, options));
    if (reuse && key != known->keys[i])
      return makeError("kernel '", k.name,
                       "' changed after its share key was computed at the "
                       "end of scheduling");
    keyOf[&k] = std::move(key);
  }
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
    std::map<std::string, std::string> first; // key -> kernel
    for (auto &[k, owner] : *kernels) {
      k->function.clear();
      auto known = keyOf.find(k);
      if (known == keyOf.end()) {
        AOTC_ASSIGN_OR_RETURN(std::string key, shareKey(*k, *owner, options));
        known = keyOf.emplace(k, std::move(key)).first;
      }
      auto [it, fresh] = first.emplace(known->second, k->name);
      if (!fresh) {
        k->function = it->second;
        ++shared;
      }
    }
  }
  // Persistent kernels: their parts' keys in order, and their own text
  // with the parts' functions and their parameters spelled by place.
  std::map<std::string, std::string> firstGroup;
  for (size_t g = 0; g < m.persistent.size(); ++g) {
    LoopModule::Persistent &p = m.persistent[g];
    p.function.clear();
    std::string key;
    for (int k = p.first; k <= p.last; ++k)
      key += "part\n" + keyOf.at(&m.kernels[k]) + "\n";
    AOTC_ASSIGN_OR_RETURN(std::string text,
                          persistentText(m, static_cast<int>(g), options));
    auto [it, fresh] = firstGroup.emplace(key + text, p.name);
    if (!fresh) {
      p.function = it->second;
      ++shared;
    }
  }
  return shared;
}

} // namespace aotc
