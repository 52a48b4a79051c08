// The model's MSA and target features from the sampled, corrupted rows (AF2 make_msa_feat).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>

#include "memory/tensor.h"

namespace cpufold {

// msa_feat channels (AF2 supplement 1.2.9, Table 1): one-hot of the corrupted token (23),
// has_deletion, deletion_value, cluster_profile (23), cluster deletion_mean_value.
inline constexpr std::int64_t kMsaFeatChannels = 49;
inline constexpr std::int64_t kMsaFeatHasDeletion = 23;
inline constexpr std::int64_t kMsaFeatDeletionValue = 24;
inline constexpr std::int64_t kMsaFeatClusterProfile = 25;
inline constexpr std::int64_t kMsaFeatDeletionMean = 48;
inline constexpr std::int64_t kTargetFeatChannels = 22;

// AF2 deletion_value: 2/pi * atan(d / 3), in float32 as AF2 computes it.
inline float deletion_value(float d) {
  const float q = d / 3.0f;
  return static_cast<float>(std::atan(static_cast<double>(q))) *
         static_cast<float>(2.0 / std::numbers::pi);
}

// Channels 0-24 of msa_feat [n_seq, n_res, 49] (f32, contiguous) for the cluster rows:
// one-hot of `bert_msa` [n_seq, n_res], has_deletion and deletion_value of the rows'
// deletions (`deletion_matrix` is the raw [n_msa, n_res] matrix, `cluster_rows` its rows).
// The cluster channels 25-48 are summarize_clusters'.
void make_msa_feat(std::span<const std::uint8_t> bert_msa,
                   std::span<const std::int32_t> deletion_matrix, std::int64_t n_res,
                   std::span<const std::int64_t> cluster_rows, const Tensor& msa_feat);

// AF2 target_feat [n_res, 22]: between_segment_residues (0 for a single chain) and the
// one-hot of `aatype` (AF2 order, 21 classes with X).
void make_target_feat(std::span<const std::int32_t> aatype, const Tensor& target_feat);

// The extra-MSA stack's inputs for `rows` of the raw MSA (AF2 order): extra_msa tokens (i64),
// extra_has_deletion and extra_deletion_value (f32), all [rows.size(), n_res].
void make_extra_msa_features(std::span<const std::uint8_t> msa,
                             std::span<const std::int32_t> deletion_matrix, std::int64_t n_res,
                             std::span<const std::int64_t> rows, const Tensor& extra_msa,
                             const Tensor& extra_has_deletion, const Tensor& extra_deletion_value);

}  // namespace cpufold
