#include "pipeline/output/plot_canvas.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "memory/error.h"
#include "tests/support/png_decode.h"

namespace cpufold {
namespace {

using testing::decode_png;
using testing::DecodedPng;

Rgb pixel(const DecodedPng& png, int x, int y) {
  const std::size_t at = 3 * (static_cast<std::size_t>(y) * png.width + x);
  return {png.rgb[at], png.rgb[at + 1], png.rgb[at + 2]};
}

constexpr Rgb kBackground{1, 2, 3};

TEST(PlotCanvas, PixelsComeBackExactFromThePng) {
  for (const auto& [w, h] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{255, 17}}) {
    Canvas canvas(w, h, kBackground);
    std::vector<Rgb> pixels;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        pixels.push_back({static_cast<std::uint8_t>(x * 37 + y), static_cast<std::uint8_t>(y * 91),
                          static_cast<std::uint8_t>((x ^ y) * 13)});
      }
    }
    canvas.put_pixels(0, 0, w, h, pixels);
    const std::string png = canvas.png();
    ASSERT_EQ(png.substr(1, 3), "PNG");
    const DecodedPng decoded = decode_png(png);
    ASSERT_EQ(decoded.width, w);
    ASSERT_EQ(decoded.height, h);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        ASSERT_EQ(pixel(decoded, x, y), pixels[static_cast<std::size_t>(y) * w + x])
            << w << "x" << h << " at " << x << "," << y;
      }
    }
  }
}

TEST(PlotCanvas, WholePixelShapesAreExactAndDrawingOutsideIsClipped) {
  Canvas canvas(8, 6, kBackground);
  canvas.fill_rect(-5, -5, 2, 1, Rgb{7, 7, 7});
  canvas.frame(3, 1, 6, 4, Rgb{0, 0, 0});
  canvas.hline(-3, 1, 5, Rgb{9, 9, 9});
  const std::vector<Rgb> block(9, Rgb{200, 100, 50});
  canvas.put_pixels(7, 5, 3, 3, block);  // all but one pixel outside
  const DecodedPng png = decode_png(canvas.png());
  EXPECT_EQ(pixel(png, 0, 0), (Rgb{7, 7, 7}));
  EXPECT_EQ(pixel(png, 1, 0), (Rgb{7, 7, 7}));
  EXPECT_EQ(pixel(png, 2, 0), kBackground);
  EXPECT_EQ(pixel(png, 0, 1), kBackground);
  for (int x = 3; x <= 6; ++x) {  // the frame: whole pixels, no blur either side
    EXPECT_EQ(pixel(png, x, 1), (Rgb{0, 0, 0})) << x;
    EXPECT_EQ(pixel(png, x, 4), (Rgb{0, 0, 0})) << x;
    EXPECT_EQ(pixel(png, x, 0), kBackground) << x;
  }
  EXPECT_EQ(pixel(png, 4, 2), kBackground);
  EXPECT_EQ(pixel(png, 2, 2), kBackground);
  EXPECT_EQ(pixel(png, 1, 5), (Rgb{9, 9, 9}));
  EXPECT_EQ(pixel(png, 2, 5), kBackground);
  EXPECT_EQ(pixel(png, 7, 5), (Rgb{200, 100, 50}));
  EXPECT_EQ(pixel(png, 6, 5), kBackground);
  EXPECT_EQ(pixel(png, 7, 4), kBackground);
}

TEST(PlotCanvas, BadSizesAreInternalErrors) {
  EXPECT_THROW(Canvas(0, 5, kBackground), InternalError);
  EXPECT_THROW(Canvas(5, -1, kBackground), InternalError);
  Canvas canvas(4, 4, kBackground);
  const std::vector<Rgb> three(3);
  EXPECT_THROW(canvas.put_pixels(0, 0, 2, 2, three), InternalError);
}

// The bounding box of the pixels that differ from the background.
struct Ink {
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;
};
Ink ink(const DecodedPng& png, Rgb background) {
  Ink box;
  for (int y = 0; y < png.height; ++y) {
    for (int x = 0; x < png.width; ++x) {
      if (pixel(png, x, y) == background) continue;
      box.x0 = std::min(box.x0, x), box.x1 = std::max(box.x1, x);
      box.y0 = std::min(box.y0, y), box.y1 = std::max(box.y1, y);
    }
  }
  return box;
}

TEST(PlotCanvas, TextIsAnchoredAndTurned) {
  const Rgb white{255, 255, 255};
  Canvas across(300, 100, white), up(100, 300, white);
  across.text(150, 50, "Sequence 123", 15, Rgb{0, 0, 0}, Anchor::centre);
  up.text_up(50, 150, "Sequence 123", 15, Rgb{0, 0, 0}, Anchor::centre);
  const Ink a = ink(decode_png(across.png()), white), u = ink(decode_png(up.png()), white);
  // Reading across: wide, centred on (150, 50); turned: the same box on its side.
  EXPECT_GT(a.x1 - a.x0, 4 * (a.y1 - a.y0));
  EXPECT_NEAR((a.x0 + a.x1) / 2.0, 150, 3);
  EXPECT_NEAR((a.y0 + a.y1) / 2.0, 50, 4);
  EXPECT_GT(u.y1 - u.y0, 4 * (u.x1 - u.x0));
  EXPECT_NEAR((u.y0 + u.y1) / 2.0, 150, 3);
  EXPECT_NEAR((u.x0 + u.x1) / 2.0, 50, 4);
  EXPECT_NEAR(a.x1 - a.x0, u.y1 - u.y0, 2);
}

TEST(PlotCanvas, FittedTextIsCutBetweenCodePoints) {
  // Two-, three- and four-byte code points: a cut inside one would be invalid UTF-8, which
  // cairo refuses (png() throws).
  std::string title;
  for (int i = 0; i < 100; ++i) title += "Å€𝔸x";
  for (double max_width : {40.0, 41.0, 43.0, 47.0, 53.0, 120.0}) {
    Canvas canvas(200, 40, Rgb{255, 255, 255});
    canvas.fitted_text(100, 20, title, max_width, 15, Rgb{0, 0, 0});
    const Ink box = ink(decode_png(canvas.png()), Rgb{255, 255, 255});
    EXPECT_LE(box.x1 - box.x0, max_width + 1) << max_width;
    EXPECT_GT(box.x1 - box.x0, max_width / 2) << max_width;
  }
}

}  // namespace
}  // namespace cpufold
