// profile.png of `cpufold profile`: peak memory against length, the planner's prediction as a
// line and the measured peaks as points, each stage's measured peak as a lighter series, and
// below it measured / predicted with the ±10% band the planner aims for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cpufold {

struct ProfilePlotStage {
  std::string name;  // "trunk"
  std::size_t peak_bytes = 0;
};

struct ProfilePlotLength {
  std::int64_t n_res = 0;
  std::size_t predicted_bytes = 0;       // 0: not planned
  std::size_t measured_bytes = 0;        // 0: the run failed
  std::vector<ProfilePlotStage> stages;  // measured, in run order
};

// Log-scaled axes (residues and bytes, labelled in KiB / MiB / GiB). InternalError when no
// length has a figure to draw.
std::string profile_plot_png(const std::string& title, const std::string& subtitle,
                             std::span<const ProfilePlotLength> lengths);

}  // namespace cpufold
