#include "pipeline/output/plots.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/error.h"
#include "memory/tier.h"
#include "pipeline/output/plot_canvas.h"
#include "tests/support/png_decode.h"

namespace cpufold {
namespace {

using testing::decode_png;
using testing::distinct_colours;

Rgb pixel(const testing::DecodedPng& png, int x, int y) {
  const std::size_t at = 3 * (static_cast<std::size_t>(y) * png.width + x);
  return {png.rgb[at], png.rgb[at + 1], png.rgb[at + 2]};
}

std::vector<float> plddt_values(std::int64_t n, int model) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] =
        60.0f + 35.0f * std::sin(0.05f * static_cast<float>(i) + static_cast<float>(model));
  }
  return v;
}

TEST(PlddtPlot, SizeIsFixedAndPixelsVary) {
  for (std::int64_t n : {1, 7, 300, 5000}) {
    for (int models : {1, 5}) {
      std::vector<std::vector<float>> values;
      std::vector<PlddtCurve> curves;
      for (int k = 0; k < models; ++k) values.push_back(plddt_values(n, k));
      for (int k = 0; k < models; ++k) {
        curves.push_back({"rank_00" + std::to_string(k + 1) + " model_" + std::to_string(k + 1),
                          values[static_cast<std::size_t>(k)]});
      }
      const auto png = decode_png(plddt_plot_png("job " + std::to_string(n), curves));
      EXPECT_EQ(png.width, 800) << n;
      EXPECT_EQ(png.height, 500) << n;
      // Background, bands, text, grid and one colour per curve at least.
      EXPECT_GT(distinct_colours(png), 8u + static_cast<std::size_t>(models)) << n;
    }
  }
}

TEST(PlddtPlot, NoCurvesIsAnInternalError) {
  EXPECT_THROW(plddt_plot_png("x", {}), InternalError);
}

struct PaeFixture {
  Arena arena{"pae plot test", dram_tier(), 200u << 20};
  std::vector<PaeMatrix> matrices;
  PaeFixture(std::int64_t n, int models) {
    for (int k = 0; k < models; ++k) {
      Tensor t = arena.allocate(DType::f32, Shape{n, n});
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          t.data_as<float>()[i * n + j] =
              std::min(31.0f, 0.5f + 0.2f * std::abs(static_cast<float>(i - j)) + k);
        }
      }
      matrices.push_back({"model_" + std::to_string(k + 1), t, 31.75f});
    }
  }
};

TEST(PaePlot, OnePanelPerModelOfFixedSize) {
  for (std::int64_t n : {1, 7, 300}) {
    for (int models : {1, 2}) {
      PaeFixture f(n, models);
      const auto png = decode_png(pae_plot_png("job", f.matrices));
      EXPECT_EQ(png.width, 450 * models + 130) << n;
      EXPECT_EQ(png.height, 500) << n;
      EXPECT_GT(distinct_colours(png), 10u) << n;
    }
  }
}

TEST(PaePlot, LargeMatrixIsAveragedDownNotEnlarged) {
  PaeFixture big(3000, 1), small(7, 1);
  const std::string png_big = pae_plot_png("big", big.matrices);
  const auto decoded = decode_png(png_big);
  const auto decoded_small = decode_png(pae_plot_png("small", small.matrices));
  EXPECT_EQ(decoded.width, decoded_small.width);
  EXPECT_EQ(decoded.height, decoded_small.height);
  EXPECT_LT(png_big.size(), 1u << 20);
  // The diagonal band (low error, dark green) blends into lighter values off the diagonal.
  EXPECT_GT(distinct_colours(decoded), 30u);
}

TEST(CoveragePlot, RowsColouredByIdentityMostSimilarOnTopGapsWhite) {
  // Query ACDE (HHblits ids 0 4 3 6), a copy of it (identity 1), and a row sharing nothing
  // with it whose first column is a gap (21): identity 0.
  const std::vector<std::int32_t> msa = {0, 4, 3, 6, 0, 4, 3, 6, 21, 1, 2, 5};
  const auto png = testing::decode_png(coverage_plot_png("job", msa, 3, 4));
  ASSERT_EQ(png.width, 800);
  ASSERT_EQ(png.height, 500);
  // The plot spans x 80..650, y 50..440: the top two thirds hold the identical rows
  // (rainbow_r(1): violet), the bottom third the other row (rainbow_r(0): red).
  EXPECT_EQ(pixel(png, 400, 120), (Rgb{128, 0, 255}));
  EXPECT_EQ(pixel(png, 400, 420), (Rgb{255, 0, 0}));
  EXPECT_EQ(pixel(png, 120, 420), (Rgb{255, 255, 255}));  // the gap
  EXPECT_EQ(pixel(png, 120, 120), (Rgb{128, 0, 255}));
}

int distance(Rgb a, Rgb b) {
  return std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b);
}

// The smallest colour distance to `c` among the pixels of column x, rows [y0, y1).
int nearest_in_column(const testing::DecodedPng& png, int x, int y0, int y1, Rgb c) {
  int best = 1 << 30;
  for (int y = y0; y < y1; ++y) best = std::min(best, distance(pixel(png, x, y), c));
  return best;
}

constexpr Rgb kRank1{31, 119, 180};  // tab10 blue, the first curve colour

