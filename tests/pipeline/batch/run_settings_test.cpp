// What the predict options mean for one batch run: its checkpoints and its per-recycle checks.
#include "pipeline/batch/run_settings.h"

#include <gtest/gtest.h>

#include <vector>

namespace cpufold {
namespace {

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

TEST(RunSettingsTest, NoCheckpointsWhenEveryRecycleIsSaved) {
  PredictOptions o;
  o.save_recycles = true;
  EXPECT_FALSE(batch_run_options(o, RankBy::plddt).checkpoints);
}

TEST(RunSettingsTest, NoRecycleCheckWithoutStopScoreOrSavedRecycles) {
  EXPECT_FALSE(recycle_checks(PredictOptions{}, RankBy::plddt, [](const Prediction&) {}));
}

TEST(RunSettingsTest, RecycleCheckStopsAboveTheScoreAndSavesEachIteration) {
  std::vector<float> plddt = {60, 80};  // mean 70
  Prediction p;
  p.plddt = Tensor(plddt.data(), DType::f32, Shape{2});
  PredictOptions o;
  o.stop_at_score = 69;
  int saved = 0;
  const auto check = recycle_checks(o, RankBy::plddt, [&](const Prediction&) { ++saved; });
  ASSERT_TRUE(check);
  EXPECT_TRUE(check(p, 0));
  EXPECT_EQ(saved, 0) << "structures are saved only with --save-recycles";
  o.stop_at_score = 70;
  o.save_recycles = true;
  const auto saving = recycle_checks(o, RankBy::plddt, [&](const Prediction&) { ++saved; });
  EXPECT_FALSE(saving(p, 0)) << "the score must exceed the threshold";
  EXPECT_EQ(saved, 1);
}

}  // namespace
}  // namespace cpufold
