// AVX-512 versions of the kernels attention spends its non-GEMM time in: the softmax numerator
// (an exp per logit, the largest elementwise cost of an Evoformer block) and the bf16
// conversions; LayerNorm over whole rows in registers; transpositions in 16 x 16 register
// blocks. The rest of the table is the AVX2 one. Same target-attribute scheme as
// row_kernels_avx2.cpp: the binary runs on CPUs without AVX-512 and picks another table.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "memory/error.h"
#include "ops/avx512_math.h"
#include "ops/row_kernels.h"

namespace cpufold::detail {
namespace {
// How far ahead add_biases prefetches the pair bias, in floats (4 KiB). Attention reads a tile's
// bias rows once per batch row, from beyond L2 at large N (triangle attention at N = 2,500: a
// 240 KiB bias tile, evicted between rows by 640 KiB of k and v); without the prefetch the
// softmax stalled on those loads (perf: a third of its samples on the add after the bias load).
// Measured in triangle_attention_bench (fp32, 2 threads, AVX-512 EPYC, best of 3, same run):
// 204 -> 214 GFLOP/s at N = 2,500 and 210 -> 216 at 256; 2,560 floats ahead gave 213 and 209.
constexpr std::int64_t kBiasPrefetchFloats = 1024;

using avx512::Exp2Shifted;
using avx512::tail_mask;

// Sixteen floats to bf16 exactly as bf16(float): u + 0x7fff + lsb, NaNs quieted.
CPUFOLD_AVX512 inline __m256i bf16_bits(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  r = _mm512_srli_epi32(r, 16);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

// AVX512-BF16's rounding instruction (vcvtneps2bf16): bf16_bits' rounding to nearest even and
// NaN quieting, but it reads subnormal inputs as zero. Inline assembly keeps this file's target
// attribute free of avx512bf16; the table uses it only on CPUs that have the instruction.
CPUFOLD_AVX512 inline __m256i cvtne_bf16(__m512 x) {
  __m256i r;
  asm("vcvtneps2bf16 %1, %0" : "=v"(r) : "v"(x));
  return r;
}

// bf16_bits in one instruction where the CPU has it: a vector holding a subnormal takes
// bf16_bits.
CPUFOLD_AVX512 inline __m256i bf16_bits_native(__m512 x) {
  const __m512i mag = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  // Subnormal: 0 < mag < 0x00800000, i.e. mag - 1 below 0x007fffff unsigned.
  if (_mm512_cmplt_epu32_mask(_mm512_sub_epi32(mag, _mm512_set1_epi32(1)),
                              _mm512_set1_epi32(0x007fffff)) != 0) {
    return bf16_bits(x);
  }
  return cvtne_bf16(x);
}

// x + a + b for 16 lanes (a, b optional); lanes outside `mask` read as 0.
CPUFOLD_AVX512 inline __m512 load_sum(const float* x, const float* a, const float* b,
                                      __mmask16 mask) {
  __m512 v = _mm512_maskz_loadu_ps(mask, x);
  if (a) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, a));
  if (b) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, b));
  return v;
}

// x += a + b over n floats (a, b may be null); returns the max of the result.
CPUFOLD_AVX512 inline float add_biases(float* x, const float* a, const float* b, std::int64_t n) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (std::int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    // A prefetch never faults, so it may run past the row (into the next bias row).
    if (a) _mm_prefetch(reinterpret_cast<const char*>(a + i + kBiasPrefetchFloats), _MM_HINT_T0);
    const __m512 v = load_sum(x + i, a ? a + i : nullptr, b ? b + i : nullptr, m);
    _mm512_mask_storeu_ps(x + i, m, v);
    vmax = _mm512_mask_max_ps(vmax, m, vmax, v);
  }
  return _mm512_reduce_max_ps(vmax);
}

// Where the numerator goes: back into x, or as bf16 into y.
struct StoreF32 {
  float* x;
  CPUFOLD_AVX512 void operator()(std::int64_t i, __mmask16 mask, __m512 e) const {
    _mm512_mask_storeu_ps(x + i, mask, e);
  }
};
struct StoreBf16 {
  bf16* y;
  CPUFOLD_AVX512 void operator()(std::int64_t i, __mmask16 mask, __m512 e) const {
    _mm256_mask_storeu_epi16(y + i, mask, bf16_bits(e));
  }
};
// The softmax weights rounded by cvtne_bf16 without bf16_bits_native's subnormal check: the
// weights are never subnormal (Exp2Shifted gives 0 or a normal number), so these are
// bf16_bits' bits.
struct StoreBf16Native {
  bf16* y;
  CPUFOLD_AVX512 void operator()(std::int64_t i, __mmask16 mask, __m512 e) const {
    _mm256_mask_storeu_epi16(y + i, mask, cvtne_bf16(e));
  }
};

