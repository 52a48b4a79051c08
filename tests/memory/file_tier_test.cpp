#include "memory/file_tier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <span>

#include "memory/arena.h"
#include "memory/error.h"
#include "memory/spill_dir.h"
#include "tests/memory/spill_test_util.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::dir_is_empty;
using testing::kMiB;
using testing::ScratchDir;
using testing::thrown_message;

// Lines of /proc/self/maps that map a file from `dir`.
std::size_t mappings_from(const std::filesystem::path& dir) {
  std::ifstream maps("/proc/self/maps");
  std::size_t n = 0;
  for (std::string line; std::getline(maps, line);) n += contains(line, dir.string() + "/");
  return n;
}

std::span<std::uint32_t> words(const Region& r) {
  return {reinterpret_cast<std::uint32_t*>(r.data()), r.size() / sizeof(std::uint32_t)};
}

void fill_pattern(std::span<std::uint32_t> w) {
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint32_t>(i * 2654435761u);
}

bool has_pattern(std::span<const std::uint32_t> w) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] != static_cast<std::uint32_t>(i * 2654435761u)) return false;
  }
  return true;
}

TEST(FileTier, AllocatesZeroFilledAlignedMemoryNamedAfterItsDirectory) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  EXPECT_EQ(tier.name(), "file:" + dir.path().string());
  const Region r = tier.allocate(3 * kMiB + 5);
  ASSERT_NE(r.data(), nullptr);
  EXPECT_EQ(r.size(), 3 * kMiB + 5);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r.data()) % Tier::kAlignment, 0u);
  EXPECT_TRUE(
      std::all_of(r.data(), r.data() + r.size(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST(FileTier, FilesHaveNoNameWhileMappedNorAfter) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  {
    const Region r = tier.allocate(kMiB);
    fill_pattern(words(r));
    EXPECT_EQ(mappings_from(dir.path()), 1u) << "the region is not a file in the directory";
    EXPECT_TRUE(dir_is_empty(dir.path()));
  }
  EXPECT_EQ(mappings_from(dir.path()), 0u);
  EXPECT_TRUE(dir_is_empty(dir.path()));
}

TEST(FileTier, DataSurvivesEvictionThroughTheFile) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  const Region r = tier.allocate(16 * kMiB);
  fill_pattern(words(r));
  r.evict(0, r.size());
  if (!spill_dir_in_memory(dir.path())) {
    EXPECT_EQ(testing::cached_pages(r.data(), r.size()), 0u)
        << "evicted pages are still in the page cache";
  }
  EXPECT_TRUE(has_pattern(words(r)));
}

TEST(FileTier, EvictionLowersResidentMemory) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  const std::size_t bytes = 64 * kMiB;
  const Region r = tier.allocate(bytes);
  fill_pattern(words(r));
  const std::size_t written = testing::resident_file_bytes();
  r.evict(0, bytes / 2);
  const std::size_t half = testing::resident_file_bytes();
  r.evict(bytes / 2, bytes / 2);
  const std::size_t none = testing::resident_file_bytes();
  EXPECT_GE(written - half, bytes / 2 - kMiB) << written << " -> " << half;
  EXPECT_GE(half - none, bytes / 2 - kMiB) << half << " -> " << none;
  // Reading back brings the data, and only then the pages, back.
  EXPECT_TRUE(has_pattern(words(r)));
  EXPECT_GE(testing::resident_file_bytes(), none + bytes - kMiB);
}

TEST(FileTier, EvictingPartOfAPageKeepsItsNeighbours) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  const Region r = tier.allocate(kMiB);
  fill_pattern(words(r));
  r.evict(100, 10);
  r.evict(r.size() - 1, 1);
  EXPECT_TRUE(has_pattern(words(r)));
}

TEST(FileTier, ArenaEvictsASlabOfATensor) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  Arena arena("spilled", tier, 8 * kMiB);
  arena.allocate(DType::u8, {100});
  Tensor t = arena.allocate(DType::f32, {1024, 1024});
  auto* f = static_cast<float*>(t.data());
  std::iota(f, f + 1024 * 1024, 0.0f);
  const std::size_t before = testing::resident_file_bytes();
  arena.evict(f + 512 * 1024, 512 * 1024 * sizeof(float));  // the second half of the rows
  EXPECT_GE(before - testing::resident_file_bytes(), std::size_t{2 * kMiB} - 4096);
  for (int i = 0; i < 1024 * 1024; ++i) ASSERT_EQ(f[i], static_cast<float>(i)) << i;
  EXPECT_THROW(arena.evict(f, 9 * kMiB), InternalError);
}

TEST(FileTier, EvictingOutsideTheRegionIsAnInternalError) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  const Region r = tier.allocate(kMiB);
  EXPECT_THROW(r.evict(kMiB, 1), InternalError);
  EXPECT_THROW(r.evict(1, kMiB), InternalError);
  EXPECT_NO_THROW(r.evict(kMiB, 0));
}

TEST(FileTier, EvictionIsANoOpForDram) {
  const Region r = dram_tier().allocate(kMiB);
  fill_pattern(words(r));
  r.evict(0, r.size());
  EXPECT_TRUE(has_pattern(words(r)));
}

TEST(FileTier, AnAbsurdSizeIsABudgetErrorNamingTheDirectoryAndItsFreeSpace) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  const std::string msg =
      thrown_message<BudgetError>([&] { tier.allocate(std::size_t{1} << 50); });  // 1 PiB
  EXPECT_TRUE(contains(msg, "spill directory '" + dir.path().string() + "' cannot hold 1.00 PiB"))
      << msg;
  EXPECT_TRUE(contains(msg, "(1125899906842624 bytes)")) << msg;
  EXPECT_TRUE(contains(msg, " free there")) << msg;
  EXPECT_TRUE(contains(msg, "--spill-dir")) << msg;
  EXPECT_TRUE(dir_is_empty(dir.path()));
  EXPECT_EQ(mappings_from(dir.path()), 0u);
}

TEST(FileTier, AFullFileSystemIsABudgetErrorAtAllocationNotAtWrite) {
  const ScratchDir dir;
  const testing::TmpfsMount tiny(dir / "tiny", 4 * kMiB);
  if (!tiny.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (not root)";
  FileTier tier(tiny.dir());
  const Region fits = tier.allocate(3 * kMiB);
  const std::string msg = thrown_message<BudgetError>([&] { tier.allocate(2 * kMiB); });
  EXPECT_TRUE(contains(msg, "cannot hold 2.00 MiB")) << msg;
  EXPECT_TRUE(contains(msg, "No space left on device, 1.00 MiB free there")) << msg;
  fill_pattern(words(fits));  // what was reserved is there to write
  EXPECT_TRUE(has_pattern(words(fits)));
}

}  // namespace
}  // namespace cpufold
