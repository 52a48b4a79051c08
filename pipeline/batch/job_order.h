// colabfold_batch's job order and names beyond what discover_jobs does: --sort-queries-by
// msa_depth / random and --jobname-prefix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/batch/predict_jobs.h"

namespace cpufold {

// msa_depth: jobs whose own A3M has the most rows first (jobs without one count 0; ties keep
// their order); random: a shuffle drawn from `seed` alone, the same on every machine. The
// other orders are discover_jobs' and leave `jobs` as they are.
void reorder_jobs(std::vector<PredictJob>& jobs, QueryOrder order, std::uint64_t seed);

// ColabFold's --jobname-prefix: job i (0-based, in run order) is named PREFIX_i with i
// zero-padded to the digit count of the number of jobs, PREFIX made file-safe.
void apply_jobname_prefix(std::vector<PredictJob>& jobs, const std::string& prefix);

}  // namespace cpufold
