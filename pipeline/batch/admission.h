// Which waiting job starts next when several instances share a node: the memory plans, not a
// guess, decide. Pure logic; the batch scheduler (instance_batch) and `cpufold plan
// --node-cores` (node_sizing) both run on it.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace cpufold {

// The --mem-budget a worker gets for a planned peak, and what admission counts for it: the
// peak plus 1/32 and 8 MiB. The plan in the worker is made again there, with its own measured
// process size and threads, and comes out a little different from the scheduler's.
inline std::size_t worker_budget_bytes(std::size_t planned_peak) {
  return planned_peak + planned_peak / 32 + (std::size_t{8} << 20);
}

// The largest planned peak whose worker budget fits `total`: the budget jobs are planned with.
inline std::size_t planning_budget_bytes(std::size_t total) {
  const std::size_t fixed = std::size_t{8} << 20;
  return total > fixed ? (total - fixed) / 33 * 32 : 0;
}

// What one waiting job asks of the node.
struct JobDemand {
  std::size_t peak_bytes = 0;       // its chosen plan's predicted peak, without shared weights
  std::size_t lean_peak_bytes = 0;  // its leanest plan's (tighter chunks), the same way
  double seconds = 0;               // predicted run time with the chosen plan
  double lean_seconds = 0;          // with the leanest plan
  bool alone = false;               // runs with nothing beside it (a spilled plan, a retry)
};

struct NodeState {
  std::size_t free_bytes = 0;   // the budget left after the running jobs' peaks
  int free_slots = 0;           // instances (core sets) not running a job
  int running = 0;              // jobs running now
  double next_end_seconds = 0;  // predicted time until the first running job ends
};

struct Admission {
  std::size_t job = 0;  // index into the waiting list
  bool lean = false;    // start it with its leanest plan
};

// `waiting` is in the batch's order (longest predicted time first). The first job whose plan
// fits the free memory starts; a job marked `alone` at the head of the queue holds the others
// back until the node is idle, then runs by itself. When nothing fits, the first job whose lean
// plan fits starts with it if that ends sooner than waiting for memory to free up would
// (lean_seconds < next_end_seconds + seconds), or at once on an idle node. Empty: nothing can
// start now.
std::optional<Admission> next_admission(std::span<const JobDemand> waiting, const NodeState& node);

}  // namespace cpufold
