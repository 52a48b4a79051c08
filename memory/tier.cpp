#include "memory/tier.h"

#include "memory/out_of_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "memory/error.h"
#include "memory/peak_tracker.h"

namespace cpufold {

Region& Region::operator=(Region&& o) noexcept {
  if (this != &o) {
    reset();
    tier_ = o.tier_;
    data_ = o.data_;
    size_ = o.size_;
    o.tier_ = nullptr;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void Region::reset() {
  if (tier_ && data_) tier_->release(data_, size_);
  tier_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

void Region::evict(std::size_t offset, std::size_t bytes) const {
  if (offset > size_ || bytes > size_ - offset) {
    throw InternalError("evicting bytes " + std::to_string(offset) + "+" + std::to_string(bytes) +
                        " of a region of " + std::to_string(size_));
  }
  if (tier_ && data_ && bytes > 0) tier_->evict(data_, offset, bytes);
}

Region Tier::allocate(std::size_t bytes) {
  if (bytes == 0) return Region(this, nullptr, 0);
  std::byte* p = map(bytes);
  PeakTracker::instance().on_allocate(name(), bytes);
  return Region(this, p, bytes);
}

void Region::populate() const {
  if (tier_ && data_ && size_ > 0) tier_->populate(data_, size_);
}

void Tier::evict(std::byte*, std::size_t, std::size_t) {}

void Tier::populate(std::byte*, std::size_t) {}

void Tier::release(std::byte* data, std::size_t bytes) {
  unmap(data, bytes);
  PeakTracker::instance().on_release(name(), bytes);
}

std::byte* DramTier::map(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw out_of_memory("cannot reserve " + std::to_string(bytes) + " bytes of DRAM (" +
                        std::strerror(errno) + ")");
  }
  return static_cast<std::byte*>(p);
}

void DramTier::unmap(std::byte* data, std::size_t bytes) {
  ::munmap(data, bytes);
}

void DramTier::populate(std::byte* data, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  if (::madvise(data, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
  // Kernels before 5.14: one byte per page written back unchanged, so that populating a region
  // in use keeps its contents.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto* bytes_of = reinterpret_cast<volatile std::byte*>(data);
  for (std::size_t at = 0; at < bytes; at += page) bytes_of[at] = bytes_of[at];
}

DramTier& dram_tier() {
  static DramTier tier;
  return tier;
}

}  // namespace cpufold
