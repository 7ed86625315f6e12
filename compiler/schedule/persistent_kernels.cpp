/// \file
/// Persistent kernels (persistent_kernels.h): which kernels may be parts,
/// and the groups.
#include "compiler/schedule/persistent_kernels.h"

#include "compiler/schedule/schedule.h"

namespace aotc {

bool persistentPart(const Kernel &k) {
  return k.body.defined() && k.workGroupSize <= 0 && k.locals.empty() &&
         k.function.empty() && LoopModule::globalSize(k).size() <= 1;
}

int64_t persistentParameterBytes(const Kernel &sig) {
  return 16 * static_cast<int64_t>(sig.buffers.size()) + 16 +
         (sig.reportsErrors ? 16 : 0) +
         8 * static_cast<int64_t>(sig.symbols.size());
}

int persistentKernels(LoopModule &m) {
  m.persistent.clear();
  m.counterBytes = 0;
  const int n = static_cast<int>(m.kernels.size());
  auto syncAfter = [&](int k) {
    for (const LoopModule::Sync &s : m.syncs)
      if (s.afterKernel == k)
        return true;
    return false;
  };
  for (int first = 0; first < n;) {
    if (!persistentPart(m.kernels[first])) {
      ++first;
      continue;
    }
    // The longest run from `first` whose parameters fit, ending at a sync.
    LoopModule::Persistent p;
    p.first = p.last = first;
    m.persistent.push_back(p);
    const int g = static_cast<int>(m.persistent.size()) - 1;
    while (!syncAfter(m.persistent[g].last) && m.persistent[g].last + 1 < n &&
           persistentPart(m.kernels[m.persistent[g].last + 1])) {
      ++m.persistent[g].last;
      if (persistentParameterBytes(m.persistentSignature(g)) >
          kMaxParameterBytes) {
        --m.persistent[g].last;
        break;
      }
    }
    const int last = m.persistent[g].last;
    if (last == first || persistentParameterBytes(m.persistentSignature(g)) >
                             kMaxParameterBytes) {
      m.persistent.pop_back(); // one kernel: nothing to save
      first = last + 1;
      continue;
    }
    LoopModule::Persistent &q = m.persistent[g];
    q.name = "p" + std::to_string(g) + "_" +
             kernelNumber(m.kernels[first].name) + "_" +
             kernelNumber(m.kernels[last].name);
    q.counterOffset = m.counterBytes;
    m.counterBytes += LoopModule::Persistent::counterBytes(last - first + 1);
    first = last + 1;
  }
  return static_cast<int>(m.persistent.size());
}

} // namespace aotc
