#include "pipeline/batch/deepest_msa.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "pipeline/features/raw_features.h"

namespace cpufold {
namespace {

TEST(DeepestMsaTest, HasMoreDistinctRowsThanAskedWithTheQueryFirst) {
  const std::string query =
      "MQIFVKTLTGKTITLEVEPSDTIENVKAKIQDKEGIPPDQQRLIFAGKQLEDGRTLSDYNIQKESTLHLVLRLRGG";
  const std::int64_t rows = 512 + 5120;
  const Msa msa = deepest_msa(query, rows);
  ASSERT_EQ(msa.sequences.size(), static_cast<std::size_t>(rows + 1));
  EXPECT_EQ(msa.sequences.front(), query);
  EXPECT_EQ(msa.deletions.size(), msa.sequences.size());
  EXPECT_EQ(msa.descriptions.size(), msa.sequences.size());
  for (const std::string& row : msa.sequences) ASSERT_EQ(row.size(), query.size());
  // AF2 deduplicates rows: what is left is still at least the depth asked for.
  const std::string name = "deepest";
  const RawFeatures raw = make_raw_features(query, {&msa, 1}, {&name, 1});
  EXPECT_GE(raw.n_msa, rows);
  EXPECT_GE(std::set<std::string>(msa.sequences.begin(), msa.sequences.end()).size(),
            static_cast<std::size_t>(rows));
}

TEST(DeepestMsaTest, AQueryOfTwoResiduesHasEveryRowThereIs) {
  const Msa msa = deepest_msa("GS", 5000);
  EXPECT_EQ(msa.sequences.size(), 21u * 21u);  // the query plus 440 others, one possibly equal
  const std::string name = "deepest";
  const RawFeatures raw = make_raw_features("GS", {&msa, 1}, {&name, 1});
  EXPECT_GE(raw.n_msa, 21 * 21 - 1);
}

}  // namespace
}  // namespace cpufold
