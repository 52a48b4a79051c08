#include "memory/strided_access.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace cpufold {

StridedAccess::StridedAccess(const Tensor& t) {
  if (t.empty() || t.numel() == 0) return;
  // The bytes the view spans, from its first to its last element (strides are non-negative).
  std::int64_t last = 0;
  for (int a = 0; a < t.rank(); ++a) last += (t.dim(a) - 1) * t.stride(a);
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(t.data());
  const std::uintptr_t end = first + static_cast<std::uintptr_t>(last + 1) * dtype_size(t.dtype());
  const std::uintptr_t b = first / page * page, e = (end + page - 1) / page * page;
  begin_ = reinterpret_cast<void*>(b);
  bytes_ = e - b;
  // Advice only: a failure (e.g. memory that is not a mapping of ours) leaves readahead on.
  if (::madvise(begin_, bytes_, MADV_RANDOM) != 0) bytes_ = 0;
}

StridedAccess::~StridedAccess() {
  if (bytes_ > 0) ::madvise(begin_, bytes_, MADV_NORMAL);
}

}  // namespace cpufold
