#include "ops/small_head_attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "ops/avx512_math.h"
#include "ops/row_kernels.h"

namespace cpufold::detail {
namespace {

using avx512::Exp2Shifted;
using avx512::tail_mask;

std::int64_t padded_keys(std::int64_t n_key) {
  return (n_key + 15) / 16 * 16;
}

// Rows of n_key·c values (bf16 or fp32, ld apart) as fp32 [C][padded n_key], zero past c and past
// n_key, so a block of 16 keys of one channel is one aligned load.
template <typename T>
void transpose_keys(const T* x, std::int64_t ld, std::int64_t n_key, std::int64_t c, int C,
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

// The lane sums of eight registers, a[c] -> lane c of the low half of each 256 bits (lanes 0-3
// and 8-11): 23 shuffles and adds instead of eight 16-lane reductions.
CPUFOLD_AVX512 inline __m512 sum_lanes8(const __m512* a) {
  __m512 t[4];
  for (int p = 0; p < 4; ++p) {
    // Per 128 bits: a0+a2, b0+b2, a1+a3, b1+b3 of a = a[2p], b = a[2p + 1].
    t[p] = _mm512_add_ps(_mm512_unpacklo_ps(a[2 * p], a[2 * p + 1]),
                         _mm512_unpackhi_ps(a[2 * p], a[2 * p + 1]));
  }
  __m512 u[2];
  for (int p = 0; p < 2; ++p) {
    // Per 128 bits: partial sums of four registers, in register order.
    const __m512d x = _mm512_castps_pd(t[2 * p]), y = _mm512_castps_pd(t[2 * p + 1]);
    u[p] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
  }
  // Sum the four 128-bit parts: u[0]'s into part 0, u[1]'s into part 2.
  const __m512 x =
      _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x44), _mm512_shuffle_f32x4(u[0], u[1], 0xee));
  return _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0xb1));
}

// Logits of R queries from row i against every key (Alg. 7 line 5: q·k, scaled, plus the
// biases) into R rows of `logits`, and each row's max. The queries share each load of the
// transposed keys; their scaled channels are broadcast from memory (as registers they would
// take R·C).
template <int C, int R, typename T>
CPUFOLD_AVX512 void small_head_logits(const AttentionTileOf<T>& t, const float* kt, float* logits,
                                      std::int64_t i, float* row_max) {
  const std::int64_t nk = t.n_key, nkp = padded_keys(nk);
  float q[R][C];
  const float* pair[R];
  for (int r = 0; r < R; ++r) {
    for (int ch = 0; ch < C; ++ch) {
      q[r][ch] = ch < t.c ? static_cast<float>(t.q[(i + r) * t.ld_q + ch]) * t.scale : 0.f;
    }
    pair[r] = t.pair != nullptr ? t.pair + (i + r) * t.ld_pair : nullptr;
  }
  __m512 vmax[R];
  for (int r = 0; r < R; ++r) vmax[r] = _mm512_set1_ps(-INFINITY);
  for (std::int64_t j = 0; j < nkp; j += 16) {
    const __mmask16 m = tail_mask(nk - j);
    __m512 k[C];
    for (int ch = 0; ch < C; ++ch) k[ch] = _mm512_load_ps(kt + ch * nkp + j);
    const __m512 mask = t.mask != nullptr ? _mm512_maskz_loadu_ps(m, t.mask + j) : __m512{};
    for (int r = 0; r < R; ++r) {
      __m512 l = _mm512_mul_ps(_mm512_set1_ps(q[r][0]), k[0]);
      for (int ch = 1; ch < C; ++ch) l = _mm512_fmadd_ps(_mm512_set1_ps(q[r][ch]), k[ch], l);
      if (pair[r] != nullptr) l = _mm512_add_ps(l, _mm512_maskz_loadu_ps(m, pair[r] + j));
      if (t.mask != nullptr) l = _mm512_add_ps(l, mask);
      _mm512_store_ps(logits + r * nkp + j, l);
      vmax[r] = _mm512_mask_max_ps(vmax[r], m, vmax[r], l);
    }
  }
  for (int r = 0; r < R; ++r) row_max[r] = _mm512_reduce_max_ps(vmax[r]);
}

// Channels 2p and 2p + 1 of a bf16 row as one 32-bit word (the even one low), a vdpbf16ps
// operand; channels past c are zero.
inline std::uint32_t pair_word(const bf16* row, int p, std::int64_t c) {
  const std::uint32_t lo = 2 * p < c ? row[2 * p].bits : 0;
  const std::uint32_t hi = 2 * p + 1 < c ? row[2 * p + 1].bits : 0;
  return lo | hi << 16;
}

