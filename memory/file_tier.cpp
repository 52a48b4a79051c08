#include "memory/file_tier.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "memory/byte_size.h"
#include "memory/error.h"
#include "memory/mapped_regions.h"
#include "memory/out_of_memory.h"
#include "memory/spill_dir.h"

namespace cpufold {
namespace {

BudgetError spill_dir_full(const std::filesystem::path& dir, std::size_t bytes, int err) {
  return BudgetError("the spill directory '" + dir.string() + "' cannot hold " +
                     format_bytes(bytes) + " (" + std::to_string(bytes) +
                     " bytes): " + std::strerror(err) + ", " + format_bytes(spill_free_bytes(dir)) +
                     " free there; free space there, pass --spill-dir a larger file system, or "
                     "raise --mem-budget so that less is spilled");
}

std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

FileTier::FileTier(std::filesystem::path dir)
    : dir_(std::move(dir)), name_("file:" + dir_.string()) {
  require_spill_dir(dir_);
}

FileTier::~FileTier() = default;

std::byte* FileTier::map(std::size_t bytes) {
  UniqueFd fd = create_unnamed_file(dir_);
  int err = 0;
  while ((err = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes))) == EINTR) {
  }
  if (err == ENOSPC || err == EFBIG || err == EDQUOT) throw spill_dir_full(dir_, bytes, err);
  if (err != 0) {
    throw InputError("cannot reserve " + format_bytes(bytes) + " in the spill directory '" +
                     dir_.string() + "': " + std::strerror(err) +
                     "; pass --spill-dir a directory on another file system");
  }
  // A fresh file reads as zeros, as Tier::allocate promises. Not MAP_SYNC on DAX: the file
  // has no name, so nothing in it must survive a crash, and MAP_SYNC would only add
  // metadata syncs on page faults.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) {
    throw out_of_memory("cannot map " + format_bytes(bytes) + " of the spill directory '" +
                        dir_.string() + "' (" + std::strerror(errno) + ")");
  }
  if (std::getenv("CPUFOLD_SPILL_RANDOM") != nullptr) ::madvise(p, bytes, MADV_RANDOM);
  register_mapped_region(p, bytes, "a spill file in " + dir_.string());
  const std::lock_guard lock(mutex_);
  files_.emplace(static_cast<const std::byte*>(p), std::move(fd));
  return static_cast<std::byte*>(p);
}

void FileTier::unmap(std::byte* data, std::size_t bytes) {
  unregister_mapped_region(data);
  ::munmap(data, bytes);
  const std::lock_guard lock(mutex_);
  files_.erase(data);  // closing the last reference frees the file's blocks
}

void FileTier::evict(std::byte* base, std::size_t offset, std::size_t bytes) {
  // Whole pages around the range: the neighbours' data stays in the file, so dropping their
  // pages too costs at most a re-read.
  const std::size_t page = page_size();
  const std::size_t begin = offset / page * page;
  const std::size_t end = (offset + bytes + page - 1) / page * page;
  int fd = -1;
  {
    const std::lock_guard lock(mutex_);
    const auto it = files_.find(base);
    if (it == files_.end()) throw InternalError("evicting a region this file tier did not map");
    fd = it->second.get();
  }
  // Write back and wait: MADV_PAGEOUT does not write dirty file pages outside kswapd, and
  // msync(MS_ASYNC) starts nothing on Linux. Data only, no metadata: the file is scratch.
  const unsigned flags =
      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
  if (::sync_file_range(fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin), flags) !=
      0) {
    if (errno == ENOSPC || errno == EDQUOT) throw spill_dir_full(dir_, end - begin, errno);
    throw InputError("cannot write to the spill directory '" + dir_.string() +
                     "': " + std::strerror(errno) + "; pass --spill-dir a working device");
  }
  // Unmap the pages from this process (MAP_SHARED: the data stays in the file), then drop
  // them from the page cache, which only lets go of clean pages nobody maps. Best effort: a
  // failure leaves pages resident, never loses data.
  ::madvise(base + begin, end - begin, MADV_DONTNEED);
  ::posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin),
                  POSIX_FADV_DONTNEED);
}

}  // namespace cpufold
