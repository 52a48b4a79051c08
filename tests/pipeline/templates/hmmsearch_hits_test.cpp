#include "pipeline/templates/hmmsearch_hits.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "pipeline/templates/query_hit_mapping.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// hmmsearch -A output for a 12-residue profile: a full hit, a hit with an insertion (lowercase)
// and deletions, and a nucleic-acid chain.
constexpr const char* kSto =
    "# STOCKHOLM 1.0\n"
    "#=GF ID query\n"
    "\n"
    "#=GS 1abc_A/3-14  DE [subseq from] mol:protein length:20  ONE\n"
    "#=GS 2xyz_B/10-21 DE [subseq from] mol:protein length:40  TWO\n"
    "#=GS 3dna_C/1-12  DE [subseq from] mol:na length:12  DNA\n"
    "\n"
    "1abc_A/3-14          MQIFVK..TLTGKT\n"
    "2xyz_B/10-21         --IFVKagTLTG--\n"
    "3dna_C/1-12          ACGTAC..GTACGT\n"
    "#=GC RF              xxxxxx..xxxxxx\n"
    "//\n";

TEST(HmmsearchHits, ReadsProteinHitsAsAf2) {
  const std::string query = "MQIFVKTLTGKT";
  const auto hits = parse_hmmsearch_hits(kSto, query, "pdb_hits.sto");
  ASSERT_EQ(hits.size(), 2u);  // the nucleic-acid chain is skipped
  EXPECT_EQ(hits[0].name, "1abc_A");
  EXPECT_EQ(hits[0].aligned_cols, 12);
  EXPECT_FALSE(hits[0].sum_probs.has_value());
  EXPECT_EQ(hits[0].hit_sequence, "MQIFVKTLTGKT");
  EXPECT_EQ(hits[0].indices_hit.front(), 2);  // residue 3, 0-based

  EXPECT_EQ(hits[1].name, "2xyz_B");
  EXPECT_EQ(hits[1].aligned_cols, 8);
  EXPECT_EQ(hits[1].hit_sequence, "--IFVKAGTLTG--");
  // Insertions advance the hit's residue count without a column.
  EXPECT_EQ(hits[1].indices_hit, (std::vector<int>{-1, -1, 9, 10, 11, 12, 15, 16, 17, 18, -1, -1}));
  const std::map<int, int> m = query_to_hit_mapping(hits[1], query);
  const std::map<int, int> expected{{2, 0}, {3, 1}, {4, 2}, {5, 3}, {6, 6}, {7, 7}, {8, 8}, {9, 9}};
  EXPECT_EQ(m, expected);
}

TEST(HmmsearchHits, RefusesHitsOfAnotherProfile) {
  const std::string message = testing::thrown_message<InputError>(
      [] { parse_hmmsearch_hits(kSto, "MQIFVKTLTGKTAA", "pdb_hits.sto"); });
  EXPECT_NE(message.find("pdb_hits.sto"), std::string::npos) << message;
  EXPECT_NE(message.find("match columns"), std::string::npos) << message;
}

}  // namespace
}  // namespace cpufold
