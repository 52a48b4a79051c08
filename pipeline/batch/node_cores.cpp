#include "pipeline/batch/node_cores.h"

#include <hwloc.h>

#include <memory>
#include <set>

#include "memory/error.h"

namespace cpufold {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

Topology load_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw InternalError("hwloc: cannot initialise a topology");
  Topology topology(raw);
  if (hwloc_topology_load(raw) != 0) throw InternalError("hwloc: cannot read this machine");
  return topology;
}

}  // namespace

NodeCores node_cores() {
  Topology topology = load_topology();
  hwloc_topology_t t = topology.get();
  Bitmap allowed(hwloc_bitmap_alloc());
  if (hwloc_get_cpubind(t, allowed.get(), HWLOC_CPUBIND_PROCESS) != 0)
    hwloc_bitmap_copy(allowed.get(), hwloc_topology_get_allowed_cpuset(t));
  NodeCores node;
  std::set<int> nodes;
  Bitmap mine(hwloc_bitmap_alloc());
  const int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  for (int i = 0; i < cores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    hwloc_bitmap_and(mine.get(), core->cpuset, allowed.get());
    const int first = hwloc_bitmap_first(mine.get());
    if (first < 0) continue;  // not ours to use
    node.cpus.push_back(static_cast<unsigned>(first));
    const int numa = core->nodeset ? hwloc_bitmap_first(core->nodeset) : -1;
    node.numa.push_back(numa);
    if (numa >= 0) nodes.insert(numa);
  }
  if (node.cpus.empty()) {  // no core objects (some VMs): every allowed PU is a core
    for (int pu = hwloc_bitmap_first(allowed.get()); pu >= 0;
         pu = hwloc_bitmap_next(allowed.get(), pu)) {
      node.cpus.push_back(static_cast<unsigned>(pu));
      node.numa.push_back(-1);
    }
  }
  node.numa_nodes = std::max<int>(1, static_cast<int>(nodes.size()));
  return node;
}

std::vector<CoreSlot> core_slots(const NodeCores& node, int instances, int threads) {
  const std::size_t need = static_cast<std::size_t>(instances) * static_cast<std::size_t>(threads);
  if (instances < 1 || threads < 1 || need > node.cpus.size()) {
    throw InputError(std::to_string(instances) + " instance(s) x " + std::to_string(threads) +
                     " thread(s) need " + std::to_string(need) + " cores; this process may use " +
                     std::to_string(node.cpus.size()) + " (one per physical core)");
  }
  std::vector<CoreSlot> slots(static_cast<std::size_t>(instances));
  std::size_t next = 0;
  for (CoreSlot& slot : slots) {
    std::set<int> numa;
    for (int k = 0; k < threads; ++k, ++next) {
      slot.cpus.push_back(node.cpus[next]);
      numa.insert(node.numa[next]);
    }
    if (node.numa_nodes > 1 && numa.size() == 1 && *numa.begin() >= 0)
      slot.numa_node = *numa.begin();
  }
  return slots;
}

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace cpufold
