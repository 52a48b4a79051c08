// NumPy `.npy` files (format version 1.0, little-endian f32, C order).
#pragma once

#include <string>

#include "memory/tensor.h"

namespace cpufold {

// The .npy bytes of `t` (any float dtype and strides) as '<f4'.
std::string npy_f32_bytes(const Tensor& t);

}  // namespace cpufold
