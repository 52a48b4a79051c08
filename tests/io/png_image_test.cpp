#include "io/png_image.h"

#include <gtest/gtest.h>

#include <string>

#include "memory/error.h"
#include "tests/support/png_decode.h"

namespace cpufold {
namespace {

using testing::decode_png;

TEST(PngImage, EncodeThenDecodeGivesBackEveryPixel) {
  for (const auto& [w, h] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{255, 17}}) {
    RgbImage img(w, h);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        img.set(x, y,
                Rgb{static_cast<std::uint8_t>(x * 37 + y), static_cast<std::uint8_t>(y * 91),
                    static_cast<std::uint8_t>((x ^ y) * 13)});
      }
    }
    const std::string png = encode_png(img);
    ASSERT_EQ(png.substr(1, 3), "PNG");
    const auto decoded = decode_png(png);
    ASSERT_EQ(decoded.width, w);
    ASSERT_EQ(decoded.height, h);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const std::size_t i = 3 * (static_cast<std::size_t>(y) * w + x);
        const Rgb got{decoded.rgb[i], decoded.rgb[i + 1], decoded.rgb[i + 2]};
        ASSERT_EQ(got, img.at(x, y)) << w << "x" << h << " at " << x << "," << y;
      }
    }
  }
}

TEST(PngImage, DrawingOutsideIsClippedAndAtOutsideThrows) {
  RgbImage img(4, 3, Rgb{1, 2, 3});
  img.set(-1, 0, Rgb{9, 9, 9});
  img.set(4, 2, Rgb{9, 9, 9});
  img.fill_rect(-5, -5, 2, 1, Rgb{7, 7, 7});
  EXPECT_EQ(img.at(0, 0), (Rgb{7, 7, 7}));
  EXPECT_EQ(img.at(1, 0), (Rgb{7, 7, 7}));
  EXPECT_EQ(img.at(2, 0), (Rgb{1, 2, 3}));
  EXPECT_EQ(img.at(0, 1), (Rgb{1, 2, 3}));
  EXPECT_THROW(img.at(4, 0), InternalError);
  EXPECT_THROW(RgbImage(0, 5), InternalError);
}

}  // namespace
}  // namespace cpufold
