// The colabfold_batch option table against README's, and the option value parsers.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "memory/error.h"
#include "pipeline/cli/colabfold_options.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

// README rows "| `--option` | status | ... |" -> status.
std::map<std::string, std::string> readme_table() {
  const auto readme = testing::test_data_dir().parent_path().parent_path() / "README.md";
  std::istringstream in(testing::read_file(readme));
  const std::regex row(R"(^\| `(--[a-z0-9-]+)` \| ([^|]+?) \|)");
  std::map<std::string, std::string> table;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) table[m[1]] = m[2];
  }
  return table;
}

TEST(ColabfoldOptions, ReadmeTableListsEveryOptionWithItsStatusAndNothingElse) {
  const std::map<std::string, std::string> readme = readme_table();
  for (const ColabfoldOption& o : colabfold_batch_options()) {
    const auto it = readme.find(std::string(o.name));
    ASSERT_NE(it, readme.end()) << o.name << " is missing from README's option table";
    EXPECT_EQ(it->second, status_name(o.status)) << o.name;
  }
  for (const auto& [name, status] : readme) {
    EXPECT_NE(find_colabfold_option(name), nullptr)
        << name << " is in README's table but not a colabfold_batch option in the code";
  }
  EXPECT_EQ(readme.size(), colabfold_batch_options().size());
}

TEST(ColabfoldOptions, TableHoldsColabfoldBatchsFiftyThreeOptionsOnce) {
  std::set<std::string_view> names;
  for (const ColabfoldOption& o : colabfold_batch_options()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name << " twice";
    if (o.status == OptionStatus::unsupported || o.status == OptionStatus::off_only) {
      EXPECT_FALSE(o.refused_values.empty()) << o.name;
      EXPECT_FALSE(o.instead.empty()) << o.name << " is refused without saying what to do";
    }
  }
  EXPECT_EQ(names.size(), 53u);
}

TEST(ColabfoldOptions, MaxMsaIsMaxSeqColonMaxExtraSeq) {
  const MaxMsa m = parse_max_msa("512:1024");
  EXPECT_EQ(m.max_seq, 512);
  EXPECT_EQ(m.max_extra_seq, 1024);
  for (const char* bad : {"512", "512:", ":1024", "a:b", "512:1024:3", "0:5", "5:-1", "5.5:6"}) {
    const std::string msg = testing::thrown_message<InputError>([&] { parse_max_msa(bad); });
    EXPECT_NE(msg.find("--max-msa"), std::string::npos) << bad << ": " << msg;
  }
}

TEST(ColabfoldOptions, SkipOutputNamesMsaPlotsAndPaeJson) {
  const SkipOutputs s = parse_skip_output("msa, pae_json");
  EXPECT_TRUE(s.msa);
  EXPECT_FALSE(s.plots);
  EXPECT_TRUE(s.pae_json);
  EXPECT_FALSE(parse_skip_output("").msa);
  const std::string msg = testing::thrown_message<InputError>([] { parse_skip_output("pdb"); });
  EXPECT_NE(msg.find("'pdb'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace cpufold
