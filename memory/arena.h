// Arena: a bump allocator over one tier Region. Tensors allocated from it are views; the
// arena owns the bytes. Transients follow a stack discipline through marks.
#pragma once

#include <cstddef>
#include <string>

#include "memory/tensor.h"
#include "memory/tier.h"

namespace cpufold {

class Arena {
 public:
  // Reserves `capacity` bytes from `tier` up front; nothing allocates afterwards.
  Arena(std::string name, Tier& tier, std::size_t capacity);

  // A 64-byte aligned tensor with unspecified contents. Throws BudgetError naming the
  // arena, the request and the remaining space when it does not fit.
  Tensor allocate(DType dtype, const Shape& shape);

  using Mark = std::size_t;
  Mark mark() const { return used_; }
  // Frees everything allocated after `m` (stack discipline).
  void release_to(Mark m);
  // Region::evict for `bytes` at `p`, which must lie in this arena (a row slab of a tensor
  // allocated from it): a spilled arena keeps only the slab in use resident.
  void evict(const void* p, std::size_t bytes) const;
  // Region::populate: every page of a DRAM arena faulted in now.
  void populate() const { region_.populate(); }

  std::size_t used() const { return used_; }
  std::size_t capacity() const { return region_.size(); }
  std::size_t high_water() const { return high_water_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  Region region_;
  std::size_t used_ = 0;
  std::size_t high_water_ = 0;
};

// Releases an arena back to the mark taken at construction when the scope ends.
class ArenaScope {
 public:
  explicit ArenaScope(Arena& arena) : arena_(arena), mark_(arena.mark()) {}
  ~ArenaScope() { arena_.release_to(mark_); }
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  Arena& arena_;
  Arena::Mark mark_;
};

// Bytes of `n` rounded up to the arena alignment.
constexpr std::size_t align_up(std::size_t n) {
  return (n + Tier::kAlignment - 1) / Tier::kAlignment * Tier::kAlignment;
}

// Arena bytes an f32 tensor of `n` elements (or of `shape`) takes: what allocate() reserves.
constexpr std::size_t f32_bytes(std::int64_t n) {
  return align_up(static_cast<std::size_t>(n) * sizeof(float));
}
inline std::size_t f32_bytes(const Shape& shape) {
  return f32_bytes(shape.numel());
}
// The same for `n` elements of any type.
constexpr std::size_t tensor_bytes(DType type, std::int64_t n) {
  return align_up(static_cast<std::size_t>(n) * dtype_size(type));
}

}  // namespace cpufold
