// What timings.json and the log keep of one model run, taken from the run's Prediction.
#pragma once

#include <cstdint>
#include <string>

#include "pipeline/batch/batch_log_lines.h"
#include "pipeline/batch/timings_file.h"
#include "pipeline/output/job_outputs.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

struct ModelRunInfo {
  std::string model;  // "model_3"
  std::uint64_t seed = 0;
  double load_seconds = 0;     // 0 when the model was loaded already
  double feature_seconds = 0;  // its feature pipeline
  std::int64_t n_seq = 0, n_extra = 0;
};

// The run's timings.json record; pLDDT and pTM as rendered (`r`), pTM only with a PAE head.
RunTiming run_timing(const ModelRunInfo& run, const Prediction& p, const RenderedPrediction& r);

// What the run's "done" log line reports.
RunSummary run_summary(double seconds, const Prediction& p, const RenderedPrediction& r);

}  // namespace cpufold