// The numerator: the biases added and the max taken in one pass, then exp(x - max) by the
// Exp functor (made from the max) handed to `store`, 16 lanes at a time; returns the sum.
template <typename Exp, typename Store>
CPUFOLD_AVX512 float softmax_numerator_to(float* x, const float* a, const float* b, std::int64_t n,
                                          const Store& store) {
  const Exp exp(add_biases(x, a, b, n));
  __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 e0 = exp(_mm512_loadu_ps(x + i));
    const __m512 e1 = exp(_mm512_loadu_ps(x + i + 16));
    store(i, 0xffff, e0);
    store(i + 16, 0xffff, e1);
    sum0 = _mm512_add_ps(sum0, e0);
    sum1 = _mm512_add_ps(sum1, e1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 e = _mm512_maskz_mov_ps(m, exp(_mm512_maskz_loadu_ps(m, x + i)));
    store(i, m, e);
    sum0 = _mm512_add_ps(sum0, e);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(sum0, sum1));
}

// fp32 weights by Exp2Shifted too (it had the Cephes exp of the other tables, to fp32 accuracy as
// well but rounding differently, at twice the instructions): the exp was most of the softmax, a
// quarter of fp32 attention's time with heads of 32 channels. triangle_attention_bench (fp32, 2
// threads, AVX-512 EPYC, best of 3, same run): 196 -> 204 GFLOP/s at N = 2,500, 194 -> 210 at 256.
CPUFOLD_AVX512 float softmax_numerator(float* x, const float* a, const float* b, std::int64_t n) {
  return softmax_numerator_to<Exp2Shifted>(x, a, b, n, StoreF32{x});
}

CPUFOLD_AVX512 float softmax_numerator_bf16(float* x, const float* a, const float* b,
                                            std::int64_t n, bf16* y) {
  return softmax_numerator_to<Exp2Shifted>(x, a, b, n, StoreBf16{y});
}

CPUFOLD_AVX512 float softmax_numerator_bf16_native(float* x, const float* a, const float* b,
                                                   std::int64_t n, bf16* y) {
  return softmax_numerator_to<Exp2Shifted>(x, a, b, n, StoreBf16Native{y});
}

template <bool Native>
CPUFOLD_AVX512 void to_bf16(const float* x, bf16* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    _mm256_mask_storeu_epi16(y + i, m, Native ? bf16_bits_native(v) : bf16_bits(v));
  }
}

