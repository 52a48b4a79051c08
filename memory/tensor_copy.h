// Element copies between views of any strides.
#pragma once

#include "memory/tensor.h"

namespace cpufold {

// Copies src into dst element by element; dtypes and shapes must match, strides may differ.
void copy_tensor(const Tensor& src, const Tensor& dst);

// Copies src into dst converting the element type (f32 <-> i32/i64/u8/bf16); shapes must match.
void convert_tensor(const Tensor& src, const Tensor& dst);

}  // namespace cpufold
