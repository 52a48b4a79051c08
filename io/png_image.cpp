#include "io/png_image.h"

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <new>
#include <string>

#include "memory/error.h"

namespace cpufold {

RgbImage::RgbImage(int width, int height, Rgb background) : width_(width), height_(height) {
  if (width <= 0 || height <= 0) {
    throw InternalError("RgbImage: invalid size " + std::to_string(width) + "x" +
                        std::to_string(height));
  }
  pixels_.resize(3 * static_cast<std::size_t>(width) * height);
  fill_rect(0, 0, width, height, background);
}

Rgb RgbImage::at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) {
    throw InternalError("RgbImage: pixel (" + std::to_string(x) + ", " + std::to_string(y) +
                        ") outside a " + std::to_string(width_) + "x" + std::to_string(height_) +
                        " image");
  }
  const std::uint8_t* p = &pixels_[3 * (static_cast<std::size_t>(y) * width_ + x)];
  return {p[0], p[1], p[2]};
}

void RgbImage::fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
  x0 = std::max(x0, 0), y0 = std::max(y0, 0);
  x1 = std::min(x1, width_), y1 = std::min(y1, height_);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) set(x, y, c);
  }
}

namespace {

// What libpng's callbacks reach. Trivially destructible: a longjmp may skip over it.
struct PngSink {
  std::string* bytes = nullptr;
  bool out_of_memory = false;
  char message[256] = {};
};

// libpng calls this on any error and must not return: keep the message, jump back to
// write_png's setjmp. No C++ exception ever crosses libpng's C frames.
void on_error(png_structp png, png_const_charp message) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof sink->message, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // nothing we write can warn usefully

void on_write(png_structp png, png_bytep data, png_size_t size) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  try {
    sink->bytes->append(reinterpret_cast<const char*>(data), size);
  } catch (const std::bad_alloc&) {
    sink->out_of_memory = true;
  }
  if (sink->out_of_memory) png_error(png, "out of memory");  // after the handler has ended
}

void on_flush(png_structp) {}

// The only function with a setjmp. Nothing in it has a destructor and nothing it changes is
// read after a longjmp, so jumping back here is well defined.
bool write_png(png_structp png, png_infop info, PngSink* sink, int width, int height,
               png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, sink, on_write, on_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  return true;
}

}  // namespace

std::string encode_png(const RgbImage& image) {
  std::string bytes;
  PngSink sink;
  sink.bytes = &bytes;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, on_error, on_warning);
  if (png == nullptr) throw InternalError("PNG encoder: libpng could not start (out of memory?)");
  png_infop info = png_create_info_struct(png);
  struct Destroy {
    png_structp* png;
    png_infop* info;
    ~Destroy() { png_destroy_write_struct(png, info); }
  } destroy{&png, &info};
  if (info == nullptr) throw InternalError("PNG encoder: libpng could not start (out of memory?)");

  std::vector<png_bytep> rows(static_cast<std::size_t>(image.height()));
  for (int y = 0; y < image.height(); ++y) {
    // libpng takes non-const rows but only reads them when no transform is set.
    rows[static_cast<std::size_t>(y)] = const_cast<png_bytep>(image.row(y));
  }
  if (!write_png(png, info, &sink, image.width(), image.height(), rows.data())) {
    throw InternalError(std::string("PNG encoder: ") + sink.message);
  }
  return bytes;
}

}  // namespace cpufold
