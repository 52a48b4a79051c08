// Helpers for the spill-tier tests: what of a file mapping is resident, a small tmpfs, and
// checks of messages and directories.
#pragma once

#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace cpufold::testing {

inline constexpr std::size_t kMiB = std::size_t{1} << 20;

inline bool dir_is_empty(const std::filesystem::path& dir) {
  return std::filesystem::directory_iterator(dir) == std::filesystem::directory_iterator();
}

// Bytes of file-backed pages mapped into this process (RssFile + RssShmem of
// /proc/self/status): what a spilled region adds to the resident set.
inline std::size_t resident_file_bytes() {
  std::ifstream status("/proc/self/status");
  std::size_t total = 0;
  for (std::string key; status >> key;) {
    std::size_t kib = 0;
    if (key == "RssFile:" || key == "RssShmem:") {
      status >> kib;
      total += kib * 1024;
    }
  }
  return total;
}

// Pages of [p, p + bytes) in the page cache (mincore), whether mapped here or not.
inline std::size_t cached_pages(const void* p, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (::mincore(const_cast<void*>(p), bytes, in_core.data()) != 0) return in_core.size();
  std::size_t n = 0;
  for (const unsigned char c : in_core) n += c & 1;
  return n;
}

// A tmpfs of `bytes` mounted at `dir` for the object's lifetime, when this process may mount
// (root with CAP_SYS_ADMIN); mounted() says whether it is.
class TmpfsMount {
 public:
  TmpfsMount(std::filesystem::path dir, std::size_t bytes, bool read_only = false)
      : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    const std::string options = "size=" + std::to_string(bytes);
    mounted_ =
        ::mount("tmpfs", dir_.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, options.c_str()) == 0;
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  bool mounted_ = false;
};

}  // namespace cpufold::testing
