#include "memory/system_memory.h"

#include <gtest/gtest.h>

namespace cpufold {
namespace {

TEST(SystemMemory, UsableMemoryIsKnownAndBelowMemAvailable) {
  const std::size_t available = mem_available_bytes();
  ASSERT_GT(available, 0u) << "/proc/meminfo has no MemAvailable";
  const std::size_t usable = usable_memory_bytes();
  EXPECT_GT(usable, 0u);
  EXPECT_LE(usable, available + (std::size_t{64} << 20));  // MemAvailable moves between reads
}

TEST(SystemMemory, CgroupLimitWhenSetIsAboveItsUsage) {
  if (const auto cg = cgroup_memory()) {
    EXPECT_GT(cg->limit, 0u);
    EXPECT_LE(usable_memory_bytes(), cg->limit);
  }
}

}  // namespace
}  // namespace cpufold
