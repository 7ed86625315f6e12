/// \file
/// Einsum equations (einsum.h).
#include "ir/einsum.h"

#include <algorithm>
#include <array>

namespace aotc {

namespace {

int letterLabel(char c) {
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return 26 + (c - 'A');
  return -1;
}

/// One side of the arrow's term: its letters' labels in order, and where
/// the ellipsis stands among them (-1: none).
struct Term {
  std::vector<int> letters;
  int ellipsisAt = -1;
};

Expected<Term> parseTerm(const std::string &s, const std::string &what) {
  Term t;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsisAt >= 0)
        return makeError(what, " '", s, "' has two ellipses");
      t.ellipsisAt = static_cast<int>(t.letters.size());
      i += 3;
      continue;
    }
    int l = letterLabel(s[i]);
    if (l < 0)
      return makeError(what, " '", s, "': '", s[i],
                       "' is not a letter or an ellipsis '...'");
    t.letters.push_back(l);
    ++i;
  }
  return t;
}

} // namespace

std::string einsumLabelName(int label) {
  if (label >= 0 && label < 26)
    return std::string(1, static_cast<char>('a' + label));
  if (label >= 26 && label < kEinsumEllipsisLabel)
    return std::string(1, static_cast<char>('A' + label - 26));
  return "...[" + std::to_string(label - kEinsumEllipsisLabel) + "]";
}

Expected<EinsumSpec> parseEinsum(const std::string &equation,
                                 const std::vector<int> &ranks) {
  std::string eq;
  for (char c : equation)
    if (c != ' ' && c != '\t' && c != '\n')
      eq.push_back(c);
  const std::string where = "equation '" + equation + "'";
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos &&
      eq.find("->", arrow + 2) != std::string::npos)
    return makeError(where, " has two arrows");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    AOTC_ASSIGN_OR_RETURN(
        Term t, parseTerm(lhs.substr(start, comma == std::string::npos
                                                ? std::string::npos
                                                : comma - start),
                          where + ": operand " + std::to_string(terms.size())));
    terms.push_back(std::move(t));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size())
    return makeError(where, " names ", terms.size(), " operands, the node has ",
                     ranks.size());

  EinsumSpec spec;
  bool anyEllipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term &t = terms[i];
    const int letters = static_cast<int>(t.letters.size());
    if (t.ellipsisAt < 0 ? letters != ranks[i] : letters > ranks[i])
      return makeError(where, ": operand ", i, " has rank ", ranks[i],
                       " but its term names ", letters,
                       t.ellipsisAt < 0 ? " dims" : " dims besides '...'");
    if (t.ellipsisAt >= 0) {
      anyEllipsis = true;
      spec.ellipsisDims = std::max(spec.ellipsisDims, ranks[i] - letters);
    }
  }
  std::array<int, kEinsumEllipsisLabel> count{};
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term &t = terms[i];
    std::vector<int> labels;
    for (int k = 0; k < static_cast<int>(t.letters.size()); ++k) {
      if (k == t.ellipsisAt) {
        int e = ranks[i] - static_cast<int>(t.letters.size());
        for (int j = 0; j < e; ++j)
          labels.push_back(kEinsumEllipsisLabel + spec.ellipsisDims - e + j);
      }
      labels.push_back(t.letters[k]);
      ++count[t.letters[k]];
    }
    if (t.ellipsisAt == static_cast<int>(t.letters.size())) {
      int e = ranks[i] - static_cast<int>(t.letters.size());
      for (int j = 0; j < e; ++j)
        labels.push_back(kEinsumEllipsisLabel + spec.ellipsisDims - e + j);
    }
    spec.operands.push_back(std::move(labels));
  }

  auto ellipsisLabels = [&](std::vector<int> &out) {
    for (int j = 0; j < spec.ellipsisDims; ++j)
      out.push_back(kEinsumEllipsisLabel + j);
  };
  if (arrow == std::string::npos) {
    // Implicit: the ellipsis's dims, then the letters named once.
    if (anyEllipsis)
      ellipsisLabels(spec.output);
    std::vector<char> once;
    for (int l = 0; l < kEinsumEllipsisLabel; ++l)
      if (count[l] == 1)
        once.push_back(einsumLabelName(l)[0]);
    std::sort(once.begin(), once.end()); // ASCII: 'A'-'Z' before 'a'-'z'
    for (char c : once)
      spec.output.push_back(letterLabel(c));
  } else {
    AOTC_ASSIGN_OR_RETURN(Term out,
                          parseTerm(eq.substr(arrow + 2), where + ": output"));
    std::array<bool, kEinsumEllipsisLabel> seen{};
    for (int k = 0; k <= static_cast<int>(out.letters.size()); ++k) {
      if (k == out.ellipsisAt) {
        if (!anyEllipsis)
          return makeError(where, ": the output has '...' but no operand has");
        ellipsisLabels(spec.output);
      }
      if (k == static_cast<int>(out.letters.size()))
        break;
      int l = out.letters[k];
      if (count[l] == 0)
        return makeError(where, ": output label '", einsumLabelName(l),
                         "' is in no operand");
      if (seen[l])
        return makeError(where, ": output label '", einsumLabelName(l),
                         "' is named twice");
      seen[l] = true;
      spec.output.push_back(l);
    }
    if (anyEllipsis && out.ellipsisAt < 0 && spec.ellipsisDims > 0)
      return makeError(where, ": the operands have '...' but the output "
                              "does not (NumPy refuses it too)");
  }
  for (const std::vector<int> &labels : spec.operands)
    for (int l : labels)
      if (std::find(spec.output.begin(), spec.output.end(), l) ==
              spec.output.end() &&
          std::find(spec.summed.begin(), spec.summed.end(), l) ==
              spec.summed.end())
        spec.summed.push_back(l);
  return spec;
}

} // namespace aotc
