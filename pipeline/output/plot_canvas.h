// A raster to draw the plots on (cairo, antialiased, text in DejaVu Sans) and its PNG bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

typedef struct _cairo cairo_t;
typedef struct _cairo_surface cairo_surface_t;

namespace cpufold {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

// a at t = 0 to b at t = 1 (t clamped).
Rgb mix(Rgb a, Rgb b, double t);

struct Point {
  double x, y;
};

enum class Anchor { start, centre, end };  // where (x, y) sits along the text's run

// An opaque RGB image, (0, 0) at the top left, one unit a pixel: pixel (x, y) covers
// [x, x + 1) x [y, y + 1). Drawing outside is clipped. Lines and text are antialiased;
// rectangles on whole pixels are exact.
class Canvas {
 public:
  Canvas(int width, int height, Rgb background);

  int width() const { return width_; }
  int height() const { return height_; }

  // Pixels [x0, x1) x [y0, y1).
  void fill_rect(double x0, double y0, double x1, double y1, Rgb c);
  // One-pixel outline through the pixels x0..x1, y0..y1 (inclusive), crisp.
  void frame(int x0, int y0, int x1, int y1, Rgb c);
  // A one-pixel horizontal or vertical segment through whole pixels, e.g. a tick or grid line.
  void hline(int x0, int x1, int y, Rgb c);
  void vline(int x, int y0, int y1, Rgb c);
  // A polyline of `width` with round joins and caps (a single point is a dot).
  void polyline(std::span<const Point> points, Rgb c, double width);

  // `pixels` [h, w] row-major copied 1:1 with its top-left pixel at (x, y).
  void put_pixels(int x, int y, int w, int h, std::span<const Rgb> pixels);

  // Text of `size` pixels (em square), vertically centred on y; `anchor` says whether x is
  // its left end, middle or right end.
  void text(double x, double y, std::string_view text, double size, Rgb c,
            Anchor anchor = Anchor::start);
  // The same, turned to read bottom to top (y-axis labels); `anchor` is along the run, so
  // Anchor::start puts the text's first letter at y.
  void text_up(double x, double y, std::string_view text, double size, Rgb c,
               Anchor anchor = Anchor::centre);
  // Horizontal text centred on x within `max_width`: at `size` if it fits, else smaller
  // (down to half), else cut with an ellipsis.
  void fitted_text(double centre_x, double y, std::string text, double max_width, double size,
                   Rgb c);
  double text_width(std::string_view text, double size) const;

  // The image as PNG bytes (8-bit RGB). InternalError naming cairo's status when drawing or
  // encoding failed.
  std::string png() const;

 private:
  struct SurfaceDeleter {
    void operator()(cairo_surface_t* s) const;
  };
  struct ContextDeleter {
    void operator()(cairo_t* cr) const;
  };
  void set_colour(Rgb c) const;
  void set_font(double size) const;
  void show_text(double x, double y, std::string_view text, double size, Rgb c, Anchor anchor,
                 double angle);

  int width_, height_;
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface_;
  std::unique_ptr<cairo_t, ContextDeleter> cr_;
};

}  // namespace cpufold
