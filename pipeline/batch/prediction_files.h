// From the runner's Prediction to what the output writers take: the view of its outputs, and
// the per-prediction files written while the prediction is still in memory (--save-all,
// --save-single-representations, --save-pair-representations).
#pragma once

#include <filesystem>
#include <string>

#include "pipeline/features/raw_features.h"
#include "pipeline/output/job_outputs.h"
#include "pipeline/output/prediction_view.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

// Views into `p` and `raw`: valid while both live.
PredictionView view_of(const Prediction& p, const RawFeatures& raw);
// One kept iteration's structure (--save-recycles): atoms and pLDDT, no PAE.
PredictionView view_of(const IterationStructure& s, const RawFeatures& raw);

struct UnrankedFiles {
  bool all = false;          // {job}_all_{tag}.h5: every model output
  bool single_repr = false;  // {job}_single_repr_{tag}.npy
  bool pair_repr = false;    // {job}_pair_repr_{tag}.npy
};

// Writes the selected files under unranked_path() and records each in `r.unranked`, so
// write_job_outputs renames them by rank.
void write_unranked_files(const std::filesystem::path& dir, const std::string& job,
                          const std::string& tag, const Prediction& p, const UnrankedFiles& which,
                          RenderedPrediction& r);

}  // namespace cpufold