// Keys as channel pairs, [C/2][padded n_key] words, zero past c and past n_key: a block of 16
// keys of one pair is one aligned vdpbf16ps operand.
template <int C>
void pair_keys(const bf16* k, std::int64_t ld, std::int64_t n_key, std::int64_t c,
               std::uint32_t* kp) {
  const std::int64_t nkp = padded_keys(n_key);
  for (int p = 0; p < C / 2; ++p) {
    std::uint32_t* row = kp + p * nkp;
    for (std::int64_t j = 0; j < n_key; ++j) row[j] = pair_word(k + j * ld, p, c);
    for (std::int64_t j = n_key; j < nkp; ++j) row[j] = 0;
  }
}

// small_head_logits with q·k as AVX512-BF16 dot products of the channel pairs (exact products,
// fp32 sums), scaled afterwards: half the multiply instructions (measured +8% for 8 channels,
// +37% for 16, primitives_bench).
template <int C, int R>
CPUFOLD_AVX512_BF16 void small_head_logits_dp(const AttentionTile& t, const std::uint32_t* kp,
                                              float* logits, std::int64_t i, float* row_max) {
  const std::int64_t nk = t.n_key, nkp = padded_keys(nk);
  std::uint32_t q[R][C / 2];
  const float* pair[R];
  for (int r = 0; r < R; ++r) {
    for (int p = 0; p < C / 2; ++p) q[r][p] = pair_word(t.q + (i + r) * t.ld_q, p, t.c);
    pair[r] = t.pair != nullptr ? t.pair + (i + r) * t.ld_pair : nullptr;
  }
  const __m512 scale = _mm512_set1_ps(t.scale);
  __m512 vmax[R];
  for (int r = 0; r < R; ++r) vmax[r] = _mm512_set1_ps(-INFINITY);
  for (std::int64_t j = 0; j < nkp; j += 16) {
    const __mmask16 m = tail_mask(nk - j);
    __m512bh k[C / 2];
    for (int p = 0; p < C / 2; ++p)
      k[p] = reinterpret_cast<__m512bh>(_mm512_load_si512(kp + p * nkp + j));
    const __m512 mask = t.mask != nullptr ? _mm512_maskz_loadu_ps(m, t.mask + j) : __m512{};
    for (int r = 0; r < R; ++r) {
      __m512 acc = _mm512_setzero_ps();
      for (int p = 0; p < C / 2; ++p) {
        acc = _mm512_dpbf16_ps(
            acc, reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(q[r][p]))), k[p]);
      }
      __m512 l = pair[r] != nullptr
                     ? _mm512_fmadd_ps(acc, scale, _mm512_maskz_loadu_ps(m, pair[r] + j))
                     : _mm512_mul_ps(acc, scale);
      if (t.mask != nullptr) l = _mm512_add_ps(l, mask);
      _mm512_store_ps(logits + r * nkp + j, l);
      vmax[r] = _mm512_mask_max_ps(vmax[r], m, vmax[r], l);
    }
  }
  for (int r = 0; r < R; ++r) row_max[r] = _mm512_reduce_max_ps(vmax[r]);
}

