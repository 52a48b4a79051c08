// profile.png of `cpufold profile`: peak memory against length, the planner's prediction as a
// line and the measured peaks as points, each stage's measured peak as a lighter series, and
// below it measured / predicted with the ±10% band the planner aims for. With --blocks-only the
// points are single blocks' peaks, each block a series of its own with its own ratio, and the
// whole run's plan a pale line above them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cpufold {

struct ProfilePlotStage {
  std::string name;  // "trunk", or a block: "Evoformer block"
  std::size_t peak_bytes = 0;
  std::size_t predicted_bytes = 0;  // a block's own prediction: its ratio is drawn; 0: none
};

struct ProfilePlotLength {
  std::int64_t n_res = 0;
  std::size_t predicted_bytes = 0;       // 0: not planned
  std::size_t measured_bytes = 0;        // 0: the run failed
  std::vector<ProfilePlotStage> stages;  // measured, in run order
  std::size_t plan_bytes = 0;            // single blocks: the whole run's plan peak; 0: none
};

// What the points are: whole runs, or single blocks (`profile --blocks-only`): the legend says.
enum class ProfilePlotKind { whole_runs, single_blocks };

// Log-scaled axes (residues and bytes, labelled in KiB / MiB / GiB). InternalError when no
// length has a figure to draw.
std::string profile_plot_png(const std::string& title, const std::string& subtitle,
                             std::span<const ProfilePlotLength> lengths,
                             ProfilePlotKind kind = ProfilePlotKind::whole_runs);

}  // namespace cpufold
