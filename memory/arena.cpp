#include "memory/arena.h"

#include "memory/error.h"
#include "memory/peak_tracker.h"

namespace cpufold {

Arena::Arena(std::string name, Tier& tier, std::size_t capacity)
    : name_(std::move(name)), region_(tier.allocate(align_up(capacity))) {}

Tensor Arena::allocate(DType dtype, const Shape& shape) {
  const std::size_t bytes = align_up(static_cast<std::size_t>(shape.numel()) * dtype_size(dtype));
  if (bytes > capacity() - used_) {
    throw BudgetError("arena '" + name_ + "' cannot hold " + std::string(dtype_name(dtype)) +
                      shape.str() + " (" + std::to_string(bytes) +
                      " bytes): " + std::to_string(capacity() - used_) + " of " +
                      std::to_string(capacity()) + " bytes free");
  }
  std::byte* p = region_.data() + used_;
  used_ += bytes;
  if (used_ > high_water_) {
    high_water_ = used_;
    PeakTracker::instance().on_arena_high_water(name_, high_water_);
  }
  return Tensor(p, dtype, shape);
}

void Arena::release_to(Mark m) {
  if (m > used_) throw InternalError("arena '" + name_ + "' released to a mark above its top");
  used_ = m;
}

void Arena::evict(const void* p, std::size_t bytes) const {
  const auto* b = static_cast<const std::byte*>(p);
  if (b < region_.data() || b > region_.data() + capacity()) {
    throw InternalError("evicting memory outside arena '" + name_ + "'");
  }
  region_.evict(static_cast<std::size_t>(b - region_.data()), bytes);
}

}  // namespace cpufold
