// Which raw MSA rows become cluster centres and extra rows in one recycling iteration.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pipeline/features/feature_sampler.h"

namespace cpufold {

struct MsaSample {
  std::vector<std::int64_t> cluster_rows;  // raw row of each cluster centre; [0] is the query
  std::vector<std::int64_t> extra_rows;    // every other raw row, in sampled order
};

// AF2 supplement 1.2.7 (sample_msa): the query stays first, the other rows are shuffled; the
// first min(max_clusters, n_msa) rows are cluster centres, the rest extra rows.
// One sampler.permutation(n_msa - 1) call. InternalError when it is not a permutation.
MsaSample sample_msa(std::int64_t n_msa, std::int64_t max_clusters, FeatureSampler& sampler);

// AF2 crop_extra_msa: a second shuffle of `extra_rows`, keeping the first max_extra.
// One sampler.permutation(extra_rows.size()) call.
std::vector<std::int64_t> crop_extra_msa(std::span<const std::int64_t> extra_rows,
                                         std::int64_t max_extra, FeatureSampler& sampler);

// Throws InternalError unless `p` holds each of 0..n-1 once (`what` names the caller).
void check_permutation(std::span<const std::int64_t> p, std::int64_t n, const char* what);

}  // namespace cpufold
