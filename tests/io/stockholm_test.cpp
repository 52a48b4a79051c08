#include "io/stockholm.h"

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
  return testing::thrown_message<InputError>([&] { parse_stockholm(text, "x.sto"); });
}

using Deletions = std::vector<std::int32_t>;

constexpr const char* kMultiBlock =
    "# STOCKHOLM 1.0\n"
    "#=GF ID test\n"
    "\n"
    "query  MK--TA\n"
    "hit1   MKaaT-\n"
    "hit2   -Ka-TA\n"
    "#=GC RF xx..xx\n"
    "\n"
    "query  .G\n"
    "hit1   cG\n"
    "hit2   ..\n"
    "//\n";

TEST(StockholmTest, JoinsBlocksAndRemovesQueryGapColumnsAsAf2) {
  const Msa msa = parse_stockholm(kMultiBlock, "x.sto");
  ASSERT_EQ(msa.sequences.size(), 3u);
  EXPECT_EQ(msa.descriptions, (std::vector<std::string>{"query", "hit1", "hit2"}));
  // query MK--TA.G keeps columns 0,1,4,5,7.
  EXPECT_EQ(msa.sequences[0], "MKTAG");
  EXPECT_EQ(msa.sequences[1], "MKT-G");
  EXPECT_EQ(msa.sequences[2], "-KTA-");
  EXPECT_EQ(msa.deletions[0], (Deletions{0, 0, 0, 0, 0}));
  // hit1: "aa" in the query's gap columns before T, "c" before G.
  EXPECT_EQ(msa.deletions[1], (Deletions{0, 0, 2, 0, 1}));
  // hit2: one residue ("a") in a query gap column before T; gap-gap columns count nothing.
  EXPECT_EQ(msa.deletions[2], (Deletions{0, 0, 1, 0, 0}));
}

TEST(StockholmTest, ReadsFileWithCrlfAndUppercasesRows) {
  ScratchDir dir;
  write_file(dir / "m.sto", "# STOCKHOLM 1.0\r\nq  MKta\r\nh  mk-a\r\n//\r\n");
  const Msa msa = read_stockholm(dir / "m.sto");
  ASSERT_EQ(msa.sequences.size(), 2u);
  EXPECT_EQ(msa.sequences[0], "MKTA");
  EXPECT_EQ(msa.sequences[1], "MK-A");
  EXPECT_EQ(msa.deletions[1], (Deletions{0, 0, 0, 0}));
}

TEST(StockholmTest, ReadsClassicMacLineEndsAndAByteOrderMark) {
  const Msa msa = parse_stockholm("\xEF\xBB\xBF# STOCKHOLM 1.0\rq  MKta\rh  mk-a\r//\r", "m.sto");
  ASSERT_EQ(msa.sequences.size(), 2u);
  EXPECT_EQ(msa.sequences[0], "MKTA");
  EXPECT_EQ(msa.sequences[1], "MK-A");
  EXPECT_EQ(msa.descriptions[1], "h");
}

TEST(StockholmTest, RefusesFileWithoutSequencesNamingIt) {
  ScratchDir dir;
  write_file(dir / "empty.sto", "# STOCKHOLM 1.0\n#=GF ID x\n//\n");
  const std::string message =
      testing::thrown_message<InputError>([&] { read_stockholm(dir / "empty.sto"); });
  EXPECT_NE(message.find((dir / "empty.sto").string() + ":1:"), std::string::npos) << message;
  EXPECT_NE(message.find("Stockholm without sequences"), std::string::npos) << message;
  EXPECT_NE(parse_error("").find("x.sto:1:"), std::string::npos);
}

TEST(StockholmTest, RefusesRowsOfDifferentLengths) {
  const std::string message = parse_error("query MKTA\nhit1 MKT\n\nquery GG\nhit1 GG\n");
  EXPECT_NE(message.find("x.sto:2:"), std::string::npos) << message;
  EXPECT_NE(message.find("'hit1' has 5 columns"), std::string::npos) << message;
  EXPECT_NE(message.find("'query' has 6"), std::string::npos) << message;
}

TEST(StockholmTest, RefusesInvalidCharacterNamingItAndLine) {
  const std::string message = parse_error("# STOCKHOLM 1.0\nquery MKTA\nhit1 MK*A\n");
  EXPECT_NE(message.find("x.sto:3:"), std::string::npos) << message;
  EXPECT_NE(message.find("'*'"), std::string::npos) << message;
  EXPECT_NE(message.find("'hit1'"), std::string::npos) << message;
}

TEST(StockholmTest, RefusesMalformedLine) {
  EXPECT_NE(parse_error("query MKTA\nhit1\n").find("x.sto:2:"), std::string::npos);
  EXPECT_NE(parse_error("query MKTA\nhit1 MK TA\n").find("x.sto:2:"), std::string::npos);
}

TEST(StockholmTest, RefusesQueryOfOnlyGaps) {
  const std::string message = parse_error("query --..\nhit1 MKTA\n");
  EXPECT_NE(message.find("x.sto:1:"), std::string::npos) << message;
  EXPECT_NE(message.find("only gaps"), std::string::npos) << message;
}

TEST(StockholmTest, RefusesUnreadableFile) {
  ScratchDir dir;
  const std::string message =
      testing::thrown_message<InputError>([&] { read_stockholm(dir / "missing.sto"); });
  EXPECT_NE(message.find("missing.sto"), std::string::npos) << message;
}

}  // namespace
}  // namespace cpufold
