// What the predict options mean for one model run: the feature pipeline's settings and the
// runner's recycling options.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "pipeline/batch/predict.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

// AF2's settings for `model` ("model_3"), with --max-seq / --max-extra-seq applied.
FeatureConfig model_feature_config(const PredictOptions& o, const std::string& model,
                                   std::uint64_t seed);

// Recycles, ensemble, early stop, chunk size and spill dir; the caller adds progress and callbacks.
RunOptions model_run_options(const PredictOptions& o);

// The same for a batch run: checkpoints keyed also by the options that decide when a run
// stops (--stop-at-score, the ranking), and none with --save-recycles (a resumed run would
// miss the structures of the iterations before its checkpoint).
RunOptions batch_run_options(const PredictOptions& o, RankBy rank);

// The after_iteration callback of a batch run: ColabFold checks its ranking score after every
// recycle (--stop-at-score) and, with --save-recycles, hands each iteration's prediction to
// `save_recycle`. Empty when neither option is set.
using AfterIteration = std::function<bool(const Prediction&, std::int64_t iteration)>;
AfterIteration recycle_checks(const PredictOptions& o, RankBy rank,
                              std::function<void(const Prediction&)> save_recycle);

// Feature samples one run reads: every iteration's ensemble.
std::int64_t feature_samples(const PredictOptions& o);

}  // namespace cpufold
