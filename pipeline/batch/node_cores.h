// The cores a batch may pin its instances to: this process's CPU affinity, one logical CPU per
// physical core (SMT siblings counted once), with each core's NUMA node (hwloc).
#pragma once

#include <string>
#include <vector>

namespace cpufold {

struct NodeCores {
  std::vector<unsigned> cpus;  // one OS CPU number per usable core, in topology order
  std::vector<int> numa;       // the NUMA node of each (-1: unknown)
  int numa_nodes = 1;
};

NodeCores node_cores();

// One instance's share: its cores and, when they all sit on one NUMA node of a machine with
// several, that node (its memory is bound there); -1 otherwise.
struct CoreSlot {
  std::vector<unsigned> cpus;
  int numa_node = -1;
};

// `instances` disjoint slots of `threads` cores each, taken in topology order so a slot stays on
// one NUMA node when the node's cores allow. InputError when there are too few cores.
std::vector<CoreSlot> core_slots(const NodeCores& node, int instances, int threads);

// "0-3,8" style list of CPU numbers.
std::string cpu_list(const std::vector<unsigned>& cpus);

}  // namespace cpufold
