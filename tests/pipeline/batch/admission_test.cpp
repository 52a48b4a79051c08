// Admission of waiting jobs on a node shared by several instances (pipeline/batch/admission.h).
#include "pipeline/batch/admission.h"

#include <gtest/gtest.h>

#include <vector>

namespace cpufold {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

JobDemand demand(std::size_t peak_mib, double seconds, std::size_t lean_mib = 0,
                 double lean_seconds = 0) {
  JobDemand d;
  d.peak_bytes = peak_mib * MiB;
  d.seconds = seconds;
  d.lean_peak_bytes = (lean_mib ? lean_mib : peak_mib) * MiB;
  d.lean_seconds = lean_seconds ? lean_seconds : seconds;
  return d;
}

NodeState node(std::size_t free_mib, int free_slots, int running, double next_end = 0) {
  return {free_mib * MiB, free_slots, running, next_end};
}

TEST(AdmissionTest, TheLongestJobThatFitsStartsFirst) {
  const std::vector<JobDemand> waiting{demand(600, 100), demand(300, 50), demand(200, 10)};
  const auto a = next_admission(waiting, node(1000, 2, 0));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->job, 0u);
  EXPECT_FALSE(a->lean);
}

TEST(AdmissionTest, AJobThatDoesNotFitBesideTheRunningOnesWaitsWhileASmallerOneStarts) {
  // A budget that fits one large job or two small ones: beside a running small job the large
  // one waits, and the next small one starts.
  const std::vector<JobDemand> waiting{demand(800, 100), demand(400, 20)};
  const auto a = next_admission(waiting, node(600, 1, 1, 5));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->job, 1u);
}

TEST(AdmissionTest, NothingStartsWithoutAFreeSlotOrWhenNothingFits) {
  const std::vector<JobDemand> waiting{demand(100, 10)};
  EXPECT_FALSE(next_admission(waiting, node(1000, 0, 2)));
  const std::vector<JobDemand> large{demand(800, 100)};
  EXPECT_FALSE(next_admission(large, node(600, 1, 1, 5)));
  EXPECT_FALSE(next_admission({}, node(1000, 1, 0)));
}

TEST(AdmissionTest, ATighterPlanStartsNowWhenItEndsSoonerThanWaitingWould) {
  // Waiting 50 s for memory and then running 100 s ends at 150 s; the lean plan ends at 120 s.
  const std::vector<JobDemand> waiting{demand(800, 100, 500, 120)};
  const auto a = next_admission(waiting, node(600, 1, 1, 50));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->lean);
  // Memory frees up in 10 s: waiting ends at 110 s, before the lean plan's 120 s.
  EXPECT_FALSE(next_admission(waiting, node(600, 1, 1, 10)));
}

TEST(AdmissionTest, AJobThatMustRunAloneDrainsTheNodeFirst) {
  std::vector<JobDemand> waiting{demand(900, 100), demand(100, 10)};
  waiting[0].alone = true;
  EXPECT_FALSE(next_admission(waiting, node(5000, 1, 1, 5)));  // holds the small one back
  const auto a = next_admission(waiting, node(5000, 2, 0));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->job, 0u);
}

TEST(AdmissionTest, AnAloneJobBehindOthersLetsThemRunFirst) {
  std::vector<JobDemand> waiting{demand(100, 10), demand(900, 100)};
  waiting[1].alone = true;
  const auto a = next_admission(waiting, node(5000, 1, 1, 5));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->job, 0u);
  waiting.erase(waiting.begin());
  EXPECT_FALSE(next_admission(waiting, node(5000, 1, 1, 5)));
}

}  // namespace
}  // namespace cpufold
