// Portable row kernels: the fallback for CPUs without AVX2 and the plain statement of what the
// AVX2 kernels compute.
#include <algorithm>
#include <cmath>

#include "ops/row_kernels.h"

namespace cpufold::detail {
namespace {

// Below this shifted logit exp() underflows; the AVX2 kernels flush to 0 there too.
constexpr float kExpLow = -87.3f;

// x = x + a + b, then exp(x - max) handed to `store` element by element; returns the sum.
template <typename Store>
float softmax_numerator_to(float* x, const float* a, const float* b, std::int64_t n, Store store) {
  float max = -INFINITY;
  for (std::int64_t i = 0; i < n; ++i) {
    float v = x[i];
    if (a) v += a[i];
    if (b) v += b[i];
    x[i] = v;
    max = std::max(max, v);
  }
  float sum = 0.f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float d = x[i] - max;
    const float e = d < kExpLow ? 0.f : std::exp(d);
    store(i, e);
    sum += e;
  }
  return sum;
}

float softmax_numerator(float* x, const float* a, const float* b, std::int64_t n) {
  return softmax_numerator_to(x, a, b, n, [x](std::int64_t i, float e) { x[i] = e; });
}

float softmax_numerator_bf16(float* x, const float* a, const float* b, std::int64_t n, bf16* y) {
  return softmax_numerator_to(x, a, b, n, [y](std::int64_t i, float e) { y[i] = bf16(e); });
}

void scale(float* y, float s, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] *= s;
}

void softmax(float* x, const float* a, const float* b, std::int64_t n) {
  scale(x, 1.f / softmax_numerator(x, a, b, n), n);
}

void layer_norm(const float* x, float* y, const float* scale, const float* offset, float eps,
                std::int64_t n) {
  float sum = 0.f;
  for (std::int64_t i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  float sq = 0.f;
  for (std::int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.f / std::sqrt(sq / static_cast<float>(n) + eps);
  for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i] + offset[i];
}

void relu(float* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.f);
}

void sigmoid(float* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] = 1.f / (1.f + std::exp(-x[i]));
}

void mul(float* y, const float* a, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] *= a[i];
}

void add(float* y, const float* a, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] += a[i];
}

void to_bf16(const float* x, bf16* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = bf16(x[i]);
}

// Both transpositions: row by row, so each row of x is read once and the columns of y fill in
// step (the callers' blocks are a few dozen rows and columns).
template <typename T>
void transpose_rows(const float* x, std::int64_t ld_x, std::int64_t rows, std::int64_t cols, T* y,
                    std::int64_t ld_y) {
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t k = 0; k < cols; ++k) y[k * ld_y + i] = T(x[i * ld_x + k]);
  }
}

}  // namespace

void transpose_generic(const float* x, std::int64_t ld_x, std::int64_t rows, std::int64_t cols,
                       float* y, std::int64_t ld_y) {
  transpose_rows(x, ld_x, rows, cols, y, ld_y);
}

void transpose_to_bf16_generic(const float* x, std::int64_t ld_x, std::int64_t rows,
                               std::int64_t cols, bf16* y, std::int64_t ld_y) {
  transpose_rows(x, ld_x, rows, cols, y, ld_y);
}

const RowKernels& generic_row_kernels() {
  static const RowKernels table{softmax,
                                softmax_numerator,
                                softmax_numerator_bf16,
                                layer_norm,
                                relu,
                                sigmoid,
                                mul,
                                add,
                                scale,
                                to_bf16,
                                "generic"};
  return table;
}

}  // namespace cpufold::detail
