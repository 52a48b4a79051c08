// AVX2+FMA row kernels. Every function carries the target attribute instead of the build using
// -mavx2, so the binary still starts on older CPUs and picks the generic table there.
// Tails are handled with masked loads/stores so each row is one code path.
#include <immintrin.h>

#include <cmath>

#include "ops/row_kernels.h"

#define CPUFOLD_AVX2 __attribute__((target("avx2,fma")))

namespace cpufold::detail {
namespace {

constexpr float kExpLow = -87.3f;  // exp(x) for x below this is flushed to 0 (as generic)
constexpr float kExpHigh = 88.0f;  // keeps 2^n finite

// Lanes [0, rem) set; rem may exceed 8.
CPUFOLD_AVX2 inline __m256i tail_mask(std::int64_t rem) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rem < 8 ? rem : 8)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

CPUFOLD_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

CPUFOLD_AVX2 inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Cephes expf: exp(x) = 2^n * exp(r), |r| <= ln2/2, degree-6 polynomial, about 1 ulp.
CPUFOLD_AVX2 inline __m256 exp256(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(kExpLow), _CMP_LT_OQ);
  // x second in min and max: they return their second operand for a NaN, so a NaN stays NaN.
  x = _mm256_max_ps(_mm256_set1_ps(kExpLow), _mm256_min_ps(_mm256_set1_ps(kExpHigh), x));
  const __m256 fn = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln2 split in two so fn * ln2_hi is exact.
  __m256 r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 e = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256i n = _mm256_cvtps_epi32(fn);
  const __m256 pow2n =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(e, pow2n));
}

// x + a + b for one vector (a, b optional), masked lanes read as 0.
CPUFOLD_AVX2 inline __m256 load_sum(const float* x, const float* a, const float* b, __m256i mask) {
  __m256 v = _mm256_maskload_ps(x, mask);
  if (a) v = _mm256_add_ps(v, _mm256_maskload_ps(a, mask));
  if (b) v = _mm256_add_ps(v, _mm256_maskload_ps(b, mask));
  return v;
}

// Eight floats to bf16 in the low 128 bits, as bf16(float): u + 0x7fff + lsb, NaNs quieted.
CPUFOLD_AVX2 inline __m128i bf16_bits(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
  r = _mm256_srli_epi32(r, 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  r = _mm256_blendv_epi8(r, quiet, nan);
  // Values fit 16 bits: packus per 128-bit lane, then gather lanes 0 and 2.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
  return _mm256_castsi256_si128(packed);
}

// Where softmax_numerator puts exp(x - max): back into x, or as bf16 into y.
struct StoreF32 {
  float* x;
  CPUFOLD_AVX2 void full(std::int64_t i, __m256 e) const { _mm256_storeu_ps(x + i, e); }
  CPUFOLD_AVX2 void part(std::int64_t i, __m256i mask, __m256 e) const {
    _mm256_maskstore_ps(x + i, mask, e);
  }
};
struct StoreBf16 {
  bf16* y;
  CPUFOLD_AVX2 void full(std::int64_t i, __m256 e) const {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), bf16_bits(e));
  }
  CPUFOLD_AVX2 void part(std::int64_t i, __m256i, __m256 e) const {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, e);
    for (std::int64_t j = 0; j < 8 && i + j < count; ++j) y[i + j] = bf16(lanes[j]);
  }
  std::int64_t count;
};

template <typename Store>
CPUFOLD_AVX2 float softmax_numerator_to(float* x, const float* a, const float* b, std::int64_t n,
                                        const Store& out) {
  const __m256i all = _mm256_set1_epi32(-1);
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  __m256 vmax = neg_inf;
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = load_sum(x + i, a ? a + i : nullptr, b ? b + i : nullptr, all);
    _mm256_storeu_ps(x + i, v);
    vmax = _mm256_max_ps(vmax, v);
  }
  const std::int64_t full = i;
  const __m256i tail = tail_mask(n - full);
  if (full < n) {
    const __m256 v = load_sum(x + full, a ? a + full : nullptr, b ? b + full : nullptr, tail);
    _mm256_maskstore_ps(x + full, tail, v);
    vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(neg_inf, v, _mm256_castsi256_ps(tail)));
  }
  const __m256 max = _mm256_set1_ps(hmax(vmax));

  // Two independent exp chains per iteration keep both FMA pipes busy.
  __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();
  for (i = 0; i + 16 <= full; i += 16) {
    const __m256 e0 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), max));
    const __m256 e1 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), max));
    out.full(i, e0);
    out.full(i + 8, e1);
    sum0 = _mm256_add_ps(sum0, e0);
    sum1 = _mm256_add_ps(sum1, e1);
  }
  if (i < full) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), max));
    out.full(i, e);
    sum0 = _mm256_add_ps(sum0, e);
  }
  if (full < n) {
    __m256 e = exp256(_mm256_sub_ps(_mm256_maskload_ps(x + full, tail), max));
    e = _mm256_and_ps(e, _mm256_castsi256_ps(tail));
    out.part(full, tail, e);
    sum1 = _mm256_add_ps(sum1, e);
  }
  return hsum(_mm256_add_ps(sum0, sum1));
}

CPUFOLD_AVX2 float softmax_numerator(float* x, const float* a, const float* b, std::int64_t n) {
  return softmax_numerator_to(x, a, b, n, StoreF32{x});
}

