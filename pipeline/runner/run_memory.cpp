#include "pipeline/runner/run_memory.h"

#include <cstdio>

#include "memory/byte_size.h"
#include "memory/file_tier.h"
#include "memory/numa_tier.h"

namespace cpufold {
namespace {

// The spill tier the options name, and where it is for the log.
std::unique_ptr<Tier> make_spill_tier(const RunOptions& o, std::string& where) {
  if (o.spill_numa_node) {
    where = "NUMA node " + std::to_string(*o.spill_numa_node);
    return std::make_unique<NumaTier>(*o.spill_numa_node);
  }
  where = o.spill_dir->string();
  return std::make_unique<FileTier>(*o.spill_dir);
}

void refuse_or_warn(const PlannedRun& r, const RunOptions& o, const MemoryPlan& plan,
                    const std::function<void(const std::string&)>& say) {
  if (plan.fits && plan.above_usable_memory() && say) {
    say("warning: the plan's peak " + format_bytes(plan.dram_peak_bytes) + " fits --mem-budget " +
        format_bytes(*plan.budget) + " but is more than the " + format_bytes(plan.usable_bytes) +
        " of memory available now; the run may be killed");
  }
  if (plan.fits) return;
  if (o.mem_budget) refuse_plan(plan, "this run (N_res " + std::to_string(r.dims.n_res) + ")");
  if (say) {
    say("warning: the leanest plan needs " + format_bytes(plan.dram_peak_bytes) +
        ", more than the " + format_bytes(plan.usable_bytes) +
        " of memory available now; the run may be killed");
  }
}

}  // namespace

PlannedRun plan_run(const ModelRunner& runner, const FeatureSource& source, const RunOptions& o,
                    Arena& features, Prediction& p,
                    const std::function<void(const std::string&)>& say) {
  PlannedRun r;
  r.inputs = source.read(0, features);
  r.dims = Trunk::dims_of(r.inputs, runner.config());
  p.plan = runner.plan(r.dims, features.capacity(), o);
  refuse_or_warn(r, o, p.plan, say);
  r.chunks = p.plan.chosen.chunks;
  const SpillLevel spill = spill_level(p.plan.chosen);
  const RunArenas a =
      runner.arena_bytes(r.dims, features.capacity(), o, r.chunks, spill != SpillLevel::none);
  if (spill != SpillLevel::none) {
    std::string where;
    p.spill_tier = make_spill_tier(o, where);
    if (auto* files = dynamic_cast<FileTier*>(p.spill_tier.get())) {
      files->set_cache_bytes(spill_cache_bytes(p.plan.chosen, p.plan.budget, p.plan.usable_bytes));
      // The pair's window not: pages of a pass that paged the pair may still be resident.
      files->set_window_bytes(a.activations_window);
    }
    if (say) {
      char slowdown[160];
      std::snprintf(
          slowdown, sizeof slowdown, "; predicted %.2fx the time in DRAM, moving %s per iteration",
          p.plan.chosen.spill_slowdown, format_bytes(p.plan.chosen.spill_traffic_bytes).c_str());
      say("spilling " + format_bytes(p.plan.spill_bytes) + " to " + where + " (" + p.plan.why +
          slowdown + ")");
    }
  }
  Tier& outputs_tier = spill == SpillLevel::outputs ? *p.spill_tier : dram_tier();
  p.arena = std::make_unique<Arena>("prediction", outputs_tier, a.outputs);
  p.scratch = std::make_unique<Arena>("scratch", dram_tier(), a.scratch);
  if (spill != SpillLevel::none)
    p.activations = std::make_unique<Arena>("activations", *p.spill_tier, a.activations);
  p.planned_bytes = a.total();
  return r;
}

}  // namespace cpufold
