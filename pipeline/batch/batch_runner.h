// The batch loop of `cpufold predict`: each job with each selected model and seed, in
// ColabFold's order; progress and time left in the log; timings.json; each job's ranked files.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "pipeline/batch/predict.h"

namespace cpufold {

// Runs `jobs` (checked and ordered by batch_inputs) into o.output_dir, which exists; `warnings`
// go into the log after its first line. A job that fails fails alone (its outcome says why).
PredictSummary run_jobs(const PredictOptions& o, std::vector<PredictJob> jobs, RankBy rank,
                        std::map<int, std::filesystem::path> params,
                        const std::vector<std::string>& warnings);

}  // namespace cpufold
