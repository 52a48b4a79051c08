#include "tests/support/png_decode.h"

#include <gtest/gtest.h>
#include <png.h>

#include <cstring>
#include <set>

namespace cpufold::testing {

DecodedPng decode_png(const std::string& bytes) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    ADD_FAILURE() << "libpng cannot read the PNG: " << image.message;
    return {};
  }
  image.format = PNG_FORMAT_RGB;
  DecodedPng out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) {
    ADD_FAILURE() << "libpng cannot decode the PNG: " << image.message;
    png_image_free(&image);
    return {};
  }
  return out;
}

std::size_t distinct_colours(const DecodedPng& png) {
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i + 2 < png.rgb.size(); i += 3) {
    colours.insert(static_cast<std::uint32_t>(png.rgb[i]) << 16 |
                   static_cast<std::uint32_t>(png.rgb[i + 1]) << 8 | png.rgb[i + 2]);
  }
  return colours.size();
}

}  // namespace cpufold::testing
