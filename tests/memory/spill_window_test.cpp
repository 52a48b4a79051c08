#include "memory/spill_window.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "memory/arena.h"
#include "memory/error.h"
#include "memory/file_tier.h"
#include "memory/spill_dir.h"
#include "tests/memory/spill_test_util.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::cached_pages;
using testing::kMiB;
using testing::ScratchDir;

// A [rows, cols, c] f32 tensor in `arena` with element (r, j, k) = r·1e4 + j·10 + k.
Tensor patterned(Arena& arena, std::int64_t rows, std::int64_t cols, std::int64_t c) {
  const Tensor t = arena.allocate(DType::f32, {rows, cols, c});
  float* p = t.data_as<float>();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t k = 0; k < c; ++k)
        p[(r * cols + j) * c + k] = static_cast<float>(r * 10000 + j * 10 + k);
  return t;
}

// Adds `step` + the view's first index along `axis` to every element the pass visits, `step`
// indices at a time, through the window's views.
void add_along(const Tensor& t, int axis, std::int64_t step,
               SpillWindow::Sharing sharing = SpillWindow::Sharing::with_others) {
  SpillWindow window(t, axis, step, SpillWindow::Access::write, 0, sharing);
  for (std::int64_t b = 0; b < t.dim(axis); b += step) {
    const std::int64_t e = std::min(t.dim(axis), b + step);
    const Tensor v = window.at(b, e);
    for (std::int64_t r = 0; r < v.dim(0); ++r)
      for (std::int64_t j = 0; j < v.dim(1); ++j)
        for (std::int64_t k = 0; k < v.dim(2); ++k)
          v.data_as<float>()[r * v.stride(0) + j * v.stride(1) + k * v.stride(2)] +=
              static_cast<float>(axis == 0 ? b + r : b + j);
  }
  window.finish();
}

std::vector<float> values(const Tensor& t) {
  const float* p = t.data_as<float>();
  return {p, p + t.numel()};
}

TEST(SpillWindow, RowAndColumnPassesOverASpilledTensorChangeWhatTheSameArithmeticInDramDoes) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  Arena spilled("spilled", tier, f32_bytes({300, 40, 64}));
  Arena dram("dram", dram_tier(), f32_bytes({300, 40, 64}));
  const Tensor s = patterned(spilled, 300, 40, 64), d = patterned(dram, 300, 40, 64);
  for (const auto& [axis, step] : {std::pair{0, 7}, {1, 3}, {0, 300}, {1, 1}}) {
    add_along(s, axis, step);
    add_along(d, axis, step);
  }
  EXPECT_EQ(values(s), values(d));
}

// Passes with step 1 and 4 along both axes of a [256, 64, 64] tensor (rows of 64 KiB, columns of
// 256 bytes, so that a column slab's runs are whole pages), spilled with `buffered` or not, give
// the bits the same passes give in DRAM; the spilled passes are direct unless `buffered`
// (where the machine has an io_uring and the file system O_DIRECT).
void expect_passes_match_dram(bool buffered) {
  const ScratchDir dir;
  if (buffered) ::setenv("CPUFOLD_SPILL_BUFFERED", "1", 1);
  FileTier tier(dir.path());
  Arena spilled("spilled", tier, f32_bytes({256, 64, 64}));
  ::unsetenv("CPUFOLD_SPILL_BUFFERED");
  Arena dram("dram", dram_tier(), f32_bytes({256, 64, 64}));
  const Tensor s = patterned(spilled, 256, 64, 64), d = patterned(dram, 256, 64, 64);
  const bool can_direct = SpillQueue(1).available() && spill_mapping_at(s.data()).direct_fd >= 0;
  for (const auto& [axis, step] : {std::pair{0, 1}, {1, 4}, {0, 4}, {1, 1}}) {
    EXPECT_EQ(SpillWindow(s, axis, step, SpillWindow::Access::read).direct(),
              can_direct && !buffered)
        << "axis " << axis;
    add_along(s, axis, step);
    add_along(d, axis, step);
  }
  EXPECT_EQ(values(s), values(d));
  if (!buffered && !can_direct) {
    GTEST_SKIP() << "no io_uring or O_DIRECT here: passes buffered";
  }
}

TEST(SpillWindow, DirectPassesChangeWhatTheSameArithmeticInDramDoes) {
  expect_passes_match_dram(false);
}

TEST(SpillWindow, BufferedPassesChangeWhatTheSameArithmeticInDramDoes) {
  expect_passes_match_dram(true);
}

