#include "io/a3m.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::ScratchDir;
using testing::write_file;

std::string parse_error(const std::string& text) {
  return testing::thrown_message<InputError>([&] { parse_a3m(text, "x.a3m"); });
}

using Deletions = std::vector<std::int32_t>;

TEST(A3mTest, ParsesInsertionsIntoDeletionCounts) {
  // Query MKTA; row 2 has "ab" before K, "c" before A and a trailing "dd" (dropped, as AF2).
  const Msa msa =
      parse_a3m(">query desc\nMKTA\n>hit1 e=1e-3\nMabK-cAdd\n>hit2\n-kT.A.\nG\n", "x.a3m");
  ASSERT_EQ(msa.sequences.size(), 3u);
  EXPECT_EQ(msa.sequences[0], "MKTA");
  EXPECT_EQ(msa.sequences[1], "MK-A");
  EXPECT_EQ(msa.sequences[2], "-TAG");
  EXPECT_EQ(msa.deletions[0], (Deletions{0, 0, 0, 0}));
  EXPECT_EQ(msa.deletions[1], (Deletions{0, 2, 0, 1}));
  EXPECT_EQ(msa.deletions[2], (Deletions{0, 1, 0, 0}));
  EXPECT_EQ(msa.descriptions, (std::vector<std::string>{"query desc", "hit1 e=1e-3", "hit2"}));
}

TEST(A3mTest, AcceptsCrlfBlankLinesColabFoldHashLineAndNul) {
  ScratchDir dir;
  write_file(dir / "m.a3m", std::string("#4\t1\r\n>101\r\nMK\r\nTA\r\n\r\n>hit\r\nMKaaTA\r\n") +
                                std::string(1, '\0'));
  const Msa msa = read_a3m(dir / "m.a3m");
  ASSERT_EQ(msa.sequences.size(), 2u);
  EXPECT_EQ(msa.sequences[0], "MKTA");
  EXPECT_EQ(msa.sequences[1], "MKTA");
  EXPECT_EQ(msa.deletions[1], (Deletions{0, 0, 2, 0}));
  EXPECT_EQ(msa.descriptions[0], "101");
}

// ColabFold's A3M as MMseqs2 writes it: its "#len\tcard" line, then records each ending in a
// NUL byte that precedes the next '>' (two databases' results, each starting with the query).
TEST(A3mTest, ReadsMmseqs2RecordsSeparatedByNulBeforeHeader) {
  using namespace std::string_literals;
  ScratchDir dir;
  write_file(dir / "j.a3m",
             "#4\t1\n>101\nMKTA\n>UniRef100_X\tscore\nMK-A\n\0"
             ">101\nMKTA\n>env1\nMaKTA\n\0"s);
  const Msa msa = read_a3m(dir / "j.a3m");
  ASSERT_EQ(msa.sequences.size(), 4u);
  EXPECT_EQ(msa.sequences[0], "MKTA");
  EXPECT_EQ(msa.sequences[1], "MK-A");
  EXPECT_EQ(msa.sequences[2], "MKTA");
  EXPECT_EQ(msa.sequences[3], "MKTA");
  EXPECT_EQ(msa.deletions[3], (Deletions{0, 1, 0, 0}));
  EXPECT_EQ(msa.descriptions[2], "101");
  EXPECT_EQ(msa.descriptions[3], "env1");
}

TEST(A3mTest, RefusesNulAnywhereButBeforeAHeader) {
  using namespace std::string_literals;
  for (const std::string& text :
       {">q\nMK\0TA\n"s, ">q\nMKTA\n\0MKTA\n"s, ">q\nMKTA\n>h\n\0\0KTA\n"s}) {
    const std::string message = parse_error(text);
    EXPECT_NE(message.find("NUL byte"), std::string::npos) << message;
    EXPECT_NE(message.find("x.a3m:"), std::string::npos) << message;
    EXPECT_NE(message.find("right before '>'"), std::string::npos) << message;
  }
}

TEST(A3mTest, AcceptsClassicMacLineEndsAndAByteOrderMark) {
  const Msa msa = parse_a3m("\xEF\xBB\xBF#4\t1\r>101\rMKTA\r\r>hit\rMKaaTA\r", "m.a3m");
  ASSERT_EQ(msa.sequences.size(), 2u);
  EXPECT_EQ(msa.sequences[0], "MKTA");
  EXPECT_EQ(msa.descriptions[1], "hit");
  EXPECT_EQ(msa.deletions[1], (Deletions{0, 0, 2, 0}));
  // Line numbers count lone CRs: the bad row's header is on line 4.
  const std::string message = parse_error(">q\rMKTA\r\r>h\rMK\r");
  EXPECT_NE(message.find("x.a3m:4: A3M row 'h' has 2 match columns"), std::string::npos) << message;
}

TEST(A3mTest, RefusesEmptyFileNamingIt) {
  ScratchDir dir;
  write_file(dir / "empty.a3m", "\n\n");
  const std::string message =
      testing::thrown_message<InputError>([&] { read_a3m(dir / "empty.a3m"); });
  EXPECT_NE(message.find((dir / "empty.a3m").string() + ":1:"), std::string::npos) << message;
  EXPECT_NE(message.find("empty"), std::string::npos) << message;
}

TEST(A3mTest, RefusesSequenceBeforeHeader) {
  const std::string message = parse_error("\nMKTA\n>q\nMKTA\n");
  EXPECT_NE(message.find("x.a3m:2:"), std::string::npos) << message;
}

TEST(A3mTest, RefusesQueryWithoutMatchColumns) {
  const std::string message = parse_error(">q\nmkta\n");
  EXPECT_NE(message.find("x.a3m:1:"), std::string::npos) << message;
}

TEST(A3mTest, RefusesRowOfDifferentLengthNamingBothLengthsAndHeader) {
  const std::string message = parse_error(">q\nMKTA\n>ok\nM-TA\n>short hit\nMKaaT\n");
  EXPECT_NE(message.find("x.a3m:5:"), std::string::npos) << message;
  EXPECT_NE(message.find("'short hit'"), std::string::npos) << message;
  EXPECT_NE(message.find("has 3 match columns"), std::string::npos) << message;
  EXPECT_NE(message.find("query has 4"), std::string::npos) << message;
}

TEST(A3mTest, RefusesInvalidCharacterNamingItAndLine) {
  ScratchDir dir;
  write_file(dir / "bad.a3m", ">q\nMKTA\n>hit\nMK\nT#\n");
  const std::string message =
      testing::thrown_message<InputError>([&] { read_a3m(dir / "bad.a3m"); });
  EXPECT_NE(message.find((dir / "bad.a3m").string() + ":5:"), std::string::npos) << message;
  EXPECT_NE(message.find("'#'"), std::string::npos) << message;
  EXPECT_NE(message.find("'hit'"), std::string::npos) << message;
}

TEST(A3mTest, RefusesUnreadableFile) {
  ScratchDir dir;
  const std::string message =
      testing::thrown_message<InputError>([&] { read_a3m(dir / "missing.a3m"); });
  EXPECT_NE(message.find("missing.a3m"), std::string::npos) << message;
}

}  // namespace
}  // namespace cpufold
