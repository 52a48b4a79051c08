// OUTPUT_DIR/config.json: the batch's settings with ColabFold's key names.
#pragma once

#include <cstddef>
#include <string>

#include "pipeline/batch/predict.h"

namespace cpufold {

// The file's text; `rank` is the ranking actually used (never automatic).
std::string config_json(const PredictOptions& options, RankBy rank, std::size_t num_queries);

}  // namespace cpufold
