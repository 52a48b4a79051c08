#include "pipeline/features/msa_clustering.h"

#include <algorithm>

#include "memory/error.h"
#include "ops/row_kernels.h"
#include "pipeline/features/hhblits_alphabet.h"
#include "pipeline/features/msa_feat.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cpufold {
namespace {

using CountEqual = std::int64_t (*)(const std::uint8_t*, const std::uint8_t*, std::int64_t);

// Positions where a[i] == b[i].
std::int64_t count_equal_generic(const std::uint8_t* a, const std::uint8_t* b, std::int64_t n) {
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) count += a[i] == b[i];
  return count;
}

#if defined(__x86_64__)
// Byte compares (-1 per match) summed in byte counters, flushed through a sum of absolute
// differences before they can wrap at 255 matches per lane. The AVX2 one carries the target
// attribute, so the binary still runs on CPUs without AVX2 (SSE2 is part of x86-64).
std::int64_t count_equal_sse2(const std::uint8_t* a, const std::uint8_t* b, std::int64_t n) {
  std::int64_t count = 0, i = 0;
  const __m128i zero = _mm_setzero_si128();
  while (n - i >= 16) {
    __m128i acc = zero;
    const std::int64_t blocks = std::min<std::int64_t>((n - i) / 16, 255);
    for (std::int64_t k = 0; k < blocks; ++k, i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
      const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(x, y));
    }
    const __m128i sums = _mm_sad_epu8(acc, zero);
    count += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
  }
  return count + count_equal_generic(a + i, b + i, n - i);
}

__attribute__((target("avx2"))) std::int64_t count_equal_avx2(const std::uint8_t* a,
                                                              const std::uint8_t* b,
                                                              std::int64_t n) {
  std::int64_t count = 0, i = 0;
  const __m256i zero = _mm256_setzero_si256();
  while (n - i >= 32) {
    __m256i acc = zero;
    const std::int64_t blocks = std::min<std::int64_t>((n - i) / 32, 255);
    for (std::int64_t k = 0; k < blocks; ++k, i += 32) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
      acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(x, y));
    }
    const __m256i sums = _mm256_sad_epu8(acc, zero);
    count += _mm256_extract_epi64(sums, 0) + _mm256_extract_epi64(sums, 1) +
             _mm256_extract_epi64(sums, 2) + _mm256_extract_epi64(sums, 3);
  }
  return count + count_equal_sse2(a + i, b + i, n - i);
}
#endif

CountEqual count_equal_kernel() {
#if defined(__x86_64__)
  return detail::use_avx2() ? count_equal_avx2 : count_equal_sse2;
#else
  return count_equal_generic;
#endif
}

}  // namespace

std::vector<std::int32_t> nearest_neighbor_clusters(std::span<const std::uint8_t> bert_msa,
                                                    std::span<const std::uint8_t> msa,
                                                    std::int64_t n_res,
                                                    std::span<const std::int64_t> extra_rows) {
  const auto n_seq = static_cast<std::int64_t>(bert_msa.size()) / std::max<std::int64_t>(n_res, 1);
  const auto n_extra = static_cast<std::int64_t>(extra_rows.size());
  // Centres with gap and mask tokens replaced by a byte no extra row holds, so that a byte
  // compare counts exactly the weighted agreement (weights 1 for tokens 0-20, 0 otherwise).
  constexpr std::uint8_t kNoMatch = 0xFF;
  std::vector<std::uint8_t> centres(bert_msa.begin(), bert_msa.end());
  for (std::uint8_t& t : centres)
    if (t > kAf2UnknownRestype) t = kNoMatch;
  static const CountEqual count_equal = count_equal_kernel();
  std::vector<std::int32_t> assignment(static_cast<std::size_t>(n_extra), 0);
#pragma omp parallel for schedule(dynamic, 16) if (n_extra * n_seq * n_res >= (1 << 20))
  for (std::int64_t e = 0; e < n_extra; ++e) {
    const std::uint8_t* row = msa.data() + extra_rows[static_cast<std::size_t>(e)] * n_res;
    std::int64_t best = -1;
    std::int32_t best_s = 0;
    for (std::int64_t s = 0; s < n_seq; ++s) {
      const std::int64_t agree = count_equal(row, centres.data() + s * n_res, n_res);
      if (agree > best) {  // strict: the first maximum wins, as argmax
        best = agree;
        best_s = static_cast<std::int32_t>(s);
      }
    }
    assignment[static_cast<std::size_t>(e)] = best_s;
  }
  return assignment;
}

void summarize_clusters(std::span<const std::uint8_t> bert_msa, std::span<const std::uint8_t> msa,
                        std::span<const std::int32_t> deletion_matrix, std::int64_t n_res,
                        std::span<const std::int64_t> cluster_rows,
                        std::span<const std::int64_t> extra_rows,
                        std::span<const std::int32_t> assignment, const Tensor& msa_feat) {
  const auto n_seq = static_cast<std::int64_t>(cluster_rows.size());
  if (assignment.size() != extra_rows.size())
    throw InternalError("summarize_clusters: one cluster assignment per extra row expected");
  float* out = msa_feat.data_as<float>();
  auto feat = [&](std::int64_t s, std::int64_t c) {
    return out + (s * n_res + c) * kMsaFeatChannels;
  };
  // Sums of token counts and deletions go straight into the output channels (exact in f32
  // below 2^24), in extra-row order as AF2's segment sum.
  for (std::int64_t s = 0; s < n_seq; ++s)
    for (std::int64_t c = 0; c < n_res; ++c)
      std::fill(feat(s, c) + kMsaFeatClusterProfile, feat(s, c) + kMsaFeatChannels, 0.0f);
  std::vector<std::int64_t> members(static_cast<std::size_t>(n_seq), 0);
  for (std::size_t e = 0; e < extra_rows.size(); ++e) {
    const std::int64_t s = assignment[e];
    ++members[static_cast<std::size_t>(s)];
    const std::uint8_t* row = msa.data() + extra_rows[e] * n_res;
    const std::int32_t* del = deletion_matrix.data() + extra_rows[e] * n_res;
    for (std::int64_t c = 0; c < n_res; ++c) {
      float* f = feat(s, c);
      f[kMsaFeatClusterProfile + row[c]] += 1.0f;
      f[kMsaFeatDeletionMean] += static_cast<float>(del[c]);
    }
  }
  for (std::int64_t s = 0; s < n_seq; ++s) {
    // AF2: mask_counts = 1e-6 + msa_mask + segment_sum(extra_msa_mask), in f32.
    const float count = (1e-6f + 1.0f) + static_cast<float>(members[static_cast<std::size_t>(s)]);
    const std::int32_t* del =
        deletion_matrix.data() + cluster_rows[static_cast<std::size_t>(s)] * n_res;
    for (std::int64_t c = 0; c < n_res; ++c) {
      float* f = feat(s, c);
      f[kMsaFeatClusterProfile + bert_msa[static_cast<std::size_t>(s * n_res + c)]] += 1.0f;
      for (std::int64_t t = 0; t < 23; ++t) f[kMsaFeatClusterProfile + t] /= count;
      const float mean = (f[kMsaFeatDeletionMean] + static_cast<float>(del[c])) / count;
      f[kMsaFeatDeletionMean] = deletion_value(mean);
    }
  }
}

}  // namespace cpufold
