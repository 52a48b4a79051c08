#include "pipeline/output/plot_canvas.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <numbers>

#include "memory/error.h"

namespace cpufold {
namespace {

// fonts-dejavu-core; fontconfig substitutes the nearest sans-serif face when it is absent
// (and cairo its built-in font when there is none at all, which lacks "Å").
constexpr const char* kFontFamily = "DejaVu Sans";

void check(cairo_status_t status, const char* what) {
  if (status != CAIRO_STATUS_SUCCESS) {
    throw InternalError(std::string("plot: ") + what + ": " + cairo_status_to_string(status));
  }
}

// `text` cut to at most `bytes`, dropping a code point the cut would split.
void cut_utf8(std::string& text, std::size_t bytes) {
  text.resize(std::min(bytes, text.size()));
  std::size_t lead = text.size();
  while (lead > 0 && (static_cast<unsigned char>(text[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead == 0) return;
  const auto b = static_cast<unsigned char>(text[lead - 1]);
  const std::size_t length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
  if (text.size() - (lead - 1) < length) text.resize(lead - 1);
}

struct PngSink {
  std::string* bytes;
};

cairo_status_t append_png(void* closure, const unsigned char* data, unsigned int length) {
  try {
    static_cast<PngSink*>(closure)->bytes->append(reinterpret_cast<const char*>(data), length);
  } catch (const std::bad_alloc&) {
    return CAIRO_STATUS_NO_MEMORY;  // no C++ exception crosses cairo's C frames
  }
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

Rgb mix(Rgb a, Rgb b, double t) {
  const auto ch = [t](int u, int v) {
    return static_cast<std::uint8_t>(std::lround(u + (v - u) * std::clamp(t, 0.0, 1.0)));
  };
  return {ch(a.r, b.r), ch(a.g, b.g), ch(a.b, b.b)};
}

void Canvas::SurfaceDeleter::operator()(cairo_surface_t* s) const {
  cairo_surface_destroy(s);
}
void Canvas::ContextDeleter::operator()(cairo_t* cr) const {
  cairo_destroy(cr);
}

Canvas::Canvas(int width, int height, Rgb background) : width_(width), height_(height) {
  if (width <= 0 || height <= 0 || width > 32767 || height > 32767) {
    throw InternalError("plot: invalid canvas size " + std::to_string(width) + "x" +
                        std::to_string(height));
  }
  surface_.reset(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height));
  check(cairo_surface_status(surface_.get()), "cannot create the image");
  cr_.reset(cairo_create(surface_.get()));
  check(cairo_status(cr_.get()), "cannot draw on the image");

  // Unhinted metrics: text widths scale with the size, so fitting and centring are exact.
  cairo_font_options_t* options = cairo_font_options_create();
  cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
  cairo_set_font_options(cr_.get(), options);
  cairo_font_options_destroy(options);
  cairo_select_font_face(cr_.get(), kFontFamily, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  fill_rect(0, 0, width, height, background);
}

void Canvas::set_colour(Rgb c) const {
  cairo_set_source_rgb(cr_.get(), c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

void Canvas::set_font(double size) const {
  cairo_set_font_size(cr_.get(), size);
}

void Canvas::fill_rect(double x0, double y0, double x1, double y1, Rgb c) {
  if (!(x1 > x0 && y1 > y0)) return;
  set_colour(c);
  cairo_rectangle(cr_.get(), x0, y0, x1 - x0, y1 - y0);
  cairo_fill(cr_.get());
}

void Canvas::frame(int x0, int y0, int x1, int y1, Rgb c) {
  set_colour(c);
  cairo_set_line_width(cr_.get(), 1.0);
  cairo_rectangle(cr_.get(), x0 + 0.5, y0 + 0.5, x1 - x0, y1 - y0);  // through pixel centres
  cairo_stroke(cr_.get());
}

void Canvas::hline(int x0, int x1, int y, Rgb c) {
  fill_rect(std::min(x0, x1), y, std::max(x0, x1) + 1, y + 1, c);
}

void Canvas::vline(int x, int y0, int y1, Rgb c) {
  fill_rect(x, std::min(y0, y1), x + 1, std::max(y0, y1) + 1, c);
}

void Canvas::polyline(std::span<const Point> points, Rgb c, double width) {
  if (points.empty()) return;
  set_colour(c);
  cairo_set_line_width(cr_.get(), width);
  cairo_set_line_cap(cr_.get(), CAIRO_LINE_CAP_ROUND);
  cairo_set_line_join(cr_.get(), CAIRO_LINE_JOIN_ROUND);
  cairo_move_to(cr_.get(), points[0].x, points[0].y);
  // A lone point is a zero-length segment, which a round cap draws as a dot.
  for (const Point& p : points.size() == 1 ? points : points.subspan(1)) {
    cairo_line_to(cr_.get(), p.x, p.y);
  }
  cairo_stroke(cr_.get());
}

void Canvas::put_pixels(int x, int y, int w, int h, std::span<const Rgb> pixels) {
  if (w < 0 || h < 0 ||
      pixels.size() != static_cast<std::size_t>(w) * static_cast<std::size_t>(h)) {
    throw InternalError("plot: " + std::to_string(pixels.size()) + " pixels for a " +
                        std::to_string(w) + "x" + std::to_string(h) + " block");
  }
  cairo_surface_flush(surface_.get());
  unsigned char* data = cairo_image_surface_get_data(surface_.get());
  const int stride = cairo_image_surface_get_stride(surface_.get());
  const int x0 = std::max(x, 0), x1 = std::min(x + w, width_);
  const int y0 = std::max(y, 0), y1 = std::min(y + h, height_);
  for (int py = y0; py < y1; ++py) {
    unsigned char* row = data + static_cast<std::size_t>(py) * stride;
    for (int px = x0; px < x1; ++px) {
      const Rgb c = pixels[static_cast<std::size_t>(py - y) * w + (px - x)];
      const std::uint32_t v =
          0xFF000000u | std::uint32_t{c.r} << 16 | std::uint32_t{c.g} << 8 | c.b;
      std::memcpy(row + 4 * static_cast<std::size_t>(px), &v, sizeof v);  // native-endian xRGB
    }
  }
  if (x1 > x0 && y1 > y0) {
    cairo_surface_mark_dirty_rectangle(surface_.get(), x0, y0, x1 - x0, y1 - y0);
  }
}

double Canvas::text_width(std::string_view text, double size) const {
  const std::string s(text);
  set_font(size);
  cairo_text_extents_t e;
  cairo_text_extents(cr_.get(), s.c_str(), &e);
  return e.x_advance;
}

void Canvas::show_text(double x, double y, std::string_view text, double size, Rgb c, Anchor anchor,
                       double angle) {
  const std::string s(text);
  set_font(size);
  cairo_text_extents_t e, caps;
  cairo_text_extents(cr_.get(), s.c_str(), &e);
  cairo_text_extents(cr_.get(), "H", &caps);
  const double along = anchor == Anchor::start    ? 0.0
                       : anchor == Anchor::centre ? -e.x_advance / 2
                                                  : -e.x_advance;
  cairo_save(cr_.get());
  cairo_translate(cr_.get(), x, y);
  cairo_rotate(cr_.get(), angle);
  set_colour(c);
  // Centre capital letters and digits on y: the baseline sits half a cap height below.
  cairo_move_to(cr_.get(), along, -caps.y_bearing / 2);
  cairo_show_text(cr_.get(), s.c_str());
  cairo_restore(cr_.get());
}

void Canvas::text(double x, double y, std::string_view text, double size, Rgb c, Anchor anchor) {
  show_text(x, y, text, size, c, anchor, 0.0);
}

void Canvas::text_up(double x, double y, std::string_view text, double size, Rgb c, Anchor anchor) {
  show_text(x, y, text, size, c, anchor, -std::numbers::pi / 2);
}

void Canvas::fitted_text(double centre_x, double y, std::string text, double max_width, double size,
                         Rgb c) {
  const double min_size = size / 2;
  while (size > min_size && text_width(text, size) > max_width) {
    size = std::max(min_size, size * 0.9);
  }
  if (text_width(text, size) > max_width) {
    // The longest prefix (whole code points) that fits with the ellipsis, by bisection.
    const std::string ellipsis = "\u2026";
    std::size_t fits = 0, too_long = text.size();
    while (too_long - fits > 1) {
      const std::size_t mid = (fits + too_long) / 2;
      std::string prefix = text;
      cut_utf8(prefix, mid);
      (text_width(prefix + ellipsis, size) <= max_width ? fits : too_long) = mid;
    }
    cut_utf8(text, fits);
    text += ellipsis;
  }
  this->text(centre_x, y, text, size, c, Anchor::centre);
}

std::string Canvas::png() const {
  cairo_surface_flush(surface_.get());
  check(cairo_status(cr_.get()), "drawing failed");
  std::string bytes;
  PngSink sink{&bytes};
  check(cairo_surface_write_to_png_stream(surface_.get(), append_png, &sink),
        "cannot encode the PNG");
  return bytes;
}

}  // namespace cpufold
