// The feature pipeline reproduces the reference's processed features (inputs/) from its raw
// features (raw_features/) when it makes the same random choices. A replay sampler recovers
// those choices from inputs/ of each recycling iteration and fails the test when a recovered
// choice is impossible.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "io/hdf5_tensor_file.h"
#include "memory/tier.h"
#include "pipeline/features/feature_pipeline.h"
#include "pipeline/features/hhblits_alphabet.h"
#include "pipeline/features/msa_feat.h"
#include "tests/support/parity.h"
#include "tests/support/reference_cases.h"

namespace cpufold {
namespace {

// inputs/<name> (recycling dimension last) at iteration k, with its per-iteration shape.
struct Slice {
  std::vector<float> values;
  Shape shape;
};

Slice read_iteration(const Hdf5TensorReader& file, const std::string& name, std::int64_t k) {
  const Shape full = file.shape(name);
  const std::vector<float> all = file.read_f32(name);
  const std::int64_t iterations = full[full.rank() - 1];
  Slice s;
  for (int a = 0; a + 1 < full.rank(); ++a) s.shape.push_back(full[a]);
  s.values.resize(static_cast<std::size_t>(s.shape.numel()));
  for (std::size_t i = 0; i < s.values.size(); ++i)
    s.values[i] = all[i * static_cast<std::size_t>(iterations) + static_cast<std::size_t>(k)];
  return s;
}

// Replays the reference's random choices of iteration k.
class ReplaySampler final : public FeatureSampler {
 public:
  ReplaySampler(const RawFeatures& raw, const Hdf5TensorReader& file, std::int64_t k)
      : raw_(raw), n_res_(raw.n_res) {
    true_msa_ = read_iteration(file, "inputs/true_msa", k);
    msa_feat_ = read_iteration(file, "inputs/msa_feat", k);
    bert_mask_ = read_iteration(file, "inputs/bert_mask", k);
    const Slice extra_msa = read_iteration(file, "inputs/extra_msa", k);
    const Slice extra_del = read_iteration(file, "inputs/extra_deletion_value", k);
    n_seq_ = true_msa_.shape[0];
    const std::int64_t n_extra = extra_msa.shape[0];

    used_.assign(static_cast<std::size_t>(raw.n_msa), false);
    std::vector<float> cluster_del(static_cast<std::size_t>(n_seq_ * n_res_));
    for (std::int64_t i = 0; i < n_seq_ * n_res_; ++i)
      cluster_del[static_cast<std::size_t>(i)] =
          msa_feat_.values[static_cast<std::size_t>(i * kMsaFeatChannels + kMsaFeatDeletionValue)];
    for (std::int64_t s = 0; s < n_seq_; ++s) {
      const std::int64_t row = match(true_msa_.values, cluster_del, s, "cluster");
      if (row < 0) return;
      if (s == 0 && row != 0) {
        fail("cluster row 0 is raw row ", row, ", not the query");
        return;
      }
      clusters_.push_back(row);
    }
    for (std::int64_t e = 0; e < n_extra; ++e) {
      const std::int64_t row = match(extra_msa.values, extra_del.values, e, "extra");
      if (row < 0) return;
      extras_.push_back(row);
    }
    for (std::int64_t r = 1; r < raw.n_msa; ++r)  // rows dropped by crop_extra_msa, any order
      if (!used_[static_cast<std::size_t>(r)]) extras_.push_back(r);
    recovered_ = true;
  }

  bool recovered() const { return recovered_; }

  std::vector<std::int64_t> permutation(std::int64_t n) override {
    std::vector<std::int64_t> p;
    if (calls_ == 0) {  // sample_msa: the other rows, cluster centres first
      expect_count(n, raw_.n_msa - 1, "sample_msa");
      for (std::size_t i = 1; i < clusters_.size(); ++i) p.push_back(clusters_[i] - 1);
      for (std::int64_t r : extras_) p.push_back(r - 1);
    } else if (calls_ == 1) {  // crop_extra_msa: the kept rows are already first
      expect_count(n, raw_.n_msa - n_seq_, "crop_extra_msa");
      for (std::int64_t i = 0; i < n; ++i) p.push_back(i);
    } else {
      fail("permutation asked for a third time (n = ", n, ")");
    }
    ++calls_;
    return p;
  }

