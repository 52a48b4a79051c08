// Random processed AF2 features of given sizes, generated in-process (as
// scripts/make_bench_features.py writes them to a file): realistic shapes and value ranges from
// a fixed seed. The numbers mean nothing; `cpufold profile` needs only their sizes.
#pragma once

#include <cstdint>

#include "pipeline/features/feature_source.h"

namespace cpufold {

struct SyntheticSizes {
  std::int64_t n_res = 0, msa_rows = 0, extra_rows = 0, templates = 0;
  std::int64_t iterations = 1;  // feature samples the source holds (recycles + 1)
};

// Iteration k's features come from seed `seed` + k. InputError when a size is below 1
// (templates: below 0).
FeatureSource synthetic_feature_source(const SyntheticSizes& sizes, std::uint32_t seed = 2024);

}  // namespace cpufold
