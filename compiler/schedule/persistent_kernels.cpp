/// \file
/// Persistent kernels (persistent_kernels.h): which kernels may be parts,
/// and the groups.
#include "compiler/schedule/persistent_kernels.h"

#include "compiler/schedule/schedule.h"

#include <algorithm>

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

namespace {

/// Where the group from \p first, which may run to \p last, ends instead
/// so that the network's repeated blocks fall in groups of equal code
/// (persistent_kernels.h, kernel classes): the first phase \p first + o
/// and the shortest period P from which the classes repeat beyond
/// \p last, for two groups at least of the most whole periods (k) that
/// fit; the group then ends after o + k P kernels, and \p run is k P (the
/// next groups repeat those kernels while they can). \p last, and \p run
/// 0, where nothing repeats so.
int alignedLast(const LoopModule &m, const std::vector<int> &classes, int first,
                int last, int &run) {
  run = 0;
  const int n = static_cast<int>(m.kernels.size());
  const int length = last - first + 1;
  // How many kernels from s on equal the one P later.
  auto repeating = [&](int s, int period) {
    int i = s;
    while (i + period < n && classes[i] == classes[i + period] &&
           persistentPart(m.kernels[i + period]))
      ++i;
    return i - s;
  };
  for (int o = 0; o + 1 < length; ++o) {
    const int s = first + o;
    for (int period = 1; period <= length - o; ++period) {
      const int span = repeating(s, period) + period;
      if (s + span - 1 <= last)
        continue; // the repeats fit in this group
      const int k = std::min((length - o) / period, span / (2 * period));
      if (k < 1 || k * period < 2)
        continue;
      run = k * period;
      return s + run - 1;
    }
  }
  return last;
}

} // namespace

int persistentKernels(LoopModule &m, const std::vector<int> *classes) {
  m.persistent.clear();
  m.counterBytes = 0;
  const int n = static_cast<int>(m.kernels.size());
  if (classes && classes->size() != m.kernels.size())
    classes = nullptr;
  // Kernels the last group repeats from the one before it: the next group
  // repeats them again where it can (alignedLast).
  int run = 0;
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
    if (classes && m.persistent[g].last > first) {
      int &last = m.persistent[g].last;
      const std::vector<int> &c = *classes;
      if (run > 0 && first + run - 1 <= last &&
          std::equal(c.begin() + first - run, c.begin() + first,
                     c.begin() + first))
        last = first + run - 1;
      else
        last = alignedLast(m, c, first, last, run);
    } else {
      run = 0;
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
