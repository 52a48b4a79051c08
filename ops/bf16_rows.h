// Row loops between fp32 and a bf16 stored representation (a bf16 trunk keeps its extra MSA in
// bf16): widening is exact, narrowing rounds to nearest even like bf16's constructor.
#pragma once

#include <cstdint>

#include "memory/dtype.h"

namespace cpufold::detail {

// y = float(x) over n elements (exact).
inline void bf16_to_f32(const bf16* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x[i]);
}

// y = bf16(float(y) + a) over n elements: a residual add into bf16 storage, rounded once by
// `to_bf16` (a row kernel's, the same bits as bf16's constructor), in blocks on the stack.
inline void add_into_bf16(bf16* y, const float* a, std::int64_t n,
                          void (*to_bf16)(const float*, bf16*, std::int64_t)) {
  constexpr std::int64_t kBlock = 256;
  float sum[kBlock];
  for (std::int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::int64_t m = n - i0 < kBlock ? n - i0 : kBlock;
    for (std::int64_t i = 0; i < m; ++i) sum[i] = static_cast<float>(y[i0 + i]) + a[i0 + i];
    to_bf16(sum, y + i0, m);
  }
}

}  // namespace cpufold::detail