// Softmax weights of R logits rows and the weighted sums of values into o rows i.. (Alg. 7
// lines 5-6); the queries share each load of the transposed values.
template <int C, int R, typename T>
CPUFOLD_AVX512 void small_head_outputs(const AttentionTileOf<T>& t, const float* vt,
                                       const float* logits, std::int64_t i, const float* row_max) {
  const std::int64_t nk = t.n_key, nkp = padded_keys(nk);
  __m512 sum[R], acc[R][C];
  for (int r = 0; r < R; ++r) {
    sum[r] = _mm512_setzero_ps();
    for (int ch = 0; ch < C; ++ch) acc[r][ch] = _mm512_setzero_ps();
  }
  for (std::int64_t j = 0; j < nkp; j += 16) {
    const __mmask16 m = tail_mask(nk - j);
    __m512 v[C];
    for (int ch = 0; ch < C; ++ch) v[ch] = _mm512_load_ps(vt + ch * nkp + j);
    for (int r = 0; r < R; ++r) {
      const Exp2Shifted exp(row_max[r]);
      const __m512 e = _mm512_maskz_mov_ps(m, exp(_mm512_load_ps(logits + r * nkp + j)));
      sum[r] = _mm512_add_ps(sum[r], e);
      for (int ch = 0; ch < C; ++ch) acc[r][ch] = _mm512_fmadd_ps(e, v[ch], acc[r][ch]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m512 inv = _mm512_set1_ps(1.f / _mm512_reduce_add_ps(sum[r]));
    float* out = t.o + (i + r) * t.ld_o;
    for (int c0 = 0; c0 < C && c0 < t.c; c0 += 8) {
      const __m512 o = _mm512_mul_ps(sum_lanes8(acc[r] + c0), inv);
      // The head's channels among base..base + 3.
      const auto present = [&](std::int64_t base) {
        const std::int64_t n = std::clamp<std::int64_t>(t.c - base, 0, 4);
        return static_cast<__mmask8>((1u << n) - 1u);
      };
      _mm_mask_storeu_ps(out + c0, present(c0), _mm512_castps512_ps128(o));
      _mm_mask_storeu_ps(out + c0 + 4, present(c0 + 4), _mm512_extractf32x4_ps(o, 2));
    }
  }
}

// Queries per logits pass (four measured no faster than two), and per output pass (its
// accumulators, R·C registers, must fit).
constexpr int kLogitRows = 2;
template <int C>
constexpr int kOutputRows = C <= 8 ? 2 : 1;

template <typename T, int C, bool Dot>
CPUFOLD_AVX512 void small_head_tile(const AttentionTileOf<T>& t, float* work) {
  const std::int64_t nk = t.n_key, nkp = padded_keys(nk);
  // 64-byte aligned: every block of 16 keys below is one aligned load.
  float* const kt =
      std::bit_cast<float*>((std::bit_cast<std::uintptr_t>(work) + 63) & ~std::uintptr_t{63});
  float* const vt = kt + C * nkp;
  float* const logits = vt + C * nkp;
  // With dot products the keys are held as channel pairs, in the first half of kt's space.
  auto* const kp = reinterpret_cast<std::uint32_t*>(kt);
  if constexpr (Dot) {
    pair_keys<C>(t.k, t.ld_k, nk, t.c, kp);
  } else {
    transpose_keys(t.k, t.ld_k, nk, t.c, C, kt);
  }
  transpose_keys(t.v, t.ld_v, nk, t.c, C, vt);
  constexpr int kRows = kLogitRows, kOut = kOutputRows<C>;
  float row_max[kRows];
  const auto logits_of = [&]<int R>(std::int64_t at) {
    if constexpr (Dot) {
      small_head_logits_dp<C, R>(t, kp, logits, at, row_max);
    } else {
      small_head_logits<C, R, T>(t, kt, logits, at, row_max);
    }
  };
  std::int64_t i = 0;
  for (; i + kRows <= t.n_query; i += kRows) {
    logits_of.template operator()<kRows>(i);
    for (int r = 0; r < kRows; r += kOut) {
      small_head_outputs<C, kOut, T>(t, vt, logits + r * nkp, i + r, row_max + r);
    }
  }
  for (; i < t.n_query; ++i) {
    logits_of.template operator()<1>(i);
    small_head_outputs<C, 1, T>(t, vt, logits, i, row_max);
  }
}

}  // namespace

std::int64_t small_head_work_floats(std::int64_t n_key, std::int64_t c) {
  const std::int64_t C = c <= 8 ? 8 : kSmallHeadMaxChannels;
  // Keys, values and the logits rows of a pass; + 16: room to align the buffer to 64 bytes.
  return (2 * C + kLogitRows) * padded_keys(n_key) + 16;
}

namespace {
bool force_fma_for_tests = false;
}  // namespace

void force_small_head_fma(bool on) {
  force_fma_for_tests = on;
}

SmallHeadKernel small_head_kernel(std::int64_t c) {
  // With the AVX-512 row kernels, as CPUFOLD_ROW_KERNELS and the CPU select them.
  static const bool available = &row_kernels() == avx512_row_kernels();
  static const bool dot = __builtin_cpu_supports("avx512bf16");
  if (!available || c <= 0 || c > kSmallHeadMaxChannels) return nullptr;
  if (dot && !force_fma_for_tests)
    return c <= 8 ? small_head_tile<bf16, 8, true> : small_head_tile<bf16, 16, true>;
  return c <= 8 ? small_head_tile<bf16, 8, false> : small_head_tile<bf16, 16, false>;
}

SmallHeadKernelF32 small_head_kernel_f32(std::int64_t c) {
  // 16 channels measured no faster than sgemm tiles (primitives_bench, 96-99 vs 96-106
  // GFLOP/s); 8 channels 94-103 vs 54-63.
  if (c > 8 || small_head_kernel(c) == nullptr) return nullptr;
  return small_head_tile<float, 8, false>;
}

}  // namespace cpufold::detail
