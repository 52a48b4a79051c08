#include "pipeline/output/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>

#include "pipeline/output/output_values.h"
#include "pipeline/output/plot_canvas.h"

namespace cpufold {
namespace {

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};
constexpr Rgb kGrid{225, 225, 225};
constexpr Rgb kText{30, 30, 30};
constexpr Rgb kLegendFrame{160, 160, 160};

// Font sizes in pixels.
constexpr double kTitleSize = 20, kLabelSize = 15, kTickSize = 13, kSmallSize = 11.5;

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

// ---- axes shared by the plots -------------------------------------------------------------

// The title centred over the plot area, kept inside the image whatever its length.
void draw_title(Canvas& img, double centre_x, const std::string& title) {
  const double half = std::min(centre_x, img.width() - centre_x);
  img.fitted_text(centre_x, 24, title, 2 * half - 20, kTitleSize, kText);
}

// A tick left of a y axis at pixel column `axis_x`, its value to its left.
void y_tick(Canvas& img, int axis_x, int y, double value) {
  img.hline(axis_x - 5, axis_x - 1, y, kBlack);
  img.text(axis_x - 8, y + 0.5, format_number(value), kTickSize, kText, Anchor::end);
}

// A tick below an x axis at pixel row `axis_y`, its value below it.
void x_tick(Canvas& img, int x, int axis_y, double value) {
  img.vline(x, axis_y + 1, axis_y + 5, kBlack);
  img.text(x + 0.5, axis_y + 16, format_number(value), kTickSize, kText, Anchor::centre);
}

// A vertical colour bar over pixel rows [top, bottom), `colour(t)` from t = 0 at the bottom to
// 1 at the top, ticked in values 0..max_value, `label` reading upwards on its right.
void colour_bar(Canvas& img, int x, int top, int bottom, const std::function<Rgb(double)>& colour,
                double max_value, const std::string& label, double label_size) {
  const int h = bottom - top;
  for (int y = 0; y < h; ++y) {
    img.fill_rect(x, bottom - 1 - y, x + 20, bottom - y, colour(static_cast<double>(y) / (h - 1)));
  }
  img.frame(x - 1, top - 1, x + 20, bottom, kBlack);
  for (double v : ticks(0, max_value, 6, false)) {
    const int y = bottom - 1 - static_cast<int>(std::lround(v / max_value * (h - 1)));
    img.hline(x + 21, x + 24, y, kBlack);
    img.text(x + 28, y + 0.5, format_number(v), kTickSize, kText);
  }
  img.text_up(x + 86, (top + bottom) / 2.0, label, label_size, kText);
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

Rgb curve_colour(std::size_t k) {
  return kCurveColours[k % std::size(kCurveColours)];
}

std::size_t count_non_finite(std::span<const float> v) {
  return static_cast<std::size_t>(
      std::count_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); }));
}

// The pLDDT plot's axes: x residue 1..n (a single residue sits in the middle), y pLDDT 0..100.
// Whole pixels for ticks and bands; curves run through pixel centres.
struct PlddtAxes {
  static constexpr int kWidth = 800, kHeight = 500;
  static constexpr int left = 70, right = kWidth - 110, top = 50, bottom = kHeight - 60;
  double x_lo, x_hi;

  explicit PlddtAxes(std::size_t n)
      : x_lo(n == 1 ? 0.5 : 1.0), x_hi(n == 1 ? 1.5 : static_cast<double>(n)) {}
  double fx(double residue) const { return (residue - x_lo) / (x_hi - x_lo) * (right - left); }
  double fy(double v) const { return std::clamp(v, 0.0, 100.0) / 100.0 * (bottom - top); }
  int px(double residue) const { return left + static_cast<int>(std::lround(fx(residue))); }
  int py(double v) const { return bottom - static_cast<int>(std::lround(fy(v))); }
};

// Confidence bands, pale, labelled in the right margin; grid and ticks.
void draw_plddt_bands(Canvas& img, const PlddtAxes& a) {
  const int left = a.left, right = a.right;
  for (const Band& b : kBands) {
    img.fill_rect(left, a.py(b.hi), right + 1, a.py(b.lo) + 1, mix(kWhite, b.colour, 0.22));
    img.fill_rect(right + 1, a.py(b.hi), right + 7, a.py(b.lo) + 1, b.colour);
    img.text(right + 12, (a.py(b.hi) + a.py(b.lo) + 1) / 2.0, b.label, kSmallSize, kText);
  }
  for (double v : ticks(0, 100, 5, false)) {
    img.hline(left, right, a.py(v), kGrid);
    y_tick(img, left, a.py(v), v);
  }
  for (double v : ticks(a.x_lo, a.x_hi, 8, true)) x_tick(img, a.px(v), a.bottom, v);
}

