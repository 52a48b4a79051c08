#include "memory/heap_policy.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "memory/peak_tracker.h"

namespace cpufold {
namespace {

// Bytes in blocks glibc mapped on their own (not on the heap).
std::size_t mapped_block_bytes() {
  return mallinfo2().hblkhd;
}

// A freed 8 MiB block would raise glibc's default threshold to 8 MiB, after which a 2 MiB
// buffer comes from the heap and its pages stay resident once freed. With the policy it is
// mapped on its own, and unmapped when freed.
TEST(HeapPolicy, LargeBuffersStayOffTheHeapAfterALargerOneIsFreed) {
  limit_heap_growth();
  void* big = std::malloc(std::size_t{8} << 20);
  ASSERT_NE(big, nullptr);
  std::memset(big, 1, 64);
  std::free(big);

  const std::size_t before = mapped_block_bytes();
  void* buffer = std::malloc(std::size_t{2} << 20);
  ASSERT_NE(buffer, nullptr);
  std::memset(buffer, 1, 64);
  EXPECT_GE(mapped_block_bytes(), before + (std::size_t{2} << 20));
  std::free(buffer);
  EXPECT_EQ(mapped_block_bytes(), before);

  void* small = std::malloc(kHeapMmapThreshold / 2);  // below the threshold: the heap
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(mapped_block_bytes(), before);
  std::free(small);
}

// A block under the mmap threshold freed at the top of the heap stays there for the next one.
// With glibc's default trim threshold (128 KiB) the free hands its pages back to the system and
// the next malloc takes them again, two system calls per buffer for oneDNN's per-call ones.
TEST(HeapPolicy, AFreedBlockUnderTheMmapThresholdIsKeptForTheNextOne) {
  limit_heap_growth();
  const std::size_t size = kHeapMmapThreshold * 3 / 4;
  void* block = std::malloc(size);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, size);
  const std::size_t heap = mallinfo2().arena;
  std::free(block);
  EXPECT_EQ(mallinfo2().arena, heap) << "the free returned the heap's top to the system";
  void* next = std::malloc(size);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(mallinfo2().arena, heap);
  std::free(next);
}

// Blocks under the mmap threshold freed below a live one stay resident (the heap can only be
// trimmed at its top) until return_free_heap_memory() hands their pages back: what a first
// run's private copies of the packed weights would keep for the whole run.
TEST(HeapPolicy, FreedBlocksBelowALiveOneLeaveMemoryWhenReturned) {
  limit_heap_growth();
  const std::size_t size = kHeapMmapThreshold / 2;
  constexpr int kBlocks = 96;  // 48 MiB
  std::vector<void*> blocks;
  for (int i = 0; i < kBlocks; ++i) {
    blocks.push_back(std::malloc(size));
    ASSERT_NE(blocks.back(), nullptr);
    std::memset(blocks.back(), 1, size);
  }
  void* live = std::malloc(size);  // above them (no free chunk holds it): the top is not free
  ASSERT_NE(live, nullptr);
  for (void* b : blocks) std::free(b);
  const std::size_t kept = os_current_rss_bytes();
  return_free_heap_memory();
  const std::size_t returned = os_current_rss_bytes();
  std::free(live);
  EXPECT_GE(kept, returned + kBlocks * size * 3 / 4)
      << "resident " << kept << " bytes after the frees, " << returned << " after returning";
}

}  // namespace
}  // namespace cpufold