// A column pass over an MSA-like [512, 128, 256] tensor (64 MiB; runs of 1 KiB per column): 8
// columns per slab (4 MiB), or 16 (8 MiB, an eighth of the tensor) for a direct pass that is
// alone when the plan's window holds three such slabs; either way the bits of DRAM.
TEST(SpillWindow, ADirectPassThatIsAloneStagesWiderSlabsWithinThePlansWindow) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  const Shape shape{512, 128, 256};
  Arena spilled("spilled", tier, f32_bytes(shape));
  Arena dram("dram", dram_tier(), f32_bytes(shape));
  const Tensor s = patterned(spilled, 512, 128, 256), d = patterned(dram, 512, 128, 256);
  if (!SpillWindow(s, 1, 4, SpillWindow::Access::read).direct())
    GTEST_SKIP() << "no io_uring or O_DIRECT here: passes buffered";
  const auto columns = [&](SpillWindow::Sharing sharing) {
    return SpillWindow(s, 1, 4, SpillWindow::Access::write, 0, sharing).slab_length();
  };
  constexpr auto alone = SpillWindow::Sharing::alone;
  EXPECT_EQ(columns(alone), 8) << "no window set: the default slabs";
  tier.set_window_bytes(3 * 8 * kMiB);
  EXPECT_EQ(columns(SpillWindow::Sharing::with_others), 8);
  EXPECT_EQ(columns(alone), 16);
  tier.set_window_bytes(3 * 8 * kMiB - 1);  // three slabs of 16 columns would not fit
  EXPECT_EQ(columns(alone), 12);
  tier.set_window_bytes(3 * 8 * kMiB);
  add_along(s, 1, 4, alone);
  add_along(d, 1, 4);
  add_along(s, 0, 8, alone);  // a row pass: its slabs are an eighth of the tensor already
  add_along(d, 0, 8);
  EXPECT_EQ(values(s), values(d));
}

TEST(SpillWindow, TensorsInDramArePassedThroughAsSlicesOfThemselves) {
  Arena dram("dram", dram_tier(), f32_bytes({8, 16, 4}));
  const Tensor t = patterned(dram, 8, 16, 4);
  SpillWindow window(t, 1, 4, SpillWindow::Access::write);
  EXPECT_FALSE(window.staged());
  const Tensor v = window.at(4, 8);
  EXPECT_EQ(v.data(), t.slice(1, 4, 8).data());
  EXPECT_EQ(v.strides().str(), t.strides().str());
}

// The most of `t` in the page cache during a pass along `axis`, `step` at a time, each step
// changing the first element of its view (a write pass) or reading it.
std::size_t most_cached_during_pass(const Tensor& t, int axis, std::int64_t step,
                                    SpillWindow::Access access) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t most = 0;
  SpillWindow window(t, axis, step, access);
  EXPECT_TRUE(window.staged());
  volatile float sum = 0;
  for (std::int64_t b = 0; b < t.dim(axis); b += step) {
    const Tensor v = window.at(b, std::min(t.dim(axis), b + step));
    if (access == SpillWindow::Access::write) {
      v.data_as<float>()[0] += 1.f;
    } else {
      sum = sum + v.data_as<float>()[0];
    }
    most = std::max(most, cached_pages(t.data(), t.nbytes()) * page);
  }
  window.finish();
  return most;
}

// The Evoformer's MSA layout (1 KiB per residue and row) and the extra-MSA representation's
// (256 bytes: a page holds 16 columns of a row).
class SpillWindowLayout : public ::testing::TestWithParam<std::array<std::int64_t, 3>> {};

