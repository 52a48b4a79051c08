// What the predict options mean for one model run: the feature pipeline's settings and the
// runner's recycling options.
#pragma once

#include <cstdint>
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

// Feature samples one run reads: every iteration's ensemble.
std::int64_t feature_samples(const PredictOptions& o);

}  // namespace cpufold
