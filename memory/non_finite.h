// Finding NaN and Inf in a tensor: parameters are checked once at load and outputs before they
// are written, so a non-finite value fails loudly instead of turning into a "successful" job.
#pragma once

#include <cstdint>
#include <string>

#include "memory/tensor.h"

namespace cpufold {

struct NonFinite {
  std::int64_t count = 0;   // NaN and Inf elements
  std::int64_t first = -1;  // flat (row-major) index of the first one; -1 when count == 0
  std::int64_t nan = 0;     // of count, how many are NaN (the rest are +-Inf)
};

// Scans every element of an f32 or bf16 tensor (any strides) in one linear pass; tensors of
// other dtypes hold no non-finite values and give {}.
NonFinite find_non_finite(const Tensor& t);

// "3 non-finite values (2 NaN, 1 Inf), the first at [1, 7]" for a tensor of `shape`; empty
// when count == 0.
std::string describe(const NonFinite& n, const Shape& shape);

}  // namespace cpufold
