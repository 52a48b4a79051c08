#include "memory/numa_tier.h"

#include <gtest/gtest.h>
#include <numaif.h>

#include <algorithm>
#include <cstring>

#include "memory/error.h"
#include "tests/memory/spill_test_util.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::thrown_message;

TEST(NumaTier, NodeZeroHoldsZeroFilledPagesBoundToIt) {
  const auto nodes = numa_nodes();
  if (nodes.empty()) GTEST_SKIP() << "no NUMA support in this kernel";
  const int node = nodes.front().node;
  NumaTier tier(node);
  EXPECT_EQ(tier.name(), "numa:" + std::to_string(node));
  const Region r = tier.allocate(std::size_t{4} << 20);
  EXPECT_TRUE(
      std::all_of(r.data(), r.data() + r.size(), [](std::byte b) { return b == std::byte{0}; }));
  std::memset(r.data(), 7, r.size());

  int mode = -1;
  unsigned long mask = 0;
  ASSERT_EQ(get_mempolicy(&mode, &mask, sizeof(mask) * 8, r.data(), MPOL_F_ADDR), 0);
  EXPECT_EQ(mode, MPOL_BIND);
  EXPECT_EQ(mask, 1ul << node);
  int placed = -1;
  ASSERT_EQ(get_mempolicy(&placed, nullptr, 0, r.data() + r.size() - 1, MPOL_F_NODE | MPOL_F_ADDR),
            0);
  EXPECT_EQ(placed, node);
}

TEST(NumaTier, AMissingNodeIsAnInputErrorListingTheNodesThereAre) {
  const auto nodes = numa_nodes();
  if (nodes.empty()) GTEST_SKIP() << "no NUMA support in this kernel";
  for (const int node : {99, -1}) {
    const std::string msg = thrown_message<InputError>([&] { NumaTier{node}; });
    EXPECT_TRUE(contains(msg, "NUMA node " + std::to_string(node) + " does not exist")) << msg;
    EXPECT_TRUE(
        contains(msg, "the nodes with memory are " + std::to_string(nodes.front().node) + " ("))
        << msg;
    EXPECT_TRUE(contains(msg, "--spill-numa-node")) << msg;
  }
}

TEST(NumaTier, NodesReportTheirMemory) {
  for (const auto& n : numa_nodes()) {
    EXPECT_GT(n.total, 0u) << n.node;
    EXPECT_LE(n.free, n.total) << n.node;
  }
}

}  // namespace
}  // namespace cpufold
