#include "pipeline/runner/run_plan.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "pipeline/runner/model_flops.h"

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

std::vector<std::int64_t> family_chunks(ChunkFamily family, const TrunkDims& d) {
  std::int64_t widest = d.n_res;
  if (family == ChunkFamily::extra_msa) widest = std::max(widest, d.n_extra);
  if (family == ChunkFamily::evoformer) widest = std::max(widest, d.n_seq + d.n_templ);
  std::vector<std::int64_t> chunks;
  for (const std::int64_t c : kChunkCandidates) {
    if (c == 0 || c < widest) chunks.push_back(c);
  }
  return chunks;
}

FamilyShares family_shares(const ModelConfig& config, const TrunkDims& d) {
  const StageFlops f = stage_flops(config, {d.n_res, d.n_seq, d.n_extra, d.n_templ});
  return {f.templates, f.extra_msa, f.embedders + f.evoformer, f.structure + f.heads};
}

namespace {

PlanCandidate plan_candidate(const ModelConfig& config, const TrunkDims& d,
                             const ChunkSizes& chunks, const RunArenas& a, const PlanRequest& r,
                             const FamilyShares& shares, SpillLevel level) {
  PlanCandidate c;
  c.chunks = chunks;
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
  if (level != SpillLevel::none) {
    c.spill.push_back({kActivationsBlock, a.activations});
    // The spilled tensors are streamed through DRAM a slab at a time (memory/spill_window.h).
    c.blocks.push_back(
        {kSpillWindowBlock,
         a.activations_window + (level == SpillLevel::outputs ? a.outputs_window : 0)});
  }
  const double compute = r.time.relative_time(chunks, shares);
  c.relative_time = compute * r.time.spill_factor(level);
  if (level != SpillLevel::none && r.compute_gflops > 0 && r.time.spill_bandwidth > 0 &&
      r.spill_traffic) {
    // The unsliced run's compute seconds from its FLOPs; the spill traffic's seconds on top.
    const StageFlops f = stage_flops(config, {d.n_res, d.n_seq, d.n_extra, d.n_templ});
    const double flops = f.embedders + f.templates + f.extra_msa + f.evoformer + f.structure;
    c.spill_traffic_bytes = r.spill_traffic(chunks, level == SpillLevel::outputs,
                                            spill_cache_bytes(c, r.budget, r.usable_bytes));
    const double seconds = flops / (r.compute_gflops * 1e9);
    const double io = static_cast<double>(c.spill_traffic_bytes) / r.time.spill_bandwidth;
    c.relative_time = compute + (seconds > 0 ? io / seconds : 0);
    c.spill_slowdown = c.relative_time / compute;
  } else {
    c.spill_slowdown = r.time.spill_factor(level);
  }
  return c;
}

// One family's chunks (unsliced first) and the run's bytes with each, the other families at
// their leanest.
struct FamilyCurve {
  ChunkFamily family;
  std::vector<std::int64_t> chunks;
  std::vector<std::size_t> bytes;
};

// The chunk sets worth weighing. Each family's transients peak in a phase of their own, so a
// run's bytes are about the largest of its families' curves. For each level a curve reaches,
// every family takes its fastest chunk that stays under it. One chunk for all families, as
// --chunk-size gives, is among the sets too.
std::vector<ChunkSizes> chunk_sets(const TrunkDims& d, const TimeModel& time,
                                   const FamilyShares& shares,
                                   const std::function<std::size_t(const ChunkSizes&)>& bytes) {
  ChunkSizes leanest;
  std::vector<FamilyCurve> curves;
  for (const ChunkFamily f : kChunkFamilies) {
    curves.push_back({f, family_chunks(f, d), {}});
    leanest[f] = curves.back().chunks.back();
  }
  std::vector<std::size_t> levels;
  for (FamilyCurve& curve : curves) {
    for (const std::int64_t c : curve.chunks) {
      ChunkSizes k = leanest;
      k[curve.family] = c;
      curve.bytes.push_back(bytes(k));
      levels.push_back(curve.bytes.back());
    }
  }
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());

  std::vector<ChunkSizes> sets;
  const auto add = [&](ChunkSizes k) {
    // A family that takes no time here (no templates) follows the Evoformer's chunk, so the
    // plan does not name a chunk for work that does not run.
    if (shares.templates == 0) k.templates = k.evoformer;
    if (std::find(sets.begin(), sets.end(), k) == sets.end()) sets.push_back(k);
  };
  for (const std::size_t level : levels) {
    ChunkSizes k;
    for (const FamilyCurve& curve : curves) {
      // Of equally fast chunks the largest: the time model does not see every slice's overhead.
      std::optional<std::size_t> best;
      for (std::size_t i = 0; i < curve.chunks.size(); ++i) {
        const auto t = [&](std::size_t j) {
          return time.relative_time(curve.family, curve.chunks[j]);
        };
        if (curve.bytes[i] <= level && (!best || t(i) < t(*best))) best = i;
      }
      k[curve.family] = curve.chunks[best.value_or(curve.chunks.size() - 1)];
    }
    add(k);
  }
  for (const std::int64_t c : kChunkCandidates) {
    ChunkSizes k;
    for (const FamilyCurve& curve : curves) {
      const bool slices =
          std::find(curve.chunks.begin(), curve.chunks.end(), c) != curve.chunks.end();
      k[curve.family] = slices ? c : 0;
    }
    add(k);
  }
  return sets;
}

}  // namespace

