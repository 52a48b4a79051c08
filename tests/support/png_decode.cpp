#include "tests/support/png_decode.h"

#include <cairo.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <set>

namespace cpufold::testing {
namespace {

struct ByteSource {
  const std::string* bytes;
  std::size_t at = 0;
};

cairo_status_t read_bytes(void* closure, unsigned char* data, unsigned int length) {
  auto* src = static_cast<ByteSource*>(closure);
  if (src->bytes->size() - src->at < length) return CAIRO_STATUS_READ_ERROR;
  std::memcpy(data, src->bytes->data() + src->at, length);
  src->at += length;
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

DecodedPng decode_png(const std::string& bytes) {
  ByteSource src{&bytes};
  const std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
      cairo_image_surface_create_from_png_stream(read_bytes, &src), cairo_surface_destroy);
  if (const cairo_status_t status = cairo_surface_status(surface.get()); status) {
    ADD_FAILURE() << "cairo cannot read the PNG: " << cairo_status_to_string(status);
    return {};
  }
  const cairo_format_t format = cairo_image_surface_get_format(surface.get());
  if (format != CAIRO_FORMAT_RGB24 && format != CAIRO_FORMAT_ARGB32) {
    ADD_FAILURE() << "the PNG is not 8-bit RGB(A) (cairo format " << format << ")";
    return {};
  }
  DecodedPng out;
  out.width = cairo_image_surface_get_width(surface.get());
  out.height = cairo_image_surface_get_height(surface.get());
  out.rgb.resize(3 * static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height));
  const int stride = cairo_image_surface_get_stride(surface.get());
  const unsigned char* data = cairo_image_surface_get_data(surface.get());
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      std::uint32_t px;  // native-endian 0xAARRGGBB (alpha unused in RGB24)
      std::memcpy(&px, data + static_cast<std::size_t>(y) * stride + 4 * x, sizeof px);
      if (format == CAIRO_FORMAT_ARGB32 && px >> 24 != 0xff) {
        ADD_FAILURE() << "the PNG is not opaque at (" << x << ", " << y << ")";
        return {};
      }
      std::uint8_t* p = &out.rgb[3 * (static_cast<std::size_t>(y) * out.width + x)];
      p[0] = static_cast<std::uint8_t>(px >> 16);
      p[1] = static_cast<std::uint8_t>(px >> 8);
      p[2] = static_cast<std::uint8_t>(px);
    }
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
