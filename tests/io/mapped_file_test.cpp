#include "io/mapped_file.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include <unistd.h>
#include "memory/mapped_regions.h"

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::ScratchDir;

// Resident kilobytes of the mapping holding `p`.
long resident_kib(const void* p) {
  return std::stol(testing::smaps_field(p, "Rss:"));
}

unsigned sum_bytes(std::span<const std::byte> bytes) {
  unsigned s = 0;
  for (std::byte b : bytes) s = s * 31 + static_cast<unsigned>(b);
  return s;
}

// The weight store's finiteness check drops each parameter's pages once read, so that a load
// holds one parameter resident rather than the whole file: only the range's pages go, and they
// read back unchanged.
TEST(MappedFile, DropsTheResidentPagesOfARangeOnly) {
  const ScratchDir dir;
  const long page = ::sysconf(_SC_PAGESIZE);
  const auto path = dir.path() / "pages.bin";
  {
    std::vector<char> bytes(static_cast<std::size_t>(64 * page));
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + i / 4096);
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  }
  const MappedFile file = MappedFile::open_read_only(path);
  const unsigned before = sum_bytes(file.bytes());  // touches every page
  const long all = resident_kib(file.data());
  ASSERT_EQ(all, 64 * page / 1024);

  // Bytes 10.5 pages in to 20.5 pages in: pages 10 to 20, eleven pages.
  file.drop_resident_pages(file.bytes().subspan(static_cast<std::size_t>(10 * page + page / 2),
                                                static_cast<std::size_t>(10 * page)));
  EXPECT_EQ(resident_kib(file.data()), all - 11 * page / 1024);

  const std::vector<std::byte> elsewhere(16);
  file.drop_resident_pages(elsewhere);  // not in the mapping: ignored
  file.drop_resident_pages({});
  EXPECT_EQ(resident_kib(file.data()), all - 11 * page / 1024);

  EXPECT_EQ(sum_bytes(file.bytes()), before);
  EXPECT_EQ(resident_kib(file.data()), all);
}

TEST(MappedFileDeathTest, AFileTruncatedUnderItsMappingIsNamedWhenSigbusEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const testing::ScratchDir dir;
  const std::filesystem::path file = dir / "weights.cache";
  testing::write_file(file, std::string(std::size_t{1} << 16, 'w'));
  EXPECT_EXIT(
      {
        install_sigbus_message();
        const MappedFile m = MappedFile::open_read_only(file);
        std::filesystem::resize_file(file, 0);  // as `truncate -s 0` by another process
        volatile std::byte b = m.data()[m.size() - 1];
        (void)b;
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGBUS),
      "cpufold: error: bus error \\(SIGBUS\\) reading .*weights.cache: the file was truncated");
}

}  // namespace
}  // namespace cpufold
