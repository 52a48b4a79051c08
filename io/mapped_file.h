// A whole file mapped read-only and shared (PROT_READ, MAP_SHARED), so concurrent processes
// that map the same weights share one copy in the page cache.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <span>

namespace cpufold {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws WeightsError naming the file when it cannot be opened or mapped.
  static MappedFile open_read_only(const std::filesystem::path& path);

  MappedFile(MappedFile&& o) noexcept { *this = std::move(o); }
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() { reset(); }

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  // True when `path` still names the file that was mapped (not replaced by a rename since).
  bool same_file_as(const std::filesystem::path& path) const;
  // Drops this process's resident pages of the mapping (they stay in the page cache): RSS
  // falls by what was touched, and a later read faults the page back in, unchanged.
  void drop_resident_pages() const;
  // The same for the pages that hold `range` (whole pages, so neighbours' bytes on its first and
  // last page go too); a range outside the mapping is ignored.
  void drop_resident_pages(std::span<const std::byte> range) const;
  // Reads every page of the mapping, so that all of it is resident in this process (the opposite
  // of drop_resident_pages).
  void make_resident() const;
  void reset();

 private:
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

}  // namespace cpufold
