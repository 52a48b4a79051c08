// OUTPUT_DIR/config.json: the batch's settings with ColabFold's key names.
#pragma once

#include <cstddef>
#include <string>

#include "pipeline/batch/predict.h"

namespace cpufold {

// The file's text; `rank` is the ranking actually used (never automatic).
std::string config_json(const PredictOptions& options, RankBy rank, std::size_t num_queries);

// The settings that decide a batch's output files, as a JSON object (config.json without the
// input, its size and order, and the threads, memory budget and chunk, which change only how
// a run is done): runs that share an output directory must agree on them.
std::string output_settings_json(const PredictOptions& options, RankBy rank);

}  // namespace cpufold