// Curves, the last rank first so that rank 1 lies on top of any curve it coincides with.
// A value that is not finite leaves a gap; a single residue is a dot.
void draw_plddt_curves(Canvas& img, const PlddtAxes& a, std::span<const PlddtCurve> curves) {
  std::vector<Point> run;
  for (std::size_t k = curves.size(); k-- > 0;) {
    const std::span<const float> v = curves[k].plddt;
    const double width = v.size() == 1 ? 7.0 : 2.0;
    run.clear();
    for (std::size_t i = 0; i <= v.size(); ++i) {
      if (i < v.size() && std::isfinite(v[i])) {
        run.push_back(
            {a.left + 0.5 + a.fx(static_cast<double>(i + 1)), a.bottom + 0.5 - a.fy(v[i])});
      } else {
        img.polyline(run, curve_colour(k), width);
        run.clear();
      }
    }
  }
}

// Legend, bottom left inside the plot: one line per model, rank 1 first.
void draw_plddt_legend(Canvas& img, const PlddtAxes& a, std::span<const PlddtCurve> curves) {
  std::vector<std::string> labels;
  double label_w = 0;
  for (const PlddtCurve& c : curves) {
    const std::size_t missing = count_non_finite(c.plddt);
    labels.push_back(missing == 0 ? c.label
                                  : c.label + " (" + std::to_string(missing) + " not finite)");
    label_w = std::max(label_w, img.text_width(labels.back(), kSmallSize));
  }
  const int row_h = 18, rows = static_cast<int>(curves.size());
  const int lx = a.left + 8, lr = lx + static_cast<int>(std::ceil(label_w)) + 42;
  const int ly = a.bottom - 8 - row_h * rows - 8;
  img.fill_rect(lx, ly, lr, a.bottom - 8, kWhite);
  img.frame(lx, ly, lr, a.bottom - 8, kLegendFrame);
  for (int k = 0; k < rows; ++k) {
    const double y = ly + 4 + row_h * (k + 0.5);
    const Point sample[] = {{lx + 8.0, y}, {lx + 28.0, y}};
    img.polyline(sample, curve_colour(static_cast<std::size_t>(k)), 2.0);
    img.text(lx + 34, y, labels[static_cast<std::size_t>(k)], kSmallSize, kText);
  }
}

}  // namespace

std::string plddt_plot_png(const std::string& title, std::span<const PlddtCurve> curves) {
  if (curves.empty()) throw InternalError("pLDDT plot: no curves");
  std::size_t n = 0;
  for (const PlddtCurve& c : curves) n = std::max(n, c.plddt.size());
  if (n == 0) throw InternalError("pLDDT plot: empty pLDDT vectors");

  const PlddtAxes a(n);
  Canvas img(a.kWidth, a.kHeight, kWhite);
  draw_plddt_bands(img, a);
  draw_plddt_curves(img, a, curves);
  img.frame(a.left, a.top, a.right, a.bottom, kBlack);
  draw_plddt_legend(img, a, curves);
  draw_title(img, (a.left + a.right) / 2.0, title);
  img.text((a.left + a.right) / 2.0, a.kHeight - 18, "Residue", kLabelSize, kText, Anchor::centre);
  img.text_up(20, (a.top + a.bottom) / 2.0, "pLDDT", kLabelSize, kText);
  return img.png();
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

// A cell whose error is NaN or infinite: a neutral grey that is on no part of the green scale,
// so that a broken prediction cannot pass for a confident one.
constexpr Rgb kNotFinite{150, 150, 150};

constexpr int kHeatmap = 340;  // heatmap side in pixels, whatever n is
constexpr int kPanel = 450;    // panel width per model

// The heatmap of an n x n matrix as kHeatmap x kHeatmap pixels: every pixel shows the mean of
// the residue block it covers (n > kHeatmap: averaging down; n <= kHeatmap: each residue a
// block of pixels); a block holding any non-finite value is kNotFinite. Counts those pixels.
std::vector<Rgb> heatmap_pixels(const std::vector<float>& m, std::int64_t n, double max_pae,
                                std::int64_t& not_finite) {
  const auto block = [&](int p) {
    const std::int64_t b = p * n / kHeatmap, e = (p + 1) * n / kHeatmap;
    return std::pair<std::int64_t, std::int64_t>{b, std::max(e, b + 1)};
  };
  std::vector<Rgb> pixels(static_cast<std::size_t>(kHeatmap) * kHeatmap);
  for (int py = 0; py < kHeatmap; ++py) {
    const auto [rb, re] = block(py);
    for (int px = 0; px < kHeatmap; ++px) {
      const auto [cb, ce] = block(px);
      double sum = 0;
      for (std::int64_t i = rb; i < re; ++i) {
        for (std::int64_t j = cb; j < ce; ++j) sum += m[static_cast<std::size_t>(i * n + j)];
      }
      const double mean = sum / static_cast<double>((re - rb) * (ce - cb));
      not_finite += !std::isfinite(mean);
      pixels[static_cast<std::size_t>(py) * kHeatmap + px] =
          std::isfinite(mean) ? pae_colour(mean / max_pae) : kNotFinite;
    }
  }
  return pixels;
}

}  // namespace

