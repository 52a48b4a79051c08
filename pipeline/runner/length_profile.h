// `cpufold profile` for one length: the whole model on random inputs of the given sizes, with
// the planner's prediction and the measured peak resident memory and time of each stage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memory/dtype.h"
#include "memory/memory_plan.h"
#include "pipeline/runner/shared_run_options.h"
#include "pipeline/runner/stage_meter.h"

namespace cpufold {

// The stages measured, in run order: loading the weights, then the run's own stages.
inline constexpr const char* kProfileStages[] = {"load", "features", "trunk", "structure", "heads"};

// The sizes of one profiled run.
struct ProfileSizes {
  std::int64_t n_res = 0, msa_rows = 512, extra_rows = 5120, templates = 4, recycles = 0;
};

// The shared options (chunks, budget, precision; no spill: a profile measures DRAM) and the run.
struct ProfileRequest : SharedRunOptions {
  std::filesystem::path params;
  ProfileSizes sizes;
};

struct LengthProfile {
  ProfileSizes sizes;
  // The plan (set once the model is loaded, before it runs).
  bool planned = false;
  ChunkSizes chunks;  // 0: unsliced
  std::size_t predicted_peak_bytes = 0;
  std::vector<PlannedBlock> blocks;
  // The run.
  bool ok = false;
  std::string error;                    // why the length failed (ok = false)
  std::size_t measured_peak_bytes = 0;  // the process's peak resident memory over the stages
  std::vector<StagePeak> stages;        // of kProfileStages, as measured
  std::string stage_method;             // "clear_refs" or "sampled" (stage_meter.h)

  // measured / predicted; 0 when either is missing.
  double ratio() const;
  // The stage named so, or nullptr.
  const StagePeak* stage(const std::string& name) const;
};

// Loads the model, plans and runs one length in this process. `on_plan` sees the profile
// once the plan is known (before the model runs), so a run that is killed still leaves it.
// Throws InputError for sizes the model cannot take (templates for a model without them),
// BudgetError when mem_budget cannot be met.
LengthProfile profile_length(const ProfileRequest& request,
                             const std::function<void(const LengthProfile&)>& on_plan);

}  // namespace cpufold
