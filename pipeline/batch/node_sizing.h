// How a node of a given size would run a batch, on paper: the scheduler's admission replayed
// with the time model's run times (`cpufold plan --node-cores C --node-memory M`).
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "memory/dtype.h"
#include "pipeline/batch/plan_jobs.h"
#include "pipeline/runner/instance_layout.h"

namespace cpufold {

struct NodeSizing {
  int cores = 0;
  std::size_t memory = 0;
  InstanceLayout layout;
  std::size_t jobs = 0, unfit = 0;  // jobs planned; of them, those that do not fit `memory`
  double makespan_seconds = 0;
  double proteins_per_hour = 0;
  std::size_t peak_bytes = 0;  // the most the running jobs' plans hold at once (weights once)
  double serial_seconds = 0;   // the same jobs one after another, each with every core
};

// Replays the batch: jobs longest first, admitted as predict --instances admits them, each
// taking its predicted run time on its instance's threads beside the others. `instances` /
// `threads` 0: the layout with the shortest replayed makespan (instance counts 1, 2, 4, ... and
// cores / T for T <= 8, each with the cores split evenly); this is predict --instances auto's
// choice. Plans must have been made with
// `memory` as their budget; jobs that do not fit it (or could not be planned) are counted in
// `unfit` and left out.
NodeSizing size_node(std::span<const JobPlan> plans, int cores, std::size_t memory, DType precision,
                     const InstanceScaling& scaling, int instances = 0, int threads = 0);

// The table `plan` prints: layout, makespan, throughput, peak, and how the same batch scales on
// a quarter and half of the cores.
std::string node_sizing_text(std::span<const JobPlan> plans, int cores, std::size_t memory,
                             DType precision, const InstanceScaling& scaling);

// "1-02:03:00" (Slurm's D-HH:MM:SS) for `seconds`, rounded up to whole minutes.
std::string slurm_time(double seconds);

}  // namespace cpufold
