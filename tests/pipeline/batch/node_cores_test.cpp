// Cores for instances (pipeline/batch/node_cores.h).
#include "pipeline/batch/node_cores.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <set>

#include "memory/error.h"

namespace cpufold {
namespace {

TEST(NodeCoresTest, OneUsableCpuPerCoreWithinThisProcessAffinity) {
  const NodeCores node = node_cores();
  ASSERT_FALSE(node.cpus.empty());
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  std::set<unsigned> seen;
  for (unsigned c : node.cpus) {
    EXPECT_TRUE(CPU_ISSET(c, &mine)) << c;
    EXPECT_TRUE(seen.insert(c).second) << c;
  }
  EXPECT_LE(node.cpus.size(), static_cast<std::size_t>(CPU_COUNT(&mine)));
}

TEST(NodeCoresTest, SlotsAreDisjointAndStayOnOneNumaNode) {
  NodeCores node;
  node.cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  node.numa = {0, 0, 0, 0, 1, 1, 1, 1};
  node.numa_nodes = 2;
  const auto slots = core_slots(node, 2, 4);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(cpu_list(slots[0].cpus), "0-3");
  EXPECT_EQ(slots[0].numa_node, 0);
  EXPECT_EQ(cpu_list(slots[1].cpus), "4-7");
  EXPECT_EQ(slots[1].numa_node, 1);
  // A slot across two nodes binds no memory.
  EXPECT_EQ(core_slots(node, 1, 8)[0].numa_node, -1);
  EXPECT_THROW(core_slots(node, 3, 3), InputError);
  EXPECT_EQ(cpu_list({0, 2, 3, 4, 9}), "0,2-4,9");
}

}  // namespace
}  // namespace cpufold
