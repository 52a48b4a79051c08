#include "memory/spill_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "memory/error.h"
#include "memory/file_tier.h"
#include "tests/memory/spill_test_util.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::kMiB;
using testing::ScratchDir;
using testing::thrown_message;

std::string fd_target(const UniqueFd& fd) {
  return std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd.get())).string();
}

TEST(SpillDir, AMissingDirectoryIsAnInputErrorSayingToCreateIt) {
  const ScratchDir dir;
  const auto missing = dir / "nope";
  const std::string msg = thrown_message<InputError>([&] { require_spill_dir(missing); });
  EXPECT_TRUE(contains(msg, "directory '" + missing.string() + "' does not exist; create it"))
      << msg;
  EXPECT_THROW(FileTier{missing}, InputError);
}

TEST(SpillDir, AFileIsNotADirectory) {
  const ScratchDir dir;
  testing::write_file(dir / "f", "x");
  const std::string msg = thrown_message<InputError>([&] { require_spill_dir(dir / "f"); });
  EXPECT_TRUE(contains(msg, "is not a directory")) << msg;
}

TEST(SpillDir, AReadOnlyFileSystemIsAnInputErrorSayingSo) {
  const ScratchDir dir;
  const testing::TmpfsMount ro(dir / "ro", kMiB, /*read_only=*/true);
  if (!ro.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (not root)";
  const std::string msg = thrown_message<InputError>([&] { require_spill_dir(ro.dir()); });
  EXPECT_TRUE(contains(msg, "cannot create a file in the spill directory")) << msg;
  EXPECT_TRUE(contains(msg, "Read-only file system")) << msg;
  EXPECT_TRUE(contains(msg, "--spill-dir")) << msg;
}

TEST(SpillDir, AWritableDirectoryPassesAndStaysEmpty) {
  const ScratchDir dir;
  EXPECT_NO_THROW(require_spill_dir(dir.path()));
  EXPECT_TRUE(testing::dir_is_empty(dir.path()));
}

TEST(SpillDir, FreeSpaceAndMemoryBackingOfATmpfs) {
  const ScratchDir dir;
  const testing::TmpfsMount tiny(dir / "tiny", 4 * kMiB);
  if (!tiny.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (not root)";
  EXPECT_TRUE(spill_dir_in_memory(tiny.dir()));
  EXPECT_EQ(spill_free_bytes(tiny.dir()), 4 * kMiB);
  FileTier tier(tiny.dir());
  const Region r = tier.allocate(kMiB);
  EXPECT_EQ(spill_free_bytes(tiny.dir()), 3 * kMiB);  // reserved at allocation
}

TEST(SpillDir, FreeSpaceOfAMissingDirectoryIsAnInputError) {
  const ScratchDir dir;
  EXPECT_THROW(spill_free_bytes(dir / "nope"), InputError);
}

TEST(SpillDir, UnnamedFilesLiveInTheDirectoryWithoutAName) {
  const ScratchDir dir;
  for (const UniqueFd& fd :
       {create_unnamed_file(dir.path()), create_named_then_unlinked_file(dir.path())}) {
    ASSERT_TRUE(fd);
    EXPECT_TRUE(contains(fd_target(fd), dir.path().string() + "/")) << fd_target(fd);
    EXPECT_TRUE(contains(fd_target(fd), "(deleted)")) << fd_target(fd);
    ASSERT_EQ(::pwrite(fd.get(), "spill", 5, 0), 5);
    char back[5] = {};
    ASSERT_EQ(::pread(fd.get(), back, 5, 0), 5);
    EXPECT_EQ(std::string(back, 5), "spill");
  }
  EXPECT_TRUE(testing::dir_is_empty(dir.path()));
}

}  // namespace
}  // namespace cpufold
