#include "pipeline/templates/obsolete_pdbs.h"

#include <gtest/gtest.h>

namespace cpufold {
namespace {

TEST(ObsoletePdbs, ReadsRemovedAndReplacedEntriesAsAf2) {
  const std::string text =
      " LIST OF OBSOLETE COORDINATE ENTRIES AND SUCCESSORS\n"
      "OBSLTE    06-NOV-19 6G9Y\n"
      "OBSLTE    31-JUL-94 116L     216L\n"
      "OBSLTE    26-SEP-06 2H33     2JM5 2OWI\n";
  const ObsoletePdbs o = parse_obsolete_pdbs(text);
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o.at("6g9y"), std::nullopt);
  EXPECT_EQ(o.at("116l"), "216l");
  EXPECT_EQ(o.at("2h33"), "2jm5");  // the first successor, as AF2 takes it
}

TEST(ObsoletePdbs, AMissingFileListsNothing) {
  EXPECT_TRUE(read_obsolete_pdbs("/nonexistent/obsolete.dat").empty());
}

}  // namespace
}  // namespace cpufold