std::size_t spill_cache_bytes(const PlanCandidate& c, std::optional<std::size_t> budget,
                              std::size_t usable) {
  std::size_t window = 0;
  for (const PlannedBlock& b : c.blocks) {
    if (b.name == kSpillWindowBlock) window = b.bytes;
  }
  const std::size_t limit = budget.value_or(usable), peak = c.dram_bytes();
  return window + (limit > peak ? limit - peak : 0);
}

void check_residue_count(std::int64_t n_res, std::int64_t c_z) {
  static_assert(kMaxResidues * kMaxResidues <= std::numeric_limits<std::int32_t>::max() &&
                (kMaxResidues + 1) * (kMaxResidues + 1) > std::numeric_limits<std::int32_t>::max());
  if (n_res <= kMaxResidues) return;
  const auto pair = static_cast<std::size_t>(n_res) * static_cast<std::size_t>(n_res) *
                    static_cast<std::size_t>(c_z) * sizeof(float);
  throw InputError(std::to_string(n_res) + " residues is more than cpufold can run (" +
                   std::to_string(kMaxResidues) + " at most: the pair representation's N x N " +
                   "rows must stay under oneDNN's matmul limit of 2^31 - 1 rows; at this length " +
                   "the pair alone holds " + format_bytes(pair) + ")");
}

MemoryPlan plan_run(const ModelConfig& config, const TrunkDims& d, const PlanRequest& r,
                    const std::function<RunArenas(const ChunkSizes& chunks, bool apart)>& arenas) {
  const FamilyShares shares = r.shares.value_or(family_shares(config, d));
  std::vector<PlanCandidate> candidates;
  std::optional<PlanCandidate> leanest_dropped;  // the leanest spilled plan the disk cannot hold
  const auto add_in_dram = [&](const ChunkSizes& chunks) {
    candidates.push_back(
        plan_candidate(config, d, chunks, arenas(chunks, false), r, shares, SpillLevel::none));
  };
  const auto add_spilled = [&](const ChunkSizes& chunks) {
    const RunArenas apart = arenas(chunks, true);
    for (const SpillLevel level : {SpillLevel::activations, SpillLevel::outputs}) {
      PlanCandidate c = plan_candidate(config, d, chunks, apart, r, shares, level);
      if (r.spill_free_bytes == 0 || c.spill_bytes() <= r.spill_free_bytes) {
        candidates.push_back(std::move(c));
      } else if (!leanest_dropped || c.dram_bytes() < leanest_dropped->dram_bytes()) {
        leanest_dropped = std::move(c);
      }
    }
  };
  if (r.chunks) {
    add_in_dram(*r.chunks);
    if (r.may_spill) add_spilled(*r.chunks);
  } else {
    for (const bool apart : {false, true}) {
      if (apart && !r.may_spill) break;
      // A spilled plan's chunks are weighed by the DRAM they hold, not by what they spill.
      const auto bytes = [&](const ChunkSizes& k) {
        const RunArenas a = arenas(k, apart);
        return apart ? a.spilled_dram() : a.total();
      };
      for (const ChunkSizes& k : chunk_sets(d, r.time, shares, bytes))
        apart ? add_spilled(k) : add_in_dram(k);
    }
  }
  MemoryPlan plan = choose_plan(std::move(candidates), r.budget, r.usable_bytes, kPlanTimeSlack);
  plan.time_model = r.time.source;
  // With the chunk given there was no choice of chunk to explain, only of the spill tier.
  if (r.chunks && plan.fits) {
    plan.why = "the chunk size given (--chunk-size)" +
               (r.may_spill ? "; among its plans " + plan.why : std::string());
  }
  if (!r.spill_unused.empty()) plan.spill_note = r.spill_unused;
  if (leanest_dropped && leanest_dropped->dram_bytes() < plan.min_budget_bytes) {
    // Say what a larger spill directory would have bought.
    plan.spill_note = "a spilled plan needing only " + format_bytes(leanest_dropped->dram_bytes()) +
                      " of DRAM (" + describe_chunk_sizes(leanest_dropped->chunks) +
                      ") would put " + format_bytes(leanest_dropped->spill_bytes()) + " in " +
                      r.spill_where + ", which has " + format_bytes(r.spill_free_bytes) + " free";
  }
  return plan;
}

}  // namespace cpufold
