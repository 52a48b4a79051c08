#include "pipeline/output/profile_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "memory/error.h"
#include "pipeline/output/plot_canvas.h"

namespace cpufold {
namespace {

// The plot's colours: black on white, the prediction blue and the measurements red (the first
// two of matplotlib's tab10), the ratio's target band pale green.
constexpr Rgb kWhite{255, 255, 255}, kBlack{0, 0, 0}, kGrid{228, 228, 228}, kText{30, 30, 30};
constexpr Rgb kFaint{110, 110, 110}, kBand{214, 240, 214};
constexpr Rgb kPredicted{31, 119, 180}, kMeasured{214, 39, 40};

constexpr double kTitleSize = 20, kSubtitleSize = 12.5, kLabelSize = 15, kTickSize = 12.5,
                 kSmallSize = 11.5;

// The run's stages (length_profile.h), each with a hue drawn pale.
struct StageColour {
  const char* name;
  Rgb colour;
};
constexpr StageColour kStageColours[] = {
    {"load", {127, 127, 127}},           {"features", {44, 160, 44}},
    {"trunk", {255, 127, 14}},           {"structure", {148, 103, 189}},
    {"heads", {23, 190, 207}},           {"extra-MSA block", {140, 86, 75}},
    {"Evoformer block", {227, 119, 194}}};

Rgb stage_hue(const std::string& name, std::size_t k) {
  for (const StageColour& s : kStageColours) {
    if (name == s.name) return s.colour;
  }
  return kStageColours[k % std::size(kStageColours)].colour;
}

Rgb stage_colour(const std::string& name, std::size_t k) {
  return mix(kWhite, stage_hue(name, k), 0.6);
}

// "trunk stage", "Evoformer block".
std::string stage_label(const std::string& name) {
  return name.ends_with("block") ? name : name + " stage";
}

// A stage with its own prediction (a block): its ratio is drawn.
bool has_ratio(const ProfilePlotStage& s) {
  return s.predicted_bytes > 0 && s.peak_bytes > 0;
}

double ratio(std::size_t measured, std::size_t predicted) {
  return static_cast<double>(measured) / static_cast<double>(predicted);
}

// A log2 axis over [lo, hi] onto pixels [p0, p1] (p1 < p0 for a y axis).
struct LogAxis {
  double lo, hi, p0, p1;
  double at(double v) const {
    return p0 + (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo)) * (p1 - p0);
  }
};

// Ticks of a log axis over [lo, hi]: powers of two (every 2nd, 4th... when there are many),
// or with 1.5 x each power, or quarter steps between powers: the coarsest that gives `fewest`.
std::vector<double> log_ticks(double lo, double hi, int most, std::size_t fewest) {
  const int first = static_cast<int>(std::floor(std::log2(lo)));
  const int last = static_cast<int>(std::ceil(std::log2(hi)));
  const auto within = [&](std::initializer_list<double> steps, int every) {
    std::vector<double> out;
    for (int k = first; k <= last; k += every) {
      for (double m : steps) {
        const double v = m * std::exp2(k);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
      }
    }
    return out;
  };
  std::vector<double> powers = within({1.0}, 1);
  for (int every = 2; static_cast<int>(powers.size()) > most; every *= 2) {
    powers = within({1.0}, every);
  }
  if (powers.size() >= fewest) return powers;
  if (std::vector<double> halves = within({1.0, 1.5}, 1); halves.size() >= fewest) return halves;
  return within({1.0, 1.25, 1.5, 1.75}, 1);
}

// "512 MiB", "2 GiB": a power of two of bytes in the largest unit it is a whole number of.
std::string byte_tick(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  while (u + 1 < std::size(kUnits) && bytes >= 1024) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g %s", bytes, kUnits[u]);
  return buf;
}

std::string fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A filled dot with a white rim, so that points stay visible over lines.
void dot(Canvas& img, Point p, Rgb c, double diameter) {
  const Point at[] = {p};
  img.polyline(at, kWhite, diameter + 3);
  img.polyline(at, c, diameter);
}

void cross(Canvas& img, Point p, Rgb c, double half) {
  const Point a[] = {{p.x - half, p.y - half}, {p.x + half, p.y + half}};
  const Point b[] = {{p.x - half, p.y + half}, {p.x + half, p.y - half}};
  img.polyline(a, c, 2.5);
  img.polyline(b, c, 2.5);
}

struct LegendRow {
  std::string label;
  enum class Mark { line, dot, light, cross } mark;
  Rgb colour;
};

void legend(Canvas& img, int x, int y, const std::vector<LegendRow>& rows) {
  double label_w = 0;
  for (const LegendRow& r : rows) label_w = std::max(label_w, img.text_width(r.label, kSmallSize));
  const int row_h = 18;
  const int right = x + static_cast<int>(std::ceil(label_w)) + 46;
  const int bottom = y + row_h * static_cast<int>(rows.size()) + 8;
  img.fill_rect(x, y, right, bottom, kWhite);
  img.frame(x, y, right, bottom, {170, 170, 170});
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const LegendRow& r = rows[k];
    const double cy = y + 4 + row_h * (static_cast<double>(k) + 0.5);
    const Point line[] = {{x + 9.0, cy}, {x + 31.0, cy}};
    switch (r.mark) {
      case LegendRow::Mark::line:
        img.polyline(line, r.colour, 2.5);
        break;
      case LegendRow::Mark::light:
        img.polyline(line, r.colour, 2);
        dot(img, {x + 20.0, cy}, r.colour, 5);
        break;
      case LegendRow::Mark::dot:
        dot(img, {x + 20.0, cy}, r.colour, 9);
        break;
      case LegendRow::Mark::cross:
        cross(img, {x + 20.0, cy}, r.colour, 4.5);
        break;
    }
    img.text(x + 38, cy, r.label, kSmallSize, kText);
  }
}

