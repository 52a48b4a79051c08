#include "pipeline/batch/job_order.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "pipeline/batch/predict_jobs.h"

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

std::vector<PredictJob> jobs_named(int count) {
  std::vector<PredictJob> jobs(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    jobs[static_cast<std::size_t>(i)].name = std::string("j").append(std::to_string(i));
  return jobs;
}

std::vector<std::string> names(const std::vector<PredictJob>& jobs) {
  std::vector<std::string> out;
  for (const PredictJob& j : jobs) out.push_back(j.name);
  return out;
}

TEST(JobOrder, RandomIsAPermutationFixedBySeed) {
  auto a = jobs_named(12), b = jobs_named(12), c = jobs_named(12);
  reorder_jobs(a, QueryOrder::random, 7);
  reorder_jobs(b, QueryOrder::random, 7);
  reorder_jobs(c, QueryOrder::random, 8);
  EXPECT_EQ(names(a), names(b));
  EXPECT_NE(names(a), names(c));
  EXPECT_NE(names(a), names(jobs_named(12)));
  auto sorted = names(a);
  std::sort(sorted.begin(), sorted.end());
  auto expected = names(jobs_named(12));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);
}

TEST(JobOrder, MsaDepthPutsTheDeepestOwnA3mFirst) {
  testing::ScratchDir dir;
  testing::write_file(dir / "two.a3m", ">q\nMK\n>h\nMR\n");
  testing::write_file(dir / "three.a3m", ">q\nMK\n>h\nMR\n>i\nML\n");
  auto jobs = jobs_named(3);  // j0 has no MSA
  jobs[1].a3m = dir / "two.a3m";
  jobs[2].a3m = dir / "three.a3m";
  reorder_jobs(jobs, QueryOrder::msa_depth, 0);
  EXPECT_EQ(names(jobs), (std::vector<std::string>{"j2", "j1", "j0"}));
}

TEST(JobOrder, JobnamePrefixNumbersJobsZeroPaddedToTheCountsDigits) {
  auto jobs = jobs_named(11);
  apply_jobname_prefix(jobs, "my/run");
  EXPECT_EQ(jobs[0].name, "my_run_00");
  EXPECT_EQ(jobs[10].name, "my_run_10");
  auto unchanged = jobs_named(2);
  apply_jobname_prefix(unchanged, "");
  EXPECT_EQ(unchanged[1].name, "j1");
}

TEST(JobOrder, JobnamePrefixTooLongForFileNamesIsRefused) {
  auto jobs = jobs_named(3);
  const std::string fits(max_job_name_bytes() - 2, 'p');  // + "_" + one digit
  apply_jobname_prefix(jobs, fits);
  EXPECT_EQ(jobs[2].name, fits + "_2");
  auto more = jobs_named(3);
  EXPECT_THROW(apply_jobname_prefix(more, fits + "p"), InputError);
}

}  // namespace
}  // namespace cpufold
