// The seeded sampler of the feature pipeline: deterministic, valid permutations, the masked
// fraction AF2 asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "pipeline/features/feature_sampler.h"
#include "pipeline/features/msa_sampling.h"

namespace cpufold {
namespace {

TEST(RandomFeatureSampler, SameSeedAndIterationGiveTheSameDraws) {
  RandomFeatureSampler a(7, 2), b(7, 2), c(7, 3), d(8, 2);
  const auto pa = a.permutation(100);
  EXPECT_EQ(pa, b.permutation(100));
  EXPECT_NE(pa, c.permutation(100));
  EXPECT_NE(pa, d.permutation(100));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.mask_position(0, i, 0.5), b.mask_position(0, i, 0.5));
}

TEST(RandomFeatureSampler, DrawsArePinnedAcrossPlatforms) {
  // splitmix64 and integer arithmetic only: these values must never change between machines
  // (a change here changes every prediction's features). Computed independently in Python.
  RandomFeatureSampler s(0, 0);
  const auto p = s.permutation(10);
  RandomFeatureSampler again(0, 0);
  EXPECT_EQ(again.permutation(10), p);
  const std::vector<std::int64_t> pinned = {0, 1, 4, 6, 3, 9, 8, 7, 2, 5};
  EXPECT_EQ(p, pinned);
}

TEST(RandomFeatureSampler, PermutationsAreValid) {
  RandomFeatureSampler s(1, 0);
  for (std::int64_t n : {0, 1, 2, 7, 255, 1000}) {
    const auto p = s.permutation(n);
    EXPECT_NO_THROW(check_permutation(p, n, "test")) << n;
  }
}

TEST(RandomFeatureSampler, PermutationsAreRoughlyUniform) {
  // Position of element 0 in permutations of 4: each of the 4 places about 1/4 of the time.
  RandomFeatureSampler s(3, 0);
  std::vector<int> where(4, 0);
  const int trials = 20000;
  for (int t = 0; t < trials; ++t) {
    const auto p = s.permutation(4);
    ++where[static_cast<std::size_t>(std::find(p.begin(), p.end(), 0) - p.begin())];
  }
  for (int w : where) EXPECT_NEAR(w / double(trials), 0.25, 0.015);
}

TEST(RandomFeatureSampler, ReplacementNeverDrawsAZeroProbabilityToken) {
  RandomFeatureSampler s(5, 1);
  std::vector<float> probs(23, 0.0f);
  probs[3] = 0.25f;
  probs[22] = 0.75f;
  int mask = 0;
  const int trials = 20000;
  for (int t = 0; t < trials; ++t) {
    const int token = s.replacement(0, 0, probs);
    ASSERT_TRUE(token == 3 || token == 22) << token;
    mask += token == 22;
  }
  EXPECT_NEAR(mask / double(trials), 0.75, 0.015);
}

TEST(MsaSampling, QueryFirstClustersThenExtraRows) {
  RandomFeatureSampler s(11, 0);
  const MsaSample sample = sample_msa(20, 5, s);
  ASSERT_EQ(sample.cluster_rows.size(), 5u);
  ASSERT_EQ(sample.extra_rows.size(), 15u);
  EXPECT_EQ(sample.cluster_rows[0], 0);
  std::vector<std::int64_t> all = sample.cluster_rows;
  all.insert(all.end(), sample.extra_rows.begin(), sample.extra_rows.end());
  EXPECT_NO_THROW(check_permutation(all, 20, "test"));
  const auto kept = crop_extra_msa(sample.extra_rows, 4, s);
  ASSERT_EQ(kept.size(), 4u);
  for (std::int64_t r : kept)
    EXPECT_NE(std::find(sample.extra_rows.begin(), sample.extra_rows.end(), r),
              sample.extra_rows.end());
  // Fewer rows than clusters: every row is a cluster centre.
  const MsaSample small = sample_msa(3, 5, s);
  EXPECT_EQ(small.cluster_rows.size(), 3u);
  EXPECT_TRUE(small.extra_rows.empty());
}

}  // namespace
}  // namespace cpufold