  bool mask_position(std::int64_t row, std::int64_t col, double) override {
    if (row >= n_seq_ || col >= n_res_) {
      fail("mask_position(", row, ", ", col, ") outside the cluster rows");
      return false;
    }
    return bert_mask_.values[static_cast<std::size_t>(row * n_res_ + col)] != 0;
  }

  int replacement(std::int64_t row, std::int64_t col, std::span<const float> probs) override {
    const float* f = msa_feat_.values.data() + (row * n_res_ + col) * kMsaFeatChannels;
    int token = -1;
    for (int t = 0; t < 23; ++t) {
      if (f[t] == 1.0f) {
        if (token >= 0) fail("msa_feat one-hot at (", row, ", ", col, ") is not one-hot");
        token = t;
      }
    }
    if (token < 0) {
      fail("msa_feat at (", row, ", ", col, ") holds no token");
      return 0;
    }
    if (!(probs[static_cast<std::size_t>(token)] > 0)) {
      fail("the reference replaced (", row, ", ", col, ") by token ", token,
           ", which has probability ", probs[static_cast<std::size_t>(token)]);
    }
    return token;
  }

 private:
  // Records an impossible choice: the test fails, never adapts.
  template <typename... Parts>
  void fail(const Parts&... parts) {
    std::ostringstream msg;
    (msg << ... << parts);
    ADD_FAILURE() << "replay: " << msg.str();
    recovered_ = false;
  }

  void expect_count(std::int64_t n, std::int64_t want, const char* what) {
    if (n != want)
      ADD_FAILURE() << what << " asked for a permutation of " << n << ", expected " << want;
  }

  // The first unused raw row whose tokens (AF2 order) and deletion values equal row `i` of the
  // reference's `tokens` / `del_values` [*, n_res]; -1 (and a failure) when none does.
  std::int64_t match(const std::vector<float>& tokens, const std::vector<float>& del_values,
                     std::int64_t i, const char* what) {
    for (std::int64_t r = 0; r < raw_.n_msa; ++r) {
      if (used_[static_cast<std::size_t>(r)]) continue;
      bool same = true;
      for (std::int64_t c = 0; same && c < n_res_; ++c) {
        const auto cell = static_cast<std::size_t>(r * n_res_ + c);
        const auto ref = static_cast<std::size_t>(i * n_res_ + c);
        same = kHhblitsToAf2[static_cast<std::size_t>(raw_.msa[cell])] == tokens[ref] &&
               std::fabs(deletion_value(static_cast<float>(raw_.deletion_matrix[cell])) -
                         del_values[ref]) <= 1e-6f;
      }
      if (same) {
        used_[static_cast<std::size_t>(r)] = true;
        return r;
      }
    }
    ADD_FAILURE() << "replay: " << what << " row " << i
                  << " of the reference matches no unused raw row";
    recovered_ = false;
    return -1;
  }

