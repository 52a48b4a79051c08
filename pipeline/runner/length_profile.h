// `cpufold profile` for one length: the whole model on random inputs of the given sizes, or with
// --blocks-only one extra-MSA and one Evoformer block at the run's plan, with the planner's
// prediction and the measured peak resident memory and time of each stage (or block).
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
#include "pipeline/runner/block_peak.h"
#include "pipeline/runner/shared_run_options.h"
#include "pipeline/runner/stage_meter.h"

namespace cpufold {

// The stages measured, in run order: loading the weights, then the run's own stages.
inline constexpr const char* kProfileStages[] = {"load", "features", "trunk", "structure", "heads"};

// The blocks --blocks-only runs, in run order (the extra-MSA stack runs before the Evoformer's).
inline constexpr const char* kProfileBlocks[] = {"extra_msa", "evoformer"};
// "extra-MSA block", "Evoformer block": for messages and the plot.
std::string profile_block_title(const std::string& name);
// "extra_msa_block": the block's stage (its peak and time as the meter measures them).
std::string profile_block_stage(const std::string& name);

// The sizes of one profiled run.
struct ProfileSizes {
  std::int64_t n_res = 0, msa_rows = 512, extra_rows = 5120, templates = 4, recycles = 0;
};

// The shared options (chunks, budget, precision; no spill: a profile measures DRAM) and the run.
struct ProfileRequest : SharedRunOptions {
  std::filesystem::path params;
  ProfileSizes sizes;
  bool blocks_only = false;  // one block of each stack instead of the whole model
};

// One block of a blocks-only profile.
struct ProfiledBlock {
  std::string name;        // of kProfileBlocks
  std::int64_t n_seq = 0;  // its rows: the extra rows, or the MSA rows and the templates'
  std::int64_t chunk = 0;  // the plan's chunk for its family; 0: unsliced
  BlockPeak predicted;     // the planner's process and weights, the block's arenas
  bool ran = false;
  std::size_t measured_peak_bytes = 0;  // the process's peak while the block was set up and ran
  double seconds = 0;                   // the block's wall time (set-up of its inputs aside)

  // measured / predicted; 0 before it ran.
  double ratio() const;
};

struct LengthProfile {
  ProfileSizes sizes;
  bool blocks_only = false;  // what ran: the whole model, or one block of each stack
  // The plan (set once the model is loaded, before it runs).
  bool planned = false;
  ChunkSizes chunks;  // 0: unsliced
  // The prediction for what runs: the whole run's plan peak, or blocks-only the predicted peak
  // of the block predicted the larger (the ratio is then that block's).
  std::size_t predicted_peak_bytes = 0;
  std::size_t plan_peak_bytes = 0;  // the whole run's plan peak, in either mode
  std::vector<PlannedBlock> blocks;
  std::vector<ProfiledBlock> block_runs;  // blocks-only: kProfileBlocks, predicted from the plan
  // The run.
  bool ok = false;
  std::string error;  // why the length failed (ok = false)
  // The process's peak resident memory over the stages (weights loading included), or
  // blocks-only the peak while the block predicted the larger ran.
  std::size_t measured_peak_bytes = 0;
  std::vector<StagePeak> stages;  // of kProfileStages (blocks-only: load, then each block)
  std::string stage_method;       // "clear_refs" or "sampled" (stage_meter.h)

  // measured / predicted; 0 when either is missing.
  double ratio() const;
  // The stage named so, or nullptr.
  const StagePeak* stage(const std::string& name) const;
  // The block run named so (kProfileBlocks), or nullptr.
  const ProfiledBlock* block_run(const std::string& name) const;
};

// Loads the model, plans and runs one length in this process: the whole model, or with
// request.blocks_only its blocks (profile_blocks.h), each seen by `on_block` as it ends.
// `on_plan` sees the profile once the plan is known (before anything runs), so a run that is
// killed still leaves it. Throws InputError for sizes the model cannot take (templates for a
// model without them), BudgetError when mem_budget cannot be met (or a block cannot fit).
LengthProfile profile_length(const ProfileRequest& request,
                             const std::function<void(const LengthProfile&)>& on_plan,
                             const std::function<void(const ProfiledBlock&)>& on_block = {});

}  // namespace cpufold
