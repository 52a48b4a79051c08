// Checks of the command line's numeric options, in one place: strict parsing (decimal only, no
// trailing junk, no overflow, finite) and the valid range of each option with why.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/batch/predict_limits.h"

namespace cpufold {

// The predict options' limits (kMaxRecycles, kMaxRows, ...) live with predict(), which checks
// them too: pipeline/batch/predict_limits.h. Those below concern the command line alone.

// colabfold_batch options that have no effect in cpufold (relaxation, padding, template hits):
// only their type is checked, as ColabFold's argparse does, within these bounds.
inline constexpr std::int64_t kMaxIgnoredCount = std::numeric_limits<std::int32_t>::max();
inline constexpr double kMaxIgnoredReal = 1e9;
// Timed repetitions of a benchmark.
inline constexpr std::int64_t kMaxRepeat = 100'000;

// OpenMP threads: 1 to 4 x the hardware threads (at least 4). More threads than hardware
// threads only contend, and several kernels keep per-thread scratch (the triangle update holds
// an n_res x n_res product per thread), so 10000 threads exhausted memory and 100000 crashed.
int max_threads();
std::string max_threads_reason();  // "4 x the 2 hardware threads of this machine"

// Parsers: InputError naming the option, the value and the valid range.
std::int64_t parse_integer(std::string_view option, std::string_view text, std::int64_t min,
                           std::int64_t max, std::string_view why = {});
double parse_real(std::string_view option, std::string_view text, double min, double max);
// "1,2,3": distinct AlphaFold2 model numbers 1-5, at least one.
std::vector<int> parse_model_order(std::string_view option, std::string_view text);

// The same checks as CLI11 validators (the message then names the option). Attach them with
// Option::transform, not check(): they rewrite the value in plain decimal, so CLI11's own
// conversion never reads "010" as octal 8.
CLI::Validator integer_in(std::int64_t min, std::int64_t max, std::string why = {});
CLI::Validator integer_in(const IntegerRange& range);
CLI::Validator real_in(double min, double max);
CLI::Validator thread_count();
CLI::Validator model_order_list();
// A memory size ("1.5G", "800M"; memory/byte_size.h), rewritten as bytes in decimal.
CLI::Validator byte_size();
// An existing directory this process can create files in (checked now, before any work).
CLI::Validator writable_directory_option();
// A file to write: not an existing directory, in an existing directory this process can create
// files in (checked now, so a long run does not end by failing to write its result).
CLI::Validator output_file_option();
// A directory to write into, created when missing: not an existing file.
CLI::Validator output_directory_option();

}  // namespace cpufold
