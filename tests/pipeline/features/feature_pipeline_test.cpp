// The feature pipeline: AF2's per-model configuration, shapes and arena use, MSA clustering,
// the masked fraction, single-sequence mode, and features driving the model end to end.
#include <gtest/gtest.h>

#include <cmath>

#include "io/model_config.h"
#include "memory/error.h"
#include "memory/tier.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/features/msa_clustering.h"
#include "pipeline/features/msa_feat.h"
#include "tests/pipeline/features/synthetic_msa.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

using testing::synthetic_raw;

TEST(Af2FeatureConfig, FollowsAf2ConfigDiffsPerModel) {
  struct Want {
    const char* model;
    std::int64_t clusters, extra;
    bool templates;
  };
  for (const Want& w :
       {Want{"model_1", 508, 5120, true}, Want{"model_2", 508, 1024, true},
        Want{"model_3", 512, 5120, false}, Want{"model_4", 512, 5120, false},
        Want{"model_5", 512, 1024, false}, Want{"model_1_ptm", 508, 5120, true},
        Want{"model_2_ptm", 508, 1024, true}, Want{"model_3_ptm", 512, 5120, false},
        Want{"model_4_ptm", 512, 5120, false}, Want{"model_5_ptm", 512, 1024, false}}) {
    const FeatureConfig c = af2_feature_config(w.model);
    EXPECT_EQ(c.max_msa_clusters, w.clusters) << w.model;
    EXPECT_EQ(c.max_extra_msa, w.extra) << w.model;
    EXPECT_EQ(c.templates, w.templates) << w.model;
    EXPECT_DOUBLE_EQ(c.masked_msa_fraction, 0.15) << w.model;
  }
  for (const char* bad : {"model_6", "model_1_multimer_v3", "model1", ""})
    EXPECT_THROW(af2_feature_config(bad), InputError) << bad;
}

// Counts how many positions the wrapped sampler masks.
class CountingSampler final : public FeatureSampler {
 public:
  explicit CountingSampler(FeatureSampler& inner) : inner_(inner) {}
  std::vector<std::int64_t> permutation(std::int64_t n) override { return inner_.permutation(n); }
  bool mask_position(std::int64_t row, std::int64_t col, double fraction) override {
    ++asked;
    const bool m = inner_.mask_position(row, col, fraction);
    masked += m;
    return m;
  }
  int replacement(std::int64_t row, std::int64_t col, std::span<const float> probs) override {
    return inner_.replacement(row, col, probs);
  }
  std::int64_t asked = 0, masked = 0;

 private:
  FeatureSampler& inner_;
};

TEST(FeaturePipeline, ShapesArenaUseAndMaskedFractionOnALargeMsa) {
  FeatureConfig config;
  config.max_msa_clusters = 64;
  config.max_extra_msa = 100;
  const FeaturePipeline pipeline(synthetic_raw(300, 400, 1), config);
  EXPECT_EQ(pipeline.n_seq(), 64);
  EXPECT_EQ(pipeline.n_extra(), 100);
  Arena arena("features", dram_tier(), pipeline.bytes_per_iteration());
  RandomFeatureSampler random(config.seed, 0);
  CountingSampler counting(random);
  const TrunkInputs in = pipeline.process(counting, arena);
  EXPECT_EQ(arena.used(), pipeline.bytes_per_iteration());
  EXPECT_EQ(in.msa_feat.shape(), (Shape{64, 300, 49}));
  EXPECT_EQ(in.extra_msa.shape(), (Shape{100, 300}));
  EXPECT_EQ(in.target_feat.shape(), (Shape{300, 22}));
  EXPECT_EQ(in.n_templ(), 0);
  EXPECT_EQ(counting.asked, 64 * 300);
  EXPECT_NEAR(counting.masked / double(counting.asked), 0.15, 0.01);
  // Every cluster profile is a distribution; the query stays the first cluster centre unless
  // masked, so its true tokens are the target's.
  const float* f = in.msa_feat.data_as<float>();
  for (std::int64_t i = 0; i < 64 * 300; ++i) {
    double sum = 0;
    for (int t = 0; t < 23; ++t) sum += f[i * 49 + kMsaFeatClusterProfile + t];
    ASSERT_NEAR(sum, 1.0, 1e-5) << i;
  }
}

