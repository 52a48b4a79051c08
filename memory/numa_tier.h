// Far memory: anonymous pages bound to one NUMA node (a second socket's DRAM, or a CXL
// memory expander, which appears as a node without CPUs).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memory/tier.h"

namespace cpufold {

struct NumaNodeMemory {
  int node = 0;
  std::size_t total = 0;
  std::size_t free = 0;
};

// The NUMA nodes that have memory, in node order; empty when the kernel has no NUMA support.
std::vector<NumaNodeMemory> numa_nodes();
// Free memory on `node` now; 0 when there is no such node.
std::size_t numa_node_free_bytes(int node);

class NumaTier final : public Tier {
 public:
  // Throws InputError listing the nodes there are unless `node` exists, has memory and is
  // allowed to this process.
  explicit NumaTier(int node);

  const std::string& name() const override { return name_; }  // "numa:<node>"
  int node() const { return node_; }

 protected:
  // Lazily committed like DRAM, but only ever from the node (MPOL_BIND): the planner, not the
  // page allocator, must keep the node from running out.
  std::byte* map(std::size_t bytes) override;
  void unmap(std::byte* data, std::size_t bytes) override;

 private:
  int node_;
  std::string name_;
};

}  // namespace cpufold
