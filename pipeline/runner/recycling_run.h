// The iteration step of a run (AF2 Alg. 2): after the plan step (run_memory.h), per recycling
// iteration the trunk with its ensemble, the structure module and the stop checks, with a
// checkpoint between iterations; then the heads on the last iteration's outputs. Outputs are
// only computed here: callers write files from the returned Prediction.
#pragma once

#include "pipeline/features/feature_source.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

class PredictionHeads;

// The modules a run goes through, owned by the ModelRunner.
struct ModelParts {
  const ModelRunner& runner;
  const Trunk& trunk;
  const StructureModule& structure_module;
  const PredictionHeads& heads;
};

Prediction run_recycling(const ModelParts& model, const FeatureSource& source,
                         const RunOptions& options);

}  // namespace cpufold
