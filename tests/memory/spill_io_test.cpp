#include "memory/spill_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "memory/error.h"
#include "memory/spill_dir.h"
#include "memory/tier.h"
#include "memory/unique_fd.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::ScratchDir;

// A 1 MiB unnamed file in a scratch directory, and the same file opened O_DIRECT (none where the
// file system refuses it).
struct SpillFile {
  ScratchDir dir;
  UniqueFd fd = create_unnamed_file(dir.path());
  UniqueFd direct;
  static constexpr std::size_t kBytes = std::size_t{1} << 20;
  SpillFile() {
    EXPECT_EQ(::posix_fallocate(fd.get(), 0, kBytes), 0);
    direct = UniqueFd(::open(("/proc/self/fd/" + std::to_string(fd.get())).c_str(),
                             O_RDWR | O_DIRECT | O_CLOEXEC));
  }
};

// Page-aligned DRAM filled with `value`.
Region filled(std::size_t bytes, std::byte value) {
  Region r = dram_tier().allocate(bytes);
  std::memset(r.data(), static_cast<int>(value), bytes);
  return r;
}

TEST(SpillQueue, WritesAndReadsWhatWasQueuedOnceItsTagIsWaitedFor) {
  SpillFile file;
  SpillQueue queue(8);
  if (!file.direct || !queue.available()) GTEST_SKIP() << "no O_DIRECT or io_uring here";
  const Region a = filled(64 << 10, std::byte{0x5a}), b = filled(8 << 10, std::byte{0x33});
  queue.write(file.direct.get(), file.fd.get(), a.data(), a.size(), 0, 0);
  queue.write(file.direct.get(), file.fd.get(), b.data(), b.size(), 512 << 10, 1);
  queue.wait(0);
  queue.wait(1);
  std::vector<std::byte> check(8 << 10);
  ASSERT_EQ(::pread(file.fd.get(), check.data(), check.size(), 60 << 10),
            static_cast<ssize_t>(check.size()));
  EXPECT_EQ(check[0], std::byte{0x5a});     // a's last 4 KiB
  EXPECT_EQ(check[4 << 10], std::byte{0});  // never written
  const Region back = filled(72 << 10, std::byte{0});
  queue.read(file.direct.get(), file.fd.get(), back.data(), 64 << 10, 0, 2);
  queue.read(file.direct.get(), file.fd.get(), back.data() + (64 << 10), 8 << 10, 512 << 10, 2);
  queue.wait(2);
  EXPECT_EQ(back.data()[(64 << 10) - 1], std::byte{0x5a});
  EXPECT_EQ(back.data()[64 << 10], std::byte{0x33});
}

TEST(SpillQueue, ARequestTheDeviceRefusesForItsAlignmentIsRedoneThroughThePageCache) {
  SpillFile file;
  SpillQueue queue(4);
  if (!file.direct || !queue.available()) GTEST_SKIP() << "no O_DIRECT or io_uring here";
  const Region src = filled(8 << 10, std::byte{0x11});
  // Offset 100 and 1,000 bytes from an odd address: no device takes that with O_DIRECT.
  queue.write(file.direct.get(), file.fd.get(), src.data() + 3, 1000, 100, 0);
  queue.wait(0);
  const Region dst = filled(8 << 10, std::byte{0});
  queue.read(file.direct.get(), file.fd.get(), dst.data() + 5, 1002, 99, 1);
  queue.wait(1);
  EXPECT_EQ(dst.data()[5], std::byte{0});        // offset 99: before the write
  EXPECT_EQ(dst.data()[6], std::byte{0x11});     // 100
  EXPECT_EQ(dst.data()[1005], std::byte{0x11});  // 1,099, the last written
  EXPECT_EQ(dst.data()[1006], std::byte{0});     // 1,100
}

TEST(SpillQueue, AFailedRequestIsAnInputErrorWhenItsTagIsWaitedFor) {
  SpillFile file;
  SpillQueue queue(4);
  if (!queue.available()) GTEST_SKIP() << "no io_uring here";
  const Region buffer = filled(4 << 10, std::byte{0});
  queue.read(/*direct_fd=*/-1, file.fd.get(), buffer.data(), buffer.size(), 0, 0);
  try {
    queue.wait(0);
    FAIL() << "a read of a closed descriptor did not fail";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--spill-dir"), std::string::npos) << e.what();
  }
}

TEST(SpillQueue, MoreRequestsThanItHasRoomForWaitForEachOther) {
  SpillFile file;
  SpillQueue queue(2);
  if (!file.direct || !queue.available()) GTEST_SKIP() << "no O_DIRECT or io_uring here";
  const Region src = filled(SpillFile::kBytes, std::byte{0});
  for (std::size_t k = 0; k < 256; ++k) src.data()[k * 4096] = static_cast<std::byte>(k);
  for (std::size_t k = 0; k < 256; ++k) {
    queue.write(file.direct.get(), file.fd.get(), src.data() + k * 4096, 4096, k * 4096,
                static_cast<int>(k % SpillQueue::kTags));
  }
  for (int tag = 0; tag < SpillQueue::kTags; ++tag) queue.wait(tag);
  std::vector<std::byte> back(SpillFile::kBytes);
  ASSERT_EQ(::pread(file.fd.get(), back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  for (std::size_t k = 0; k < 256; ++k) EXPECT_EQ(back[k * 4096], static_cast<std::byte>(k)) << k;
}

}  // namespace
}  // namespace cpufold
