#include "ops/dot_bf16_attention.h"

#include <cpuid.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/avx512_math.h"
#include "ops/row_kernels.h"

// This file's kernels take CPUFOLD_AVX512_BF16; they run only where dot_bf16_kernel found the
// instructions.

namespace cpufold::detail {
namespace {

using avx512::Exp2Shifted;
using avx512::tail_mask;

constexpr int kQkRows = 6;  // queries per q·kᵀ block: 6 x 64 keys = 24 accumulators
constexpr int kQkKeys = 64;
constexpr int kPvAccumulators = 24;  // queries x (c / 16) of the weights·v block

std::int64_t round_up(std::int64_t n, std::int64_t m) {
  return (n + m - 1) / m * m;
}

// Heads of 8 channels hold two key pairs per register of values: lane 2·ch + h is channel ch
// of pair 2u + h, so one 64-bit broadcast of weights (pairs 2u, 2u + 1) feeds 16 lanes, and
// their weights and values are padded to whole quads of keys.
constexpr bool two_pairs(std::int64_t c) {
  return c == 8;
}

std::int64_t key_step(std::int64_t c) {
  return two_pairs(c) ? 4 : 2;
}

// Words per key pair of packed values: c (a multiple of 16), or 8 when two pairs share a
// register.
std::int64_t value_words(std::int64_t c) {
  return two_pairs(c) ? 8 : c;
}

// The work space, carved from one buffer: keys packed as [c/2][keys rounded to 64] pairs,
// values as [key pairs][value_words(c)], kQkRows rows of fp32 logits, a block of bf16 weight
// rows.
struct Work {
  std::uint32_t* k;
  std::uint32_t* v;
  float* logits;
  bf16* weights;
  std::int64_t ld_k, ld_v, ld_logits, ld_weights;  // elements
};

std::size_t aligned64(std::size_t bytes) {
  return (bytes + 63) / 64 * 64;
}

// Carves the work space at `work` into w (with `work` null only measures it); returns its size.
std::size_t carve(std::byte* work, std::int64_t n_key, std::int64_t c, Work& w) {
  const std::int64_t nk64 = round_up(n_key, kQkKeys), nkv = round_up(n_key, key_step(c));
  const std::int64_t pv_rows = kPvAccumulators / std::max<std::int64_t>(c / 16, 1);
  w.ld_k = nk64;
  w.ld_v = value_words(c);
  w.ld_logits = nk64;
  w.ld_weights = nkv;
  std::size_t size = 0;
  const auto take = [&](std::int64_t bytes) {
    std::byte* at = work != nullptr ? work + size : nullptr;
    size += aligned64(static_cast<std::size_t>(bytes));
    return at;
  };
  w.k = reinterpret_cast<std::uint32_t*>(take(c / 2 * nk64 * 4));
  w.v = reinterpret_cast<std::uint32_t*>(take(nkv / 2 * w.ld_v * 4));
  w.logits = reinterpret_cast<float*>(take(kQkRows * nk64 * 4));
  w.weights = reinterpret_cast<bf16*>(take(pv_rows * nkv * 2));
  return size;
}

// A bf16 pair (elements 2i, 2i+1 of a 4-byte aligned row) as one 32-bit word.
inline std::uint32_t pair_at(const bf16* row, std::int64_t i) {
  std::uint32_t x;
  std::memcpy(&x, row + 2 * i, sizeof x);
  return x;
}

// k[j][2p..2p+1] -> packed[p][j]: each 16-lane block of one pair index is a vdpbf16ps operand
// for 16 keys. Keys from n_key up to the 64-key round-up are zero.
CPUFOLD_AVX512_BF16 void pack_keys(const AttentionTile& t, const Work& w) {
  const std::int64_t pairs = t.c / 2;
  const auto* base = reinterpret_cast<const int*>(t.k);
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i step = _mm512_set1_epi32(static_cast<int>(t.ld_k / 2));
  for (std::int64_t j0 = 0; j0 < w.ld_k; j0 += 16) {
    // Rows ld apart (a whole MSA row for column attention), which the hardware prefetcher does
    // not follow: fetch the keys, values and queries two groups on while this group gathers.
    for (std::int64_t j = j0 + 32; j < std::min(j0 + 48, t.n_key); ++j) {
      for (std::int64_t ch = 0; ch < t.c; ch += 32) {  // 64-byte lines
        _mm_prefetch(reinterpret_cast<const char*>(t.k + j * t.ld_k + ch), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(t.v + j * t.ld_v + ch), _MM_HINT_T1);
        if (j < t.n_query) {
          _mm_prefetch(reinterpret_cast<const char*>(t.q + j * t.ld_q + ch), _MM_HINT_T1);
        }
      }
    }
    const __mmask16 m = j0 < t.n_key ? tail_mask(t.n_key - j0) : 0;
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(int(j0))), step);
    for (std::int64_t p = 0; p < pairs; ++p) {
      const __m512i g =
          _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, base + p, sizeof(int));
      _mm512_store_si512(w.k + p * w.ld_k + j0, g);
    }
  }
}

