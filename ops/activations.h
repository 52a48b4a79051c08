// Elementwise activations and products over the last axis, in place, threaded over rows.
#pragma once

#include <cstdint>

#include "memory/tensor.h"

namespace cpufold {

enum class Activation : std::uint8_t { none, relu, sigmoid };

// x: [..., c], modified in place.
void apply_activation(Activation activation, const Tensor& x);
inline void relu_inplace(const Tensor& x) {
  apply_activation(Activation::relu, x);
}
inline void sigmoid_inplace(const Tensor& x) {
  apply_activation(Activation::sigmoid, x);
}

// y *= a elementwise. y, a: [..., c] with the same shape (strides may differ).
void multiply_inplace(const Tensor& y, const Tensor& a);
// y += a elementwise (residual adds). y, a: [..., c] with the same shape.
void add_inplace(const Tensor& y, const Tensor& a);

}  // namespace cpufold