// Ticks of the ratio axis: a step of 0.05, 0.1, 0.25, 0.5, 1... leaving at most six.
std::vector<double> ratio_ticks(double lo, double hi) {
  double step = 0.05;
  for (double s : {0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0}) {
    step = s;
    if ((hi - lo) / s <= 5) break;
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + 1e-9; v += step) out.push_back(v);
  return out;
}

// What the lengths span: residues and bytes (over every non-zero figure), the ratio axis, the
// stages in order of appearance and whether any run failed.
struct ProfileRanges {
  double n_lo = INFINITY, n_hi = 0, b_lo = INFINITY, b_hi = 0;
  double r_lo = 0.8, r_hi = 1.2;
  bool any_failed = false;
  std::vector<std::string> stage_names;
};

ProfileRanges profile_ranges(std::span<const ProfilePlotLength> lengths) {
  ProfileRanges g;
  for (const ProfilePlotLength& l : lengths) {
    const auto seen = [&](std::size_t bytes) {
      if (bytes == 0) return;
      g.b_lo = std::min(g.b_lo, static_cast<double>(bytes));
      g.b_hi = std::max(g.b_hi, static_cast<double>(bytes));
      g.n_lo = std::min(g.n_lo, static_cast<double>(l.n_res));
      g.n_hi = std::max(g.n_hi, static_cast<double>(l.n_res));
    };
    seen(l.predicted_bytes);
    seen(l.measured_bytes);
    seen(l.plan_bytes);
    const auto ratio_seen = [&](double r) {
      g.r_lo = std::min(g.r_lo, r - 0.05);
      g.r_hi = std::max(g.r_hi, r + 0.05);
    };
    for (const ProfilePlotStage& s : l.stages) {
      seen(s.peak_bytes);
      if (std::find(g.stage_names.begin(), g.stage_names.end(), s.name) == g.stage_names.end())
        g.stage_names.push_back(s.name);
      if (has_ratio(s)) ratio_seen(ratio(s.peak_bytes, s.predicted_bytes));
    }
    if (l.measured_bytes == 0 && l.predicted_bytes > 0) g.any_failed = true;
    if (l.measured_bytes > 0 && l.predicted_bytes > 0)
      ratio_seen(ratio(l.measured_bytes, l.predicted_bytes));
  }
  if (g.b_hi == 0) throw InternalError("profile plot: no length has a figure to draw");
  g.r_lo = std::max(g.r_lo, 0.0);
  return g;
}

constexpr int kWidth = 1000, kHeight = 720;
constexpr int left = 100, right = 728, top = 70, bottom = 470;  // the peaks panel
constexpr int r_top = 500, r_bottom = 640;                      // the ratio panel

int pixel(double v) {
  return static_cast<int>(std::floor(v));
}

// Where values land: residues and bytes on log axes, the ratio on a linear one.
struct ProfileAxes {
  LogAxis x, y;
  double r_lo, r_hi;
  double ratio_y(double r) const {
    return r_bottom + 0.5 - (r - r_lo) / (r_hi - r_lo) * (r_bottom - r_top);
  }
};

