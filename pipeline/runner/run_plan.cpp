#include "pipeline/runner/run_plan.h"

#include <algorithm>
#include <optional>

#include "memory/byte_size.h"

namespace cpufold {

std::size_t process_bytes(const ModelConfig& config) {
  // Measured peak RSS minus the other planned blocks (`cpufold profile`, one iteration): 32-38
  // MiB with the 4-block test weights (N = 64-256, fp32 and bf16), 60-71 MiB with model_1_ptm's
  // 54 blocks (N = 64-256). Most of the per-block part is the oneDNN primitives of the Linears,
  // made only for the row counts a run uses.
  constexpr std::size_t kBase = std::size_t{36} << 20;
  constexpr std::size_t kPerBlock = std::size_t{768} << 10;
  const auto blocks = static_cast<std::size_t>(
      config.n_evoformer_blocks + config.n_extra_msa_blocks + config.n_template_blocks);
  return kBase + kPerBlock * blocks;
}

SpillLevel spill_level(const PlanCandidate& candidate) {
  SpillLevel level = SpillLevel::none;
  for (const PlannedBlock& b : candidate.spill) {
    if (b.name == kOutputsBlock) return SpillLevel::outputs;
    if (b.name == kActivationsBlock) level = SpillLevel::activations;
  }
  return level;
}

namespace {

PlanCandidate plan_candidate(const ModelConfig& config, std::int64_t chunk, const RunArenas& a,
                             const PlanRequest& r, SpillLevel level) {
  PlanCandidate c;
  c.chunk = chunk;
  c.relative_time = r.time.relative_time(chunk) * r.time.spill_factor(level);
  c.blocks = {{"process (code, libraries, threads, heap)", process_bytes(config)},
              {"shared weights (the mapped weight cache)", r.shared_weight_bytes},
              {"private weights", r.private_weight_bytes},
              {"features arena", a.features}};
  if (level != SpillLevel::none && r.spill_streams_weights) {
    // The weight cache is a file too: when the memory limit presses, the kernel drops the pages
    // of blocks that ran and reads them back at the next iteration, as it does for the spilled
    // arenas. Resident: about the weights of two blocks (the one running and the next).
    const auto blocks = static_cast<std::size_t>(std::max<std::int64_t>(
        1, config.n_evoformer_blocks + config.n_extra_msa_blocks + config.n_template_blocks));
    c.blocks[1] = {"shared weights (streamed from their file)",
                   std::min(r.shared_weight_bytes, 2 * r.shared_weight_bytes / blocks)};
  }
  (level == SpillLevel::outputs ? c.spill : c.blocks).push_back({kOutputsBlock, a.outputs});
  c.blocks.push_back({"scratch arena", a.scratch});
  if (level != SpillLevel::none) c.spill.push_back({kActivationsBlock, a.activations});
  return c;
}

}  // namespace

MemoryPlan plan_run(const ModelConfig& config, const TrunkDims& d, const PlanRequest& r,
                    const std::function<RunArenas(std::int64_t chunk, bool apart)>& arenas) {
  std::vector<PlanCandidate> candidates;
  std::optional<PlanCandidate> leanest_dropped;  // the leanest spilled plan the disk cannot hold
  const auto add = [&](std::int64_t chunk) {
    candidates.push_back(plan_candidate(config, chunk, arenas(chunk, false), r, SpillLevel::none));
    if (!r.may_spill) return;
    const RunArenas apart = arenas(chunk, true);
    for (const SpillLevel level : {SpillLevel::activations, SpillLevel::outputs}) {
      PlanCandidate c = plan_candidate(config, chunk, apart, r, level);
      if (r.spill_free_bytes == 0 || c.spill_bytes() <= r.spill_free_bytes) {
        candidates.push_back(std::move(c));
      } else if (!leanest_dropped || c.dram_bytes() < leanest_dropped->dram_bytes()) {
        leanest_dropped = std::move(c);
      }
    }
  };
  if (r.chunk) {
    add(*r.chunk);
  } else {
    const std::int64_t widest = std::max({d.n_res, d.n_seq + d.n_templ, d.n_extra});
    for (const std::int64_t c : kChunkCandidates) {
      // A chunk that covers every sliced axis is the unsliced plan again.
      if (c > 0 && c >= widest) continue;
      add(c);
    }
  }
  MemoryPlan plan = choose_plan(std::move(candidates), r.budget, r.usable_bytes, kPlanTimeSlack);
  plan.time_model = r.time.source;
  // With the chunk given there was no choice of chunk to explain, only of the spill tier.
  if (r.chunk && plan.fits) {
    plan.why = "the chunk size given (--chunk-size)" +
               (r.may_spill ? "; among its plans " + plan.why : std::string());
  }
  if (leanest_dropped && leanest_dropped->dram_bytes() < plan.min_budget_bytes) {
    // Say what a larger spill directory would have bought.
    plan.spill_note = "a spilled plan needing only " + format_bytes(leanest_dropped->dram_bytes()) +
                      " of DRAM (chunk size " + std::to_string(leanest_dropped->chunk) +
                      ") would put " + format_bytes(leanest_dropped->spill_bytes()) + " in " +
                      r.spill_where + ", which has " + format_bytes(r.spill_free_bytes) + " free";
  }
  return plan;
}

}  // namespace cpufold
