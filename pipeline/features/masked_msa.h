// Masked-MSA (BERT-style) corruption of the cluster rows and the MSA profile it draws from.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pipeline/features/feature_sampler.h"

namespace cpufold {

// AF2 make_hhblits_profile: per residue, the frequency of each of the 22 MSA tokens (AF2
// order, X = 20, gap = 21) over every raw row. `msa` is [n_msa, n_res] in AF2 order; the
// result is [n_res, 22].
std::vector<float> msa_profile(std::span<const std::uint8_t> msa, std::int64_t n_msa,
                               std::int64_t n_res);

// AF2 supplement 1.2.7 (make_masked_msa): each element of the cluster rows is replaced with
// probability `fraction` by a token drawn from 0.1 uniform over the 20 amino acids + 0.1
// profile + 0.1 the original token + 0.7 the mask token (22). `msa` is the raw MSA
// [n_msa, n_res] in AF2 order, `cluster_rows` the raw rows of the clusters; writes the
// corrupted cluster rows to `bert_msa` [cluster_rows.size(), n_res]. The uncorrupted rows
// (AF2's true_msa) are the raw rows themselves.
void make_masked_msa(std::span<const std::uint8_t> msa, std::int64_t n_res,
                     std::span<const std::int64_t> cluster_rows, std::span<const float> profile,
                     double fraction, FeatureSampler& sampler, std::span<std::uint8_t> bert_msa);

}  // namespace cpufold
