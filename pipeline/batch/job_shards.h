// One share of a batch split over many nodes (--shard I/N, or a Slurm array task): every job
// has exactly one owner, the split does not change between reruns, and the shares are balanced
// by predicted run time.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cpufold {

struct Shard {
  int index = 1;  // 1-based
  int count = 1;
};

// "I/N" with 1 <= I <= N; InputError otherwise.
Shard parse_shard(const std::string& text);

// The shard of a Slurm array task, from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (or
// _MIN / _MAX); empty outside an array. InputError when the variables contradict each other.
std::optional<Shard> slurm_array_shard();

// Which jobs (indices into `costs`) belong to `shard`: jobs sorted by cost, most first (ties by
// `names`), each given to the share with the least cost so far (ties to the lowest). Depends
// only on the costs and names of all jobs, so every shard computes the same split.
std::vector<std::size_t> shard_members(std::span<const double> costs,
                                       std::span<const std::string> names, const Shard& shard);

}  // namespace cpufold