std::string pae_plot_png(const std::string& title, std::span<const PaeMatrix> matrices) {
  if (matrices.empty()) throw InternalError("PAE plot: no matrices");
  double max_pae = 0;
  for (const PaeMatrix& m : matrices) {
    if (!(std::isfinite(m.max_pae) && m.max_pae > 0)) {
      throw InternalError("PAE plot: max_pae of " + m.label + " is " + format_number(m.max_pae) +
                          ", not a positive number");
    }
    max_pae = std::max(max_pae, static_cast<double>(m.max_pae));
  }

  const int panels = static_cast<int>(matrices.size());
  const int bar_w = 130, width = panels * kPanel + bar_w, height = kPanel + 50;
  Canvas img(width, height, kWhite);
  const int top = 80;  // heatmap top edge, below the title and panel label

  std::int64_t not_finite = 0;
  for (int k = 0; k < panels; ++k) {
    const PaeMatrix& pm = matrices[static_cast<std::size_t>(k)];
    if (pm.pae.rank() != 2 || pm.pae.dim(0) != pm.pae.dim(1) || pm.pae.dim(0) == 0) {
      throw InternalError("PAE plot: " + pm.label +
                          " is not a square matrix: " + pm.pae.describe());
    }
    const std::int64_t n = pm.pae.dim(0);
    const std::vector<float> m = f32_values(pm.pae, Shape{n, n}, "PAE of " + pm.label);
    const int x0 = k * kPanel + 80;
    img.put_pixels(x0, top, kHeatmap, kHeatmap, heatmap_pixels(m, n, max_pae, not_finite));
    img.frame(x0 - 1, top - 1, x0 + kHeatmap, top + kHeatmap, kBlack);
    img.fitted_text(x0 + kHeatmap / 2.0, top - 16, pm.label, kPanel - 20, kLabelSize, kText);

    // Residue ticks on both axes, at the centre of the residue's pixels.
    const auto pos = [&](double residue) {
      return static_cast<int>(std::lround((residue - 0.5) / static_cast<double>(n) * kHeatmap));
    };
    for (double v : ticks(1, static_cast<double>(n), 5, true)) {
      x_tick(img, x0 + pos(v), top + kHeatmap, v);
      y_tick(img, x0, top + pos(v), v);
    }
    img.text(x0 + kHeatmap / 2.0, top + kHeatmap + 36, "Scored residue", kLabelSize, kText,
             Anchor::centre);
    img.text_up(x0 - 64, top + kHeatmap / 2.0, "Aligned residue", kLabelSize, kText);
  }

  // Colour bar: 0 (dark green) at the bottom to max_pae (white) at the top.
  const int bx = panels * kPanel + 10;
  colour_bar(img, bx, top, top + kHeatmap, pae_colour, max_pae, "Expected position error (Å)",
             kLabelSize);
  if (not_finite > 0) {  // what the grey means, only where it appears
    const int y = top + kHeatmap + 14;
    img.fill_rect(bx, y, bx + 20, y + 14, kNotFinite);
    img.frame(bx - 1, y - 1, bx + 20, y + 14, kBlack);
    img.text(bx + 26, y + 7, "not finite", kSmallSize, kText);
  }

  draw_title(img, width / 2.0, title);
  return img.png();
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
  const double pi = std::numbers::pi;
  return {ch(std::abs(2 * x - 0.5)), ch(std::sin(pi * x)), ch(std::cos(pi * x / 2))};
}

}  // namespace