// The 8 channels of value j widened to 32 bits (zero past n_key).
CPUFOLD_AVX512_BF16 inline __m256i value_row8(const AttentionTile& t, std::int64_t j) {
  return j < t.n_key ? _mm256_cvtepu16_epi32(
                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.v + j * t.ld_v)))
                     : _mm256_setzero_si256();
}

// The 8 channels of keys 2m and 2m + 1 as pair words.
CPUFOLD_AVX512_BF16 inline __m256i value_pair8(const AttentionTile& t, std::int64_t m) {
  return _mm256_or_si256(value_row8(t, 2 * m), _mm256_slli_epi32(value_row8(t, 2 * m + 1), 16));
}

// v[2m][ch], v[2m+1][ch] -> packed[m][ch]: the pair of keys a weight pair multiplies (8
// channels: pairs 2u and 2u + 1 interleaved, see two_pairs). Keys past n_key are zero.
CPUFOLD_AVX512_BF16 void pack_values(const AttentionTile& t, const Work& w) {
  if (two_pairs(t.c)) {
    const __m512i interleave =
        _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    for (std::int64_t u = 0; 4 * u < t.n_key; ++u) {
      const __m512i even = _mm512_castsi256_si512(value_pair8(t, 2 * u));
      const __m512i odd = _mm512_castsi256_si512(value_pair8(t, 2 * u + 1));
      _mm512_store_si512(w.v + u * 16, _mm512_permutex2var_epi32(even, interleave, odd));
    }
    return;
  }
  for (std::int64_t m = 0; 2 * m < t.n_key; ++m) {
    const bf16* even = t.v + 2 * m * t.ld_v;
    const bf16* odd = 2 * m + 1 < t.n_key ? even + t.ld_v : nullptr;
    for (std::int64_t ch = 0; ch < t.c; ch += 16) {
      const __m512i lo =
          _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(even + ch)));
      const __m512i hi = odd != nullptr
                             ? _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(
                                                     reinterpret_cast<const __m256i*>(odd + ch))),
                                                 16)
                             : _mm512_setzero_si512();
      _mm512_store_si512(w.v + m * w.ld_v + ch, _mm512_or_si512(lo, hi));
    }
  }
}

// Logits of R queries (from row i0) against every key (Alg. 7 line 5: q·k scaled, plus the pair
// and mask biases), stored in the logits rows; returns each row's max in `row_max`.
template <int R, int C>
CPUFOLD_AVX512_BF16 void logits_rows(const AttentionTile& t, const Work& w, std::int64_t i0,
                                     float* row_max) {
  constexpr int kPairs = C / 2;
  constexpr int kVecs = kQkKeys / 16;
  // Locals, not the tile's fields: the logits stores could alias them, so the compiler would
  // reload every field after every store.
  const std::int64_t n_key = t.n_key, ld_k = w.ld_k, ld_logits = w.ld_logits;
  const std::uint32_t* const keys = w.k;
  float* const logits = w.logits;
  const float* const mask = t.mask;
  const bf16* q[R];
  const float* pair[R];
  for (int r = 0; r < R; ++r) {
    q[r] = t.q + (i0 + r) * t.ld_q;
    pair[r] = t.pair != nullptr ? t.pair + (i0 + r) * t.ld_pair : nullptr;
  }
  const bool has_pair = t.pair != nullptr, has_mask = mask != nullptr;
  __m512 vmax[R];
  for (int r = 0; r < R; ++r) vmax[r] = _mm512_set1_ps(-INFINITY);
  const __m512 scale = _mm512_set1_ps(t.scale);
  for (std::int64_t j0 = 0; j0 < ld_k; j0 += kQkKeys) {
    // The pair loop is unrolled twice: unrolled fully, GCC spills the row maxima and bias
    // registers into it, and with a pair bias row attention's calls at N = 256 took 11.6-12.1
    // instead of 10.3-10.9 ms (primitives_bench, 2 threads).
    __m512 acc[R][kVecs];
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) acc[r][j] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int p = 0; p < kPairs; ++p) {
      __m512bh b[kVecs];
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) {
        b[j] = reinterpret_cast<__m512bh>(_mm512_load_si512(keys + p * ld_k + j0 + 16 * j));
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const auto a =
            reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(pair_at(q[r], p))));
