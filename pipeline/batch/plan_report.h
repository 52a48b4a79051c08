// How `cpufold plan` prints its plans: a table for people, JSON for scripts, and the
// `#SBATCH --mem=` line for a Slurm script.
#pragma once

#include <span>
#include <string>

#include "memory/dtype.h"
#include "pipeline/batch/plan_jobs.h"

namespace cpufold {

// Headroom the Slurm line adds to the largest predicted peak: the prediction is within 10% of
// the measured peak on the full model (README, "Memory"), and a cgroup also charges the page
// cache of the files a job reads.
inline constexpr double kSlurmMargin = 0.15;
// The time model predicts within tens of percent across machines of one CPU model; a job that
// hits --time is killed, so the request is generous.
inline constexpr double kSlurmTimeMargin = 1.5;

std::string plan_text(std::span<const JobPlan> plans);
std::string plan_json(std::span<const JobPlan> plans);
// What one Slurm task gets: `cores` CPUs and, with `shards` > 1, an array of that many tasks
// each folding its share (predict's --shard split, from SLURM_ARRAY_TASK_ID).
struct SlurmTask {
  int cores = 1;
  int shards = 1;
  DType precision = DType::f32;
};

// "#SBATCH --mem=1843M" (the largest job's peak plus kSlurmMargin), "--cpus-per-task",
// "--time" (the longest share's predicted makespan on those cores, times kSlurmTimeMargin,
// plus 5 minutes to start) and with shards "--array=1-N", each with a comment saying why.
std::string plan_slurm(std::span<const JobPlan> plans, const SlurmTask& task);

}  // namespace cpufold
