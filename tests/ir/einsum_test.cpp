// Einsum equations (ir/einsum.h): labels per operand, the output, the summed
// labels, ellipses expanded right-aligned, implicit outputs in ASCII order,
// and every malformed equation refused with a message.
#include "ir/einsum.h"

#include <gtest/gtest.h>

using namespace aotc;

namespace {

constexpr int E = kEinsumEllipsisLabel;
int L(char c) { return c >= 'a' ? c - 'a' : 26 + (c - 'A'); }

EinsumSpec parse(const std::string &eq, const std::vector<int> &ranks) {
  Expected<EinsumSpec> s = parseEinsum(eq, ranks);
  EXPECT_TRUE(s.isOk()) << eq << ": " << s.status().message();
  return s.isOk() ? s.take() : EinsumSpec{};
}

std::string refusal(const std::string &eq, const std::vector<int> &ranks) {
  Expected<EinsumSpec> s = parseEinsum(eq, ranks);
  EXPECT_FALSE(s.isOk()) << eq << " parsed";
  return s.isOk() ? "" : s.status().message();
}

TEST(Einsum, MatMulSumsTheSharedLabel) {
  EinsumSpec s = parse("ij,jk->ik", {2, 2});
  EXPECT_EQ(s.operands, (std::vector<std::vector<int>>{{L('i'), L('j')},
                                                       {L('j'), L('k')}}));
  EXPECT_EQ(s.output, (std::vector<int>{L('i'), L('k')}));
  EXPECT_EQ(s.summed, (std::vector<int>{L('j')}));
  EXPECT_EQ(s.ellipsisDims, 0);
}

TEST(Einsum, SpacesAreIgnoredAndSummedLabelsKeepFirstAppearance) {
  EinsumSpec s = parse(" bn , anm , bm -> ba ", {2, 3, 2});
  EXPECT_EQ(s.output, (std::vector<int>{L('b'), L('a')}));
  EXPECT_EQ(s.summed, (std::vector<int>{L('n'), L('m')}));
}

TEST(Einsum, ARepeatedLabelIsADiagonalAndATraceSumsIt) {
  EinsumSpec d = parse("ii->i", {2});
  EXPECT_EQ(d.operands[0], (std::vector<int>{L('i'), L('i')}));
  EXPECT_TRUE(d.summed.empty());
  EinsumSpec t = parse("ii", {2}); // implicit: i is named twice, so summed
  EXPECT_TRUE(t.output.empty());
  EXPECT_EQ(t.summed, (std::vector<int>{L('i')}));
}

TEST(Einsum, ImplicitOutputIsTheLettersNamedOnceInAsciiOrder) {
  EXPECT_EQ(parse("ba", {2}).output, (std::vector<int>{L('a'), L('b')}));
  // NumPy: np.einsum('bA,Ca', ...) has shape (A, C, a, b).
  EXPECT_EQ(parse("bA,Ca", {2, 2}).output,
            (std::vector<int>{L('A'), L('C'), L('a'), L('b')}));
  EinsumSpec s = parse("...ij,jk", {4, 2});
  EXPECT_EQ(s.output, (std::vector<int>{E, E + 1, L('i'), L('k')}));
}

TEST(Einsum, EllipsesAreRightAligned) {
  // Operand 0 stands for two dims, operand 1 for one: the last of the two.
  EinsumSpec s = parse("...ij,...jk->...ik", {4, 3});
  EXPECT_EQ(s.ellipsisDims, 2);
  EXPECT_EQ(s.operands[0], (std::vector<int>{E, E + 1, L('i'), L('j')}));
  EXPECT_EQ(s.operands[1], (std::vector<int>{E + 1, L('j'), L('k')}));
  EXPECT_EQ(s.output, (std::vector<int>{E, E + 1, L('i'), L('k')}));
  // An ellipsis in the middle, and one standing for no dims.
  EinsumSpec m = parse("i...j,j->i...", {3, 1});
  EXPECT_EQ(m.operands[0], (std::vector<int>{L('i'), E, L('j')}));
  EXPECT_EQ(m.output, (std::vector<int>{L('i'), E}));
  EXPECT_EQ(parse("...i->...i", {1}).ellipsisDims, 0);
}

TEST(Einsum, MalformedEquationsAreRefused) {
  EXPECT_NE(refusal("ij,jk->ik", {2}).find("names 2 operands"),
            std::string::npos);
  EXPECT_NE(refusal("ij->i", {3}).find("operand 0 has rank 3"),
            std::string::npos);
  EXPECT_NE(refusal("ij...->i...", {1}).find("besides '...'"),
            std::string::npos);
  EXPECT_NE(refusal("ij->iz", {2}).find("'z' is in no operand"),
            std::string::npos);
  EXPECT_NE(refusal("ij->jj", {2}).find("named twice"), std::string::npos);
  EXPECT_NE(refusal("i.j", {2}).find("is not a letter"), std::string::npos);
  EXPECT_NE(refusal("i1", {2}).find("is not a letter"), std::string::npos);
  EXPECT_NE(refusal("...i...", {3}).find("two ellipses"), std::string::npos);
  EXPECT_NE(refusal("i->i->i", {1}).find("two arrows"), std::string::npos);
  EXPECT_NE(refusal("ij->i...", {2}).find("no operand has"), std::string::npos);
  EXPECT_NE(refusal("...ij->ij", {3}).find("the output does not"),
            std::string::npos);
}

} // namespace
