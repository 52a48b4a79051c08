// How `cpufold plan` prints its plans: a table for people, JSON for scripts, and the
// `#SBATCH --mem=` line for a Slurm script.
#pragma once

#include <span>
#include <string>

#include "pipeline/batch/plan_jobs.h"

namespace cpufold {

// Headroom the Slurm line adds to the largest predicted peak: the prediction is within 10% of
// the measured peak on the full model (README, "Memory"), and a cgroup also charges the page
// cache of the files a job reads.
inline constexpr double kSlurmMargin = 0.15;

std::string plan_text(std::span<const JobPlan> plans);
std::string plan_json(std::span<const JobPlan> plans);
// "#SBATCH --mem=1843M" and a comment naming the largest job, its peak and the margin.
std::string plan_slurm(std::span<const JobPlan> plans);

}  // namespace cpufold
