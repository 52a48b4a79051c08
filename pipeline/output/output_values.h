// Model outputs as plain float vectors for the output writers (any strides, any float dtype).
#pragma once

#include <string>
#include <vector>

#include "memory/error.h"
#include "memory/tensor.h"
#include "memory/tensor_copy.h"

namespace cpufold {

// The elements of `t` in C order as floats. InternalError naming `what` when the shape is not
// `expected`: the writers are only ever handed the model's own outputs.
inline std::vector<float> f32_values(const Tensor& t, const Shape& expected,
                                     const std::string& what) {
  if (t.empty() || !(t.shape() == expected)) {
    throw InternalError(what + ": expected shape " + expected.str() + ", got " +
                        (t.empty() ? std::string("no tensor") : t.describe()));
  }
  std::vector<float> values(static_cast<std::size_t>(t.numel()));
  convert_tensor(t, Tensor(values.data(), DType::f32, expected));
  return values;
}

}  // namespace cpufold
