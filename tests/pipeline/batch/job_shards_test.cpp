// Shards of a batch (pipeline/batch/job_shards.h): every job has exactly one owner, the split
// is balanced and stable, Slurm's array variables map onto it.
#include "pipeline/batch/job_shards.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <numeric>
#include <set>

#include "memory/error.h"

namespace cpufold {
namespace {

TEST(JobShardsTest, ParsesIOfN) {
  const Shard s = parse_shard("2/8");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 8);
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "/3", "1/", "-1/3", "1/3x"}) {
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
  }
}

TEST(JobShardsTest, EveryJobHasExactlyOneOwnerAndTheSharesAreBalanced) {
  std::vector<double> costs;
  std::vector<std::string> names;
  for (int i = 0; i < 37; ++i) {
    costs.push_back(1.0 + (i * 7919) % 101);
    names.push_back("job" + std::to_string(i));
  }
  const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
  std::multiset<std::size_t> owned;
  for (int k = 1; k <= 4; ++k) {
    double mine = 0;
    for (std::size_t j : shard_members(costs, names, {k, 4})) {
      owned.insert(j);
      mine += costs[j];
    }
    EXPECT_NEAR(mine, total / 4, 101.0) << "shard " << k;  // within one job's cost
  }
  ASSERT_EQ(owned.size(), costs.size());
  for (std::size_t j = 0; j < costs.size(); ++j) EXPECT_EQ(owned.count(j), 1u) << j;
}

TEST(JobShardsTest, TheSplitDependsOnlyOnCostsAndNames) {
  const std::vector<double> costs{5, 5, 3, 9, 1};
  const std::vector<std::string> names{"e", "d", "c", "b", "a"};
  EXPECT_EQ(shard_members(costs, names, {2, 3}), shard_members(costs, names, {2, 3}));
  // Equal costs are ordered by name: "d" goes before "e".
  EXPECT_EQ(shard_members(costs, names, {1, 3}), (std::vector<std::size_t>{3}));
  // Then "c" (3) to the least loaded of the two tied at 5 (the lower), "a" (1) to the other.
  EXPECT_EQ(shard_members(costs, names, {2, 3}), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(shard_members(costs, names, {3, 3}), (std::vector<std::size_t>{0, 4}));
}

class SlurmEnv : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
                          "SLURM_ARRAY_TASK_MAX"})
      unsetenv(v);
  }
};

TEST_F(SlurmEnv, AnArrayTaskIsAShard) {
  EXPECT_FALSE(slurm_array_shard());
  setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
  setenv("SLURM_ARRAY_TASK_MAX", "4", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
  auto s = slurm_array_shard();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 3);
  EXPECT_EQ(s->count, 4);
  // An array 0-3: task 0 is shard 1.
  setenv("SLURM_ARRAY_TASK_ID", "0", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
  setenv("SLURM_ARRAY_TASK_MAX", "3", 1);
  s = slurm_array_shard();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 1);
  // A stepped array (1-7:2) has no consecutive ids.
  setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
  setenv("SLURM_ARRAY_TASK_MAX", "7", 1);
  EXPECT_THROW(slurm_array_shard(), InputError);
}

}  // namespace
}  // namespace cpufold
