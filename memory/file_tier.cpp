#include "memory/file_tier.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

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

// Every spill mapping of the process, by start address, for spill_mapping_at.
struct SpillMapped {
  std::size_t bytes;
  int fd;
  int direct_fd;
  const std::atomic<std::size_t>* cache_bytes;  // the FileTier's
  const std::atomic<std::size_t>* window_bytes;
};
struct SpillRegistry {
  std::mutex mutex;
  std::map<const std::byte*, SpillMapped> mappings;  // by start
};
SpillRegistry& spill_registry() {
  static SpillRegistry registry;
  return registry;
}

// [offset, offset + bytes) widened to whole pages.
std::pair<std::size_t, std::size_t> page_span(std::size_t offset, std::size_t bytes) {
  const std::size_t page = page_size();
  const std::size_t begin = offset / page * page;
  return {begin, (offset + bytes + page - 1) / page * page - begin};
}

// Data only, no metadata: the file is scratch.
int write_back(int fd, std::size_t begin, std::size_t bytes, bool wait) {
  const unsigned flags =
      wait ? SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER
           : SYNC_FILE_RANGE_WRITE;
  return ::sync_file_range(fd, static_cast<off_t>(begin), static_cast<off_t>(bytes), flags) == 0
             ? 0
             : errno;
}

// The file behind `fd` opened again with O_DIRECT (a descriptor of its own: the flag is per open
// file), for the streamed passes' reads and writes; none where the file system refuses it (tmpfs
// before Linux 6.6) or CPUFOLD_SPILL_BUFFERED is set (to compare both ways).
UniqueFd open_direct(int fd) {
  if (std::getenv("CPUFOLD_SPILL_BUFFERED") != nullptr) return {};
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return UniqueFd(::open(path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC));
}

InputError write_back_failed(int err) {
  return InputError(std::string("cannot write to the spill directory: ") + std::strerror(err) +
                    "; pass --spill-dir a working device");
}

}  // namespace

SpillMapping spill_mapping_at(const void* p) {
  const auto* b = static_cast<const std::byte*>(p);
  SpillRegistry& r = spill_registry();
  const std::lock_guard lock(r.mutex);
  auto it = r.mappings.upper_bound(b);
  if (it == r.mappings.begin()) return {};
  --it;
  if (b >= it->first + it->second.bytes) return {};
  return {it->second.fd, it->first, it->second.direct_fd, it->second.cache_bytes->load(),
          it->second.window_bytes->load()};
}

void spill_prefetch(const SpillMapping& m, std::size_t offset, std::size_t bytes) {
  const auto [begin, span] = page_span(offset, bytes);
  ::posix_fadvise(m.fd, static_cast<off_t>(begin), static_cast<off_t>(span), POSIX_FADV_WILLNEED);
}

void spill_write_behind(const SpillMapping& m, std::size_t offset, std::size_t bytes) {
  const auto [begin, span] = page_span(offset, bytes);
  if (const int err = write_back(m.fd, begin, span, false); err != 0) throw write_back_failed(err);
}

void spill_wait_written(const SpillMapping& m, std::size_t offset, std::size_t bytes) {
  const auto [begin, span] = page_span(offset, bytes);
  if (::sync_file_range(m.fd, static_cast<off_t>(begin), static_cast<off_t>(span),
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER) != 0) {
    throw write_back_failed(errno);
  }
}

void spill_unmap(const SpillMapping& m, std::size_t offset, std::size_t bytes) {
  const auto [begin, span] = page_span(offset, bytes);
  ::madvise(const_cast<std::byte*>(m.base) + begin, span, MADV_DONTNEED);
}

void spill_drop_cached(const SpillMapping& m, std::size_t offset, std::size_t bytes) {
  const auto [begin, span] = page_span(offset, bytes);
  ::posix_fadvise(m.fd, static_cast<off_t>(begin), static_cast<off_t>(span), POSIX_FADV_DONTNEED);
}

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
  UniqueFd direct = open_direct(fd.get());
  register_mapped_region(p, bytes, "a spill file in " + dir_.string());
  {
    SpillRegistry& r = spill_registry();
    const std::lock_guard lock(r.mutex);
    r.mappings[static_cast<const std::byte*>(p)] = {bytes, fd.get(), direct.get(), &cache_bytes_,
                                                    &window_bytes_};
  }
  const std::lock_guard lock(mutex_);
  files_.emplace(static_cast<const std::byte*>(p), File{std::move(fd), std::move(direct)});
  return static_cast<std::byte*>(p);
}

void FileTier::unmap(std::byte* data, std::size_t bytes) {
  unregister_mapped_region(data);
  {
    SpillRegistry& r = spill_registry();
    const std::lock_guard lock(r.mutex);
    r.mappings.erase(data);
  }
  ::munmap(data, bytes);
  const std::lock_guard lock(mutex_);
  files_.erase(data);  // closing the last reference frees the file's blocks
}

void FileTier::evict(std::byte* base, std::size_t offset, std::size_t bytes) {
  // Whole pages around the range: the neighbours' data stays in the file, so dropping their
  // pages too costs at most a re-read.
  int fd = -1;
  {
    const std::lock_guard lock(mutex_);
    const auto it = files_.find(base);
    if (it == files_.end()) throw InternalError("evicting a region this file tier did not map");
    fd = it->second.fd.get();
  }
  // Write back and wait: MADV_PAGEOUT does not write dirty file pages outside kswapd, and
  // msync(MS_ASYNC) starts nothing on Linux.
  const auto [begin, span] = page_span(offset, bytes);
  if (const int err = write_back(fd, begin, span, true); err != 0) {
    if (err == ENOSPC || err == EDQUOT) throw spill_dir_full(dir_, span, err);
    throw InputError("cannot write to the spill directory '" + dir_.string() +
                     "': " + std::strerror(err) + "; pass --spill-dir a working device");
  }
  // Unmap the pages from this process (MAP_SHARED: the data stays in the file), then drop them
  // from the page cache, which only lets go of clean pages nobody maps. Best effort: a failure
  // leaves pages resident, never loses data.
  spill_unmap({fd, base}, offset, bytes);
  spill_drop_cached({fd, base}, offset, bytes);
}

}  // namespace cpufold
