// CSV / TSV tables: quoting, line ends and rows that cannot be split.
#include "io/delimited_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using Fields = std::vector<std::string>;

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(DelimitedTableTest, SplitsRowsAndUnquotesFieldsAsRfc4180) {
  const Table t =
      parse_table("id, sequence\n\n a , MKTA \n\"b,c\",\"MK\"\"TA\"\n\"\",GG\nd,\n", "t.csv", ',');
  EXPECT_EQ(t.header_line, 1u);
  EXPECT_EQ(t.header, (Fields{"id", "sequence"}));
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.rows[0].line, 3u);
  EXPECT_EQ(t.rows[0].fields, (Fields{"a", "MKTA"}));
  EXPECT_EQ(t.rows[1].fields, (Fields{"b,c", "MK\"TA"}));
  EXPECT_EQ(t.rows[2].fields, (Fields{"", "GG"}));
  EXPECT_EQ(t.rows[3].fields, (Fields{"d", ""}));
  for (const TableRow& row : t.rows) EXPECT_EQ(row.error, "");
}

TEST(DelimitedTableTest, ReadsTabsCrOnlyLineEndsAndAByteOrderMark) {
  const Table t = parse_table("\xEF\xBB\xBFid\tsequence\rq1\tMKTA\rq2\tGG", "t.tsv", '\t');
  EXPECT_EQ(t.header, (Fields{"id", "sequence"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1].line, 3u);
  EXPECT_EQ(t.rows[1].fields, (Fields{"q2", "GG"}));
}

TEST(DelimitedTableTest, UnbalancedQuoteFailsItsRowNamingFileAndLine) {
  const Table t = parse_table("id,sequence\n\"foo,MKTA\nok,GG\n", "t.csv", ',');
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_TRUE(t.rows[0].fields.empty());
  EXPECT_TRUE(contains(t.rows[0].error, "t.csv:2: field 1 opens a quote that is never closed"))
      << t.rows[0].error;
  EXPECT_EQ(t.rows[1].error, "");
  EXPECT_EQ(t.rows[1].fields, (Fields{"ok", "GG"}));
}

TEST(DelimitedTableTest, StrayQuotesFailTheirRow) {
  const Table t = parse_table("id,sequence\nfo\"o,MK\n\"a\"b,MK\nx,MK\"\n", "t.csv", ',');
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_TRUE(contains(t.rows[0].error, "t.csv:2: field 1 (fo\"o) has a stray '\"'"))
      << t.rows[0].error;
  EXPECT_TRUE(contains(t.rows[1].error, "t.csv:3: field 1 has text after its closing quote"))
      << t.rows[1].error;
  EXPECT_TRUE(contains(t.rows[2].error, "t.csv:4: field 2")) << t.rows[2].error;
}

TEST(DelimitedTableTest, RefusesEmptyTableAndBadHeader) {
  EXPECT_TRUE(
      contains(testing::thrown_message<InputError>([] { parse_table("\n \r\n", "t.csv", ','); }),
               "t.csv:1: empty table: no header row"));
  EXPECT_TRUE(contains(
      testing::thrown_message<InputError>([] { parse_table("\nid,\"sequence\n", "t.csv", ','); }),
      "t.csv:2: header row: field 2 opens a quote"));
}

}  // namespace
}  // namespace cpufold