// hsum of row_kernels_avx2.cpp, on the two 8-lane halves' sum: the same additions in the same
// order, so the statistics below equal the AVX2 layer_norm's.
CPUFOLD_AVX512 inline float half_sum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The AVX2 layer_norm on rows of 16·K channels held in K registers. Its two 8-lane accumulators
// over 16-channel steps are this register's two halves, so summing the K registers in order from
// zero repeats its additions exactly (the zero start keeps the sign of an all-zero sum).
template <int K, bool InBf16, bool OutBf16, bool Native>
struct NormRowKernel {
  // R rows from row r: their dependency chains (two reductions, a division, a square root)
  // interleave, which a row at a time leaves latency-bound.
  template <int R>
  CPUFOLD_AVX512 static void rows(const NormRows& io, std::int64_t r, const float* scale,
                                  const float* offset, float eps) {
    constexpr float n = 16.f * K;
    // The rows two passes ahead: LayerNorm inputs (an MSA or pair slice) mostly stream from
    // memory, where this measured 20% faster than the hardware prefetcher alone (128 MiB of
    // 256-channel fp32 rows, 2 threads). Addresses as integers: past the last row they point
    // at no object, and a prefetch does not fault.
    constexpr std::int64_t kElement = InBf16 ? 2 : 4, kRowBytes = 16 * K * kElement;
    for (int i = 0; i < R; ++i) {
      const std::uintptr_t ahead =
          std::bit_cast<std::uintptr_t>(io.x) +
          static_cast<std::uintptr_t>((r + 2 * R + i) * io.ld_x * kElement);
      for (std::int64_t b = 0; b < kRowBytes; b += 64) {
        _mm_prefetch(std::bit_cast<const char*>(ahead + static_cast<std::uintptr_t>(b)),
                     _MM_HINT_T0);
      }
    }
    __m512 v[R][K];
    for (int i = 0; i < R; ++i) {
      for (int k = 0; k < K; ++k) {
        if constexpr (InBf16) {
          const bf16* x = static_cast<const bf16*>(io.x) + (r + i) * io.ld_x + 16 * k;
          const __m512i u =
              _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
          v[i][k] = _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
        } else {
          v[i][k] = _mm512_loadu_ps(static_cast<const float*>(io.x) + (r + i) * io.ld_x + 16 * k);
        }
      }
    }
    __m512 inv[R];
    for (int i = 0; i < R; ++i) {
      __m512 s = _mm512_setzero_ps();
      for (int k = 0; k < K; ++k) s = _mm512_add_ps(s, v[i][k]);
      const __m512 mean = _mm512_set1_ps(half_sum(s) / n);
      __m512 q = _mm512_setzero_ps();
      for (int k = 0; k < K; ++k) {
        v[i][k] = _mm512_sub_ps(v[i][k], mean);
        q = _mm512_fmadd_ps(v[i][k], v[i][k], q);
      }
      // sqrtss and divss: 1 / std::sqrt(var + eps) without the errno branch.
      const __m128 var = _mm_set_ss(half_sum(q) / n + eps);
      inv[i] = _mm512_broadcastss_ps(_mm_div_ss(_mm_set_ss(1.f), _mm_sqrt_ss(var)));
    }
    for (int i = 0; i < R; ++i) {
      for (int k = 0; k < K; ++k) {
        const __m512 y =
            _mm512_fmadd_ps(_mm512_mul_ps(v[i][k], inv[i]), _mm512_loadu_ps(scale + 16 * k),
                            _mm512_loadu_ps(offset + 16 * k));
        if constexpr (OutBf16) {
          bf16* out = static_cast<bf16*>(io.y) + (r + i) * io.ld_y + 16 * k;
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                              Native ? bf16_bits_native(y) : bf16_bits(y));
        } else {
          _mm512_storeu_ps(static_cast<float*>(io.y) + (r + i) * io.ld_y + 16 * k, y);
        }
      }
    }
  }
};

template <int K, bool InBf16, bool OutBf16, bool Native>
CPUFOLD_AVX512 void layer_norm_rows_k(const NormRows& io, std::int64_t rows, const float* scale,
                                      const float* offset, float eps) {
  using Kernel = NormRowKernel<K, InBf16, OutBf16, Native>;
  constexpr int kRows = K <= 4 ? 4 : K <= 8 ? 2 : 1;  // R·K registers of row values
  std::int64_t r = 0;
  for (; r + kRows <= rows; r += kRows) Kernel::template rows<kRows>(io, r, scale, offset, eps);
  for (; r < rows; ++r) Kernel::template rows<1>(io, r, scale, offset, eps);
}

template <int K, bool Native>
CPUFOLD_AVX512 void layer_norm_rows_typed(const NormRows& io, std::int64_t rows, const float* scale,
                                          const float* offset, float eps) {
  if (io.x_bf16) {
    io.y_bf16 ? layer_norm_rows_k<K, true, true, Native>(io, rows, scale, offset, eps)
              : layer_norm_rows_k<K, true, false, Native>(io, rows, scale, offset, eps);
  } else {
    io.y_bf16 ? layer_norm_rows_k<K, false, true, Native>(io, rows, scale, offset, eps)
              : layer_norm_rows_k<K, false, false, Native>(io, rows, scale, offset, eps);
  }
}

// n: norm_rows_width(n), which LayerNorm checks before its parallel loop.
template <bool Native>
CPUFOLD_AVX512 void layer_norm_rows(const NormRows& io, std::int64_t rows, const float* scale,
                                    const float* offset, float eps, std::int64_t n) {
  switch (n / 16) {
    case 1:
      return layer_norm_rows_typed<1, Native>(io, rows, scale, offset, eps);
    case 2:
      return layer_norm_rows_typed<2, Native>(io, rows, scale, offset, eps);
    case 4:
      return layer_norm_rows_typed<4, Native>(io, rows, scale, offset, eps);
    case 8:
      return layer_norm_rows_typed<8, Native>(io, rows, scale, offset, eps);
    case 16:
      return layer_norm_rows_typed<16, Native>(io, rows, scale, offset, eps);
    default:
      throw InternalError("layer_norm_rows: " + std::to_string(n) + " channels");
  }
}