TEST(FeaturePipeline, SameSeedSameFeaturesOtherIterationOtherSample) {
  FeatureConfig config;
  config.max_msa_clusters = 16;
  config.max_extra_msa = 32;
  const FeaturePipeline pipeline(synthetic_raw(50, 80, 2), config);
  Arena arena("features", dram_tier(), 3 * pipeline.bytes_per_iteration());
  const FeatureSource source = pipeline.source(2);
  const TrunkInputs a = source.read(1, arena), b = source.read(1, arena), c = source.read(0, arena);
  auto bytes = [](const Tensor& t) {
    const auto* p = static_cast<const unsigned char*>(t.data());
    return std::vector<unsigned char>(p, p + t.nbytes());
  };
  EXPECT_EQ(bytes(a.msa_feat), bytes(b.msa_feat));
  EXPECT_EQ(bytes(a.extra_msa), bytes(b.extra_msa));
  EXPECT_NE(bytes(a.msa_feat), bytes(c.msa_feat));
}

TEST(FeaturePipeline, SingleSequenceModeHasOneClusterAndNoExtraRows) {
  const FeaturePipeline pipeline(make_raw_features("MKVLAW", {}, {}),
                                 af2_feature_config("model_3"));
  EXPECT_EQ(pipeline.n_seq(), 1);
  EXPECT_EQ(pipeline.n_extra(), 0);
  Arena arena("features", dram_tier(), pipeline.bytes_per_iteration());
  RandomFeatureSampler sampler(0, 0);
  const TrunkInputs in = pipeline.process(sampler, arena);
  EXPECT_EQ(arena.used(), pipeline.bytes_per_iteration());
  EXPECT_EQ(in.msa_feat.shape(), (Shape{1, 6, 49}));
  EXPECT_EQ(in.extra_msa.shape(), (Shape{0, 6}));
  // Target: M K V L A W in AF2 order, after the between-segment channel.
  const std::int64_t want[] = {12, 11, 19, 10, 0, 17};
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(in.aatype.data_as<std::int64_t>()[i], want[i]);
    EXPECT_EQ(in.target_feat.data_as<float>()[i * 22 + 1 + want[i]], 1.0f);
    // The cluster profile of a lone centre is its own (possibly masked) token, 1/(1 + 1e-6).
    const float* f = in.msa_feat.data_as<float>() + i * 49;
    int token = 0;
    while (f[token] != 1.0f) ++token;
    EXPECT_EQ(f[kMsaFeatClusterProfile + token], 1.0f / (1e-6f + 1.0f));
  }
}

TEST(FeaturePipeline, FeedsOnlyTheFirstMaxTemplatesHits) {
  RawFeatures raw = make_raw_features("MKVLAW", {}, {});
  RawTemplates& t = raw.templates;
  t.n_templ = 6;
  t.n_res = 6;
  t.aatype_one_hot.assign(6 * 6 * 22, 0.0f);
  for (std::int64_t h = 0; h < 6; ++h)
    for (std::int64_t i = 0; i < 6; ++i) t.aatype_one_hot[(h * 6 + i) * 22 + h] = 1.0f;
  t.all_atom_positions.assign(6 * 6 * 37 * 3, 0.0f);
  t.all_atom_mask.assign(6 * 6 * 37, 0.0f);
  t.sum_probs = {6, 5, 4, 3, 2, 1};
  FeatureConfig config = af2_feature_config("model_1");
  const FeaturePipeline pipeline(raw, config);
  ASSERT_EQ(pipeline.n_templ(), 4);
  Arena arena("features", dram_tier(), pipeline.bytes_per_iteration());
  RandomFeatureSampler sampler(0, 0);
  const TrunkInputs in = pipeline.process(sampler, arena);
  ASSERT_EQ(in.n_templ(), 4);
  // Hit h is residue type h in HHblits order (A C D E): AF2 order A=0, C=4, D=3, E=6.
  const std::int64_t want[] = {0, 4, 3, 6};
  for (std::int64_t h = 0; h < 4; ++h)
    EXPECT_EQ(in.template_aatype.data_as<std::int64_t>()[h * 6], want[h]) << "hit " << h;
  config.max_templates = -1;
  EXPECT_THROW(FeaturePipeline(raw, config), InputError);
}

TEST(MsaClustering, AgreementIgnoresGapsAndMaskTokensAndTiesGoFirst) {
  const std::int64_t n = 4;
  // Centres (already corrupted): 0 = A A - -, 1 = A A C C (mask at col 3 below), 2 = - - C C.
  const std::vector<std::uint8_t> bert = {0, 0, 21, 21, 0, 0, 4, 22, 21, 21, 4, 4};
  // Raw rows: 0 = A A C C (agrees 2 / 3 / 2), 1 = - - - - (0 / 0 / 0: first wins),
  // 2 = C C C C (0 / 1 / 2), 3 = A - C - (1 / 2 / 1).
  const std::vector<std::uint8_t> msa = {0, 0, 4, 4, 21, 21, 21, 21, 4, 4, 4, 4, 0, 21, 4, 21};
  const std::vector<std::int64_t> extra = {0, 1, 2, 3};
  EXPECT_EQ(nearest_neighbor_clusters(bert, msa, n, extra),
            (std::vector<std::int32_t>{1, 0, 2, 1}));
}