TEST_P(SpillWindowLayout, APassKeepsOnlyItsWindowInThePageCacheAndLeavesNothingBehind) {
  const ScratchDir dir;
  if (spill_dir_in_memory(dir.path())) GTEST_SKIP() << "the page cache of tmpfs is its storage";
  FileTier tier(dir.path());
  const auto [rows, cols, c] = GetParam();
  Arena spilled("spilled", tier, f32_bytes({rows, cols, c}));
  const Tensor t = patterned(spilled, rows, cols, c);
  spilled.evict(t.data(), t.nbytes());  // the pattern, written through the mapping
  const auto index = [&](std::int64_t r, std::int64_t j) { return (r * cols + j) * c; };
  // A read pass first: it leaves the pattern as it is.
  for (const auto access : {SpillWindow::Access::read, SpillWindow::Access::write}) {
    // Rows 4 at a time (slabs of about kSpillSlabBytes) and, reading, in larger steps (slabs of
    // a whole step: the outer product mean's kept projection).
    for (const auto& [axis, step] :
         {std::pair{0, std::int64_t{4}}, {1, std::int64_t{1}}, {0, std::int64_t{rows / 8}}}) {
      if (step > 4 && access == SpillWindow::Access::write) continue;
      const std::size_t bound =
          axis == 0 ? SpillWindow::resident_bytes(1, rows, static_cast<std::size_t>(cols * c) * 4,
                                                  step, access)
                    : SpillWindow::resident_bytes(rows, cols, static_cast<std::size_t>(c) * 4, step,
                                                  access);
      const std::size_t most = most_cached_during_pass(t, axis, step, access);
      const bool read = access == SpillWindow::Access::read;
      EXPECT_LE(most, bound) << "axis " << axis << " step " << step << (read ? " read" : " write");
      if (step <= 4) {
        EXPECT_LT(bound, t.nbytes() / 2) << "axis " << axis;
      }
      EXPECT_LE(cached_pages(t.data(), t.nbytes()), 2u) << "axis " << axis;
    }
  }
  // A column pass that reads holds less than one that writes.
  EXPECT_LT(SpillWindow::resident_bytes(rows, cols, static_cast<std::size_t>(c) * 4, 1,
                                        SpillWindow::Access::read),
            SpillWindow::resident_bytes(rows, cols, static_cast<std::size_t>(c) * 4, 1));
  // What the passes wrote reached the file: read back through the mapping.
  EXPECT_EQ(t.data_as<float>()[0], 2.f);
  EXPECT_EQ(t.data_as<float>()[index(rows - 4, 0)], (rows - 4) * 10000.f + 1.f);  // a row step
  EXPECT_EQ(t.data_as<float>()[index(0, cols - 1)], (cols - 1) * 10.f + 1.f);     // a column's
}

INSTANTIATE_TEST_SUITE_P(MsaAndExtraMsa, SpillWindowLayout,
                         ::testing::Values(std::array<std::int64_t, 3>{512, 128, 256},
                                           std::array<std::int64_t, 3>{2560, 256, 64}));

TEST(SpillWindow, ASpilledTensorThePlanLeavesRoomToCacheWholeIsNotStaged) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  Arena spilled("spilled", tier, f32_bytes({64, 64, 64}));
  const Tensor t = patterned(spilled, 64, 64, 64);
  tier.set_cache_bytes(t.nbytes());
  EXPECT_FALSE(SpillWindow(t, 1, 4, SpillWindow::Access::write).staged());
  // A part of it is judged by the whole it belongs to.
  EXPECT_FALSE(SpillWindow(t.slice(0, 0, 8), 0, 1, SpillWindow::Access::read, t.nbytes()).staged());
  tier.set_cache_bytes(t.nbytes() - 1);
  EXPECT_TRUE(SpillWindow(t, 1, 4, SpillWindow::Access::write).staged());
  EXPECT_TRUE(SpillWindow(t.slice(0, 0, 8), 0, 1, SpillWindow::Access::read, t.nbytes()).staged());
}

TEST(SpillWindow, AnAlwaysStagedTensorIsStagedWhateverRoomThePlanLeavesToCacheIt) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  Arena spilled("spilled", tier, f32_bytes({64, 64, 64}));
  const Tensor t = patterned(spilled, 64, 64, 64);
  tier.set_cache_bytes(std::size_t{1} << 40);
  EXPECT_FALSE(SpillWindow(t, 0, 4, SpillWindow::Access::write).staged());
  constexpr std::size_t always = SpillWindow::kAlwaysStaged;
  EXPECT_TRUE(SpillWindow(t, 1, 4, SpillWindow::Access::write, always).staged());
  EXPECT_TRUE(SpillWindow(t, 0, 1, SpillWindow::Access::read, always).staged());
}

TEST(SpillWindow, APassThatStepsBackIsAnInternalError) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  Arena spilled("spilled", tier, f32_bytes({64, 64, 64}));
  const Tensor t = patterned(spilled, 64, 64, 64);
  SpillWindow window(t, 0, 1, SpillWindow::Access::read);
  ASSERT_TRUE(window.staged());
  window.at(0, 1);
  window.at(window.slab_length(), window.slab_length() + 1);
  EXPECT_THROW(window.at(0, 1), InternalError);
  EXPECT_THROW(window.at(t.dim(0) - 1, t.dim(0)), InternalError) << "skips slabs";
}

}  // namespace
}  // namespace cpufold