// Grids and ticks: powers of two on both log axes; the lengths run are labelled, and powers of
// two where they leave room.
void draw_grid(Canvas& img, const ProfileAxes& a, std::span<const ProfilePlotLength> lengths) {
  const std::vector<double> x_ticks = log_ticks(a.x.lo, a.x.hi, 12, 0);
  for (double v : x_ticks) {
    img.vline(pixel(a.x.at(v)), top, bottom, kGrid);
    img.vline(pixel(a.x.at(v)), r_top, r_bottom, kGrid);
  }
  for (double v : log_ticks(a.y.lo, a.y.hi, 10, 4)) {
    img.hline(left, right, pixel(a.y.at(v)), kGrid);
    img.hline(left - 5, left - 1, pixel(a.y.at(v)), kBlack);
    img.text(left - 8, pixel(a.y.at(v)) + 0.5, byte_tick(v), kTickSize, kText, Anchor::end);
  }
  std::vector<double> labelled;
  const auto x_label = [&](double v, Rgb c) {
    const double x = a.x.at(v);
    for (double other : labelled) {
      if (std::abs(a.x.at(other) - x) < 34) return;
    }
    labelled.push_back(v);
    img.vline(pixel(x), r_bottom + 1, r_bottom + 5, kBlack);
    img.text(pixel(x) + 0.5, r_bottom + 16, std::to_string(std::lround(v)), kTickSize, c,
             Anchor::centre);
  };
  for (const ProfilePlotLength& l : lengths) x_label(static_cast<double>(l.n_res), kText);
  for (double v : x_ticks) x_label(v, kFaint);
}

// Stages (pale, underneath), then the prediction, then the measured peaks on top; the legend.
void draw_peaks(Canvas& img, const ProfileAxes& a, std::span<const ProfilePlotLength> lengths,
                const ProfileRanges& g, ProfilePlotKind kind) {
  const bool blocks = kind == ProfilePlotKind::single_blocks;
  std::vector<LegendRow> rows = {
      {blocks ? "predicted peak: the larger block" : "predicted peak (memory planner)",
       LegendRow::Mark::line, kPredicted},
      {blocks ? "measured peak RSS (that block)" : "measured peak RSS (whole run)",
       LegendRow::Mark::dot, kMeasured}};
  // Blocks-only: the whole run's plan, which did not run, pale above the blocks.
  std::vector<Point> plan;
  for (const ProfilePlotLength& l : lengths) {
    if (l.plan_bytes > 0)
      plan.push_back(
          {a.x.at(static_cast<double>(l.n_res)), a.y.at(static_cast<double>(l.plan_bytes))});
  }
  if (!plan.empty()) {
    const Rgb pale = mix(kWhite, kPredicted, 0.45);
    img.polyline(plan, pale, 2.5);
    rows.push_back({"whole-run plan peak (not run)", LegendRow::Mark::line, pale});
  }
  for (std::size_t k = 0; k < g.stage_names.size(); ++k) {
    const Rgb c = stage_colour(g.stage_names[k], k);
    std::vector<Point> run;
    for (const ProfilePlotLength& l : lengths) {
      for (const ProfilePlotStage& s : l.stages) {
        if (s.name == g.stage_names[k] && s.peak_bytes > 0)
          run.push_back(
              {a.x.at(static_cast<double>(l.n_res)), a.y.at(static_cast<double>(s.peak_bytes))});
      }
    }
    img.polyline(run, c, 2);
    for (const Point& p : run) dot(img, p, c, 5);
    rows.push_back({"measured peak: " + stage_label(g.stage_names[k]), LegendRow::Mark::light, c});
  }
  std::vector<Point> predicted;
  for (const ProfilePlotLength& l : lengths) {
    if (l.predicted_bytes > 0)
      predicted.push_back(
          {a.x.at(static_cast<double>(l.n_res)), a.y.at(static_cast<double>(l.predicted_bytes))});
  }
  img.polyline(predicted, kPredicted, 2.5);
  for (const ProfilePlotLength& l : lengths) {
    const double x = a.x.at(static_cast<double>(l.n_res));
    if (l.measured_bytes > 0) {
      dot(img, {x, a.y.at(static_cast<double>(l.measured_bytes))}, kMeasured, 9);
    } else if (l.predicted_bytes > 0) {
      cross(img, {x, a.y.at(static_cast<double>(l.predicted_bytes))}, kMeasured, 6);
    }
  }
  if (g.any_failed)
    rows.push_back({"run failed (reason in profile.csv)", LegendRow::Mark::cross, kMeasured});
  img.frame(left, top, right, bottom, kBlack);
  legend(img, right + 14, top, rows);
}

