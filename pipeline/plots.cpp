#include "pipeline/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "io/png_image.h"
#include "pipeline/bitmap_font.h"
#include "pipeline/output/output_values.h"

namespace cpufold {
namespace {

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};
constexpr Rgb kGrid{225, 225, 225};
constexpr Rgb kText{30, 30, 30};
constexpr int kScale = 2;  // font scale for labels: 10x14-pixel glyphs
constexpr int kTextHeight = kGlyphHeight * kScale;

// ---- drawing primitives -------------------------------------------------------------------

// A line `thickness` pixels wide (Bresenham, each step stamps a square).
void draw_line(RgbImage& img, int x0, int y0, int x1, int y1, Rgb c, int thickness) {
  const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
  const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  const int lo = -(thickness - 1) / 2, hi = thickness / 2;
  for (int err = dx + dy;;) {
    img.fill_rect(x0 + lo, y0 + lo, x0 + hi + 1, y0 + hi + 1, c);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}

void draw_frame(RgbImage& img, int x0, int y0, int x1, int y1, Rgb c) {
  draw_line(img, x0, y0, x1, y0, c, 1);
  draw_line(img, x0, y1, x1, y1, c, 1);
  draw_line(img, x0, y0, x0, y1, c, 1);
  draw_line(img, x1, y0, x1, y1, c, 1);
}

Rgb mix(Rgb a, Rgb b, double t) {  // a at t = 0, b at t = 1
  const auto ch = [t](int u, int v) {
    return static_cast<std::uint8_t>(std::lround(u + (v - u) * std::clamp(t, 0.0, 1.0)));
  };
  return {ch(a.r, b.r), ch(a.g, b.g), ch(a.b, b.b)};
}

// Text at `scale` if it fits in `max_width`, else at smaller scales, else cut with "...".
void draw_fitted_text(RgbImage& img, int centre_x, int y, std::string text, int max_width, Rgb c,
                      int scale) {
  while (scale > 1 && text_width(text, scale) > max_width) --scale;
  while (text.size() > 3 && text_width(text, scale) > max_width) {
    text = text.substr(0, text.size() - 4) + "...";
  }
  draw_text(img, centre_x - text_width(text, scale) / 2, y, text, c, scale);
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "Nice" tick values (1, 2 or 5 times a power of ten) inside [lo, hi], at most about
// `max_ticks` of them; integer steps only when `integers`.
std::vector<double> ticks(double lo, double hi, int max_ticks, bool integers) {
  const double span = std::max(hi - lo, 1e-9);
  double step = std::pow(10.0, std::floor(std::log10(span / max_ticks)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (span / (step * m) <= max_ticks) {
      step *= m;
      break;
    }
  }
  if (integers) step = std::max(step, 1.0);
  std::vector<double> out;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * span; v += step) {
    out.push_back(std::abs(v) < 1e-9 ? 0.0 : v);
  }
  return out;
}

// ---- pLDDT plot ---------------------------------------------------------------------------

struct Band {
  double lo, hi;
  const char* label;
  Rgb colour;  // AF2 / AlphaFold DB confidence colours
};
constexpr Band kBands[] = {
    {90, 100, "very high", {0, 83, 214}},
    {70, 90, "confident", {101, 203, 243}},
    {50, 70, "low", {255, 219, 19}},
    {0, 50, "very low", {255, 125, 69}},
};

// One colour per model (matplotlib's tab10 order), distinct from the band tints.
constexpr Rgb kCurveColours[] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                 {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                 {188, 189, 34},  {23, 190, 207}};

}  // namespace

std::string plddt_plot_png(const std::string& title, std::span<const PlddtCurve> curves) {
  if (curves.empty()) throw InternalError("pLDDT plot: no curves");
  std::size_t n = 0;
  for (const PlddtCurve& c : curves) n = std::max(n, c.plddt.size());
  if (n == 0) throw InternalError("pLDDT plot: empty pLDDT vectors");

  constexpr int kWidth = 800, kHeight = 500;
  RgbImage img(kWidth, kHeight, kWhite);
  const int left = 70, right = kWidth - 110, top = 50, bottom = kHeight - 60;

  // x: residue 1..n (a single residue sits in the middle); y: pLDDT 0..100.
  const double x_lo = n == 1 ? 0.5 : 1.0, x_hi = n == 1 ? 1.5 : static_cast<double>(n);
  const auto px = [&](double residue) {
    return left + static_cast<int>(std::lround((residue - x_lo) / (x_hi - x_lo) * (right - left)));
  };
  const auto py = [&](double v) {
    return bottom -
           static_cast<int>(std::lround(std::clamp(v, 0.0, 100.0) / 100.0 * (bottom - top)));
  };

  // Confidence bands, pale, labelled in the right margin.
  for (const Band& b : kBands) {
    img.fill_rect(left, py(b.hi), right + 1, py(b.lo) + 1, mix(kWhite, b.colour, 0.22));
    img.fill_rect(right + 1, py(b.hi), right + 7, py(b.lo) + 1, b.colour);
    draw_text(img, right + 12, (py(b.hi) + py(b.lo)) / 2 - kGlyphHeight / 2, b.label, kText, 1);
  }
  for (double v : ticks(0, 100, 5, false)) {
    draw_line(img, left, py(v), right, py(v), kGrid, 1);
    const std::string label = format_number(v);
    draw_text(img, left - 8 - text_width(label, kScale), py(v) - kTextHeight / 2, label, kText,
              kScale);
    draw_line(img, left - 5, py(v), left, py(v), kBlack, 1);
  }
  for (double v : ticks(x_lo, x_hi, 8, true)) {
    const std::string label = format_number(v);
    draw_line(img, px(v), bottom, px(v), bottom + 5, kBlack, 1);
    draw_text(img, px(v) - text_width(label, kScale) / 2, bottom + 9, label, kText, kScale);
  }

  // Curves: a 2-pixel polyline; a dot for a single residue.
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const Rgb colour = kCurveColours[k % std::size(kCurveColours)];
    const std::span<const float> v = curves[k].plddt;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const int x = px(static_cast<double>(i + 1)), y = py(v[i]);
      if (i > 0) draw_line(img, px(static_cast<double>(i)), py(v[i - 1]), x, y, colour, 2);
      if (v.size() == 1) img.fill_rect(x - 3, y - 3, x + 4, y + 4, colour);
    }
  }
  draw_frame(img, left, top, right, bottom, kBlack);

