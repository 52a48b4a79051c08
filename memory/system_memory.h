// What memory the machine and the process's container give cpufold: MemAvailable and the
// cgroup limit (v1 or v2), as Slurm's --mem or a container sets it.
#pragma once

#include <cstddef>
#include <optional>

namespace cpufold {

// MemAvailable from /proc/meminfo in bytes; 0 when unknown.
std::size_t mem_available_bytes();

// The memory limit of this process's cgroup (the tightest of its own and its ancestors' that
// are visible), and that cgroup's current usage; empty when there is no limit or it cannot be
// read.
struct CgroupMemory {
  std::size_t limit = 0;
  std::size_t usage = 0;
};
std::optional<CgroupMemory> cgroup_memory();

// What a new allocation can count on: MemAvailable, or the cgroup's limit minus its usage,
// whichever is lower; 0 when neither is known.
std::size_t usable_memory_bytes();

}  // namespace cpufold
