#include "pipeline/plots.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/png_image.h"
#include "memory/arena.h"
#include "memory/error.h"
#include "memory/tier.h"
#include "tests/support/png_decode.h"

namespace cpufold {
namespace {

using testing::decode_png;
using testing::distinct_colours;

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

}  // namespace
}  // namespace cpufold

namespace cpufold {
namespace {

Rgb pixel(const testing::DecodedPng& png, int x, int y) {
  const std::size_t at = 3 * (static_cast<std::size_t>(y) * png.width + x);
  return {png.rgb[at], png.rgb[at + 1], png.rgb[at + 2]};
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

TEST(CoveragePlot, MsaOfTheWrongSizeIsAnInternalError) {
  const std::vector<std::int32_t> msa = {0, 1, 2};
  EXPECT_THROW(coverage_plot_png("job", msa, 2, 2), InternalError);
}

}  // namespace
}  // namespace cpufold
