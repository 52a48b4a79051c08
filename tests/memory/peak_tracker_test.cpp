#include "memory/peak_tracker.h"

#include <gtest/gtest.h>

#include <cstring>

#include "memory/tier.h"

namespace cpufold {
namespace {

TEST(PeakTracker, TierPeakFollowsRegionsAndSurvivesRelease) {
  PeakTracker& tracker = PeakTracker::instance();
  const TierUsage before = tracker.tiers()["dram"];
  {
    Region a = dram_tier().allocate(1 << 20);
    Region b = dram_tier().allocate(1 << 20);
    EXPECT_EQ(tracker.tiers()["dram"].current, before.current + (2u << 20));
  }
  const TierUsage after = tracker.tiers()["dram"];
  EXPECT_EQ(after.current, before.current);
  EXPECT_GE(after.peak, before.current + (2u << 20));
}

TEST(PeakTracker, RegionMoveTransfersOwnership) {
  const std::size_t before = PeakTracker::instance().tiers()["dram"].current;
  Region a = dram_tier().allocate(4096);
  Region b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_NE(b.data(), nullptr);
  b.reset();
  EXPECT_EQ(PeakTracker::instance().tiers()["dram"].current, before);
}

TEST(PeakTracker, OsPeakRssCoversTouchedMemory) {
  const std::size_t bytes = 64u << 20;
  Region r = dram_tier().allocate(bytes);
  std::memset(r.data(), 1, bytes);  // touch every page so it becomes resident
  EXPECT_GE(os_peak_rss_bytes(), bytes);
  EXPECT_GE(os_peak_rss_bytes(), os_current_rss_bytes());
}

}  // namespace
}  // namespace cpufold
