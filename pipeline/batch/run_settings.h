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

// colabfold_batch's MSA depths for monomer models when --max-seq / --max-extra-seq (or
// --max-msa) are not given.
inline constexpr std::int64_t kColabfoldMaxSeq = 512;
inline constexpr std::int64_t kColabfoldMaxExtraSeq = 5120;

// AF2's settings for `model` ("model_3") with ColabFold's MSA depths: --max-seq and
// --max-extra-seq, else kColabfoldMaxSeq and kColabfoldMaxExtraSeq for every model.
FeatureConfig model_feature_config(const PredictOptions& o, const std::string& model,
                                   std::uint64_t seed);

// The shared options, recycles, ensemble and early stop; the caller adds progress and callbacks.
RunOptions model_run_options(const PredictOptions& o);

// The same for a batch run: ColabFold's check of the ranking score after every recycle
// (--stop-at-score, stop_when), every iteration's structure kept with --save-recycles (the
// runner then writes no checkpoints: a resumed run would miss the structures of the iterations
// before its checkpoint), checkpoints keyed also by the options that decide when a run stops.
RunOptions batch_run_options(const PredictOptions& o, RankBy rank);

// RunOptions::stop_when for --stop-at-score: the ranking score above it. Empty when the score
// cannot be exceeded (100, the default).
std::function<bool(const Prediction&)> stop_at_score(const PredictOptions& o, RankBy rank);

// Feature samples one run reads: every iteration's ensemble.
std::int64_t feature_samples(const PredictOptions& o);

}  // namespace cpufold
