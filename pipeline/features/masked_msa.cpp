#include "pipeline/features/masked_msa.h"

#include <array>

#include "memory/error.h"
#include "pipeline/features/hhblits_alphabet.h"

namespace cpufold {

std::vector<float> msa_profile(std::span<const std::uint8_t> msa, std::int64_t n_msa,
                               std::int64_t n_res) {
  constexpr std::int64_t kTokens = 22;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n_res * kTokens), 0);
  for (std::int64_t r = 0; r < n_msa; ++r) {
    const std::uint8_t* row = msa.data() + r * n_res;
    for (std::int64_t c = 0; c < n_res; ++c)
      ++counts[static_cast<std::size_t>(c * kTokens + row[c])];
  }
  // As torch.mean: the float sum divided by the row count.
  std::vector<float> profile(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i)
    profile[i] = static_cast<float>(counts[i]) / static_cast<float>(n_msa);
  return profile;
}

void make_masked_msa(std::span<const std::uint8_t> msa, std::int64_t n_res,
                     std::span<const std::int64_t> cluster_rows, std::span<const float> profile,
                     double fraction, FeatureSampler& sampler, std::span<std::uint8_t> bert_msa) {
  // AF2 config data.common.masked_msa: uniform_prob, profile_prob, same_prob 0.1 each.
  constexpr float kUniform = 0.1f, kProfile = 0.1f, kSame = 0.1f;
  constexpr float kMask = 1.0f - kUniform - kProfile - kSame;
  const auto n_seq = static_cast<std::int64_t>(cluster_rows.size());
  if (static_cast<std::int64_t>(bert_msa.size()) != n_seq * n_res)
    throw InternalError("make_masked_msa: output size does not match the cluster rows");
  std::array<float, 23> probs{};
  for (std::int64_t s = 0; s < n_seq; ++s) {
    const std::uint8_t* src = msa.data() + cluster_rows[static_cast<std::size_t>(s)] * n_res;
    std::uint8_t* dst = bert_msa.data() + s * n_res;
    for (std::int64_t c = 0; c < n_res; ++c) {
      dst[c] = src[c];
      if (!sampler.mask_position(s, c, fraction)) continue;
      const float* p = profile.data() + c * 22;
      for (int t = 0; t < 22; ++t)
        probs[static_cast<std::size_t>(t)] = (t < 20 ? kUniform * 0.05f : 0.0f) + kProfile * p[t];
      probs[src[c]] += kSame;
      probs[kMsaMaskToken] = kMask;
      const int token = sampler.replacement(s, c, probs);
      if (token < 0 || token > kMsaMaskToken)
        throw InternalError("masked-MSA replacement token " + std::to_string(token) +
                            " out of range");
      dst[c] = static_cast<std::uint8_t>(token);
    }
  }
}

}  // namespace cpufold