#pragma GCC unroll 4
        for (int j = 0; j < kVecs; ++j) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], a, b[j]);
      }
    }
    __mmask16 m[kVecs];
    for (int j = 0; j < kVecs; ++j) {
      const std::int64_t key = j0 + 16 * j;
      m[j] = key < n_key ? tail_mask(n_key - key) : 0;
    }
    __m512 bias[kVecs];
    if (has_mask) {
      for (int j = 0; j < kVecs; ++j) bias[j] = _mm512_maskz_loadu_ps(m[j], mask + j0 + 16 * j);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) {
        __m512 x = has_pair ? _mm512_fmadd_ps(acc[r][j], scale,
                                              _mm512_maskz_loadu_ps(m[j], pair[r] + j0 + 16 * j))
                            : _mm512_mul_ps(acc[r][j], scale);
        if (has_mask) x = _mm512_add_ps(x, bias[j]);
        _mm512_store_ps(logits + r * ld_logits + j0 + 16 * j, x);
        vmax[r] = _mm512_mask_max_ps(vmax[r], m[j], vmax[r], x);
      }
    }
  }
  for (int r = 0; r < R; ++r) row_max[r] = _mm512_reduce_max_ps(vmax[r]);
}

// exp(logit - max) of one row as bf16 weights (the pad keys up to `padded`: 0); returns the
// fp32 sum.
CPUFOLD_AVX512_BF16 float weights_row(const float* logits, float max, std::int64_t n_key,
                                      std::int64_t padded, bf16* out) {
  const Exp2Shifted exp(max);
  __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
  std::int64_t j = 0;
  for (; j + 32 <= n_key; j += 32) {
    const __m512 e0 = exp(_mm512_load_ps(logits + j));
    const __m512 e1 = exp(_mm512_load_ps(logits + j + 16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j),
                        reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(e0)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j + 16),
                        reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(e1)));
    sum0 = _mm512_add_ps(sum0, e0);
    sum1 = _mm512_add_ps(sum1, e1);
  }
  for (; j < n_key; j += 16) {
    const __mmask16 m = tail_mask(n_key - j);
    const __m512 e = _mm512_maskz_mov_ps(m, exp(_mm512_load_ps(logits + j)));
    _mm256_mask_storeu_epi16(out + j, m, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(e)));
    sum0 = _mm512_add_ps(sum0, e);
  }
  for (std::int64_t pad = n_key; pad < padded; ++pad) out[pad] = bf16{};
  return _mm512_reduce_add_ps(_mm512_add_ps(sum0, sum1));
}

// o rows i0.. = (weights · v) / sum for R queries: the weights' key pairs broadcast, the packed
// values' 16 channels per register (8 channels: two key pairs per register, see two_pairs).
template <int R, int C>
CPUFOLD_AVX512_BF16 void output_rows(const AttentionTile& t, const Work& w, std::int64_t i0,
                                     const float* inv_sum) {
  if constexpr (two_pairs(C)) {
    __m512 acc[R];
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const std::int64_t quads = w.ld_weights / 4;
    for (std::int64_t u = 0; u < quads; ++u) {
      const auto b = reinterpret_cast<__m512bh>(_mm512_load_si512(w.v + u * 16));
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) {
        std::int64_t pairs;  // weights of keys 4u .. 4u + 3
        std::memcpy(&pairs, w.weights + r * w.ld_weights + 4 * u, sizeof pairs);
        acc[r] = _mm512_dpbf16_ps(acc[r], reinterpret_cast<__m512bh>(_mm512_set1_epi64(pairs)), b);
      }
    }
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      // Lanes 2·ch and 2·ch + 1 summed, the even lanes packed into the first 8.
      const __m512 sum = _mm512_add_ps(acc[r], _mm512_permute_ps(acc[r], 0xb1));
      const __m512 o =
          _mm512_mul_ps(_mm512_maskz_compress_ps(0x5555, sum), _mm512_set1_ps(inv_sum[r]));
      _mm512_mask_storeu_ps(t.o + (i0 + r) * t.ld_o, 0xff, o);
    }
    return;
  }
  constexpr int C16 = C / 16;
  __m512 acc[R][C16];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int g = 0; g < C16; ++g) acc[r][g] = _mm512_setzero_ps();
  const std::int64_t pairs = w.ld_weights / 2;
  for (std::int64_t m = 0; m < pairs; ++m) {
    __m512bh b[C16];
#pragma GCC unroll 4
    for (int g = 0; g < C16; ++g) {
      b[g] = reinterpret_cast<__m512bh>(_mm512_load_si512(w.v + m * w.ld_v + 16 * g));
    }
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const auto a = reinterpret_cast<__m512bh>(
          _mm512_set1_epi32(static_cast<int>(pair_at(w.weights + r * w.ld_weights, m))));
#pragma GCC unroll 4
      for (int g = 0; g < C16; ++g) acc[r][g] = _mm512_dpbf16_ps(acc[r][g], a, b[g]);
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r) {
    float* out = t.o + (i0 + r) * t.ld_o;
    const __m512 s = _mm512_set1_ps(inv_sum[r]);
#pragma GCC unroll 4
    for (int g = 0; g < C16; ++g) _mm512_storeu_ps(out + 16 * g, _mm512_mul_ps(acc[r][g], s));
  }
}

