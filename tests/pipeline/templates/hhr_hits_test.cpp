#include "pipeline/templates/hhr_hits.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "pipeline/templates/query_hit_mapping.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// One HHsearch hit: query residues 3-12 on template residues 5-13, with a gap in the template.
constexpr const char* kHhr =
    "Query         query\n"
    "Match_columns 22\n"
    "\n"
    " No Hit                             Prob E-value P-value  Score    SS Cols Query HMM  "
    "Template HMM\n"
    "  1 1abc_A mol:protein             99.9 1.1E-30   1E-34  200.0   0.0   10    3-12    5-13  "
    "(40)\n"
    "\n"
    "No 1\n"
    ">1abc_A mol:protein length:40  TEST\n"
    "Probab=99.90  E-value=1.1e-30  Score=200.00  Aligned_cols=10  Identities=90%  "
    "Similarity=1.500  Sum_probs=9.5  Template_Neff=1.000\n"
    "\n"
    "Q query            3 IFVKTLTGKT   12 (22)\n"
    "Q Consensus        3 ifvktltgkt   12 (22)\n"
    "                      |||| ||||| \n"
    "T Consensus        5 ifvk-ltgkt   13 (40)\n"
    "T 1abc_A           5 IFVK-LTGKT   13 (40)\n"
    "\n";

TEST(HhrHits, ParsesTheHitAsAf2) {
  const auto hits = parse_hhr_hits(kHhr, "pdb_hits.hhr");
  ASSERT_EQ(hits.size(), 1u);
  const TemplateHit& h = hits[0];
  EXPECT_EQ(h.index, 1);
  EXPECT_EQ(h.name, "1abc_A");
  EXPECT_EQ(h.aligned_cols, 10);
  ASSERT_TRUE(h.sum_probs.has_value());
  EXPECT_DOUBLE_EQ(*h.sum_probs, 9.5);
  EXPECT_EQ(h.query, "IFVKTLTGKT");
  EXPECT_EQ(h.hit_sequence, "IFVK-LTGKT");
  EXPECT_EQ(h.indices_query, (std::vector<int>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(h.indices_hit, (std::vector<int>{4, 5, 6, 7, -1, 8, 9, 10, 11, 12}));
}

TEST(HhrHits, MapsQueryResiduesThroughTheQueryOffset) {
  const auto hits = parse_hhr_hits(kHhr, "pdb_hits.hhr");
  const std::map<int, int> m = query_to_hit_mapping(hits.at(0), "MQIFVKTLTGKTITLEVEPSDT");
  const std::map<int, int> expected{{2, 0}, {3, 1}, {4, 2},  {5, 3}, {7, 4},
                                    {8, 5}, {9, 6}, {10, 7}, {11, 8}};
  EXPECT_EQ(m, expected);
}

TEST(HhrHits, RefusesAHitWithoutSummary) {
  const std::string broken = "No 1\n>1abc_A\nProbab=garbage\n";
  const std::string message =
      testing::thrown_message<InputError>([&] { parse_hhr_hits(broken, "pdb_hits.hhr"); });
  EXPECT_NE(message.find("pdb_hits.hhr"), std::string::npos) << message;
  EXPECT_NE(message.find("Sum_probs"), std::string::npos) << message;
}

}  // namespace
}  // namespace cpufold
