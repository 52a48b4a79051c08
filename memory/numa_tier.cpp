#include "memory/numa_tier.h"

#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "memory/out_of_memory.h"

namespace cpufold {
namespace {

struct BitmaskFree {
  void operator()(bitmask* b) const { numa_bitmask_free(b); }
};
using Nodemask = std::unique_ptr<bitmask, BitmaskFree>;

std::string nodes_there_are() {
  const auto nodes = numa_nodes();
  if (nodes.empty()) return "this machine reports no NUMA node with memory";
  std::string list;
  for (const auto& n : nodes) {
    list += (list.empty() ? "" : ", ") + std::to_string(n.node) + " (" + format_bytes(n.total) +
            ", " + format_bytes(n.free) + " free)";
  }
  return "the nodes with memory are " + list;
}

}  // namespace

std::vector<NumaNodeMemory> numa_nodes() {
  std::vector<NumaNodeMemory> nodes;
  if (numa_available() < 0) return nodes;
  for (int n = 0; n <= numa_max_node(); ++n) {
    long long free = 0;
    const long long total = numa_node_size64(n, &free);
    if (total > 0) {
      nodes.push_back({n, static_cast<std::size_t>(total), static_cast<std::size_t>(free)});
    }
  }
  return nodes;
}

std::size_t numa_node_free_bytes(int node) {
  for (const NumaNodeMemory& n : numa_nodes()) {
    if (n.node == node) return n.free;
  }
  return 0;
}

NumaTier::NumaTier(int node) : node_(node), name_("numa:" + std::to_string(node)) {
  if (numa_available() < 0) {
    throw InputError("NUMA node " + std::to_string(node) +
                     " asked for, but this kernel has no NUMA support; leave out "
                     "--spill-numa-node");
  }
  const bool exists = node >= 0 && node <= numa_max_node() && numa_node_size64(node, nullptr) > 0;
  if (!exists) {
    throw InputError("NUMA node " + std::to_string(node) + " does not exist or has no memory: " +
                     nodes_there_are() + "; pass --spill-numa-node one of them");
  }
  const Nodemask allowed(numa_get_mems_allowed());
  if (!numa_bitmask_isbitset(allowed.get(), static_cast<unsigned>(node))) {
    throw InputError("NUMA node " + std::to_string(node) +
                     " is not allowed to this process (its cpuset, e.g. numactl or Slurm's "
                     "--mem-bind, excludes it); " +
                     nodes_there_are() + "; pass --spill-numa-node an allowed one");
  }
}

std::byte* NumaTier::map(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw out_of_memory("cannot reserve " + format_bytes(bytes) + " on NUMA node " +
                        std::to_string(node_) + " (" + std::strerror(errno) + ")");
  }
  const Nodemask mask(numa_allocate_nodemask());
  numa_bitmask_setbit(mask.get(), static_cast<unsigned>(node_));
  // maxnode counts one past the last bit, as libnuma itself passes it.
  if (::mbind(p, bytes, MPOL_BIND, mask->maskp, mask->size + 1, 0) != 0) {
    const int err = errno;
    ::munmap(p, bytes);
    throw InputError("cannot bind memory to NUMA node " + std::to_string(node_) + ": " +
                     std::strerror(err) + "; " + nodes_there_are());
  }
  return static_cast<std::byte*>(p);
}

void NumaTier::unmap(std::byte* data, std::size_t bytes) {
  ::munmap(data, bytes);
}

}  // namespace cpufold
