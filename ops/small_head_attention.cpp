#include "ops/small_head_attention.h"

#include <bit>
#include <cmath>

#include "ops/avx512_math.h"
#include "ops/row_kernels.h"

namespace cpufold::detail {
namespace {

using avx512::Exp2Shifted;
using avx512::tail_mask;

std::int64_t padded_keys(std::int64_t n_key) {
  return (n_key + 15) / 16 * 16;
}

// Rows of n_key·c bf16 (ld apart) as fp32 [C][padded n_key], zero past c and past n_key, so
// a block of 16 keys of one channel is one aligned load.
void transpose_keys(const bf16* x, std::int64_t ld, std::int64_t n_key, std::int64_t c, int C,
                    float* out) {
  const std::int64_t nkp = padded_keys(n_key);
  for (int ch = 0; ch < C; ++ch) {
    float* row = out + ch * nkp;
    if (ch >= c) {
      for (std::int64_t j = 0; j < nkp; ++j) row[j] = 0.f;
      continue;
    }
    for (std::int64_t j = 0; j < n_key; ++j) row[j] = static_cast<float>(x[j * ld + ch]);
    for (std::int64_t j = n_key; j < nkp; ++j) row[j] = 0.f;
  }
}

// C: the head's channels rounded up to 8 or 16, a compile-time count so the per-channel
// accumulators stay in registers.
template <int C>
CPUFOLD_AVX512 void small_head_tile(const AttentionTile& t, float* work) {
  const std::int64_t nk = t.n_key, nkp = padded_keys(nk);
  // 64-byte aligned: every block of 16 keys below is one aligned load.
  float* const kt =
      std::bit_cast<float*>((std::bit_cast<std::uintptr_t>(work) + 63) & ~std::uintptr_t{63});
  float* const vt = kt + C * nkp;
  float* const logits = vt + C * nkp;
  transpose_keys(t.k, t.ld_k, nk, t.c, C, kt);
  transpose_keys(t.v, t.ld_v, nk, t.c, C, vt);
  for (std::int64_t i = 0; i < t.n_query; ++i) {
    __m512 q[C];
    for (int ch = 0; ch < C; ++ch) {
      q[ch] = _mm512_set1_ps(ch < t.c ? static_cast<float>(t.q[i * t.ld_q + ch]) * t.scale : 0.f);
    }
    const float* pair = t.pair != nullptr ? t.pair + i * t.ld_pair : nullptr;
    // Logits of 16 keys at a time (Alg. 7 line 5: q·k, scaled, plus the biases), and their max.
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    for (std::int64_t j = 0; j < nkp; j += 16) {
      const __mmask16 m = tail_mask(nk - j);
      __m512 l = _mm512_mul_ps(q[0], _mm512_load_ps(kt + j));
      for (int ch = 1; ch < C; ++ch)
        l = _mm512_fmadd_ps(q[ch], _mm512_load_ps(kt + ch * nkp + j), l);
      if (pair != nullptr) l = _mm512_add_ps(l, _mm512_maskz_loadu_ps(m, pair + j));
      if (t.mask != nullptr) l = _mm512_add_ps(l, _mm512_maskz_loadu_ps(m, t.mask + j));
      _mm512_store_ps(logits + j, l);
      vmax = _mm512_mask_max_ps(vmax, m, vmax, l);
    }
    // Softmax weights and the weighted sum of values (Alg. 7 lines 5-6).
    const Exp2Shifted exp(_mm512_reduce_max_ps(vmax));
    __m512 sum = _mm512_setzero_ps();
    __m512 acc[C];
    for (int ch = 0; ch < C; ++ch) acc[ch] = _mm512_setzero_ps();
    for (std::int64_t j = 0; j < nkp; j += 16) {
      const __m512 e = _mm512_maskz_mov_ps(tail_mask(nk - j), exp(_mm512_load_ps(logits + j)));
      sum = _mm512_add_ps(sum, e);
      for (int ch = 0; ch < C; ++ch) {
        acc[ch] = _mm512_fmadd_ps(e, _mm512_load_ps(vt + ch * nkp + j), acc[ch]);
      }
    }
    const float inv = 1.f / _mm512_reduce_add_ps(sum);
    float* out = t.o + i * t.ld_o;
    for (int ch = 0; ch < C && ch < t.c; ++ch) out[ch] = _mm512_reduce_add_ps(acc[ch]) * inv;
  }
}

}  // namespace

std::int64_t small_head_work_floats(std::int64_t n_key, std::int64_t c) {
  const std::int64_t C = c <= 8 ? 8 : kSmallHeadMaxChannels;
  // + 16: room to align the buffer to 64 bytes.
  return (2 * C + 1) * padded_keys(n_key) + 16;
}

SmallHeadKernel small_head_kernel(std::int64_t c) {
  // With the AVX-512 row kernels, as CPUFOLD_ROW_KERNELS and the CPU select them.
  static const bool available = &row_kernels() == avx512_row_kernels();
  if (!available || c <= 0 || c > kSmallHeadMaxChannels) return nullptr;
  return c <= 8 ? small_head_tile<8> : small_head_tile<16>;
}

}  // namespace cpufold::detail
