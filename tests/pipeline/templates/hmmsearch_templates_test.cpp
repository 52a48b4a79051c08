#include "pipeline/templates/hmmsearch_templates.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(HmmsearchTemplates, AMissingTemplateDatabaseIsNamed) {
  const std::string message = testing::thrown_message<InputError>([] {
    hmmsearch_pdb_seqres("MQIFVKTLTGKT", std::nullopt, {"/nonexistent/pdb_seqres.txt", 1});
  });
  EXPECT_NE(message.find("/nonexistent/pdb_seqres.txt"), std::string::npos) << message;
  EXPECT_NE(message.find("pdb_seqres/pdb_seqres.txt"), std::string::npos) << message;
}

TEST(HmmsearchTemplates, TheQueryAloneIsAProfileOfMatchStates) {
  EXPECT_EQ(query_stockholm("MQIF"), "# STOCKHOLM 1.0\n\nquery MQIF\n#=GC RF xxxx\n//\n");
}

}  // namespace
}  // namespace cpufold
