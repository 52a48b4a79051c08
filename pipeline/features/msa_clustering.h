// MSA clustering: every extra row joins its nearest cluster centre, and each cluster is
// summarised into a profile and a mean deletion count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memory/tensor.h"

namespace cpufold {

// AF2 supplement 1.2.7 MSA clustering (nearest_neighbor_clusters): for each raw row in
// `extra_rows`, the index of the cluster centre (rows of `bert_msa` [n_seq, n_res], after
// masked-MSA corruption) it agrees with at most columns, counting only amino acids and X
// (gaps and mask tokens weigh 0); ties go to the first centre. `msa` is the raw MSA in AF2
// order. A byte-compare loop, parallel over extra rows (OpenMP).
std::vector<std::int32_t> nearest_neighbor_clusters(std::span<const std::uint8_t> bert_msa,
                                                    std::span<const std::uint8_t> msa,
                                                    std::int64_t n_res,
                                                    std::span<const std::int64_t> extra_rows);

// AF2 summarize_clusters, written into channels 25-48 of msa_feat [n_seq, n_res, 49]: the
// cluster profile (23 tokens; centre included, with its corrupted token) and
// deletion_mean_value (2/pi atan(mean deletions / 3), centre included). `assignment[e]` is
// the cluster of raw row extra_rows[e].
void summarize_clusters(std::span<const std::uint8_t> bert_msa, std::span<const std::uint8_t> msa,
                        std::span<const std::int32_t> deletion_matrix, std::int64_t n_res,
                        std::span<const std::int64_t> cluster_rows,
                        std::span<const std::int64_t> extra_rows,
                        std::span<const std::int32_t> assignment, const Tensor& msa_feat);

}  // namespace cpufold
