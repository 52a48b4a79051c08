// Inline AVX-512 pieces shared by the files that hold AVX-512 kernels (row_kernels_avx512.cpp,
// small_head_attention.cpp). Every function carries the target attribute, so the build needs no
// -m flag and the binary still runs on CPUs without AVX-512, which never call them. Include
// only from such files: the pragmas below apply to the rest of the including file.
#pragma once

// GCC 12 warns about the _mm512_undefined_* values inside its own AVX-512 headers (a known
// false positive), wherever they are inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstdint>

#define CPUFOLD_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
// The same plus AVX512-BF16 (vdpbf16ps), for kernels chosen only where the CPU has it.
#define CPUFOLD_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")))

namespace cpufold::detail::avx512 {

// The lanes of a 16-float block that hold the first min(rem, 16) elements.
CPUFOLD_AVX512 inline __mmask16 tail_mask(std::int64_t rem) {
  return static_cast<__mmask16>(rem >= 16 ? 0xffff : (1u << rem) - 1u);
}

// exp(x - max) for softmax weights, as 2^t with t = (x - max)·log2(e): t = k + r with
// |r| <= 1/2, 2^r by a degree-5 minimax polynomial (relative error 7.5e-8, below fp32
// rounding), times 2^k by vscalefps. About half the instructions of a Cephes exp with integer
// exponent arithmetic. t below -125.95 (a shifted logit below -87.3) gives 0 as in the other
// row kernel tables; NaN stays NaN.
struct Exp2Shifted {
  __m512 max;
  CPUFOLD_AVX512 explicit Exp2Shifted(float m) : max(_mm512_set1_ps(m)) {}
  CPUFOLD_AVX512 __m512 operator()(__m512 x) const {
    const __m512 t = _mm512_mul_ps(_mm512_sub_ps(x, max), _mm512_set1_ps(1.44269504088896341f));
    const __mmask16 keep = _mm512_cmp_ps_mask(t, _mm512_set1_ps(-125.95f), _CMP_NLT_UQ);
    const __m512 k = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_sub_ps(t, k);
    __m512 p = _mm512_set1_ps(1.3276471979e-3f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(9.6755413342e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.5507132735e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(2.4022119724e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(6.9314696706e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0000000717f));
    return _mm512_maskz_scalef_ps(keep, p, k);
  }
};

}  // namespace cpufold::detail::avx512
