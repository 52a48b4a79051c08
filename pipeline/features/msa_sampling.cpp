#include "pipeline/features/msa_sampling.h"

#include <algorithm>
#include <string>

#include "memory/error.h"

namespace cpufold {

void check_permutation(std::span<const std::int64_t> p, std::int64_t n, const char* what) {
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), false);
  bool ok = static_cast<std::int64_t>(p.size()) == n;
  for (std::size_t i = 0; ok && i < p.size(); ++i) {
    ok = p[i] >= 0 && p[i] < n && !seen[static_cast<std::size_t>(p[i])];
    if (ok) seen[static_cast<std::size_t>(p[i])] = true;
  }
  if (!ok) {
    throw InternalError(std::string(what) + ": the sampler returned no permutation of " +
                        std::to_string(n) + " elements");
  }
}

MsaSample sample_msa(std::int64_t n_msa, std::int64_t max_clusters, FeatureSampler& sampler) {
  if (n_msa < 1) throw InternalError("sample_msa on an MSA without rows");
  if (max_clusters < 1) {
    throw InputError("the number of MSA clusters must be at least 1 (got " +
                     std::to_string(max_clusters) + ")");
  }
  const std::vector<std::int64_t> shuffled = sampler.permutation(n_msa - 1);
  check_permutation(shuffled, n_msa - 1, "sample_msa");
  const std::int64_t n_clusters = std::min(max_clusters, n_msa);
  MsaSample s;
  s.cluster_rows.reserve(static_cast<std::size_t>(n_clusters));
  s.extra_rows.reserve(static_cast<std::size_t>(n_msa - n_clusters));
  s.cluster_rows.push_back(0);
  for (std::int64_t i = 0; i + 1 < n_msa; ++i) {
    const std::int64_t row = shuffled[static_cast<std::size_t>(i)] + 1;
    (i + 1 < n_clusters ? s.cluster_rows : s.extra_rows).push_back(row);
  }
  return s;
}

std::vector<std::int64_t> crop_extra_msa(std::span<const std::int64_t> extra_rows,
                                         std::int64_t max_extra, FeatureSampler& sampler) {
  const auto n = static_cast<std::int64_t>(extra_rows.size());
  const std::vector<std::int64_t> order = sampler.permutation(n);
  check_permutation(order, n, "crop_extra_msa");
  const std::int64_t keep = std::clamp<std::int64_t>(max_extra, 0, n);
  std::vector<std::int64_t> kept(static_cast<std::size_t>(keep));
  for (std::int64_t i = 0; i < keep; ++i)
    kept[static_cast<std::size_t>(i)] =
        extra_rows[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])];
  return kept;
}

}  // namespace cpufold
