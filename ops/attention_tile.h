// One (batch row, head, block of queries) tile of the attention core, as pointers to its first
// elements and leading dimensions in elements: what the hand-written AVX-512 tile kernels
// (small_head_attention.h, dot_bf16_attention.h) take.
#pragma once

#include <cstdint>

#include "memory/dtype.h"

namespace cpufold::detail {

struct AttentionTile {
  const bf16* q;  // n_query rows of c
  std::int64_t ld_q;
  const bf16* k;  // n_key rows of c
  std::int64_t ld_k;
  const bf16* v;  // n_key rows of c
  std::int64_t ld_v;
  const float* pair;  // n_query rows of n_key, or null
  std::int64_t ld_pair;
  const float* mask;  // n_key, or null
  float* o;           // n_query rows of c
  std::int64_t ld_o;
  std::int64_t n_query, n_key, c;
  float scale;
};

}  // namespace cpufold::detail
