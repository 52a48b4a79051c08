// Runs a per-row function over the rows of RowViews with OpenMP, serially when the work is too
// small to pay for waking the thread team.
#pragma once

#include <cstdint>

namespace cpufold::detail {

// Below this many elements a single thread is faster than a parallel region.
inline constexpr std::int64_t kMinParallelElements = 1 << 14;

template <typename F>
void for_each_row(std::int64_t rows, std::int64_t cols, F&& f) {
#pragma omp parallel for schedule(static) if (rows * cols >= kMinParallelElements)
  for (std::int64_t i = 0; i < rows; ++i) f(i);
}

}  // namespace cpufold::detail