// Sixteen rows of 16 floats in r transposed in place: r[k] becomes column k. In-lane pairs,
// then quads, then the 128-bit lanes gathered across registers: 64 shuffles.
CPUFOLD_AVX512 inline void transpose16(__m512* r) {
  __m512 a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // b[4g + j], lane L: rows 4g..4g+3 of column 4L + j.
  for (int g = 0; g < 4; ++g) {
    __m512d d[4];
    for (int i = 0; i < 4; ++i) d[i] = _mm512_castps_pd(a[4 * g + i]);
    b[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(d[0], d[2]));
    b[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(d[0], d[2]));
    b[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(d[1], d[3]));
    b[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(d[1], d[3]));
  }
  for (int j = 0; j < 4; ++j) {
    // Lanes 0, 2 (u0) and 1, 3 (u1) of the groups 0-1 and 2-3, then the four groups together.
    const __m512 u0 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x88);
    const __m512 u1 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xdd);
    const __m512 v0 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x88);
    const __m512 v1 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xdd);
    r[j] = _mm512_shuffle_f32x4(u0, v0, 0x88);
    r[4 + j] = _mm512_shuffle_f32x4(u1, v1, 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(u0, v0, 0xdd);
    r[12 + j] = _mm512_shuffle_f32x4(u1, v1, 0xdd);
  }
}

// RowKernels::transpose in blocks of 16 x 16 held in registers; partial blocks by masks (rows
// past the end read as zero, columns past the end are not stored).
template <typename Store>
CPUFOLD_AVX512 void transpose_blocks(const float* x, std::int64_t ld_x, std::int64_t rows,
                                     std::int64_t cols, Store store) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += 16) {
    const std::int64_t ni = std::min<std::int64_t>(16, rows - i0);
    const __mmask16 row_mask = tail_mask(ni);
    for (std::int64_t k0 = 0; k0 < cols; k0 += 16) {
      const std::int64_t nk = std::min<std::int64_t>(16, cols - k0);
      const __mmask16 col_mask = tail_mask(nk);
      __m512 r[16];
      for (int i = 0; i < 16; ++i) {
        r[i] = i < ni ? _mm512_maskz_loadu_ps(col_mask, x + (i0 + i) * ld_x + k0)
                      : _mm512_setzero_ps();
      }
      transpose16(r);
      for (std::int64_t k = 0; k < nk; ++k) store(r[k], k0 + k, i0, row_mask);
    }
  }
}

CPUFOLD_AVX512 void transpose(const float* x, std::int64_t ld_x, std::int64_t rows,
                              std::int64_t cols, float* y, std::int64_t ld_y) {
  transpose_blocks(x, ld_x, rows, cols,
                   [&](__m512 v, std::int64_t k, std::int64_t i0, __mmask16 m)
                       CPUFOLD_AVX512 { _mm512_mask_storeu_ps(y + k * ld_y + i0, m, v); });
}

template <bool Native>
CPUFOLD_AVX512 void transpose_to_bf16(const float* x, std::int64_t ld_x, std::int64_t rows,
                                      std::int64_t cols, bf16* y, std::int64_t ld_y) {
  transpose_blocks(x, ld_x, rows, cols,
                   [&](__m512 v, std::int64_t k, std::int64_t i0, __mmask16 m) CPUFOLD_AVX512 {
                     _mm256_mask_storeu_epi16(y + k * ld_y + i0, m,
                                              Native ? bf16_bits_native(v) : bf16_bits(v));
                   });
}

}  // namespace

const RowKernels* avx512_row_kernels() {
  static const RowKernels* table = []() -> const RowKernels* {
    const RowKernels* avx2 = avx2_row_kernels();
    if (avx2 == nullptr || !__builtin_cpu_supports("avx512f") ||
        !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl")) {
      return nullptr;
    }
    static RowKernels t = *avx2;
    t.softmax_numerator = softmax_numerator;
    const bool native = __builtin_cpu_supports("avx512bf16");
    t.softmax_numerator_bf16 = native ? softmax_numerator_bf16_native : softmax_numerator_bf16;
    t.to_bf16 = native ? to_bf16<true> : to_bf16<false>;
    t.layer_norm_rows = native ? layer_norm_rows<true> : layer_norm_rows<false>;
    t.transpose = transpose;
    t.transpose_to_bf16 = native ? transpose_to_bf16<true> : transpose_to_bf16<false>;
    t.name = "avx512";
    return &t;
  }();
  return table;
}

}  // namespace cpufold::detail