  // Legend, bottom left inside the plot: one line per model.
  const int row_h = kGlyphHeight + 6;
  int legend_w = 0;
  for (const PlddtCurve& c : curves) legend_w = std::max(legend_w, text_width(c.label, 1));
  const int lx = left + 8, ly = bottom - 8 - row_h * static_cast<int>(curves.size()) - 4;
  img.fill_rect(lx, ly, lx + legend_w + 36, bottom - 8, kWhite);
  draw_frame(img, lx, ly, lx + legend_w + 36, bottom - 8, {160, 160, 160});
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const int y = ly + 5 + row_h * static_cast<int>(k);
    draw_line(img, lx + 6, y + kGlyphHeight / 2, lx + 26, y + kGlyphHeight / 2,
              kCurveColours[k % std::size(kCurveColours)], 2);
    draw_text(img, lx + 32, y, curves[k].label, kText, 1);
  }

  draw_fitted_text(img, (left + right) / 2, 14, title, kWidth - 20, kText, 3);
  draw_text(img, (left + right) / 2 - text_width("Residue", kScale) / 2, kHeight - 24, "Residue",
            kText, kScale);
  draw_text_up(img, 12, (top + bottom) / 2 + text_width("pLDDT", kScale) / 2, "pLDDT", kText,
               kScale);
  return encode_png(img);
}

