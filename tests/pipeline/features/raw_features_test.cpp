// Raw AF2 features from a query and its MSAs: alphabets, deduplication, query checks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/a3m.h"
#include "memory/error.h"
#include "pipeline/features/hhblits_alphabet.h"
#include "pipeline/features/raw_features.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(HhblitsAlphabet, EveryLetterMapsAsAf2HhblitsAaToId) {
  // AF2 residue_constants.HHBLITS_AA_TO_ID.
  const std::string letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ-";
  const std::vector<int> ids = {0,  2,  1,  2,  3,  4,  5, 6,  7,  20, 8,  9, 10, 11,
                                20, 12, 13, 14, 15, 16, 1, 17, 18, 20, 19, 3, 21};
  ASSERT_EQ(letters.size(), ids.size());
  for (std::size_t i = 0; i < letters.size(); ++i)
    EXPECT_EQ(hhblits_id(letters[i]), ids[i]) << letters[i];
  for (char c : std::string("abz.*1 \n")) EXPECT_EQ(hhblits_id(c), -1) << c;
}

TEST(HhblitsAlphabet, MapToAf2OrderAgreesWithTheQueryAlphabet) {
  for (char c : std::string("ARNDCQEGHILKMFPSTWYVX")) {
    EXPECT_EQ(kHhblitsToAf2[static_cast<std::size_t>(hhblits_id(c))], af2_restype(c)) << c;
  }
  EXPECT_EQ(kHhblitsToAf2[21], 21);  // gap
  // Query letters outside the 20 become X in aatype (AF2 map_unknown_to_x), unlike MSA rows.
  for (char c : std::string("BJOUZX")) EXPECT_EQ(af2_restype(c), 20) << c;
  EXPECT_EQ(af2_restype('-'), -1);
  EXPECT_EQ(af2_restype('a'), -1);
}

Msa msa_of(std::vector<std::string> rows, std::vector<std::vector<std::int32_t>> deletions = {}) {
  Msa m;
  if (deletions.empty())
    for (const std::string& r : rows) deletions.emplace_back(r.size(), 0);
  m.sequences = std::move(rows);
  m.deletions = std::move(deletions);
  m.descriptions.resize(m.sequences.size());
  return m;
}

TEST(RawFeatures, DuplicateRowsAreDroppedKeepingTheFirst) {
  const std::vector<Msa> msas = {
      msa_of({"ACDE", "AC-E", "ACDF"}, {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 0}}),
      msa_of({"ACDE", "AC-E", "GCDE"}, {{0, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 3, 0}}),
  };
  const std::vector<std::string> names = {"uniref90", "bfd"};
  const RawFeatures raw = make_raw_features("ACDE", msas, names);
  ASSERT_EQ(raw.n_msa, 4);  // ACDE, AC-E (first: deletion 1 at column 0), ACDF, GCDE
  EXPECT_EQ(std::vector<std::int32_t>(raw.msa.begin() + 4, raw.msa.begin() + 8),
            (std::vector<std::int32_t>{0, 1, 21, 3}));
  EXPECT_EQ(raw.deletion_matrix[4], 1);
  EXPECT_EQ(raw.deletion_matrix[5], 0);
  EXPECT_EQ(raw.msa[12], 5);  // G
  EXPECT_EQ(raw.deletion_matrix[14], 3);
  EXPECT_EQ(raw.aatype, (std::vector<std::int32_t>{0, 4, 3, 6}));
  EXPECT_EQ(raw.residue_index, (std::vector<std::int32_t>{0, 1, 2, 3}));
}

TEST(RawFeatures, QueryMismatchNamesTheMsaThePositionAndBothLetters) {
  const std::vector<Msa> msas = {msa_of({"ACDE"}), msa_of({"ACWE", "ACDE"})};
  const std::vector<std::string> names = {"uniref90.a3m", "bfd.a3m"};
  const std::string msg =
      testing::thrown_message<InputError>([&] { make_raw_features("ACDE", msas, names); });
  EXPECT_NE(msg.find("bfd.a3m"), std::string::npos) << msg;
  EXPECT_NE(msg.find("residue 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'W'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'D'"), std::string::npos) << msg;
}

TEST(RawFeatures, QueryLengthMismatchIsAnInputError) {
  const std::vector<Msa> msas = {msa_of({"ACD"})};
  const std::vector<std::string> names = {"mgnify.a3m"};
  const std::string msg =
      testing::thrown_message<InputError>([&] { make_raw_features("ACDE", msas, names); });
  EXPECT_NE(msg.find("mgnify.a3m"), std::string::npos) << msg;
}

TEST(RawFeatures, WithoutMsasTheQueryIsTheOnlyRow) {
  const RawFeatures raw = make_raw_features("MKUZB", {}, {});
  EXPECT_EQ(raw.n_msa, 1);
  EXPECT_EQ(raw.sequence, "MKUZB");
  EXPECT_EQ(raw.msa, (std::vector<std::int32_t>{10, 8, 1, 3, 2}));  // U->C, Z->E, B->D
  EXPECT_EQ(raw.aatype, (std::vector<std::int32_t>{12, 11, 20, 20, 20}));
  EXPECT_EQ(raw.deletion_matrix, std::vector<std::int32_t>(5, 0));
}

TEST(RawFeatures, ParsedA3mRowsKeepTheirDeletions) {
  const Msa msa = parse_a3m(">q\nACDE\n>hit\nAcC-E\n", "test.a3m");
  const std::vector<std::string> names = {"test.a3m"};
  const RawFeatures raw = make_raw_features("ACDE", std::span(&msa, 1), names);
  ASSERT_EQ(raw.n_msa, 2);
  EXPECT_EQ(std::vector<std::int32_t>(raw.deletion_matrix.begin() + 4, raw.deletion_matrix.end()),
            (std::vector<std::int32_t>{0, 1, 0, 0}));
}

}  // namespace
}  // namespace cpufold
