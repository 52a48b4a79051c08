// What timings.json keeps of one model run, completed from the run's Prediction.
#pragma once

#include "pipeline/batch/timings_file.h"
#include "pipeline/output/job_outputs.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

// `run` (its model, seed, load and feature seconds and MSA rows, which the caller knows) with
// the prediction's stage times, iterations and memory; pLDDT and pTM as rendered (`r`), pTM
// only with a PAE head.
RunTiming run_timing(RunTiming run, const Prediction& p, const RenderedPrediction& r);

}  // namespace cpufold
