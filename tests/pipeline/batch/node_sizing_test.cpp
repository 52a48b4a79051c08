// Node sizing on paper (pipeline/batch/node_sizing.h): the replayed scheduler picks the layout
// `predict --instances auto` takes, from the time model and the memory.
#include "pipeline/batch/node_sizing.h"

#include <gtest/gtest.h>

#include <vector>

#include "pipeline/batch/admission.h"

namespace cpufold {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

// A job whose plan holds `peak_mib` (`shared_mib` of it the shared weights) and runs `gflop`.
JobPlan job(const std::string& name, std::size_t peak_mib, double gflop,
            std::size_t shared_mib = 300) {
  JobPlan j;
  j.name = name;
  j.flops = gflop * 1e9;
  j.plan.chosen.blocks = {{"shared weights (the mapped weight cache)", shared_mib * MiB},
                          {"the rest", (peak_mib - shared_mib) * MiB}};
  j.plan.dram_peak_bytes = peak_mib * MiB;
  j.plan.fits = true;
  return j;
}

InstanceScaling scaling(double side_by_side) {
  InstanceScaling s;
  s.gflops = 100;
  s.two_thread_speedup = 1.72;
  s.side_by_side = side_by_side;
  return s;
}

std::vector<JobPlan> equal_jobs() {
  return {job("a", 650, 10000), job("b", 650, 10000), job("c", 650, 10000), job("d", 650, 10000)};
}

TEST(NodeSizingTest, TwoInstancesWhenNeighboursDoNotSlowEachOther) {
  const NodeSizing n = size_node(equal_jobs(), 2, 8192 * MiB, DType::f32, scaling(1.0));
  EXPECT_EQ(n.layout.instances, 2);
  EXPECT_EQ(n.layout.threads, 1);
  EXPECT_NEAR(n.makespan_seconds, 200, 1e-6);  // two rounds of 100 s
  EXPECT_NEAR(n.proteins_per_hour, 4 * 3600 / 200.0, 1e-6);
  // Two plans at once, the weights once.
  EXPECT_EQ(n.peak_bytes, 300 * MiB + 2 * (worker_budget_bytes(650 * MiB) - 300 * MiB));
}

TEST(NodeSizingTest, OneInstanceOnBothCoresWhenNeighboursSlowEachOtherEnough) {
  const NodeSizing n = size_node(equal_jobs(), 2, 8192 * MiB, DType::f32, scaling(1.3));
  EXPECT_EQ(n.layout.instances, 1);
  EXPECT_EQ(n.layout.threads, 2);
}

TEST(NodeSizingTest, MemoryForOneJobAtATimeGivesEveryCoreToIt) {
  // 1,000 MiB holds one 650 MiB plan but not two (their private parts are 350 MiB each plus
  // the worker margin): a second instance would idle, so one instance takes both cores.
  const NodeSizing n = size_node(equal_jobs(), 2, 1000 * MiB, DType::f32, scaling(1.0));
  EXPECT_EQ(n.layout.instances, 1);
  EXPECT_LT(n.peak_bytes, 1000 * MiB);
}

TEST(NodeSizingTest, AJobLargerThanTheNodeIsCountedAndLeftOut) {
  std::vector<JobPlan> plans = equal_jobs();
  plans.push_back(job("huge", 9000, 10000));
  const NodeSizing n = size_node(plans, 2, 8192 * MiB, DType::f32, scaling(1.0));
  EXPECT_EQ(n.jobs, 5u);
  EXPECT_EQ(n.unfit, 1u);
  EXPECT_NEAR(n.makespan_seconds, 200, 1e-6);
}

TEST(NodeSizingTest, SlurmTimeRoundsUpToWholeMinutes) {
  EXPECT_EQ(slurm_time(0), "0-00:01:00");
  EXPECT_EQ(slurm_time(61), "0-00:02:00");
  EXPECT_EQ(slurm_time(26 * 3600 + 30), "1-02:01:00");
}

}  // namespace
}  // namespace cpufold
