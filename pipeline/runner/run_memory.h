// The plan step of a run: the first feature sample read, the memory plan made for its sizes, and
// every arena of the run (and the spill tier, when the plan spills) made before any model work.
#pragma once

#include <functional>
#include <string>

#include "evoformer/trunk.h"
#include "memory/arena.h"
#include "pipeline/features/feature_source.h"
#include "pipeline/runner/model_runner.h"

namespace cpufold {

struct PlannedRun {
  TrunkInputs inputs;  // the first feature sample, in the caller's features arena
  TrunkDims dims;      // its sizes
  ChunkSizes chunks;   // the plan's
};

// Reads sample 0 into `features`, plans (ModelRunner::plan) and makes p.arena, p.scratch and,
// when the plan spills, p.spill_tier and p.activations; p.plan and p.planned_bytes say what was
// chosen. BudgetError when o.mem_budget is given and no plan fits it; without a budget, a plan
// above the memory available only warns through `say`.
PlannedRun plan_run(const ModelRunner& runner, const FeatureSource& source, const RunOptions& o,
                    Arena& features, Prediction& p,
                    const std::function<void(const std::string&)>& say);

}  // namespace cpufold