TEST(MsaClustering, VectorisedAgreementEqualsTheDefinitionOnLongRows) {
  // 9000 columns: more than 255 vector blocks per counter flush, and a ragged tail.
  const std::int64_t n = 9000, n_centres = 5, n_rows = 12;
  std::uint64_t x = 99;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(x >> 33);
  };
  std::vector<std::uint8_t> bert(static_cast<std::size_t>(n_centres * n));
  for (auto& t : bert) t = static_cast<std::uint8_t>(next() % 23);
  // Raw rows: mutated copies of the centres (high agreement), so counters would wrap if the
  // flush were wrong.
  std::vector<std::uint8_t> msa(static_cast<std::size_t>(n_rows * n));
  for (std::int64_t r = 0; r < n_rows; ++r)
    for (std::int64_t c = 0; c < n; ++c) {
      const std::uint8_t centre = bert[static_cast<std::size_t>((r % n_centres) * n + c)];
      msa[static_cast<std::size_t>(r * n + c)] =
          next() % 4 == 0 || centre > 21 ? static_cast<std::uint8_t>(next() % 22) : centre;
    }
  std::vector<std::int64_t> extra(static_cast<std::size_t>(n_rows));
  for (std::int64_t r = 0; r < n_rows; ++r) extra[static_cast<std::size_t>(r)] = r;
  std::vector<std::int32_t> want;
  for (std::int64_t r = 0; r < n_rows; ++r) {
    std::int64_t best = -1;
    std::int32_t best_s = 0;
    for (std::int64_t s = 0; s < n_centres; ++s) {
      std::int64_t agree = 0;
      for (std::int64_t c = 0; c < n; ++c) {
        const auto t = bert[static_cast<std::size_t>(s * n + c)];
        agree += t <= 20 && t == msa[static_cast<std::size_t>(r * n + c)];
      }
      if (agree > best) {
        best = agree;
        best_s = static_cast<std::int32_t>(s);
      }
    }
    want.push_back(best_s);
  }
  EXPECT_EQ(nearest_neighbor_clusters(bert, msa, n, extra), want);
}

TEST(MsaClustering, ProfilesCountTheCentreAndItsMembers) {
  const std::int64_t n = 2;
  const std::vector<std::uint8_t> bert = {0, 22, 5, 5};       // centres: A [MASK], G G
  const std::vector<std::uint8_t> msa = {0, 0, 5, 5, 0, 21};  // raw rows 0 (A A), 1 (G G), 2 (A -)
  const std::vector<std::int32_t> deletions = {0, 0, 0, 2, 4, 0};
  const std::vector<std::int64_t> clusters = {0, 1}, extra = {2};
  const std::vector<std::int32_t> assignment = {0};
  std::vector<float> feat(2 * n * 49, -1.0f);
  const Tensor t(feat.data(), DType::f32, Shape{2, n, 49});
  summarize_clusters(bert, msa, deletions, n, clusters, extra, assignment, t);
  const float two = (1e-6f + 1.0f) + 1.0f, one = (1e-6f + 1.0f) + 0.0f;
  // Cluster 0, column 0: A (centre) + A (member); column 1: [MASK] + gap.
  EXPECT_EQ(feat[kMsaFeatClusterProfile + 0], 2.0f / two);
  EXPECT_EQ(feat[49 + kMsaFeatClusterProfile + 22], 1.0f / two);
  EXPECT_EQ(feat[49 + kMsaFeatClusterProfile + 21], 1.0f / two);
  EXPECT_EQ(feat[kMsaFeatDeletionMean], deletion_value(4.0f / two));
  // Cluster 1, column 1: G alone, deletion 2.
  EXPECT_EQ(feat[3 * 49 + kMsaFeatClusterProfile + 5], 1.0f / one);
  EXPECT_EQ(feat[3 * 49 + kMsaFeatDeletionMean], deletion_value(2.0f / one));
  EXPECT_EQ(feat[3 * 49 + 0], -1.0f);  // channels 0-24 are make_msa_feat's
}

}  // namespace
}  // namespace cpufold
