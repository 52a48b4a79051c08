// Instances x threads from the time model (pipeline/runner/instance_layout.h).
#include "pipeline/runner/instance_layout.h"

#include <gtest/gtest.h>

#include "memory/error.h"

namespace cpufold {
namespace {

InstanceScaling measured() {  // issue 30's figures: 2 cores, AVX-512
  InstanceScaling s;
  s.gflops = 12913.5 / 81.9;
  s.bf16_speedup = 1.77;
  s.two_thread_speedup = 81.9 / 47.6;
  s.side_by_side = 99.7 / 81.9;
  return s;
}

TEST(InstanceLayoutTest, ThroughputReproducesTheMeasurementsItWasFittedTo) {
  // 1x2 at 1.72x and 2x1 at 1.64x one thread's throughput on 2 cores.
  EXPECT_NEAR(make_layout(measured(), 1, 2, 2).throughput, 81.9 / 47.6, 1e-9);
  EXPECT_NEAR(make_layout(measured(), 2, 1, 2).throughput, 2 * 81.9 / 99.7, 1e-9);
}

TEST(InstanceLayoutTest, AFixedCountOrThreadCountTakesTheOtherFromTheCores) {
  EXPECT_EQ(fixed_layout(measured(), 112, 1000, 4, 0).threads, 28);
  EXPECT_EQ(fixed_layout(measured(), 112, 1000, 0, 8).instances, 14);
  EXPECT_EQ(fixed_layout(measured(), 112, 4, 0, 8).instances, 4);  // what memory allows
  const InstanceLayout neither = fixed_layout(measured(), 112, 1000, 0, 0);
  EXPECT_EQ(neither.instances, 1);
  EXPECT_EQ(neither.threads, 112);
}

TEST(InstanceLayoutTest, RunSecondsFollowTheRateThreadsAndNeighbours) {
  const InstanceScaling s = measured();
  EXPECT_NEAR(run_seconds(s, 12913.5e9, DType::f32, 1, 1, 2), 81.9, 1e-6);
  EXPECT_NEAR(run_seconds(s, 12913.5e9, DType::f32, 2, 1, 2), 47.6, 1e-6);
  EXPECT_NEAR(run_seconds(s, 12913.5e9, DType::f32, 1, 2, 2), 99.7, 1e-6);
  EXPECT_NEAR(run_seconds(s, 12913.5e9, DType::bf16, 1, 1, 2), 81.9 / 1.77, 1e-6);
}

TEST(InstanceLayoutTest, ALayoutNeedingMoreCoresThanThereAreIsRefused) {
  EXPECT_THROW(fixed_layout(measured(), 2, 8, 2, 2), InputError);
  EXPECT_THROW(fixed_layout(measured(), 2, 8, 3, 0), InputError);
  EXPECT_THROW(fixed_layout(measured(), 2, 8, 0, 3), InputError);
  EXPECT_EQ(fixed_layout(measured(), 4, 8, 0, 2).instances, 2);
}

}  // namespace
}  // namespace cpufold