namespace {

// ---- PAE plot -----------------------------------------------------------------------------

// AlphaFold DB's scale: dark green for confident (low error) to white (ColorBrewer Greens).
Rgb pae_colour(double t) {
  static constexpr Rgb kStops[] = {{0, 68, 27},     {0, 109, 44},    {35, 139, 69},
                                   {65, 171, 93},   {116, 196, 118}, {161, 217, 155},
                                   {199, 233, 192}, {229, 245, 224}, {247, 252, 245}};
  constexpr int kLast = static_cast<int>(std::size(kStops)) - 1;
  const double s = std::clamp(t, 0.0, 1.0) * kLast;
  const int i = std::min(static_cast<int>(s), kLast - 1);
  return mix(kStops[i], kStops[i + 1], s - i);
}

constexpr int kHeatmap = 340;  // heatmap side in pixels, whatever n is
constexpr int kPanel = 450;    // panel width per model

// The heatmap of an n x n matrix into a kHeatmap-square at (x0, y0): every pixel shows the
// mean of the residue block it covers (n > kHeatmap: averaging down; n <= kHeatmap: each
// residue a block of pixels).
void draw_heatmap(RgbImage& img, int x0, int y0, const std::vector<float>& m, std::int64_t n,
                  double max_pae) {
  const auto block = [&](int p) {
    const std::int64_t b = p * n / kHeatmap, e = (p + 1) * n / kHeatmap;
    return std::pair<std::int64_t, std::int64_t>{b, std::max(e, b + 1)};
  };
  for (int py = 0; py < kHeatmap; ++py) {
    const auto [rb, re] = block(py);
    for (int px = 0; px < kHeatmap; ++px) {
      const auto [cb, ce] = block(px);
      double sum = 0;
      for (std::int64_t i = rb; i < re; ++i) {
        for (std::int64_t j = cb; j < ce; ++j) sum += m[static_cast<std::size_t>(i * n + j)];
      }
      img.set(x0 + px, y0 + py,
              pae_colour(sum / static_cast<double>((re - rb) * (ce - cb)) / max_pae));
    }
  }
}

}  // namespace

std::string pae_plot_png(const std::string& title, std::span<const PaeMatrix> matrices) {
  if (matrices.empty()) throw InternalError("PAE plot: no matrices");
  double max_pae = 0;
  for (const PaeMatrix& m : matrices) max_pae = std::max(max_pae, static_cast<double>(m.max_pae));
  if (!(max_pae > 0)) throw InternalError("PAE plot: max_pae must be positive");

  const int panels = static_cast<int>(matrices.size());
  const int bar_w = 130, width = panels * kPanel + bar_w, height = kPanel + 50;
  RgbImage img(width, height, kWhite);
  const int top = 80;  // heatmap top edge, below the title and panel label

  for (int k = 0; k < panels; ++k) {
    const PaeMatrix& pm = matrices[static_cast<std::size_t>(k)];
    if (pm.pae.rank() != 2 || pm.pae.dim(0) != pm.pae.dim(1) || pm.pae.dim(0) == 0) {
      throw InternalError("PAE plot: " + pm.label +
                          " is not a square matrix: " + pm.pae.describe());
    }
    const std::int64_t n = pm.pae.dim(0);
    const std::vector<float> m = f32_values(pm.pae, Shape{n, n}, "PAE of " + pm.label);
    const int x0 = k * kPanel + 80;
    draw_heatmap(img, x0, top, m, n, max_pae);
    draw_frame(img, x0 - 1, top - 1, x0 + kHeatmap, top + kHeatmap, kBlack);
    draw_fitted_text(img, x0 + kHeatmap / 2, top - 24, pm.label, kPanel - 20, kText, kScale);

    // Residue ticks on both axes, at the centre of the residue's pixels.
    const auto pos = [&](double residue) {
      return static_cast<int>(std::lround((residue - 0.5) / static_cast<double>(n) * kHeatmap));
    };
    for (double v : ticks(1, static_cast<double>(n), 5, true)) {
      const std::string label = format_number(v);
      draw_line(img, x0 + pos(v), top + kHeatmap, x0 + pos(v), top + kHeatmap + 4, kBlack, 1);
      draw_text(img, x0 + pos(v) - text_width(label, kScale) / 2, top + kHeatmap + 7, label, kText,
                kScale);
      draw_line(img, x0 - 5, top + pos(v), x0 - 1, top + pos(v), kBlack, 1);
      draw_text(img, x0 - 8 - text_width(label, kScale), top + pos(v) - kTextHeight / 2, label,
                kText, kScale);
    }
    draw_text(img, x0 + kHeatmap / 2 - text_width("Scored residue", kScale) / 2,
              top + kHeatmap + 27, "Scored residue", kText, kScale);
    draw_text_up(img, x0 - 76, top + kHeatmap / 2 + text_width("Aligned residue", kScale) / 2,
                 "Aligned residue", kText, kScale);
  }

  // Colour bar: 0 (dark green) at the bottom to max_pae (white) at the top.
  const int bx = panels * kPanel + 10, bar_h = kHeatmap;
  for (int y = 0; y < bar_h; ++y) {
    img.fill_rect(bx, top + y, bx + 20, top + y + 1,
                  pae_colour(1.0 - static_cast<double>(y) / (bar_h - 1)));
  }
  draw_frame(img, bx - 1, top - 1, bx + 20, top + bar_h, kBlack);
  for (double v : ticks(0, max_pae, 6, false)) {
    const int y = top + bar_h - 1 - static_cast<int>(std::lround(v / max_pae * (bar_h - 1)));
    draw_line(img, bx + 20, y, bx + 24, y, kBlack, 1);
    draw_text(img, bx + 28, y - kTextHeight / 2, format_number(v), kText, kScale);
  }
  const char* bar_label = "Expected position error (Å)";
  draw_text_up(img, bx + 80, top + bar_h / 2 + text_width(bar_label, kScale) / 2, bar_label, kText,
               kScale);

  draw_fitted_text(img, width / 2, 14, title, width - 20, kText, 3);
  return encode_png(img);
}

