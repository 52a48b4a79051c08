#include "pipeline/templates/msa_for_templates.h"

#include <gtest/gtest.h>

namespace cpufold {
namespace {

// A jackhmmer-like alignment: a row repeated, a column empty in every row ('-'), an insert
// column ('.' in the query).
constexpr const char* kSto =
    "# STOCKHOLM 1.0\n"
    "#=GF ID q\n"
    "#=GS q DE query\n"
    "#=GS a DE first\n"
    "#=GS b DE copy of a\n"
    "#=GS c DE third\n"
    "\n"
    "q  MQ-IF.VK\n"
    "a  MQ-LFaVK\n"
    "b  MQ-LFaVK\n"
    "c  -Q-IF.V-\n"
    "#=GC RF xx.xx.xx\n"
    "//\n";

// Expected outputs as AF2's parsers produce them (checked against alphafold/data/parsers.py).
TEST(MsaForTemplates, TruncatesDeduplicatesAndRemovesEmptyColumnsAsAf2) {
  EXPECT_EQ(msa_for_templates(kSto),
            "# STOCKHOLM 1.0\n"
            "#=GS q DE query\n"
            "#=GS a DE first\n"
            "#=GS c DE third\n"
            "\n"
            "q  MQIF.VK\n"
            "a  MQLFaVK\n"
            "c  -QIF.V-\n"
            "#=GC RF xxxx.xx\n"
            "//\n");
}

TEST(MsaForTemplates, TruncationKeepsTheFirstRowsAndTheirDescriptions) {
  EXPECT_EQ(truncate_stockholm(kSto, 3),
            "# STOCKHOLM 1.0\n"
            "#=GS q DE query\n"
            "#=GS a DE first\n"
            "#=GS b DE copy of a\n"
            "\n"
            "q  MQ-IF.VK\n"
            "a  MQ-LFaVK\n"
            "b  MQ-LFaVK\n"
            "#=GC RF xx.xx.xx\n"
            "//\n");
}

}  // namespace
}  // namespace cpufold
