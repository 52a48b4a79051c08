#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::ScratchDir;
using testing::thrown_message;
using testing::write_file;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The PID of a process that has exited (so cannot own a temporary any more).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(AtomicFile, WritesTheBytesAndLeavesNoTemporary) {
  ScratchDir dir;
  const std::string bytes("binary\0data\nline 2", 18);
  write_file_atomically(dir / "out.json", bytes);
  EXPECT_EQ(read_file(dir / "out.json"), bytes);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out.json"});
}

TEST(AtomicFile, ReplacesAnExistingFile) {
  ScratchDir dir;
  write_file(dir / "out.pdb", "old contents that are longer than the new ones");
  write_file_atomically(dir / "out.pdb", "new");
  EXPECT_EQ(read_file(dir / "out.pdb"), "new");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out.pdb"});
}

TEST(AtomicFile, WritesAnEmptyFile) {
  ScratchDir dir;
  write_file_atomically(dir / "empty", "");
  EXPECT_TRUE(fs::exists(dir / "empty"));
  EXPECT_EQ(fs::file_size(dir / "empty"), 0u);
}

TEST(AtomicFile, MissingDirectoryThrowsInputErrorNamingThePath) {
  ScratchDir dir;
  const fs::path target = dir / "no_such_dir" / "out.cif";
  const std::string msg = thrown_message<InputError>([&] { write_file_atomically(target, "x"); });
  EXPECT_NE(msg.find(target.string()), std::string::npos) << msg;
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{});
}

TEST(AtomicFile, FailedRenameRemovesTheTemporary) {
  // The target is a non-empty directory: the temporary is written, the rename fails.
  ScratchDir dir;
  fs::create_directory(dir / "out.png");
  write_file(dir / "out.png" / "keep", "x");
  const std::string msg =
      thrown_message<InputError>([&] { write_file_atomically(dir / "out.png", "bytes"); });
  EXPECT_NE(msg.find((dir / "out.png").string()), std::string::npos) << msg;
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out.png"});
}

TEST(AtomicFile, ReadOnlyDirectoryThrowsAndLeavesNothing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  ScratchDir dir;
  fs::create_directory(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  const std::string msg =
      thrown_message<InputError>([&] { write_file_atomically(dir / "ro" / "out.json", "x"); });
  fs::permissions(dir / "ro", fs::perms::owner_all);
  EXPECT_NE(msg.find((dir / "ro" / "out.json").string()), std::string::npos) << msg;
  EXPECT_TRUE(fs::is_empty(dir / "ro"));
}

TEST(AtomicFile, RemoveStaleTemporariesKeepsLiveOwnersAndOtherFiles) {
  ScratchDir dir;
  const std::string dead = std::to_string(dead_pid());
  write_file(dir / (".a.pdb.tmp." + dead), "half");
  write_file(dir / (".b.json.tmp." + dead), "half");
  write_file(dir / (".c.json.tmp." + std::to_string(::getpid())), "being written");  // alive
  write_file(dir / "a.pdb", "done");
  write_file(dir / "notes.tmp.txt", "not ours");
  write_file(dir / ".d.tmp.x12", "not a pid");
  EXPECT_EQ(remove_stale_temporaries(dir.path()), 2u);
  EXPECT_EQ(names_in(dir.path()),
            (std::vector<std::string>{".c.json.tmp." + std::to_string(::getpid()), ".d.tmp.x12",
                                      "a.pdb", "notes.tmp.txt"}));
  EXPECT_EQ(remove_stale_temporaries(dir.path()), 0u);
}

TEST(AtomicFile, RemoveStaleTemporariesOfAMissingDirectoryIsZero) {
  ScratchDir dir;
  EXPECT_EQ(remove_stale_temporaries(dir / "missing"), 0u);
}

}  // namespace
}  // namespace cpufold
