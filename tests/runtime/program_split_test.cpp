// Splitting a model's OpenCL program into parts built in parallel
// (program_split.h).
#include "program_split.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

using aotc::rt::kMinKernelsPerPart;
using aotc::rt::ProgramPart;
using aotc::rt::splitProgram;

namespace {

const char kHead[] = "// OpenCL C kernels of model 'm'\n"
                     "float helper(float x) { return x + 1.0f; }\n";

/// A kernel section as the compiler writes it, \p lines lines of body.
std::string section(int index, const std::string &name, int lines,
                    bool narrow = false) {
  std::string s = "\n// Kernel " + std::to_string(index) + ": " + name +
                  (narrow ? " (32-bit indices)" : "") + "\n__kernel void " +
                  name + "(__global float *y) {\n";
  for (int i = 0; i < lines; ++i)
    s += "  y[" + std::to_string(i) + "] = helper(y[" + std::to_string(i) +
         "]);\n";
  return s + "}\n";
}

struct Source {
  std::string text = kHead;
  std::vector<std::string> names;
  void add(const std::string &name, int lines, bool narrow = false) {
    text += section(static_cast<int>(names.size()), name, lines, narrow);
    names.push_back(name);
  }
};

std::vector<ProgramPart> split(const Source &s, size_t parts) {
  return splitProgram(s.text.data(), s.text.size(), s.names, parts);
}

} // namespace

TEST(ProgramSplit, EveryKernelInOnePartWithTheHeadAndBalancedBySize) {
  Source s;
  // Sizes 1..13 lines, one 32-bit kernel, a name that is a prefix of another.
  for (int i = 0; i < 13; ++i)
    s.add("k" + std::to_string(i) + "_x", 1 + (i * 7) % 13, i == 4);
  std::vector<ProgramPart> parts = split(s, 3);
  ASSERT_EQ(parts.size(), 3u);
  std::map<std::string, int> seen;
  size_t smallest = SIZE_MAX, largest = 0;
  for (const ProgramPart &p : parts) {
    // Each part starts with the whole head and defines exactly its kernels,
    // in the source's order.
    EXPECT_EQ(p.source.compare(0, sizeof(kHead) - 1, kHead), 0);
    EXPECT_GE(p.kernels.size(), 1u);
    size_t at = 0;
    for (const std::string &k : p.kernels) {
      ++seen[k];
      size_t def = p.source.find("__kernel void " + k + "(");
      ASSERT_NE(def, std::string::npos) << k;
      EXPECT_GT(def, at) << "out of order: " << k;
      at = def;
    }
    size_t defs = 0;
    for (size_t f = p.source.find("__kernel void "); f != std::string::npos;
         f = p.source.find("__kernel void ", f + 1))
      ++defs;
    EXPECT_EQ(defs, p.kernels.size());
    smallest = std::min(smallest, p.source.size());
    largest = std::max(largest, p.source.size());
  }
  EXPECT_EQ(seen.size(), s.names.size());
  for (const auto &[name, count] : seen)
    EXPECT_EQ(count, 1) << name;
  // Largest first to the smallest part: within one section of even.
  EXPECT_LT(largest - smallest, section(0, "k12_x", 13).size());
}

TEST(ProgramSplit, AtMostOnePartPerFewKernelsAndNoneBelowTwo) {
  Source s;
  for (int i = 0; i < 9; ++i)
    s.add("k" + std::to_string(i), 3);
  EXPECT_EQ(split(s, 8).size(), 9 / kMinKernelsPerPart);
  EXPECT_EQ(split(s, 2).size(), 2u);
  EXPECT_TRUE(split(s, 1).empty());
  EXPECT_TRUE(split(s, 0).empty());
  Source few;
  for (size_t i = 0; i < 2 * kMinKernelsPerPart - 1; ++i)
    few.add("k" + std::to_string(i), 3);
  EXPECT_TRUE(split(few, 8).empty());
}

