#include "io/file_identity.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

// Sets the file's mtime back to `mtime`, as `cp -p`, `rsync -a` and `tar x` do.
void set_mtime(const fs::path& file, const timespec& mtime) {
  const timespec times[2] = {mtime, mtime};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
}

timespec mtime_of(const fs::path& file) {
  struct stat st {};
  EXPECT_EQ(::stat(file.c_str(), &st), 0);
  return st.st_mtim;
}

// Rewrites `file` with `bytes` and sets its mtime back, as `cp -p`, `rsync -a` and `tar x`
// leave a replaced file.
void replace_keeping_mtime(const fs::path& file, const std::string& bytes) {
  const timespec mtime = mtime_of(file);
  testing::write_file(file, bytes);
  set_mtime(file, mtime);
}

// Old enough that its hash is remembered (io/file_identity.cpp keeps no record of a file
// changed within the last clock tick).
void let_ctime_age() {
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
}

struct CacheDirScope {
  explicit CacheDirScope(const fs::path& dir) { ::setenv("CPUFOLD_CACHE_DIR", dir.c_str(), 1); }
  ~CacheDirScope() { ::unsetenv("CPUFOLD_CACHE_DIR"); }
};

TEST(FileContentHash, SameBytesSameHashAnywhere) {
  const testing::ScratchDir dir;
  const CacheDirScope cache(dir / "cache");
  testing::write_file(dir / "a.npz", "the same weights");
  testing::write_file(dir / "b.npz", "the same weights");
  EXPECT_EQ(file_content_hash(dir / "a.npz"), file_content_hash(dir / "b.npz"));
  EXPECT_EQ(file_content_hash(dir / "a.npz").rfind("xxh3-128:", 0), 0u);
}

TEST(FileContentHash, OtherBytesOfTheSameSizeAndMtimeChangeIt) {
  const testing::ScratchDir dir;
  const CacheDirScope cache(dir / "cache");
  const fs::path file = dir / "params.npz";
  testing::write_file(file, "weights A");
  let_ctime_age();
  const std::string first = file_content_hash(file);
  ASSERT_EQ(first, file_content_hash(file));  // now from the record
  replace_keeping_mtime(file, "weights B");
  EXPECT_NE(file_content_hash(file), first);
}

TEST(FileContentHash, RecordIsTrustedOnlyWhileTheFileIsUnchanged) {
  const testing::ScratchDir dir;
  const CacheDirScope cache(dir / "cache");
  const fs::path file = dir / "params.npz";
  testing::write_file(file, "weights A");
  let_ctime_age();
  const std::string hash = file_content_hash(file);
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(dir / "cache")) records.push_back(e.path());
  ASSERT_EQ(records.size(), 1u);
  // A record naming another hash is believed while the file's stat is the recorded one: the
  // proof that the file is not read again.
  std::string text = testing::read_file(records[0]);
  const std::string forged = "xxh3-128:" + std::string(32, '0');
  text.replace(text.find(hash), hash.size(), forged);
  testing::write_file(records[0], text);
  EXPECT_EQ(file_content_hash(file), forged);
  // Any write changes the ctime, which no tool can set back: the file is hashed again.
  replace_keeping_mtime(file, "weights A");
  EXPECT_EQ(file_content_hash(file), hash);
}

TEST(FileContentHash, FreshFileIsHashedButNotRecorded) {
  const testing::ScratchDir dir;
  const CacheDirScope cache(dir / "cache");
  testing::write_file(dir / "params.npz", "just written");
  EXPECT_FALSE(file_content_hash(dir / "params.npz").empty());
  EXPECT_FALSE(fs::exists(dir / "cache") && !fs::is_empty(dir / "cache"));
}

TEST(FileContentHash, UnreadableCacheDirectoryOnlyCostsAReread) {
  const testing::ScratchDir dir;
  testing::write_file(dir / "not-a-dir", "x");
  const CacheDirScope cache(dir / "not-a-dir" / "cache");
  testing::write_file(dir / "params.npz", "weights");
  let_ctime_age();
  EXPECT_EQ(file_content_hash(dir / "params.npz"), file_content_hash(dir / "params.npz"));
}

TEST(FileContentHash, MissingOrNonRegularFileIsAnInputError) {
  const testing::ScratchDir dir;
  EXPECT_NE(testing::thrown_message<InputError>([&] {
              file_content_hash(dir / "none.npz");
            }).find("none.npz"),
            std::string::npos);
  EXPECT_NE(testing::thrown_message<InputError>([&] {
              file_content_hash(dir.path());
            }).find("not a regular file"),
            std::string::npos);
}

}  // namespace
}  // namespace cpufold
