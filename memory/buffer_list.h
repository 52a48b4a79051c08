// A module's buffers stated once, as named shapes: forward() allocates them from its arena and
// the module's scratch_bytes() sums the same list, so the planner's sizing and the allocation
// cannot drift apart (ggml reserves the same way, from the graph it computes with).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "memory/arena.h"

namespace cpufold {

// T: a struct of Tensor members, one per buffer; a member no entry names stays empty.
template <class T>
class BufferList {
 public:
  struct Buffer {
    Tensor T::*member;
    DType dtype;
    Shape shape;
  };

  BufferList() = default;
  BufferList(std::initializer_list<Buffer> buffers) : buffers_(buffers) {}

  // Lists `buffer` only when `needed` (a buffer some precisions or variants do without).
  BufferList& add_if(bool needed, const Buffer& buffer) {
    if (needed) buffers_.push_back(buffer);
    return *this;
  }

  // The arena bytes allocate() takes.
  std::size_t bytes() const {
    std::size_t total = 0;
    for (const Buffer& b : buffers_) total += tensor_bytes(b.dtype, b.shape.numel());
    return total;
  }

  // The bytes of `member`'s buffer (0 when the list does not name it).
  std::size_t bytes_of(Tensor T::*member) const {
    std::size_t total = 0;
    for (const Buffer& b : buffers_) {
      if (b.member == member) total += tensor_bytes(b.dtype, b.shape.numel());
    }
    return total;
  }

  // Every listed buffer from `arena`, in list order.
  T allocate(Arena& arena) const {
    T into{};
    allocate_into(arena, into);
    return into;
  }
  // The same into the members of `into`; its other members are kept.
  void allocate_into(Arena& arena, T& into) const {
    for (const Buffer& b : buffers_) into.*b.member = arena.allocate(b.dtype, b.shape);
  }

 private:
  std::vector<Buffer> buffers_;
};

// The largest of step_bytes(rows) over the steps of a loop over n items `step` at a time: the
// full step and the remainder, the two sizes such a loop runs.
template <class F>
std::size_t largest_step(std::int64_t n, std::int64_t step, F step_bytes) {
  if (n <= 0 || step <= 0) return 0;
  std::size_t bytes = step_bytes(std::min(step, n));
  if (n > step && n % step != 0) bytes = std::max<std::size_t>(bytes, step_bytes(n % step));
  return bytes;
}

}  // namespace cpufold
