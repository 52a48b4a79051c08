// One (batch row, head, block of queries) tile of the attention core, as pointers to its first
// elements and leading dimensions in elements: what the hand-written AVX-512 tile kernels
// (small_head_attention.h, dot_bf16_attention.h) take.
#pragma once

#include <cstdint>

#include "memory/dtype.h"

namespace cpufold::detail {

// T: q, k and v's element type (bf16, or float for the fp32 small-head kernel).
template <typename T>
struct AttentionTileOf {
  const T* q;  // n_query rows of c
  std::int64_t ld_q;
  const T* k;  // n_key rows of c
  std::int64_t ld_k;
  const T* v;  // n_key rows of c
  std::int64_t ld_v;
  const float* pair;  // n_query rows of n_key, or null
  std::int64_t ld_pair;
  const float* mask;  // n_key, or null
  float* o;           // n_query rows of c
  std::int64_t ld_o;
  std::int64_t n_query, n_key, c;
  float scale;
};
using AttentionTile = AttentionTileOf<bf16>;

}  // namespace cpufold::detail