namespace {

// ---- MSA coverage plot --------------------------------------------------------------------

constexpr std::int32_t kGapId = 21;

// matplotlib's rainbow_r at v in [0, 1]: rainbow(1 - v) = (|2x - 0.5|, sin(pi x), cos(pi x / 2)).
Rgb rainbow_r(double v) {
  const double x = 1.0 - std::clamp(v, 0.0, 1.0);
  const auto ch = [](double c) {
    return static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(c, 0.0, 1.0)));
  };
  return {ch(std::abs(2 * x - 0.5)), ch(std::sin(M_PI * x)), ch(std::cos(M_PI * x / 2))};
}

}  // namespace

std::string coverage_plot_png(const std::string& title, std::span<const std::int32_t> msa,
                              std::int64_t n_rows, std::int64_t n_res) {
  if (n_rows < 1 || n_res < 1 || static_cast<std::int64_t>(msa.size()) != n_rows * n_res) {
    throw InternalError("coverage plot: the MSA is not [" + std::to_string(n_rows) + " x " +
                        std::to_string(n_res) + "]");
  }
  // Identity of each row to the query (row 0), then rows in ascending identity.
  std::vector<double> identity(static_cast<std::size_t>(n_rows));
  std::vector<std::int64_t> coverage(static_cast<std::size_t>(n_res), 0);
  for (std::int64_t r = 0; r < n_rows; ++r) {
    std::int64_t same = 0;
    for (std::int64_t i = 0; i < n_res; ++i) {
      const std::int32_t id = msa[static_cast<std::size_t>(r * n_res + i)];
      same += id == msa[static_cast<std::size_t>(i)];
      coverage[static_cast<std::size_t>(i)] += id != kGapId;
    }
    identity[static_cast<std::size_t>(r)] = static_cast<double>(same) / static_cast<double>(n_res);
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(n_rows));
  for (std::int64_t r = 0; r < n_rows; ++r) order[static_cast<std::size_t>(r)] = r;
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return identity[static_cast<std::size_t>(a)] < identity[static_cast<std::size_t>(b)];
  });

  constexpr int kWidth = 800, kHeight = 500;
  RgbImage img(kWidth, kHeight, kWhite);
  const int left = 80, right = kWidth - 150, top = 50, bottom = kHeight - 60;
  const int w = right - left, h = bottom - top;
  // Nearest sampling, as imshow(interpolation='nearest'): pixel column -> residue, pixel row
  // (from the bottom) -> sorted MSA row.
  for (int py = 0; py < h; ++py) {
    const std::int64_t k =
        std::min<std::int64_t>((static_cast<std::int64_t>(py) * n_rows) / h, n_rows - 1);
    const std::int64_t r = order[static_cast<std::size_t>(k)];
    const Rgb colour = rainbow_r(identity[static_cast<std::size_t>(r)]);
    for (int px = 0; px < w; ++px) {
      const std::int64_t i = (static_cast<std::int64_t>(px) * n_res) / w;
      if (msa[static_cast<std::size_t>(r * n_res + i)] != kGapId) {
        img.set(left + px, bottom - 1 - py, colour);
      }
    }
  }
  // Coverage curve in the rows' scale, at each residue's centre.
  const auto cx = [&](double residue_centre) {
    return left + static_cast<int>(std::lround(residue_centre / static_cast<double>(n_res) * w));
  };
  const auto cy = [&](double rows) {
    return bottom - static_cast<int>(std::lround(rows / static_cast<double>(n_rows) * h));
  };
  for (std::int64_t i = 0; i < n_res; ++i) {
    const int x = cx(static_cast<double>(i) + 0.5);
    const int y = cy(static_cast<double>(coverage[static_cast<std::size_t>(i)]));
    if (i > 0) {
      draw_line(img, cx(static_cast<double>(i) - 0.5),
                cy(static_cast<double>(coverage[static_cast<std::size_t>(i - 1)])), x, y, kBlack,
                2);
    } else if (n_res == 1) {
      draw_line(img, left, y, right, y, kBlack, 2);
    }
  }
  draw_frame(img, left, top, right, bottom, kBlack);
  for (double v : ticks(0, static_cast<double>(n_res), 8, true)) {
    const std::string label = format_number(v);
    draw_line(img, cx(v), bottom, cx(v), bottom + 5, kBlack, 1);
    draw_text(img, cx(v) - text_width(label, kScale) / 2, bottom + 9, label, kText, kScale);
  }
  for (double v : ticks(0, static_cast<double>(n_rows), 5, true)) {
    const std::string label = format_number(v);
    draw_line(img, left - 5, cy(v), left, cy(v), kBlack, 1);
    draw_text(img, left - 8 - text_width(label, kScale), cy(v) - kTextHeight / 2, label, kText,
              kScale);
  }
  // Colour bar: identity 0 at the bottom, 1 at the top.
  const int bx = right + 20;
  for (int y = 0; y < h; ++y) {
    img.fill_rect(bx, bottom - 1 - y, bx + 20, bottom - y,
                  rainbow_r(static_cast<double>(y) / (h - 1)));
  }
  draw_frame(img, bx - 1, top - 1, bx + 20, bottom, kBlack);
  for (double v : ticks(0, 1, 5, false)) {
    const int y = bottom - 1 - static_cast<int>(std::lround(v * (h - 1)));
    draw_line(img, bx + 20, y, bx + 24, y, kBlack, 1);
    draw_text(img, bx + 28, y - kTextHeight / 2, format_number(v), kText, kScale);
  }
  const char* bar_label = "Sequence identity to query";
  draw_text_up(img, bx + 80, (top + bottom) / 2 + text_width(bar_label, 1) / 2, bar_label, kText,
               1);

  draw_fitted_text(img, (left + right) / 2, 14, "Sequence coverage: " + title, kWidth - 20, kText,
                   3);
  draw_text(img, (left + right) / 2 - text_width("Positions", kScale) / 2, kHeight - 24,
            "Positions", kText, kScale);
  draw_text_up(img, 12, (top + bottom) / 2 + text_width("Sequences", kScale) / 2, "Sequences",
               kText, kScale);
  return encode_png(img);
}

}  // namespace cpufold
