// The files of `cpufold profile`: profile.csv (one row per length) and profile.png.
#pragma once

#include <filesystem>
#include <span>
#include <string>

#include "pipeline/runner/length_profile.h"

namespace cpufold {

// Header and one row per length. Columns: the sizes, the chosen chunk (0: unsliced), the
// predicted and measured peak and their ratio, each stage's peak and seconds, each planned
// block (planned_<block>_bytes), the mode (model / blocks), the whole run's plan peak, each
// block's time, peak and prediction (blocks-only), how stage peaks were measured, status
// (ok / failed) and error. A failed length leaves what it did not measure empty.
std::string profile_csv(std::span<const LengthProfile> lengths);

// "process (code, libraries, threads, heap)" -> "planned_process_bytes".
std::string planned_block_column(const std::string& block_name);

// Writes DIR/profile.csv and, when any length has a figure, DIR/profile.png (both atomically;
// DIR is created). Returns the paths written.
std::vector<std::filesystem::path> write_profile_files(const std::filesystem::path& dir,
                                                       std::span<const LengthProfile> lengths,
                                                       const std::string& title,
                                                       const std::string& subtitle);

}  // namespace cpufold
