// `cpufold bench block`: the Evoformer or the extra-MSA block, its activations in DRAM or in
// the spill tier.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::run_cpufold;

std::string block_command(const std::string& options) {
  return "bench block --params '" +
         (testing::test_data_dir() / "params" / "params_model_1_ptm.npz").string() +
         "' --n-res 12 --threads 1 " + options;
}

TEST(BenchBlock, ExtraMsaStackRunsTheFirstExtraMsaBlockOnItsOwnRows) {
  // --n-seq: the old spelling of --msa-rows, kept for a release.
  const auto r = run_cpufold(block_command("--stack extra-msa --n-seq 20"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "extra-MSA block: n_res 12, extra rows 20,")) << r.output;
  EXPECT_TRUE(contains(r.output, "(dram)")) << r.output;
}

// The block's peak against the prediction `profile --blocks-only` makes too (block_peak.h).
TEST(BenchBlock, PrintsItsPeakAgainstItsActivationsAndPlannedScratch) {
  const auto r = run_cpufold(block_command("--msa-rows 8 --chunk-size 4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "  Peak: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "MiB of activations + ")) << r.output;
  EXPECT_TRUE(contains(r.output, "MiB of planned scratch), ratio ")) << r.output;
}

TEST(BenchBlock, ExtraMsaStackDefaultsToTheExtraRowsOfAnAf2Run) {
  const auto r = run_cpufold(block_command("--stack extra-msa --chunk-size 4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "extra rows 5120")) << r.output;
}

// The help says what the run does: no planner here, so no slicing unless --chunk-size is given.
TEST(BenchBlock, HelpGivesTheUnslicedDefaultOfABlockBenchmark) {
  const auto r = run_cpufold("bench block --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "default 0: no slicing")) << r.output;
  EXPECT_FALSE(contains(r.output, "the memory planner chooses")) << r.output;
  const auto run = run_cpufold(block_command("--msa-rows 8"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "chunk 0,")) << run.output;
}

TEST(BenchBlock, SpillDirHoldsTheActivationsAndLeavesNothingBehind) {
  const testing::ScratchDir dir;
  const auto r =
      run_cpufold(block_command("--msa-rows 8 --spill-dir '" + dir.path().string() + "'"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "(file:" + dir.path().string() + ")")) << r.output;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(BenchBlock, UnknownStackIsAUsageError) {
  const auto r = run_cpufold(block_command("--stack template"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--stack")) << r.output;
}

}  // namespace
}  // namespace cpufold