  const RawFeatures& raw_;
  std::int64_t n_res_, n_seq_ = 0;
  Slice true_msa_, msa_feat_, bert_mask_;
  std::vector<bool> used_;
  std::vector<std::int64_t> clusters_, extras_;
  int calls_ = 0;
  bool recovered_ = false;
};

struct Compared {
  const char* name;
  Tensor TrunkInputs::*field;
  testing::Tolerance tol;
  bool template_feature;
};

const Compared kCompared[] = {
    {"aatype", &TrunkInputs::aatype, testing::kExactTolerance, false},
    {"residue_index", &TrunkInputs::residue_index, testing::kExactTolerance, false},
    {"seq_mask", &TrunkInputs::seq_mask, testing::kExactTolerance, false},
    {"target_feat", &TrunkInputs::target_feat, testing::kExactTolerance, false},
    {"msa_feat", &TrunkInputs::msa_feat, testing::kFeatureTolerance, false},
    {"msa_mask", &TrunkInputs::msa_mask, testing::kExactTolerance, false},
    {"extra_msa", &TrunkInputs::extra_msa, testing::kExactTolerance, false},
    {"extra_has_deletion", &TrunkInputs::extra_has_deletion, testing::kExactTolerance, false},
    {"extra_deletion_value", &TrunkInputs::extra_deletion_value, testing::kFeatureTolerance, false},
    {"extra_msa_mask", &TrunkInputs::extra_msa_mask, testing::kExactTolerance, false},
    {"template_aatype", &TrunkInputs::template_aatype, testing::kExactTolerance, true},
    {"template_all_atom_positions", &TrunkInputs::template_all_atom_positions,
     testing::kFeatureTolerance, true},
    {"template_all_atom_mask", &TrunkInputs::template_all_atom_mask, testing::kExactTolerance,
     true},
    {"template_mask", &TrunkInputs::template_mask, testing::kExactTolerance, true},
    {"template_pseudo_beta", &TrunkInputs::template_pseudo_beta, testing::kFeatureTolerance, true},
    {"template_pseudo_beta_mask", &TrunkInputs::template_pseudo_beta_mask, testing::kExactTolerance,
     true},
    {"template_torsion_angles_sin_cos", &TrunkInputs::template_torsion_angles_sin_cos,
     testing::kFeatureTolerance, true},
    {"template_alt_torsion_angles_sin_cos", &TrunkInputs::template_alt_torsion_angles_sin_cos,
     testing::kFeatureTolerance, true},
    {"template_torsion_angles_mask", &TrunkInputs::template_torsion_angles_mask,
     testing::kExactTolerance, true},
};

class FeaturePipelineParity : public ::testing::TestWithParam<testing::ReferenceCase> {};

TEST_P(FeaturePipelineParity, EveryIterationMatchesTheReferenceInputs) {
  const testing::ResolvedCase rc = testing::resolve(GetParam());
  if (rc.skip) GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set";
  ASSERT_FALSE(rc.reference.empty());
  const Hdf5TensorReader file(rc.reference);
  const RawFeatures raw = read_raw_features(file);
  const auto data_config = nlohmann::json::parse(file.root_attribute("data_config_json"));
  FeatureConfig config;
  config.max_msa_clusters = data_config.at("max_msa_clusters").get<std::int64_t>();
  config.max_extra_msa = data_config.at("max_extra_msa").get<std::int64_t>();
  config.masked_msa_fraction = data_config.at("masked_msa_replace_fraction").get<double>();
  config.templates = file.has("inputs/template_aatype");
  const FeaturePipeline pipeline(raw, config);
  ASSERT_EQ(pipeline.n_seq(), file.shape("inputs/msa_feat")[0]);
  ASSERT_EQ(pipeline.n_extra(), file.shape("inputs/extra_msa")[0]);
  ASSERT_EQ(config.templates, raw.templates.n_templ > 0);

  const std::int64_t iterations = file.shape("inputs/aatype")[1];
  Arena arena("features", dram_tier(), pipeline.bytes_per_iteration());
  for (std::int64_t k = 0; k < iterations; ++k) {
    SCOPED_TRACE("iteration " + std::to_string(k));
    ReplaySampler replay(raw, file, k);
    ASSERT_TRUE(replay.recovered());
    ArenaScope scope(arena);
    const TrunkInputs in = pipeline.process(replay, arena);
    ASSERT_TRUE(replay.recovered()) << "a replayed choice was impossible";
    EXPECT_EQ(arena.used(), pipeline.bytes_per_iteration());
    for (const Compared& c : kCompared) {
      if (c.template_feature && !config.templates) continue;
      const std::string name = std::string("inputs/") + c.name;
      const Slice ref = read_iteration(file, name, k);
      EXPECT_TRUE(testing::matches_reference(name, in.*c.field, ref.values, ref.shape, c.tol));
    }
  }
}

// The replay fails the test instead of adapting when a recovered choice is impossible.
TEST(FeaturePipelineReplay, ImpossibleChoicesFailTheTest) {
  const Hdf5TensorReader file(testing::tiny_reference("model_3_ptm_r24_c8_e16_t0_rec1_s0.h5"));
  const RawFeatures raw = read_raw_features(file);
  {
    ReplaySampler replay(raw, file, 0);
    ASSERT_TRUE(replay.recovered());
    const std::vector<float> zero(23, 0.0f);
    EXPECT_NONFATAL_FAILURE(replay.replacement(0, 0, zero), "which has probability 0");
    EXPECT_FALSE(replay.recovered());
  }
  RawFeatures changed = raw;
  for (std::int64_t r = 1; r < changed.n_msa; ++r)
    changed.deletion_matrix[static_cast<std::size_t>(r * changed.n_res)] += 100;
  EXPECT_NONFATAL_FAILURE(
      {
        ReplaySampler replay(changed, file, 0);
        EXPECT_FALSE(replay.recovered());
      },
      "matches no unused raw row");
}

INSTANTIATE_TEST_SUITE_P(ReferenceFiles, FeaturePipelineParity,
                         ::testing::ValuesIn(testing::all_cases()),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace cpufold
