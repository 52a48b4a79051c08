// StageMeter: each stage's peak is its own, whether the kernel's VmHWM is reset per stage or
// the resident size is sampled.
#include "pipeline/runner/stage_meter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

namespace cpufold {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// 64 MiB made resident and freed within stage "big"; stage "small" after it holds nothing.
void measure_stages(StageMeter& meter) {
  meter.begin("big");
  {
    const auto block = std::make_unique<char[]>(64 * kMiB);
    std::memset(block.get(), 1, 64 * kMiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the sampler sees it
  }
  meter.begin("small");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  meter.begin("big");  // a stage that recurs adds to its first occurrence
  meter.end();
}

void expect_own_peaks(const StageMeter& meter) {
  ASSERT_EQ(meter.stages().size(), 2u);
  const StagePeak& big = meter.stages()[0];
  const StagePeak& small = meter.stages()[1];
  EXPECT_EQ(big.name, "big");
  EXPECT_EQ(small.name, "small");
  EXPECT_GE(big.peak_bytes, small.peak_bytes + 60 * kMiB)
      << "the 64 MiB freed before 'small' must not count in its peak";
  EXPECT_EQ(meter.peak_bytes(), big.peak_bytes);
  EXPECT_GT(big.seconds, 0.02);
}

TEST(StageMeterTest, ClearRefsGivesEachStageItsOwnPeak) {
  if (!reset_peak_rss()) GTEST_SKIP() << "this kernel does not reset VmHWM";
  StageMeter meter(StageMeter::Method::clear_refs);
  measure_stages(meter);
  expect_own_peaks(meter);
}

TEST(StageMeterTest, SamplingGivesEachStageItsOwnPeak) {
  StageMeter meter(StageMeter::Method::sampled);
  EXPECT_EQ(meter.method(), StageMeter::Method::sampled);
  measure_stages(meter);
  expect_own_peaks(meter);
}

}  // namespace
}  // namespace cpufold
