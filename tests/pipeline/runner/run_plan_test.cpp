// plan_run: the candidates it weighs with a spill directory, and what it says when the
// directory is too small for them.
#include "pipeline/runner/run_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "io/model_config.h"
#include "io/weight_store.h"
#include "memory/error.h"
#include "pipeline/runner/model_flops.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

RunArenas arenas(const ChunkSizes&, bool apart) {
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

TEST(RunPlan, LengthsWhosePairPassesOneDnnsRowLimitAreRefusedWithTheReason) {
  EXPECT_NO_THROW(check_residue_count(kMaxResidues, 128));
  const std::string message =
      testing::thrown_message<InputError>([] { check_residue_count(kMaxResidues + 1, 128); });
  EXPECT_NE(message.find("46341 residues is more than cpufold can run (46340 at most"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("1.00 TiB"), std::string::npos) << message;
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

TEST(RunPlan, ASpilledPlansTimeAddsItsTrafficOverTheSpillBandwidthToItsCompute) {
  const WeightStore store = WeightStore::open(testing::tiny_params("model_1_ptm"));
  const ModelConfig config = ModelConfig::from_weights(store);  // FLOPs to weigh the bytes by
  PlanRequest r;
  r.budget = process_bytes(config) + 200 * kMiB;  // only spilled plans fit
  r.may_spill = true;
  r.compute_gflops = 100;
  r.time.spill_bandwidth = 1e9;
  const TrunkDims d{100, 10, 10, 0};
  r.spill_traffic = [](const ChunkSizes&, bool outputs, std::size_t) {
    return outputs ? std::size_t{5} << 30 : std::size_t{3} << 30;
  };
  const MemoryPlan plan = plan_run(config, d, r, arenas);
  ASSERT_TRUE(plan.fits);
  ASSERT_GT(plan.spill_bytes, 0u);
  const StageFlops f = stage_flops(config, {d.n_res, d.n_seq, d.n_extra, d.n_templ});
  const double io_over_compute =
      static_cast<double>(plan.chosen.spill_traffic_bytes) / 1e9 /
      ((f.embedders + f.templates + f.extra_msa + f.evoformer + f.structure) / 100e9);
  EXPECT_EQ(plan.chosen.spill_traffic_bytes,
            plan.chosen.spill.size() == 1 ? std::size_t{3} << 30 : std::size_t{5} << 30);
  const double compute = r.time.relative_time(plan.chosen.chunks, family_shares(config, d));
  EXPECT_NEAR(plan.chosen.relative_time, compute + io_over_compute, 1e-9);
  EXPECT_NEAR(plan.chosen.spill_slowdown, 1 + io_over_compute / compute, 1e-9);
  EXPECT_GT(plan.chosen.spill_slowdown, 1.0);
}

TEST(RunPlan, TheCacheASpilledPlanLeavesIsItsBudgetLessItsPeakPlusItsWindow) {
  PlanCandidate c;
  c.blocks = {{"scratch arena", 100 * kMiB}, {kSpillWindowBlock, 30 * kMiB}};
  EXPECT_EQ(spill_cache_bytes(c, 200 * kMiB, 0), 100 * kMiB);
  EXPECT_EQ(spill_cache_bytes(c, std::nullopt, 500 * kMiB), 400 * kMiB) << "no budget: usable";
  EXPECT_EQ(spill_cache_bytes(c, 120 * kMiB, 0), 30 * kMiB) << "over the budget: the window";
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
  r.chunks = ChunkSizes::all(8);
  const MemoryPlan plan = plan_run(ModelConfig{}, TrunkDims{100, 10, 10, 0}, r, arenas);
  EXPECT_EQ(plan.chosen.chunks, ChunkSizes::all(8));
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

// Two families with their own transients: the Evoformer's set the peak, the extra-MSA stack's
// stay under it even unsliced, and slicing the extra-MSA stack is the costlier.
std::size_t evoformer_mib(std::int64_t chunk) {
  switch (chunk) {
    case 0:
      return 900;
    case 256:
      return 700;
    case 128:
      return 500;
    case 64:
      return 400;
    case 32:
      return 350;
    case 16:
      return 320;
    default:
      return 300;
  }
}
std::size_t extra_msa_mib(std::int64_t chunk) {
  return chunk == 0 ? 380 : 330;
}

RunArenas family_arenas(const ChunkSizes& k, bool) {
  RunArenas a;
  a.features = kMiB;
  a.outputs = 100 * kMiB;
  a.scratch = std::max(evoformer_mib(k.evoformer), extra_msa_mib(k.extra_msa)) * kMiB;
  return a;
}

PlanRequest family_request() {
  PlanRequest r;
  r.time.chunk_factor = {{0, 1.0}, {64, 1.0}, {32, 1.2}, {1, 2.0}};
  r.time.extra_msa_chunk_factor = {{0, 1.0}, {256, 1.3}, {1, 3.0}};
  r.shares = FamilyShares{0, 0.2, 0.8, 0};
  return r;
}

constexpr TrunkDims kWide{1000, 600, 6000, 0};

TEST(RunPlan, EachFamilyTakesTheFastestChunkThatStaysUnderThePeak) {
  const MemoryPlan plan = plan_run(ModelConfig{}, kWide, family_request(), family_arenas);
  // The Evoformer at 64 (400 MiB, no slower than unsliced); the extra-MSA stack's unsliced 380
  // MiB stay under that, so it is not sliced: one chunk of 64 for both would cost 6% more time.
  EXPECT_EQ(plan.chosen.chunks.evoformer, 64);
  EXPECT_EQ(plan.chosen.chunks.extra_msa, 0);
  EXPECT_EQ(plan.chosen.chunks.structure, 0);  // no transient: unsliced is as lean
  EXPECT_EQ(plan.chosen.chunks.templates, 64) << "no templates: follows the Evoformer";
  EXPECT_DOUBLE_EQ(plan.chosen.relative_time, 1.0);
  EXPECT_EQ(plan.dram_peak_bytes, process_bytes(ModelConfig{}) + 501 * kMiB);
}

TEST(RunPlan, ABudgetSlicesOnlyTheFamiliesThatSetThePeak) {
  PlanRequest r = family_request();
  r.budget = process_bytes(ModelConfig{}) + 486 * kMiB;  // scratch up to 385 MiB
  const MemoryPlan plan = plan_run(ModelConfig{}, kWide, r, family_arenas);
  ASSERT_TRUE(plan.fits);
  EXPECT_EQ(plan.chosen.chunks.evoformer, 32);
  EXPECT_EQ(plan.chosen.chunks.extra_msa, 0);
  EXPECT_NEAR(plan.chosen.relative_time, 0.8 * 1.2 + 0.2, 1e-12);
}

TEST(RunPlan, TheSmallestBudgetSlicesEveryFamily) {
  const MemoryPlan plan = plan_run(ModelConfig{}, kWide, family_request(), family_arenas);
  EXPECT_EQ(plan.min_budget_bytes, process_bytes(ModelConfig{}) + 431 * kMiB);
}

}  // namespace
}  // namespace cpufold
