#include "memory/arena.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

#include "memory/peak_tracker.h"
#include "tests/memory/spill_test_util.h"

namespace cpufold {
namespace {

TEST(Arena, AllocationsAreAlignedAndDisjoint) {
  Arena arena("test-aligned", dram_tier(), 4096);
  Tensor a = arena.allocate(DType::f32, {3});
  Tensor b = arena.allocate(DType::u8, {5});
  Tensor c = arena.allocate(DType::i64, {2, 2});
  for (const Tensor& t : {a, b, c}) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % Tier::kAlignment, 0u);
  }
  EXPECT_GE(static_cast<std::byte*>(b.data()), static_cast<std::byte*>(a.data()) + a.nbytes());
  EXPECT_GE(static_cast<std::byte*>(c.data()), static_cast<std::byte*>(b.data()) + b.nbytes());
  EXPECT_EQ(arena.used(), 3 * Tier::kAlignment);
}

TEST(Arena, ScopeReleasesTransientsAndHighWaterRemains) {
  Arena arena("test-scope", dram_tier(), 1 << 16);
  arena.allocate(DType::f32, {16});
  const std::size_t before = arena.used();
  {
    ArenaScope scope(arena);
    arena.allocate(DType::f32, {1024});
    EXPECT_GT(arena.used(), before);
  }
  EXPECT_EQ(arena.used(), before);
  EXPECT_EQ(arena.high_water(), before + 4096);
  EXPECT_EQ(PeakTracker::instance().arena_peaks().at("test-scope"), before + 4096);
}

TEST(Arena, PopulateFaultsInEveryDramPageAndAllocatesNothing) {
  constexpr std::size_t kBytes = std::size_t{8} << 20;
  Arena arena("test-populate", dram_tier(), kBytes);
  const Tensor first = arena.allocate(DType::u8, {1});  // the arena's first byte
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_LT(testing::cached_pages(first.data(), kBytes), kBytes / page / 2);
  arena.populate();
  EXPECT_EQ(testing::cached_pages(first.data(), kBytes), kBytes / page);
  EXPECT_EQ(arena.used(), Tier::kAlignment);
  EXPECT_EQ(arena.high_water(), Tier::kAlignment);
}

TEST(Arena, OverflowThrowsBudgetErrorNamingTheArena) {
  Arena arena("small-arena", dram_tier(), 256);
  arena.allocate(DType::f32, {32});
  try {
    arena.allocate(DType::f32, {64});
    FAIL() << "expected BudgetError";
  } catch (const BudgetError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("small-arena"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f32[64]"), std::string::npos) << msg;
  }
}

TEST(Arena, ReleaseAboveTopIsAnInternalError) {
  Arena arena("test-mark", dram_tier(), 256);
  EXPECT_THROW(arena.release_to(128), InternalError);
}

}  // namespace
}  // namespace cpufold
