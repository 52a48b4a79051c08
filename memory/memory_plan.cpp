#include "memory/memory_plan.h"

#include <algorithm>

#include "memory/byte_size.h"
#include "memory/error.h"

namespace cpufold {

std::size_t PlanCandidate::dram_bytes() const {
  std::size_t sum = 0;
  for (const PlannedBlock& b : blocks) sum += b.bytes;
  return sum;
}

std::size_t PlanCandidate::spill_bytes() const {
  std::size_t sum = 0;
  for (const PlannedBlock& b : spill) sum += b.bytes;
  return sum;
}

namespace {

MemoryPlan choose_among(std::vector<PlanCandidate> candidates, std::optional<std::size_t> budget,
                        std::size_t usable, double time_slack) {
  const auto leaner = [](const PlanCandidate& a, const PlanCandidate& b) {
    return a.dram_bytes() < b.dram_bytes() ||
           (a.dram_bytes() == b.dram_bytes() && a.relative_time < b.relative_time);
  };
  const auto faster = [](const PlanCandidate& a, const PlanCandidate& b) {
    return a.relative_time < b.relative_time ||
           (a.relative_time == b.relative_time && a.dram_bytes() < b.dram_bytes());
  };
  const double fastest =
      std::min_element(candidates.begin(), candidates.end(), faster)->relative_time;

  const PlanCandidate* preferred = nullptr;
  for (const PlanCandidate& c : candidates) {
    if (c.relative_time <= fastest * (1 + time_slack) && (!preferred || leaner(c, *preferred)))
      preferred = &c;
  }
  const PlanCandidate& leanest = *std::min_element(candidates.begin(), candidates.end(), leaner);

  MemoryPlan plan;
  plan.budget = budget;
  plan.usable_bytes = usable;
  plan.min_budget_bytes = leanest.dram_bytes();
  const std::size_t limit = budget ? *budget : usable;
  const auto within = [&](const PlanCandidate& c) { return limit == 0 || c.dram_bytes() <= limit; };

  const PlanCandidate* chosen = nullptr;
  if (within(*preferred)) {
    chosen = preferred;
    plan.why = "the leanest plan within " + std::to_string(static_cast<int>(time_slack * 100)) +
               "% of the fastest predicted time";
  } else {
    for (const PlanCandidate& c : candidates) {
      if (within(c) && (!chosen || faster(c, *chosen))) chosen = &c;
    }
    if (chosen) {
      plan.why = std::string("the fastest plan within ") +
                 (budget ? "the budget " : "the usable memory ") + format_bytes(limit);
    }
  }
  plan.fits = chosen != nullptr;
  if (!chosen) {
    chosen = &leanest;
    plan.why = std::string("nothing fits ") + (budget ? "the budget " : "the usable memory ") +
               format_bytes(limit) + "; the leanest plan";
  }
  plan.chosen = *chosen;
  plan.dram_peak_bytes = chosen->dram_bytes();
  plan.spill_bytes = chosen->spill_bytes();
  return plan;
}

}  // namespace

MemoryPlan choose_plan(std::vector<PlanCandidate> candidates, std::optional<std::size_t> budget,
                       std::size_t usable, double time_slack) {
  if (candidates.empty()) throw InternalError("choose_plan: no candidate plans");
  std::vector<PlanCandidate> in_dram, spilled;
  for (PlanCandidate& c : candidates) (c.spill.empty() ? in_dram : spilled).push_back(std::move(c));
  if (spilled.empty()) return choose_among(std::move(in_dram), budget, usable, time_slack);
  if (in_dram.empty()) {
    MemoryPlan plan = choose_among(std::move(spilled), budget, usable, time_slack);
    plan.spill_considered = true;
    return plan;
  }
  MemoryPlan plan = choose_among(in_dram, budget, usable, time_slack);
  MemoryPlan spill = choose_among(std::move(spilled), budget, usable, time_slack);
  spill.spill_considered = plan.spill_considered = true;
  const std::size_t min_budget = std::min(plan.min_budget_bytes, spill.min_budget_bytes);
  if (!plan.fits && spill.fits) {
    spill.why += " (no plan held in DRAM fits)";
    plan = std::move(spill);
  }
  plan.min_budget_bytes = min_budget;
  return plan;
}

void refuse_plan(const MemoryPlan& plan, const std::string& what) {
  throw BudgetError(refusal_message(plan, what));
}

std::string refusal_message(const MemoryPlan& plan, const std::string& what) {
  const std::string limit = plan.budget
                                ? "the memory budget " + format_bytes(*plan.budget)
                                : "the memory available here " + format_bytes(plan.usable_bytes);
  return what + " needs at least " + format_bytes(plan.min_budget_bytes) + " (the leanest plan, " +
         describe_chunk_sizes(plan.chosen.chunks) + "), more than " + limit +
         "; give --mem-budget " + slurm_mem(plan.min_budget_bytes) +
         " or more (and as much to the job's memory limit)" +
         (plan.spill_considered ? std::string(", or fold it on a machine with more memory")
          : !plan.spill_note.empty()
              ? " (" + plan.spill_note + ")"
              : std::string(", or add --spill-dir DIR (a directory on a local SSD "
                            "or a DAX mount) to place the largest activations in "
                            "files there"));
}

}  // namespace cpufold
