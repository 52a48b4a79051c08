#include "memory/memory_plan.h"

#include <gtest/gtest.h>

#include "memory/error.h"

namespace cpufold {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

PlanCandidate candidate(std::int64_t chunk, std::size_t mib, double relative_time) {
  PlanCandidate c;
  c.chunks = ChunkSizes::all(chunk);
  c.blocks = {{"process", 100 * kMiB}, {"scratch", (mib - 100) * kMiB}};
  c.relative_time = relative_time;
  return c;
}

// Unsliced is fastest and fattest; small chunks are lean and slow.
std::vector<PlanCandidate> candidates() {
  return {candidate(0, 2000, 1.0), candidate(64, 900, 1.01), candidate(16, 600, 1.02),
          candidate(4, 500, 1.10), candidate(1, 450, 1.60)};
}

TEST(MemoryPlan, DefaultIsTheLeanestWithinTheTimeSlack) {
  const MemoryPlan p = choose_plan(candidates(), std::nullopt, 0, 0.03);
  EXPECT_EQ(p.chosen.chunks.evoformer, 16);
  EXPECT_EQ(p.dram_peak_bytes, 600 * kMiB);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.min_budget_bytes, 450 * kMiB);
}

TEST(MemoryPlan, LooseBudgetKeepsTheDefaultChoice) {
  const MemoryPlan p = choose_plan(candidates(), 4000 * kMiB, 0, 0.03);
  EXPECT_EQ(p.chosen.chunks.evoformer, 16);
  EXPECT_TRUE(p.fits);
}

TEST(MemoryPlan, TightBudgetTakesTheFastestPlanThatFits) {
  const MemoryPlan p = choose_plan(candidates(), 520 * kMiB, 0, 0.03);
  EXPECT_EQ(p.chosen.chunks.evoformer, 4);
  EXPECT_TRUE(p.fits);
  EXPECT_LE(p.dram_peak_bytes, 520 * kMiB);
}

TEST(MemoryPlan, ImpossibleBudgetReportsTheSmallestThatFits) {
  const MemoryPlan p = choose_plan(candidates(), 300 * kMiB, 0, 0.03);
  EXPECT_FALSE(p.fits);
  EXPECT_EQ(p.chosen.chunks.evoformer, 1);
  EXPECT_EQ(p.min_budget_bytes, 450 * kMiB);
  try {
    refuse_plan(p, "this run");
    ADD_FAILURE() << "refuse_plan returned";
  } catch (const BudgetError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("450 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("300 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("--mem-budget 450M"), std::string::npos) << m;
    EXPECT_NE(m.find("--spill-dir"), std::string::npos) << "no spill plan was weighed: " << m;
  }
}

// The in-DRAM candidates above plus, at each chunk, one that moves `spilled` MiB of its scratch
// to the spill tier and runs 10% slower.
std::vector<PlanCandidate> with_spill(std::size_t spilled) {
  std::vector<PlanCandidate> all = candidates();
  for (PlanCandidate c : candidates()) {
    c.blocks[1].bytes -= spilled * kMiB;
    c.spill = {{"activations arena", spilled * kMiB}};
    c.relative_time *= 1.10;
    all.push_back(c);
  }
  return all;
}

TEST(MemoryPlan, SpillingIsTakenOnlyWhenNoPlanInDramFits) {
  // Spilling is leaner at every chunk, but a plan held in DRAM fits: no spill.
  const MemoryPlan dram = choose_plan(with_spill(300), std::nullopt, 0, 0.03);
  EXPECT_EQ(dram.chosen.chunks.evoformer, 16);
  EXPECT_TRUE(dram.chosen.spill.empty());
  EXPECT_EQ(dram.spill_bytes, 0u);
  EXPECT_EQ(dram.min_budget_bytes, 150 * kMiB) << "the smallest budget counts spilled plans";
  const MemoryPlan loose = choose_plan(with_spill(300), 500 * kMiB, 0, 0.03);
  EXPECT_EQ(loose.chosen.chunks.evoformer, 4);
  EXPECT_TRUE(loose.chosen.spill.empty());

  // 400 MiB: nothing in DRAM fits; the spilled plans' own choice (the leanest within the slack
  // of the fastest spilled one: chunk 16 at 300 MiB).
  const MemoryPlan spilled = choose_plan(with_spill(300), 400 * kMiB, 0, 0.03);
  EXPECT_TRUE(spilled.fits);
  EXPECT_EQ(spilled.chosen.chunks.evoformer, 16);
  EXPECT_EQ(spilled.dram_peak_bytes, 300 * kMiB);
  EXPECT_EQ(spilled.spill_bytes, 300 * kMiB);
  EXPECT_NE(spilled.why.find("no plan held in DRAM fits"), std::string::npos) << spilled.why;
}

TEST(MemoryPlan, ABudgetEvenSpillingCannotMeetNamesNoSpillDirHint) {
  const MemoryPlan p = choose_plan(with_spill(300), 100 * kMiB, 0, 0.03);
  EXPECT_FALSE(p.fits);
  EXPECT_TRUE(p.spill_considered);
  EXPECT_EQ(p.min_budget_bytes, 150 * kMiB);
  try {
    refuse_plan(p, "this run");
    ADD_FAILURE() << "refuse_plan returned";
  } catch (const BudgetError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--mem-budget 150M"), std::string::npos) << m;
    EXPECT_EQ(m.find("--spill-dir"), std::string::npos) << "spilling was weighed already: " << m;
  }
}

TEST(MemoryPlan, WithoutBudgetTheUsableMemoryIsTheLimit) {
  // The default choice (600 MiB) does not fit 550 MiB usable: the fastest that does.
  const MemoryPlan p = choose_plan(candidates(), std::nullopt, 550 * kMiB, 0.03);
  EXPECT_EQ(p.chosen.chunks.evoformer, 4);
  EXPECT_TRUE(p.fits);
  const MemoryPlan none = choose_plan(candidates(), std::nullopt, 100 * kMiB, 0.03);
  EXPECT_FALSE(none.fits);
  EXPECT_EQ(none.chosen.chunks.evoformer, 1);
}

TEST(MemoryPlan, NoCandidateIsAnInternalError) {
  EXPECT_THROW(choose_plan({}, std::nullopt, 0, 0.03), InternalError);
}

}  // namespace
}  // namespace cpufold
