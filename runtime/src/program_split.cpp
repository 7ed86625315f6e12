/// \file
/// Splitting a model's OpenCL program into parts (program_split.h).
#include "program_split.h"

#include <algorithm>
#include <map>
#include <set>

namespace aotc::rt {

namespace {

constexpr char kMarker[] = "\n// Kernel ";

struct Section {
  size_t begin = 0, end = 0; ///< [begin, end) of the source, from its '\n'
  std::string name;
  size_t kernels = 1; ///< the kernels it runs (a persistent kernel's parts)
};

/// The kernels a marker line's kernel runs: P where the line ends in
/// "(persistent: P kernels)", else 1.
size_t markerKernels(const std::string &line) {
  static const std::string kTag = "(persistent: ";
  size_t at = line.find(kTag);
  if (at == std::string::npos)
    return 1;
  size_t n = 0;
  for (size_t i = at + kTag.size(); i < line.size() && line[i] >= '0' &&
                                    line[i] <= '9' && n < 1000000;
       ++i)
    n = 10 * n + static_cast<size_t>(line[i] - '0');
  return std::max<size_t>(n, 1);
}

/// The kernel a marker line names: "// Kernel N: NAME" or "// Kernel N:
/// NAME (32-bit indices)"; "" if the line is not such a marker.
std::string markerName(const std::string &line) {
  size_t at = sizeof(kMarker) - 2; // after "// Kernel "
  size_t digits = at;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9')
    ++digits;
  if (digits == at || line.compare(digits, 2, ": ") != 0)
    return std::string();
  size_t start = digits + 2;
  size_t stop = line.find(' ', start);
  return line.substr(start, stop == std::string::npos ? std::string::npos
                                                       : stop - start);
}

/// The kernel sections of \p text, in order; none where it has none or is
/// not laid out as the compiler writes it: a marker line that does not name
/// a kernel, a section that does not define the kernel its marker names, a
/// name twice, or one of \p kernelNames not defined.
std::vector<Section>
parseSections(const std::string &text,
              const std::vector<std::string> &kernelNames) {
  std::vector<Section> sections;
  for (size_t at = text.find(kMarker); at != std::string::npos;
       at = text.find(kMarker, at + 1)) {
    size_t eol = text.find('\n', at + 1);
    if (eol == std::string::npos)
      return {};
    Section s;
    s.begin = at;
    const std::string line = text.substr(at + 1, eol - at - 1);
    s.name = markerName(line);
    s.kernels = markerKernels(line);
    if (s.name.empty())
      return {};
    if (!sections.empty())
      sections.back().end = at;
    sections.push_back(std::move(s));
  }
  if (sections.empty())
    return {};
  sections.back().end = text.size();

  // Each section defines the kernel its marker names; every kernel the
  // model creates is defined by exactly one section.
  std::set<std::string> defined;
  for (const Section &s : sections) {
    const std::string body = text.substr(s.begin, s.end - s.begin);
    if (body.find("__kernel void " + s.name + "(") == std::string::npos ||
        !defined.insert(s.name).second)
      return {};
  }
  for (const std::string &name : kernelNames)
    if (!defined.count(name))
      return {};
  return sections;
}

} // namespace

bool withoutKernels(const char *source, size_t size,
                    const std::vector<std::string> &kernelNames,
                    const std::set<std::string> &leaveOut, std::string &out) {
  out.clear();
  if (!source || size == 0)
    return false;
  const std::string text(source, size);
  const std::vector<Section> sections = parseSections(text, kernelNames);
  if (sections.empty())
    return false;
  size_t found = 0;
  out = text.substr(0, sections.front().begin);
  for (const Section &s : sections) {
    if (leaveOut.count(s.name)) {
      ++found;
      continue;
    }
    out.append(text, s.begin, s.end - s.begin);
  }
  if (found != leaveOut.size()) {
    out.clear();
    return false;
  }
  return true;
}

std::vector<ProgramPart>
splitProgram(const char *source, size_t size,
             const std::vector<std::string> &kernelNames, size_t maxParts) {
  if (!source || size == 0)
    return {};
  const std::string text(source, size);
  const std::vector<Section> sections = parseSections(text, kernelNames);
  if (sections.empty())
    return {};

  size_t kernels = 0;
  for (const Section &s : sections)
    kernels += s.kernels;
  const size_t parts = std::min(
      {maxParts, kernels / kMinKernelsPerPart, sections.size()});
  if (parts < 2)
    return {};
  // Largest section first, to the part with the fewest bytes so far.
  std::vector<size_t> order(sections.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return sections[a].end - sections[a].begin >
           sections[b].end - sections[b].begin;
  });
  std::vector<size_t> bytes(parts, 0);
  std::vector<std::vector<size_t>> members(parts);
  for (size_t i : order) {
    size_t p = static_cast<size_t>(
        std::min_element(bytes.begin(), bytes.end()) - bytes.begin());
    members[p].push_back(i);
    bytes[p] += sections[i].end - sections[i].begin;
  }
  const std::string head = text.substr(0, sections.front().begin);
  std::vector<ProgramPart> out(parts);
  for (size_t p = 0; p < parts; ++p) {
    std::sort(members[p].begin(), members[p].end());
    out[p].source = head;
    for (size_t i : members[p]) {
      out[p].source.append(text, sections[i].begin,
                           sections[i].end - sections[i].begin);
      out[p].kernels.push_back(sections[i].name);
    }
  }
  return out;
}

} // namespace aotc::rt