// Compile-time row counts for the remainder blocks: f.template operator()<R>() for R = rows.
template <int Max, typename F>
void with_rows(std::int64_t rows, F&& f) {
  if constexpr (Max > 0) {
    if (rows == Max) {
      f.template operator()<Max>();
    } else {
      with_rows<Max - 1>(rows, f);
    }
  }
}

template <int C>
CPUFOLD_AVX512_BF16 void dot_bf16_tile(const AttentionTile& t, std::byte* work,
                                       DotBf16Packed& packed) {
  constexpr int kPvRows = kPvAccumulators / std::max(C / 16, 1);
  Work w;
  carve(work, t.n_key, t.c, w);
  if (packed.k != t.k) {
    pack_keys(t, w);
    packed.k = t.k;
  }
  if (packed.v != t.v) {
    pack_values(t, w);
    packed.v = t.v;
  }
  float row_max[kQkRows];
  float inv_sum[kPvRows];
  for (std::int64_t i0 = 0; i0 < t.n_query; i0 += kPvRows) {
    const std::int64_t rows = std::min<std::int64_t>(kPvRows, t.n_query - i0);
    for (std::int64_t s = 0; s < rows; s += kQkRows) {
      const std::int64_t n = std::min<std::int64_t>(kQkRows, rows - s);
      with_rows<kQkRows>(n, [&]<int R>() { logits_rows<R, C>(t, w, i0 + s, row_max); });
      for (std::int64_t r = 0; r < n; ++r) {
        inv_sum[s + r] = 1.f / weights_row(w.logits + r * w.ld_logits, row_max[r], t.n_key,
                                           w.ld_weights, w.weights + (s + r) * w.ld_weights);
      }
    }
    with_rows<kPvRows>(rows, [&]<int R>() { output_rows<R, C>(t, w, i0, inv_sum); });
  }
}

bool cpu_has_amx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 22)) != 0 || (edx & (1u << 24)) != 0;  // AMX-BF16, AMX-TILE
}

}  // namespace

std::size_t dot_bf16_work_bytes(std::int64_t n_key, std::int64_t c) {
  Work w;
  return carve(nullptr, n_key, c, w);
}

namespace {
bool disabled_for_tests = false;
}  // namespace

void disable_dot_bf16_for_tests(bool on) {
  disabled_for_tests = on;
}

DotBf16Kernel dot_bf16_kernel(std::int64_t c) {
  static const bool available = &row_kernels() == avx512_row_kernels() &&
                                __builtin_cpu_supports("avx512bf16") && !cpu_has_amx();
  if (!available || disabled_for_tests) return nullptr;
  switch (c) {
    case 8:
      return dot_bf16_tile<8>;
    case 16:
      return dot_bf16_tile<16>;
    case 32:
      return dot_bf16_tile<32>;
    case 48:
      return dot_bf16_tile<48>;
    case 64:
      return dot_bf16_tile<64>;
    default:
      return nullptr;
  }
}

bool dot_bf16_fits(const void* q, std::int64_t ld_q, const void* k, std::int64_t ld_k,
                   const void* v, std::int64_t ld_v, std::int64_t n_key) {
  const auto aligned4 = [](const void* p) { return std::bit_cast<std::uintptr_t>(p) % 4 == 0; };
  // The key packing gathers with 32-bit offsets of (key * ld_k / 2) words.
  const bool offsets_fit =
      (round_up(n_key, kQkKeys) * (ld_k / 2)) <= std::numeric_limits<std::int32_t>::max();
  return aligned4(q) && aligned4(k) && aligned4(v) && ld_q % 2 == 0 && ld_k % 2 == 0 &&
         ld_v % 2 == 0 && offsets_fit;
}

}  // namespace cpufold::detail