namespace {

// Each row's identity to the query (row 0), the rows in ascending identity, and each
// residue's count of non-gap rows.
struct MsaIdentity {
  std::vector<double> identity;
  std::vector<std::int64_t> order, coverage;
};

MsaIdentity msa_identity(std::span<const std::int32_t> msa, std::int64_t n_rows,
                         std::int64_t n_res) {
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

  return {std::move(identity), std::move(order), std::move(coverage)};
}

// Nearest sampling, as imshow(interpolation='nearest'): pixel column -> residue, pixel row
// (from the bottom) -> sorted MSA row; gaps stay white.
std::vector<Rgb> coverage_pixels(std::span<const std::int32_t> msa, const MsaIdentity& m,
                                 std::int64_t n_rows, std::int64_t n_res, int w, int h) {
  const std::vector<double>& identity = m.identity;
  const std::vector<std::int64_t>& order = m.order;
  std::vector<Rgb> pixels(static_cast<std::size_t>(w) * h, kWhite);
  for (int py = 0; py < h; ++py) {
    const std::int64_t k =
        std::min<std::int64_t>((static_cast<std::int64_t>(py) * n_rows) / h, n_rows - 1);
    const std::int64_t r = order[static_cast<std::size_t>(k)];
    const Rgb colour = rainbow_r(identity[static_cast<std::size_t>(r)]);
    Rgb* line = &pixels[static_cast<std::size_t>(h - 1 - py) * w];
    for (int px = 0; px < w; ++px) {
      const std::int64_t i = (static_cast<std::int64_t>(px) * n_res) / w;
      if (msa[static_cast<std::size_t>(r * n_res + i)] != kGapId) line[px] = colour;
    }
  }
  return pixels;
}

}  // namespace

std::string coverage_plot_png(const std::string& title, std::span<const std::int32_t> msa,
                              std::int64_t n_rows, std::int64_t n_res) {
  if (n_rows < 1 || n_res < 1 || static_cast<std::int64_t>(msa.size()) != n_rows * n_res) {
    throw InternalError("coverage plot: the MSA is not [" + std::to_string(n_rows) + " x " +
                        std::to_string(n_res) + "]");
  }
  const MsaIdentity m = msa_identity(msa, n_rows, n_res);
  const std::vector<std::int64_t>& coverage = m.coverage;

  constexpr int kWidth = 800, kHeight = 500;
  Canvas img(kWidth, kHeight, kWhite);
  const int left = 80, right = kWidth - 150, top = 50, bottom = kHeight - 60;
  const int w = right - left, h = bottom - top;
  img.put_pixels(left, top, w, h, coverage_pixels(msa, m, n_rows, n_res, w, h));

  // Coverage curve in the rows' scale, at each residue's centre (across the plot for one).
  const auto fx = [&](double residue_centre) {
    return left + residue_centre / static_cast<double>(n_res) * w;
  };
  const auto fy = [&](double rows) { return bottom - rows / static_cast<double>(n_rows) * h; };
  std::vector<Point> curve;
  for (std::int64_t i = 0; i < n_res; ++i) {
    curve.push_back({fx(static_cast<double>(i) + 0.5),
                     fy(static_cast<double>(coverage[static_cast<std::size_t>(i)]))});
  }
  if (n_res == 1) curve = {{fx(0), curve[0].y}, {fx(1), curve[0].y}};
  img.polyline(curve, kBlack, 2.0);
  img.frame(left, top, right, bottom, kBlack);
  for (double v : ticks(0, static_cast<double>(n_res), 8, true)) {
    x_tick(img, static_cast<int>(std::lround(fx(v))), bottom, v);
  }
  for (double v : ticks(0, static_cast<double>(n_rows), 5, true)) {
    y_tick(img, left, static_cast<int>(std::lround(fy(v))), v);
  }
  // Colour bar: identity 0 at the bottom, 1 at the top.
  colour_bar(img, right + 20, top, bottom, rainbow_r, 1.0, "Sequence identity to query", kTickSize);

  draw_title(img, (left + right) / 2.0, "Sequence coverage: " + title);
  img.text((left + right) / 2.0, kHeight - 18, "Positions", kLabelSize, kText, Anchor::centre);
  img.text_up(20, (top + bottom) / 2.0, "Sequences", kLabelSize, kText);
  return img.png();
}

}  // namespace cpufold
