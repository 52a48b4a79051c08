#include "pipeline/runner/run_plan.h"

#include <algorithm>

namespace cpufold {

std::size_t process_bytes(const ModelConfig& config) {
  // Measured peak RSS minus weights and arena high-water marks: 40 MiB with the 4-block test
  // weights, 86-96 MiB with model_1_ptm's 54 blocks (N = 64 and 128, one iteration).
  constexpr std::size_t kBase = std::size_t{36} << 20;
  constexpr std::size_t kPerBlock = std::size_t{1} << 20;
  const auto blocks = static_cast<std::size_t>(
      config.n_evoformer_blocks + config.n_extra_msa_blocks + config.n_template_blocks);
  return kBase + kPerBlock * blocks;
}

double relative_time(std::int64_t chunk) {
  if (chunk <= 0 || chunk >= 64) return 1;
  // One Evoformer block at N = 256 (516 rows, full widths, 2 threads, AVX-512), time over the
  // unsliced block's, each twice or more in one session (`cpufold bench evoformer-block`):
  // chunk 32: 1.015, 16: 1.055, 8: 1.09, 4: 1.04, 2: 1.06, 1: 2.9; at N = 128 chunk 8 cost
  // nothing. Below 64 rows the triangle multiplication's slabs shrink and one-row slices fall
  // back to matrix-vector products. Kept monotone: a smaller chunk is never predicted faster.
  if (chunk >= 32) return 1.015;
  if (chunk >= 16) return 1.06;
  if (chunk >= 2) return 1.09;
  return 2.9;
}

namespace {

PlanCandidate plan_candidate(const ModelConfig& config, std::int64_t chunk, const RunArenas& a,
                             const PlanRequest& r) {
  PlanCandidate c;
  c.chunk = chunk;
  c.relative_time = relative_time(chunk);
  c.blocks = {{"process (code, libraries, threads, heap)", process_bytes(config)},
              {"shared weights (the mapped weight cache)", r.shared_weight_bytes},
              {"private weights", r.private_weight_bytes},
              {"features arena", a.features},
              {"outputs arena", a.outputs},
              {"scratch arena", a.scratch}};
  return c;
}

}  // namespace

MemoryPlan plan_run(const ModelConfig& config, const TrunkDims& d, const PlanRequest& r,
                    const std::function<RunArenas(std::int64_t chunk)>& arenas) {
  std::vector<PlanCandidate> candidates;
  if (r.chunk) {
    candidates.push_back(plan_candidate(config, *r.chunk, arenas(*r.chunk), r));
  } else {
    const std::int64_t widest = std::max({d.n_res, d.n_seq + d.n_templ, d.n_extra});
    for (const std::int64_t c : kChunkCandidates) {
      // A chunk that covers every sliced axis is the unsliced plan again.
      if (c > 0 && c >= widest) continue;
      candidates.push_back(plan_candidate(config, c, arenas(c), r));
    }
  }
  return choose_plan(std::move(candidates), r.budget, r.usable_bytes, kPlanTimeSlack);
}

}  // namespace cpufold
