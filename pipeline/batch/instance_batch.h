// `cpufold predict` on several instances: each job runs in a worker process (this executable
// with --worker-job) pinned to its own cores, admitted when its planned peak fits beside the
// running jobs' under one memory budget, longest predicted time first.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "pipeline/batch/predict.h"

namespace cpufold {

// Whether `o` asks for the multi-instance scheduler: --instances other than 1, or neither
// --instances nor --threads given (auto). A worker never does.
bool wants_instances(const PredictOptions& o);

// Plans every job, picks instances x threads (o.instances / o.threads_per_instance, or the time
// model's best layout for the cores and memory), and runs the batch. With one instance the jobs
// run in this process (run_jobs) on the chosen threads. A job that cannot fit the budget even
// alone fails before any work (out of memory) unless --spill-dir lets it run alone spilled.
PredictSummary run_instances(const PredictOptions& o, std::vector<PredictJob> jobs, RankBy rank,
                             std::map<int, std::filesystem::path> params,
                             const std::vector<std::string>& warnings);

}  // namespace cpufold
