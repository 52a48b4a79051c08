// profile.png: drawn for any span of lengths (one, or 64..2500 residues), with the predicted
// line, the measured points and a mark for a failed length.
#include "pipeline/output/profile_plot.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "memory/error.h"
#include "tests/support/png_decode.h"

namespace cpufold {
namespace {

using testing::decode_png;

// Pixels within `tolerance` of (r, g, b) in each channel.
std::size_t count_near(const testing::DecodedPng& png, int r, int g, int b, int tolerance = 12) {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 2 < png.rgb.size(); i += 3) {
    if (std::abs(png.rgb[i] - r) <= tolerance && std::abs(png.rgb[i + 1] - g) <= tolerance &&
        std::abs(png.rgb[i + 2] - b) <= tolerance)
      ++n;
  }
  return n;
}

std::vector<ProfilePlotLength> lengths(std::initializer_list<std::int64_t> ns) {
  std::vector<ProfilePlotLength> out;
  for (std::int64_t n : ns) {
    const auto d = static_cast<double>(n);
    const auto bytes = static_cast<std::size_t>(4e8 + 3e3 * d * d);
    out.push_back({n,
                   bytes,
                   static_cast<std::size_t>(static_cast<double>(bytes) * 1.04),
                   {{"load", std::size_t{400} << 20}, {"trunk", bytes}, {"heads", bytes / 2}}});
  }
  return out;
}

TEST(ProfilePlot, DrawsPredictedLineAndMeasuredPointsFrom64To2500Residues) {
  auto rows = lengths({64, 128, 256, 512, 765, 1024, 2500});
  rows.back().measured_bytes = 0;  // failed: a cross at its prediction
  rows.back().stages.clear();
  const auto png = decode_png(profile_plot_png("model_1_ptm", "512 MSA rows", rows));
  EXPECT_EQ(png.width, 1000);
  EXPECT_EQ(png.height, 720);
  EXPECT_GT(count_near(png, 31, 119, 180, 4), 500u) << "the predicted line";
  EXPECT_GT(count_near(png, 214, 39, 40, 4), 300u) << "the measured points";
  EXPECT_GT(count_near(png, 214, 240, 214, 0), 10000u) << "the 10% band of the ratio panel";
}

TEST(ProfilePlot, OneLengthAndNarrowRangesStillDraw) {
  const auto png = decode_png(profile_plot_png("t", "s", lengths({16})));
  EXPECT_EQ(png.width, 1000);
  EXPECT_GT(count_near(png, 214, 39, 40, 4), 20u);
}

// Blocks-only: each block's ratio in its own colour, the whole run's plan as a pale line.
TEST(ProfilePlot, SingleBlocksDrawEachBlocksRatioAndThePlan) {
  std::vector<ProfilePlotLength> rows;
  for (const std::int64_t n : {1000, 2500, 4000}) {
    const auto d = static_cast<double>(n);
    const auto extra = static_cast<std::size_t>(4e8 + 1.2e3 * d * d);
    const auto evo = static_cast<std::size_t>(4e8 + 1.0e3 * d * d);
    rows.push_back({n,
                    extra,
                    extra + extra / 50,
                    {{"load", std::size_t{400} << 20, 0},
                     {"extra-MSA block", extra + extra / 50, extra},
                     {"Evoformer block", evo - evo / 20, evo}},
                    static_cast<std::size_t>(4e8 + 3e3 * d * d)});
  }
  const auto png = decode_png(
      profile_plot_png("model_1_ptm", "single-block peaks", rows, ProfilePlotKind::single_blocks));
  EXPECT_EQ(png.width, 1000);
  EXPECT_GT(count_near(png, 140, 86, 75, 4), 100u) << "the extra-MSA block's ratios";
  EXPECT_GT(count_near(png, 227, 119, 194, 4), 100u) << "the Evoformer block's ratios";
  EXPECT_GT(count_near(png, 31, 119, 180, 4), 300u) << "the predicted line";
}

TEST(ProfilePlot, NothingToDrawIsAnInternalError) {
  EXPECT_THROW(profile_plot_png("t", "s", {}), InternalError);
  const std::vector<ProfilePlotLength> unplanned = {{64, 0, 0, {}}};
  EXPECT_THROW(profile_plot_png("t", "s", unplanned), InternalError);
}

}  // namespace
}  // namespace cpufold
