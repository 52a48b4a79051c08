// An 8-bit RGB raster and its PNG encoding (libpng, written to memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cpufold {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

// Row-major RGB pixels, (0, 0) at the top left. Writes outside the image are ignored, so
// drawing code can clip by simply drawing.
class RgbImage {
 public:
  RgbImage(int width, int height, Rgb background = {255, 255, 255});

  int width() const { return width_; }
  int height() const { return height_; }
  Rgb at(int x, int y) const;  // InternalError outside the image
  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    std::uint8_t* p = &pixels_[3 * (static_cast<std::size_t>(y) * width_ + x)];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  // Fills [x0, x1) x [y0, y1), clipped to the image.
  void fill_rect(int x0, int y0, int x1, int y1, Rgb c);
  const std::uint8_t* row(int y) const {
    return &pixels_[3 * static_cast<std::size_t>(y) * width_];
  }

 private:
  int width_, height_;
  std::vector<std::uint8_t> pixels_;  // [height, width, 3]
};

// The image as PNG bytes (8-bit RGB, no interlacing). InternalError when libpng fails.
std::string encode_png(const RgbImage& image);

}  // namespace cpufold