TEST(ProgramSplit, ASourceNotLaidOutAsTheCompilerWritesItIsNotSplit) {
  Source good;
  for (int i = 0; i < 8; ++i)
    good.add("k" + std::to_string(i), 2);
  ASSERT_EQ(split(good, 2).size(), 2u);
  // A kernel the model creates that no section defines.
  Source s = good;
  s.names.push_back("k_missing");
  EXPECT_TRUE(split(s, 2).empty());
  // A marker that names another kernel than its section defines.
  s = good;
  s.text.replace(s.text.find("// Kernel 3: k3\n"), 16, "// Kernel 3: kX\n");
  EXPECT_TRUE(split(s, 2).empty());
  // A kernel defined twice.
  s = good;
  s.text += section(8, "k2", 2);
  EXPECT_TRUE(split(s, 2).empty());
  // A marker without its name.
  s = good;
  s.text.replace(s.text.find("// Kernel 5: k5\n"), 16, "// Kernel 5:\n   ");
  EXPECT_TRUE(split(s, 2).empty());
  // No markers at all, or nothing.
  const std::string plain = "__kernel void a(__global float *y) {}\n";
  EXPECT_TRUE(splitProgram(plain.data(), plain.size(), {"a"}, 2).empty());
  EXPECT_TRUE(splitProgram(nullptr, 0, {}, 2).empty());
}

TEST(ProgramSplit, APersistentKernelCountsAsTheKernelsItRuns) {
  // Two persistent kernels of 12 parts each: 24 kernels, two parts, though
  // two sections alone are fewer than kMinKernelsPerPart.
  std::string text = kHead;
  for (int i = 0; i < 2; ++i) {
    std::string name = "p" + std::to_string(i) + "_k0_k11";
    text += "\n// Kernel " + std::to_string(i) + ": " + name +
            " (persistent: 12 kernels)\n// Part 0: k0 runs aotc_part_k0\n"
            "__kernel void " +
            name + "(__global float *y) {\n  y[0] = helper(y[0]);\n}\n";
  }
  std::vector<ProgramPart> parts =
      splitProgram(text.data(), text.size(), {"p0_k0_k11", "p1_k0_k11"}, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].kernels, std::vector<std::string>{"p0_k0_k11"});
  EXPECT_EQ(parts[1].kernels, std::vector<std::string>{"p1_k0_k11"});
  // Without the count, two sections stay one program.
  std::string plain = text;
  for (size_t at; (at = plain.find(" (persistent: 12 kernels)")) !=
                  std::string::npos;)
    plain.erase(at, std::string(" (persistent: 12 kernels)").size());
  EXPECT_TRUE(
      splitProgram(plain.data(), plain.size(), {"p0_k0_k11", "p1_k0_k11"}, 2)
          .empty());
}

TEST(ProgramSplit, WithoutKernelsLeavesOutExactlyTheirSections) {
  using aotc::rt::withoutKernels;
  Source s;
  for (int i = 0; i < 6; ++i)
    s.add("k" + std::to_string(i), 2 + i, i == 2);
  // A name that is a prefix of a kept one.
  s.add("k1_tail", 3);
  std::string out;
  ASSERT_TRUE(withoutKernels(s.text.data(), s.text.size(),
                             {"k0", "k2", "k4", "k5", "k1_tail"}, {"k1", "k3"},
                             out));
  // The head, then the kept sections in order, byte for byte.
  Source kept;
  kept.text = kHead;
  for (int i : {0, 2, 4, 5})
    kept.text += section(i, "k" + std::to_string(i), 2 + i, i == 2);
  kept.text += section(6, "k1_tail", 3);
  EXPECT_EQ(out, kept.text);
  // Nothing to leave out: the source as it is.
  ASSERT_TRUE(withoutKernels(s.text.data(), s.text.size(), s.names, {}, out));
  EXPECT_EQ(out, s.text);
  // A kernel to leave out that has no section, a kept kernel that has none,
  // a source without markers: refused, nothing out.
  EXPECT_FALSE(
      withoutKernels(s.text.data(), s.text.size(), {"k0"}, {"k1", "k9"}, out));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(
      withoutKernels(s.text.data(), s.text.size(), {"k9"}, {"k1"}, out));
  const std::string plain = "__kernel void a(__global float *y) {}\n";
  EXPECT_FALSE(withoutKernels(plain.data(), plain.size(), {}, {"a"}, out));
  EXPECT_FALSE(withoutKernels(nullptr, 0, {}, {}, out));
}
