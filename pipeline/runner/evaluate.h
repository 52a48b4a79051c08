// `cpufold evaluate`: run the model on processed features from an HDF5 file (the reference's
// `inputs/` layout) and write the reference's `outputs/` datasets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "evoformer/trunk.h"
#include "memory/memory_plan.h"
#include "ops/weight_cache.h"
#include "pipeline/runner/shared_run_options.h"

namespace cpufold {

// The shared options (chunks, budget, spill, precision) and evaluate's own.
struct EvaluateOptions : SharedRunOptions {
  std::filesystem::path params;
  std::filesystem::path features;
  std::filesystem::path out;
  std::optional<std::int64_t> recycles;  // default: every iteration the feature file holds
  double early_stop_tolerance = 0;       // Å of CA-distance change; <= 0: off
  std::filesystem::path trace;           // empty: no trace
  std::function<void(const std::string&)> progress;  // stage messages; may be empty
};

struct EvaluateReport {
  std::int64_t n_res = 0, n_seq = 0, iterations = 0;
  double seconds = 0;
  double mean_plddt = 0;
  std::optional<double> ptm;             // _ptm presets only
  std::size_t planned_bytes = 0;         // arenas reserved for activations
  std::size_t predicted_peak_bytes = 0;  // the plan's peak (process and arenas)
  ChunkSizes chunks;                     // the plan's chunk sizes
  std::size_t peak_rss_bytes = 0;
  WeightResidency weights;             // of the model as built
  std::filesystem::path weight_cache;  // the shared file of its Linear weights, if any
};

EvaluateReport evaluate(const EvaluateOptions& options);

// The memory plan evaluate() would follow (same model, features, chunk and budget), without
// running the model.
struct EvaluatePlan {
  TrunkDims dims;
  MemoryPlan plan;
};
EvaluatePlan plan_evaluate(const EvaluateOptions& options);

}  // namespace cpufold