CPUFOLD_AVX2 float softmax_numerator_bf16(float* x, const float* a, const float* b, std::int64_t n,
                                          bf16* y) {
  return softmax_numerator_to(x, a, b, n, StoreBf16{y, n});
}

CPUFOLD_AVX2 void scale(float* y, float s, std::int64_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), vs));
  if (i < n) {
    const __m256i tail = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, tail, _mm256_mul_ps(_mm256_maskload_ps(y + i, tail), vs));
  }
}

CPUFOLD_AVX2 void softmax(float* x, const float* a, const float* b, std::int64_t n) {
  scale(x, 1.f / softmax_numerator(x, a, b, n), n);
}

CPUFOLD_AVX2 void layer_norm(const float* x, float* y, const float* scale, const float* offset,
                             float eps, std::int64_t n) {
  const std::int64_t full = n / 8 * 8;
  const __m256i tail = tail_mask(n - full);
  const __m256 tail_lanes = _mm256_castsi256_ps(tail);
  // Two accumulators per reduction halve the add latency chain over short AF2 rows.
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 16 <= full; i += 16) {
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
  }
  if (i < full) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
  if (full < n) s1 = _mm256_add_ps(s1, _mm256_maskload_ps(x + full, tail));
  const __m256 mean = _mm256_set1_ps(hsum(_mm256_add_ps(s0, s1)) / static_cast<float>(n));

  s0 = _mm256_setzero_ps();
  s1 = _mm256_setzero_ps();
  for (i = 0; i + 16 <= full; i += 16) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), mean);
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mean);
    s0 = _mm256_fmadd_ps(d0, d0, s0);
    s1 = _mm256_fmadd_ps(d1, d1, s1);
  }
  if (i < full) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), mean);
    s0 = _mm256_fmadd_ps(d, d, s0);
  }
  if (full < n) {
    const __m256 d =
        _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + full, tail), mean), tail_lanes);
    s1 = _mm256_fmadd_ps(d, d, s1);
  }
  const __m256 inv =
      _mm256_set1_ps(1.f / std::sqrt(hsum(_mm256_add_ps(s0, s1)) / static_cast<float>(n) + eps));

  for (i = 0; i < full; i += 8) {
    const __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mean), inv);
    _mm256_storeu_ps(y + i,
                     _mm256_fmadd_ps(d, _mm256_loadu_ps(scale + i), _mm256_loadu_ps(offset + i)));
  }
  if (full < n) {
    const __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + full, tail), mean), inv);
    _mm256_maskstore_ps(y + full, tail,
                        _mm256_fmadd_ps(d, _mm256_maskload_ps(scale + full, tail),
                                        _mm256_maskload_ps(offset + full, tail)));
  }
}

// Applies f to x[0, n) in place, 8 lanes at a time.
template <typename F>
CPUFOLD_AVX2 inline void map_inplace(float* x, std::int64_t n, F f) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i tail = tail_mask(n - i);
    _mm256_maskstore_ps(x + i, tail, f(_mm256_maskload_ps(x + i, tail)));
  }
}

// Functors rather than lambdas: a lambda's implicit function-pointer thunk would not carry the
// target attribute.
struct Relu {
  CPUFOLD_AVX2 __m256 operator()(__m256 v) const { return _mm256_max_ps(v, _mm256_setzero_ps()); }
};
struct Sigmoid {
  CPUFOLD_AVX2 __m256 operator()(__m256 v) const {
    const __m256 one = _mm256_set1_ps(1.f);
    return _mm256_div_ps(one, _mm256_add_ps(one, exp256(_mm256_sub_ps(_mm256_setzero_ps(), v))));
  }
};
struct Mul {
  CPUFOLD_AVX2 __m256 operator()(__m256 u, __m256 v) const { return _mm256_mul_ps(u, v); }
};
struct Add {
  CPUFOLD_AVX2 __m256 operator()(__m256 u, __m256 v) const { return _mm256_add_ps(u, v); }
};

CPUFOLD_AVX2 void relu(float* x, std::int64_t n) {
  map_inplace(x, n, Relu{});
}
CPUFOLD_AVX2 void sigmoid(float* x, std::int64_t n) {
  map_inplace(x, n, Sigmoid{});
}

// y = f(y, a) over n elements.
template <typename F>
CPUFOLD_AVX2 inline void zip_inplace(float* y, const float* a, std::int64_t n, F f) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(y + i), _mm256_loadu_ps(a + i)));
  }
  if (i < n) {
    const __m256i tail = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, tail,
                        f(_mm256_maskload_ps(y + i, tail), _mm256_maskload_ps(a + i, tail)));
  }
}

CPUFOLD_AVX2 void mul(float* y, const float* a, std::int64_t n) {
  zip_inplace(y, a, n, Mul{});
}
CPUFOLD_AVX2 void add(float* y, const float* a, std::int64_t n) {
  zip_inplace(y, a, n, Add{});
}

CPUFOLD_AVX2 void to_bf16(const float* x, bf16* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), bf16_bits(_mm256_loadu_ps(x + i)));
  }
  for (; i < n; ++i) y[i] = bf16(x[i]);
}

}  // namespace

const RowKernels* avx2_row_kernels() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
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
                                "avx2"};
  return supported ? &table : nullptr;
}

}  // namespace cpufold::detail
