#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "memory/error.h"
#include "memory/mapped_regions.h"

namespace cpufold {

namespace {

// Closes the descriptor when the scope ends; the mapping stays valid without it.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw WeightsError("cannot map weights file " + path.string() + ": " + what + ": " +
                     std::strerror(errno));
}

}  // namespace

MappedFile MappedFile::open_read_only(const std::filesystem::path& path) {
  const FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) fail(path, "open failed");
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) fail(path, "stat failed");
  MappedFile m;
  m.device_ = st.st_dev;
  m.inode_ = st.st_ino;
  m.size_ = static_cast<std::size_t>(st.st_size);
  if (m.size_ == 0) return m;  // mmap refuses empty mappings; nothing to view anyway
  void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_SHARED, fd.fd, 0);
  if (p == MAP_FAILED) fail(path, "mmap failed");
  m.data_ = static_cast<const std::byte*>(p);
  register_mapped_region(p, m.size_, path.string());
  return m;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    device_ = o.device_;
    inode_ = o.inode_;
  }
  return *this;
}

void MappedFile::reset() {
  if (data_ != nullptr) {
    unregister_mapped_region(data_);
    ::munmap(const_cast<std::byte*>(data_), size_);
  }
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::drop_resident_pages() const {
  // For a shared read-only file mapping MADV_DONTNEED only unmaps pages; it never loses data.
  if (data_ != nullptr) ::madvise(const_cast<std::byte*>(data_), size_, MADV_DONTNEED);
}

void MappedFile::drop_resident_pages(std::span<const std::byte> range) const {
  if (data_ == nullptr || range.empty() || range.data() < data_ ||
      range.data() + range.size() > data_ + size_) {
    return;
  }
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(range.data()) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(range.data() + range.size());
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void MappedFile::make_resident() const {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  // A volatile read is a fault the compiler cannot drop; the sum keeps the reads in order.
  unsigned sum = 0;
  for (std::size_t at = 0; at < size_; at += page) {
    sum += static_cast<unsigned>(*static_cast<const volatile std::byte*>(data_ + at));
  }
  static_cast<void>(sum);
}

bool MappedFile::same_file_as(const std::filesystem::path& path) const {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_dev == device_ && st.st_ino == inode_;
}

}  // namespace cpufold
