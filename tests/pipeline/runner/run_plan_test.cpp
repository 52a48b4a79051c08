// plan_run: the candidates it weighs with a spill directory, and what it says when the
// directory is too small for them.
#include "pipeline/runner/run_plan.h"

#include <gtest/gtest.h>

namespace cpufold {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

RunArenas arenas(std::int64_t, bool apart) {
  RunArenas a;
  a.features = kMiB;
  a.outputs = 100 * kMiB;
  a.scratch = apart ? 50 * kMiB : 250 * kMiB;
  a.activations = apart ? 200 * kMiB : 0;
  return a;
}

MemoryPlan plan_with_spill_space(std::size_t free_bytes) {
  PlanRequest r;
  r.budget = 200 * kMiB;  // below every plan held in DRAM
  r.may_spill = true;
  r.spill_free_bytes = free_bytes;
  return plan_run(ModelConfig{}, TrunkDims{100, 10, 10, 0}, r, arenas);
}

TEST(RunPlan, SpilledPlansTheDirectoryCannotHoldAreDroppedAndTheNoteSaysWhatTheyNeed) {
  // The leanest spills both arenas: 200 MiB of activations and 100 MiB of outputs.
  const MemoryPlan plan = plan_with_spill_space(150 * kMiB);
  EXPECT_FALSE(plan.fits);
  EXPECT_EQ(plan.spill_bytes, 0u);
  EXPECT_NE(plan.spill_note.find("would put 300 MiB in the spill directory, which has 150 MiB "
                                 "free"),
            std::string::npos)
      << plan.spill_note;
}

TEST(RunPlan, SpilledPlansThatFitTheDirectoryAreWeighedWithoutANote) {
  const MemoryPlan plan = plan_with_spill_space(1024 * kMiB);
  EXPECT_TRUE(plan.fits);
  EXPECT_GT(plan.spill_bytes, 0u);
  EXPECT_TRUE(plan.spill_note.empty()) << plan.spill_note;
}

TEST(RunPlan, PlanNamesItsTimeModel) {
  PlanRequest r;
  r.time.source = "a test's model";
  EXPECT_EQ(plan_run(ModelConfig{}, TrunkDims{100, 10, 10, 0}, r, arenas).time_model,
            "a test's model");
}

// A chunk given on the command line is not the planner's choice, and the plan says so.
TEST(RunPlan, AGivenChunkIsReportedAsGivenNotChosen) {
  PlanRequest r;
  EXPECT_NE(plan_run(ModelConfig{}, TrunkDims{100, 10, 10, 0}, r, arenas).why.find("leanest"),
            std::string::npos);
  r.chunk = 8;
  const MemoryPlan plan = plan_run(ModelConfig{}, TrunkDims{100, 10, 10, 0}, r, arenas);
  EXPECT_EQ(plan.chosen.chunk, 8);
  EXPECT_EQ(plan.why, "the chunk size given (--chunk-size)");
}

TEST(RunPlan, OnlyAFileSpillTierCountsTheWeightsAsStreamed) {
  PlanRequest r;
  r.budget = 300 * kMiB;  // below every plan held in DRAM (537 MiB)
  r.may_spill = true;
  r.spill_free_bytes = 1024 * kMiB;
  r.shared_weight_bytes = 100 * kMiB;
  const auto weights = [](const MemoryPlan& p) {
    for (const PlannedBlock& b : p.chosen.blocks)
      if (b.name.find("shared weights") != std::string::npos) return b.bytes;
    return std::size_t{0};
  };
  ModelConfig c;
  c.n_evoformer_blocks = 50;
  const MemoryPlan file = plan_run(c, TrunkDims{100, 10, 10, 0}, r, arenas);
  r.spill_streams_weights = false;  // a NUMA node
  const MemoryPlan numa = plan_run(c, TrunkDims{100, 10, 10, 0}, r, arenas);
  ASSERT_GT(file.spill_bytes, 0u);
  ASSERT_GT(numa.spill_bytes, 0u);
  EXPECT_EQ(weights(file), 4 * kMiB);  // two of 50 blocks
  EXPECT_EQ(weights(numa), 100 * kMiB);
}

}  // namespace
}  // namespace cpufold
