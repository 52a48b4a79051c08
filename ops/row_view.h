// RowView: a tensor seen as a matrix of rows over its trailing axes, which is what every
// primitive here works on (Linear, LayerNorm, softmax, activations).
#pragma once

#include <cstdint>

#include "memory/tensor.h"

namespace cpufold {

struct RowView {
  float* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  // elements between the starts of consecutive rows

  float* row(std::int64_t i) const { return data + i * ld; }
};

// The row layout alone (rows, cols, ld) of a tensor of any element type, as row_view checks it.
struct RowShape {
  std::int64_t rows = 0, cols = 0, ld = 0;
};
RowShape row_shape(const Tensor& t, const char* what, std::int64_t row_size = -1);

// Views f32 `t` as rows of `row_size` elements: the trailing axes whose sizes multiply to
// row_size (just the last axis when row_size < 0) must be contiguous, so [n, n_head, c] is
// rows of n_head·c. The leading axes must collapse into one row stride: true for contiguous
// tensors, column ranges of a wider buffer, and slices along leading axes. Throws
// InternalError naming `what` otherwise.
RowView row_view(const Tensor& t, const char* what, std::int64_t row_size = -1);

}  // namespace cpufold
