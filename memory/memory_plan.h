// MemoryPlan: how a run uses memory before it runs. The planner weighs candidate plans (one per
// set of chunk sizes) whose byte counts come from the modules that will allocate them, and picks
// one for a budget: the fastest that fits, or without a budget the leanest whose predicted time is
// within a few percent of the fastest. Every figure is in bytes resident at the run's peak.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memory/chunk_sizes.h"

namespace cpufold {

// One resident block at the peak: an arena, the weights, the process itself.
struct PlannedBlock {
  std::string name;
  std::size_t bytes = 0;
};

struct PlanCandidate {
  ChunkSizes chunks;                 // rows per slice of each family; 0: unsliced
  std::vector<PlannedBlock> blocks;  // everything resident in DRAM at the peak
  std::vector<PlannedBlock> spill;   // arenas placed on the spill tier (files under --spill-dir)
  double relative_time = 1;          // predicted time over the fastest candidate's (>= 1)
  // A spilled candidate's: bytes an iteration moves to and from the spill tier, and the
  // predicted time over the same chunks held in DRAM (1 when unknown or not spilled).
  std::size_t spill_traffic_bytes = 0;
  double spill_slowdown = 1;

  std::size_t dram_bytes() const;
  std::size_t spill_bytes() const;
};

struct MemoryPlan {
  PlanCandidate chosen;
  std::size_t dram_peak_bytes = 0;    // chosen.dram_bytes()
  std::size_t spill_bytes = 0;        // bytes placed in the spill tier
  std::optional<std::size_t> budget;  // --mem-budget, if given
  std::size_t usable_bytes = 0;       // what the machine or cgroup offers; 0: unknown
  bool fits = false;                  // dram_peak_bytes <= budget (or usable memory)
  std::size_t min_budget_bytes = 0;   // the leanest candidate's peak: the smallest budget that fits
  bool spill_considered = false;      // some candidates spilled (a spill directory was given)
  std::string why;                    // one line: why this candidate was chosen
  std::string time_model;             // where the relative times come from (the caller's)
  std::string spill_note;  // why no spilled plan was weighed that would be leaner; may be empty

  // The peak is above what the machine or cgroup offers now (a budget larger than the
  // machine's memory lets such a plan "fit"): the run may be killed.
  bool above_usable_memory() const { return usable_bytes > 0 && dram_peak_bytes > usable_bytes; }
};

// Picks among `candidates` (at least one). The default choice is the leanest candidate whose
// relative time is within `time_slack` (0.03: 3%) of the fastest. With a budget: the default
// choice if it fits, else the fastest candidate that fits, else the leanest (fits = false).
// Without a budget the limit is `usable` (0: unknown, no limit): the default choice if it fits,
// else the fastest that fits, else the leanest (fits = false). Candidates that spill are taken
// only when no candidate held in DRAM fits: spilling is the last resort, after chunking.
MemoryPlan choose_plan(std::vector<PlanCandidate> candidates, std::optional<std::size_t> budget,
                       std::size_t usable, double time_slack);

// The BudgetError (exit 4) for a plan that does not fit: what it needs, what the budget or the
// machine offers and the smallest budget that would do.
[[noreturn]] void refuse_plan(const MemoryPlan& plan, const std::string& what);
// That error's message, for a caller that reports it without throwing (a batch's job).
std::string refusal_message(const MemoryPlan& plan, const std::string& what);

}  // namespace cpufold