// Measured / predicted, with the ±10% band the planner is held to.
void draw_ratios(Canvas& img, const ProfileAxes& a, std::span<const ProfilePlotLength> lengths) {
  img.fill_rect(left + 1, pixel(a.ratio_y(1.1)), right, pixel(a.ratio_y(0.9)) + 1, kBand);
  for (double v : ratio_ticks(a.r_lo, a.r_hi)) {
    img.hline(left - 5, left - 1, pixel(a.ratio_y(v)), kBlack);
    img.text(left - 8, pixel(a.ratio_y(v)) + 0.5, fixed(v, v == std::round(v * 10) / 10 ? 1 : 2),
             kTickSize, kText, Anchor::end);
  }
  img.hline(left, right, pixel(a.ratio_y(1.0)), kFaint);
  img.text(right + 8, (a.ratio_y(1.1) + a.ratio_y(0.9)) / 2, "band: within 10%", kSmallSize,
           {60, 140, 60});
  // A ratio at its length; `side` -1 / +1 moves the dot 5 px that way and labels it on that side
  // (two blocks of one length with close ratios stay apart), 0 labels it on the right.
  const auto point = [&](const ProfilePlotLength& l, double r, Rgb c, int side) {
    const Point p{a.x.at(static_cast<double>(l.n_res)) + 5.0 * side, a.ratio_y(r)};
    dot(img, p, c, 8);
    img.text(side < 0 ? p.x - 8 : p.x + 8, p.y - 9, fixed(r, 2), kSmallSize, kText,
             side < 0 ? Anchor::end : Anchor::start);
  };
  for (const ProfilePlotLength& l : lengths) {
    // Blocks: each block's own ratio, in its colour, on alternate sides.
    std::size_t drawn = 0;
    for (std::size_t k = 0; k < l.stages.size(); ++k) {
      const ProfilePlotStage& s = l.stages[k];
      if (!has_ratio(s)) continue;
      point(l, ratio(s.peak_bytes, s.predicted_bytes), stage_hue(s.name, k),
            drawn++ % 2 == 1 ? -1 : 1);
    }
    if (drawn == 0 && l.measured_bytes > 0 && l.predicted_bytes > 0)
      point(l, ratio(l.measured_bytes, l.predicted_bytes), kMeasured, 0);
  }
  img.frame(left, r_top, right, r_bottom, kBlack);
}

void draw_titles(Canvas& img, const std::string& title, const std::string& subtitle) {
  img.fitted_text(kWidth / 2.0, 24, title, kWidth - 40, kTitleSize, kText);
  img.fitted_text(kWidth / 2.0, 48, subtitle, kWidth - 40, kSubtitleSize, kFaint);
  const double centre = (left + right) / 2.0;
  img.text(centre, kHeight - 30, "Residues (N_res, log scale)", kLabelSize, kText, Anchor::centre);
  img.text_up(24, (top + bottom) / 2.0, "Peak resident memory (log scale)", kLabelSize, kText);
  img.text_up(24, (r_top + r_bottom) / 2.0, "measured /", kSmallSize, kText);
  img.text_up(40, (r_top + r_bottom) / 2.0, "predicted", kSmallSize, kText);
}

}  // namespace

std::string profile_plot_png(const std::string& title, const std::string& subtitle,
                             std::span<const ProfilePlotLength> lengths, ProfilePlotKind kind) {
  const ProfileRanges g = profile_ranges(lengths);
  const ProfileAxes axes{{g.n_lo / 1.15, g.n_hi * 1.15, left + 0.5, right + 0.5},
                         {g.b_lo / 1.25, g.b_hi * 1.25, bottom + 0.5, top + 0.5},
                         g.r_lo,
                         g.r_hi};
  Canvas img(kWidth, kHeight, kWhite);
  draw_grid(img, axes, lengths);
  draw_peaks(img, axes, lengths, g, kind);
  draw_ratios(img, axes, lengths);
  draw_titles(img, title, subtitle);
  return img.png();
}

}  // namespace cpufold
