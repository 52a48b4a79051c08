#include "pipeline/batch/plan_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "pipeline/batch/chunk_sizes_json.h"
#include "pipeline/batch/job_shards.h"
#include "pipeline/batch/node_sizing.h"
#include "pipeline/runner/time_model.h"

namespace cpufold {
namespace {

const JobPlan* largest(std::span<const JobPlan> plans) {
  const JobPlan* best = nullptr;
  for (const JobPlan& p : plans) {
    if (p.error.empty() && (!best || p.plan.dram_peak_bytes > best->plan.dram_peak_bytes))
      best = &p;
  }
  return best;
}

}  // namespace

std::string plan_text(std::span<const JobPlan> plans) {
  std::string out;
  char line[256];
  for (const JobPlan& j : plans) {
    out += j.name + ": ";
    if (!j.error.empty()) {
      out += "cannot plan: " + j.error + "\n";
      continue;
    }
    const MemoryPlan& p = j.plan;
    std::snprintf(
        line, sizeof line, "N_res %lld, %lld MSA rows, %lld extra rows, %lld templates (%s)\n",
        static_cast<long long>(j.n_res), static_cast<long long>(j.n_seq),
        static_cast<long long>(j.n_extra), static_cast<long long>(j.n_templ), j.model.c_str());
    out += line;
    for (const PlannedBlock& b : p.chosen.blocks) {
      std::snprintf(line, sizeof line, "  %-44s %12s\n", b.name.c_str(),
                    format_bytes(b.bytes).c_str());
      out += line;
    }
    std::snprintf(line, sizeof line, "  %-44s %12s\n", "predicted peak (DRAM)",
                  format_bytes(p.dram_peak_bytes).c_str());
    out += line;
    if (p.chosen.spill.empty()) out += "  spill: none\n";
    if (!p.spill_note.empty()) out += "  spill: " + p.spill_note + "\n";
    for (const PlannedBlock& b : p.chosen.spill) {
      std::snprintf(line, sizeof line, "  spill: %-37s %12s\n", b.name.c_str(),
                    format_bytes(b.bytes).c_str());
      out += line;
    }
    if (!p.chosen.spill.empty()) {
      std::snprintf(line, sizeof line,
                    "  spill: predicted %.2fx the time of the same chunks in DRAM (%s read and "
                    "written per iteration)\n",
                    p.chosen.spill_slowdown, format_bytes(p.chosen.spill_traffic_bytes).c_str());
      out += line;
    }
    out += "  " + describe_chunk_sizes(p.chosen.chunks) + ": " + p.why + "\n";
    std::snprintf(line, sizeof line, "  predicted time %.2fx the fastest plan's; time model: ",
                  p.chosen.relative_time);
    out += line;
    out += p.time_model + "\n";
    const std::string limit = p.budget ? "the budget " + format_bytes(*p.budget)
                              : p.usable_bytes
                                  ? "the memory usable now " + format_bytes(p.usable_bytes)
                                  : "no known limit";
    out += std::string("  ") + (p.fits ? "fits " : "does NOT fit ") + limit +
           "; smallest budget that fits: " + format_bytes(p.min_budget_bytes) + " (--mem-budget " +
           slurm_mem(p.min_budget_bytes) + ")\n";
    if (p.fits && p.budget && p.above_usable_memory()) {
      out += "  but the peak is more than the " + format_bytes(p.usable_bytes) +
             " of memory available now: the run may be killed\n";
    }
  }
  return out;
}

std::string plan_json(std::span<const JobPlan> plans) {
  using Json = nlohmann::ordered_json;
  Json jobs = Json::array();
  bool fits = true;
  std::size_t peak = 0, min_budget = 0, spill_peak = 0;
  for (const JobPlan& j : plans) {
    Json o;
    o["name"] = j.name;
    if (!j.error.empty()) {
      o["error"] = j.error;
      fits = false;
      jobs.push_back(std::move(o));
      continue;
    }
    const MemoryPlan& p = j.plan;
    o["model"] = j.model;
    o["n_res"] = j.n_res;
    o["n_seq"] = j.n_seq;
    o["n_extra"] = j.n_extra;
    o["n_templ"] = j.n_templ;
    o["chunk_size"] = p.chosen.chunks.evoformer;
    o["chunk_sizes"] = p.chosen.chunks;
    o["dram_peak_bytes"] = p.dram_peak_bytes;
    o["spill_bytes"] = p.spill_bytes;
    if (!p.chosen.spill.empty()) {
      o["spill_traffic_bytes"] = p.chosen.spill_traffic_bytes;
      o["spill_slowdown"] = p.chosen.spill_slowdown;
    }
    o["fits"] = p.fits;
    o["above_available_memory"] = p.above_usable_memory();
    o["min_budget_bytes"] = p.min_budget_bytes;
    o["budget_bytes"] = p.budget ? Json(*p.budget) : Json(nullptr);
    o["usable_bytes"] = p.usable_bytes;
    o["relative_time"] = p.chosen.relative_time;
    o["why"] = p.why;
    o["time_model"] = p.time_model;
    if (!p.spill_note.empty()) o["spill_note"] = p.spill_note;
    Json blocks = Json::array();
    for (const PlannedBlock& b : p.chosen.blocks)
      blocks.push_back({{"name", b.name}, {"bytes", b.bytes}});
    o["blocks"] = std::move(blocks);
    Json spill = Json::array();
    for (const PlannedBlock& b : p.chosen.spill)
      spill.push_back({{"name", b.name}, {"bytes", b.bytes}});
    o["spill"] = std::move(spill);
    fits = fits && p.fits;
    peak = std::max(peak, p.dram_peak_bytes);
    spill_peak = std::max(spill_peak, p.spill_bytes);
    min_budget = std::max(min_budget, p.min_budget_bytes);
    jobs.push_back(std::move(o));
  }
  Json all;
  all["dram_peak_bytes"] = peak;
  all["spill_bytes"] = spill_peak;
  all["fits"] = fits;
  all["min_budget_bytes"] = min_budget;
  all["jobs"] = std::move(jobs);
  return all.dump(2) + "\n";
}

std::string plan_slurm(std::span<const JobPlan> plans, const SlurmTask& task) {
  const JobPlan* big = largest(plans);
  if (!big) throw InputError("no job could be planned, so there is no memory to request");
  const auto peak = static_cast<double>(big->plan.dram_peak_bytes);
  const auto mem = static_cast<std::size_t>(peak * (1 + kSlurmMargin));
  char comment[256];
  std::snprintf(comment, sizeof comment,
                "# cpufold plan: largest job %s (N_res %lld), predicted peak %s + %d%% margin\n",
                big->name.c_str(), static_cast<long long>(big->n_res),
                format_bytes(big->plan.dram_peak_bytes).c_str(),
                static_cast<int>(kSlurmMargin * 100));
  std::string out = comment;
  if (big->plan.budget) {
    out += "# run cpufold with the same --mem-budget " + slurm_mem(*big->plan.budget) +
           " so that it follows this plan\n";
  }
  out += "#SBATCH --mem=" + slurm_mem(mem) + "\n";

  // The longest share's makespan with the task's cores and memory, as the task's predict runs it.
  std::vector<double> costs;
  std::vector<std::string> names;
  for (const JobPlan& p : plans) {
    costs.push_back(p.flops);
    names.push_back(p.name);
  }
  const InstanceScaling& scaling = machine_time_model().instances;
  double longest = 0;
  for (int s = 1; s <= task.shards; ++s) {
    std::vector<JobPlan> share;
    for (std::size_t j : shard_members(costs, names, {s, task.shards})) share.push_back(plans[j]);
    longest = std::max(longest,
                       size_node(share, task.cores, mem, task.precision, scaling).makespan_seconds);
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "# predicted %.0f min for the longest %s on %d core(s) (time model: %s), x%.1f "
                "+ 5 min\n",
                longest / 60, task.shards > 1 ? "share" : "batch", task.cores,
                machine_time_model().source.c_str(), kSlurmTimeMargin);
  out += line;
  out += "#SBATCH --cpus-per-task=" + std::to_string(task.cores) + "\n";
  out += "#SBATCH --time=" + slurm_time(longest * kSlurmTimeMargin + 300) + "\n";
  if (task.shards > 1) out += "#SBATCH --array=1-" + std::to_string(task.shards) + "\n";
  return out;
}

}  // namespace cpufold
