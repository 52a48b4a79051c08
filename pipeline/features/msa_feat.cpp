#include "pipeline/features/msa_feat.h"

#include <algorithm>

namespace cpufold {

void make_msa_feat(std::span<const std::uint8_t> bert_msa,
                   std::span<const std::int32_t> deletion_matrix, std::int64_t n_res,
                   std::span<const std::int64_t> cluster_rows, const Tensor& msa_feat) {
  float* out = msa_feat.data_as<float>();
  const auto n_seq = static_cast<std::int64_t>(cluster_rows.size());
  for (std::int64_t s = 0; s < n_seq; ++s) {
    const std::int32_t* del =
        deletion_matrix.data() + cluster_rows[static_cast<std::size_t>(s)] * n_res;
    for (std::int64_t c = 0; c < n_res; ++c) {
      float* f = out + (s * n_res + c) * kMsaFeatChannels;
      std::fill(f, f + kMsaFeatClusterProfile, 0.0f);
      f[bert_msa[static_cast<std::size_t>(s * n_res + c)]] = 1.0f;
      const auto d = static_cast<float>(del[c]);
      f[kMsaFeatHasDeletion] = std::clamp(d, 0.0f, 1.0f);
      f[kMsaFeatDeletionValue] = deletion_value(d);
    }
  }
}

void make_target_feat(std::span<const std::int32_t> aatype, const Tensor& target_feat) {
  float* out = target_feat.data_as<float>();
  const auto n_res = static_cast<std::int64_t>(aatype.size());
  std::fill(out, out + n_res * kTargetFeatChannels, 0.0f);
  for (std::int64_t i = 0; i < n_res; ++i)
    out[i * kTargetFeatChannels + 1 + aatype[static_cast<std::size_t>(i)]] = 1.0f;
}

void make_extra_msa_features(std::span<const std::uint8_t> msa,
                             std::span<const std::int32_t> deletion_matrix, std::int64_t n_res,
                             std::span<const std::int64_t> rows, const Tensor& extra_msa,
                             const Tensor& extra_has_deletion, const Tensor& extra_deletion_value) {
  std::int64_t* tokens = extra_msa.data_as<std::int64_t>();
  float* has_del = extra_has_deletion.data_as<float>();
  float* del_value = extra_deletion_value.data_as<float>();
  for (std::size_t e = 0; e < rows.size(); ++e) {
    const std::uint8_t* src = msa.data() + rows[e] * n_res;
    const std::int32_t* del = deletion_matrix.data() + rows[e] * n_res;
    const auto base = static_cast<std::int64_t>(e) * n_res;
    for (std::int64_t c = 0; c < n_res; ++c) {
      tokens[base + c] = src[c];
      const auto d = static_cast<float>(del[c]);
      has_del[base + c] = std::clamp(d, 0.0f, 1.0f);
      del_value[base + c] = deletion_value(d);
    }
  }
}

}  // namespace cpufold
