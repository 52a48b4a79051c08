// What the predict options mean for one batch run: its checkpoints and its per-recycle checks.
#include "pipeline/batch/run_settings.h"

#include <gtest/gtest.h>

#include <vector>

namespace cpufold {
namespace {

// colabfold_batch overrides AF2's per-model depths (508 clusters for models 1 and 2, 1024 extra
// rows for models 2 and 5) with 512 and 5120 for every monomer model.
TEST(RunSettingsTest, MsaDepthsAreColabfoldsForEveryModelUnlessGiven) {
  PredictOptions o;
  for (const char* model : {"model_1", "model_2", "model_3", "model_4", "model_5"}) {
    const FeatureConfig c = model_feature_config(o, model, 0);
    EXPECT_EQ(c.max_msa_clusters, 512) << model;
    EXPECT_EQ(c.max_extra_msa, 5120) << model;
  }
  // With --templates the template models (1, 2) leave room for the 4 template rows.
  o.templates = true;
  EXPECT_EQ(model_feature_config(o, "model_1", 0).max_msa_clusters, 508);
  EXPECT_EQ(model_feature_config(o, "model_2", 0).max_msa_clusters, 508);
  EXPECT_EQ(model_feature_config(o, "model_3", 0).max_msa_clusters, 512);
  o.max_seq = 16;
  o.max_extra_seq = 32;
  const FeatureConfig c = model_feature_config(o, "model_2", 7);
  EXPECT_EQ(c.max_msa_clusters, 16);
  EXPECT_EQ(c.max_extra_msa, 32);
  EXPECT_EQ(c.seed, 7u);
}

TEST(RunSettingsTest, CheckpointKeyHoldsWhatDecidesWhenARunStops) {
  PredictOptions o;
  o.num_recycle = 2;
  const RunOptions plddt = batch_run_options(o, RankBy::plddt);
  EXPECT_TRUE(plddt.checkpoints);
  EXPECT_EQ(plddt.recycles, 2);
  EXPECT_NE(plddt.checkpoint_context, batch_run_options(o, RankBy::ptm).checkpoint_context);
  o.stop_at_score = 70;
  EXPECT_NE(plddt.checkpoint_context, batch_run_options(o, RankBy::plddt).checkpoint_context);
}

TEST(RunSettingsTest, NoStopCheckWithoutStopScore) {
  EXPECT_FALSE(stop_at_score(PredictOptions{}, RankBy::plddt));
  EXPECT_FALSE(batch_run_options(PredictOptions{}, RankBy::plddt).stop_when);
}

TEST(RunSettingsTest, SavedRecyclesKeepEveryIteration) {
  PredictOptions o;
  EXPECT_FALSE(batch_run_options(o, RankBy::plddt).keep_iterations);
  o.save_recycles = true;
  EXPECT_TRUE(batch_run_options(o, RankBy::plddt).keep_iterations);
}

TEST(RunSettingsTest, StopCheckStopsAboveTheScore) {
  std::vector<float> plddt = {60, 80};  // mean 70
  Prediction p;
  p.plddt = Tensor(plddt.data(), DType::f32, Shape{2});
  PredictOptions o;
  o.stop_at_score = 69;
  const auto check = stop_at_score(o, RankBy::plddt);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check(p));
  EXPECT_TRUE(batch_run_options(o, RankBy::plddt).stop_when(p));
  o.stop_at_score = 70;
  EXPECT_FALSE(stop_at_score(o, RankBy::plddt)(p)) << "the score must exceed the threshold";
}

}  // namespace
}  // namespace cpufold