TEST(PlddtPlot, RankOneIsDrawnOverAnIdenticalRankTwo) {
  const std::vector<float> same(50, 55.0f);
  const PlddtCurve curves[] = {{"rank_001 model_3", same}, {"rank_002 model_1", same}};
  const auto png = decode_png(plddt_plot_png("job", curves));
  // The plot spans x 70..690, y 50..440; the legend sits bottom left, away from x = 600.
  EXPECT_LT(nearest_in_column(png, 600, 51, 440, kRank1), 12);
}

TEST(PlddtPlot, NonFiniteValuesLeaveAGapInTheCurve) {
  std::vector<float> v(50, 55.0f);
  for (std::size_t i = 20; i < 31; ++i) v[i] = std::nanf("");
  v[25] = INFINITY;
  const PlddtCurve curves[] = {{"rank_001 model_1", v}};
  const auto png = decode_png(plddt_plot_png("job", curves));
  // x of residue r: 70 + (r - 1) / 49 * 620. Residues 23..28 hold no curve; 10 and 40 do.
  for (int residue : {23, 25, 28}) {
    const int x = 70 + (residue - 1) * 620 / 49;
    EXPECT_GT(nearest_in_column(png, x, 51, 440, kRank1), 60) << residue;
  }
  for (int residue : {10, 40}) {
    const int x = 70 + (residue - 1) * 620 / 49;
    EXPECT_LT(nearest_in_column(png, x, 51, 440, kRank1), 12) << residue;
  }
}

TEST(PaePlot, ZeroErrorIsDarkGreenAndMaxErrorNearWhite) {
  Arena arena{"pae plot test", dram_tier(), 1u << 20};
  Tensor t = arena.allocate(DType::f32, Shape{2, 2});
  const float values[] = {0.0f, 31.75f, 31.75f, 0.0f};
  std::copy(std::begin(values), std::end(values), t.data_as<float>());
  const PaeMatrix m[] = {{"model_1", t, 31.75f}};
  const auto png = decode_png(pae_plot_png("job", m));
  // The 340-pixel heatmap sits at x 80, y 80: residue (1, 1) covers its top-left quarter.
  EXPECT_EQ(pixel(png, 80 + 85, 80 + 85), (Rgb{0, 68, 27}));
  EXPECT_EQ(pixel(png, 80 + 255, 80 + 85), (Rgb{247, 252, 245}));
  EXPECT_EQ(pixel(png, 80 + 85, 80 + 255), (Rgb{247, 252, 245}));
}

TEST(PaePlot, NonFiniteErrorsAreGreyAndNamedNotShownAsConfident) {
  Arena arena{"pae plot test", dram_tier(), 1u << 20};
  Tensor t = arena.allocate(DType::f32, Shape{4, 4});
  for (int i = 0; i < 16; ++i) t.data_as<float>()[i] = i < 8 ? std::nanf("") : 2.0f;
  t.data_as<float>()[0] = INFINITY;
  const PaeMatrix m[] = {{"model_1", t, 31.75f}};
  const auto png = decode_png(pae_plot_png("job", m));
  // Rows 1-2 (top half of the heatmap) are not finite: a neutral grey that is not on the
  // green scale; rows 3-4 hold 2 Å, dark green.
  const Rgb missing = pixel(png, 80 + 170, 80 + 40);
  EXPECT_EQ(missing.r, missing.g);
  EXPECT_EQ(missing.g, missing.b);
  EXPECT_LT(missing.r, 220);
  EXPECT_EQ(pixel(png, 80 + 40, 80 + 40), missing);  // the Inf cell too
  const Rgb finite = pixel(png, 80 + 170, 80 + 300);
  EXPECT_GT(finite.g, finite.r + 40);
  // Its swatch, beside the colour bar (right of the 450-pixel panel).
  int swatch = 0;
  for (int y = 0; y < png.height; ++y) {
    for (int x = 450; x < png.width; ++x) swatch += pixel(png, x, y) == missing;
  }
  EXPECT_GT(swatch, 50);
}

TEST(Plots, TextIsAntialiased) {
  const std::vector<float> v(10, 80.0f);
  const PlddtCurve curves[] = {{"rank_001 model_1", v}};
  const auto png = decode_png(plddt_plot_png("Job Title", curves));
  // The title band (above the plot, y < 45) holds only text: its glyph edges blend into the
  // background in many shades, where a bitmap font has one colour on white.
  testing::DecodedPng title{png.width, 45, {png.rgb.begin(), png.rgb.begin() + 3 * 45 * 800}};
  EXPECT_GT(distinct_colours(title), 8u);
}

TEST(Plots, LongTitleIsFittedInsideTheImage) {
  const std::vector<float> v(10, 80.0f);
  const PlddtCurve curves[] = {{"rank_001 model_1", v}};
  const auto png = decode_png(plddt_plot_png(std::string(300, 'W'), curves));
  int inked = 0, edge = 0;
  for (int y = 0; y < 45; ++y) {
    for (int x = 0; x < png.width; ++x) {
      const bool ink = !(pixel(png, x, y) == Rgb{255, 255, 255});
      inked += ink;
      edge += ink && (x < 4 || x >= png.width - 4);
    }
  }
  EXPECT_GT(inked, 200);
  EXPECT_EQ(edge, 0);
}

TEST(CoveragePlot, MsaOfTheWrongSizeIsAnInternalError) {
  const std::vector<std::int32_t> msa = {0, 1, 2};
  EXPECT_THROW(coverage_plot_png("job", msa, 2, 2), InternalError);
}

}  // namespace
}  // namespace cpufold
