// What a batch keeps of one model run: its timings.json record and its "done" line's values,
// from the run's Prediction.
#include "pipeline/batch/run_record.h"

#include <gtest/gtest.h>

namespace cpufold {
namespace {

Prediction finished_run(bool has_pae) {
  Prediction p;
  p.has_pae = has_pae;
  p.iterations = 3;
  p.timings = {{"trunk", 1.5}};
  p.planned_bytes = 1000;
  p.peak_rss_bytes = 2000;
  p.plan.dram_peak_bytes = 1500;
  p.plan.chosen.chunk = 64;
  return p;
}

TEST(RunRecordTest, TimingRecordTakesContextPredictionAndRenderedScores) {
  RenderedPrediction r;
  r.mean_plddt = 71.5;
  r.ptm = 0.62;
  const ModelRunInfo context{"model_3", 7, 1.25, 0.5, 508, 5120};
  const RunTiming t = run_timing(context, finished_run(true), r);
  EXPECT_EQ(t.model, "model_3");
  EXPECT_EQ(t.seed, 7u);
  EXPECT_EQ(t.load_seconds, 1.25);
  EXPECT_EQ(t.feature_seconds, 0.5);
  ASSERT_EQ(t.model_seconds.size(), 1u);
  EXPECT_EQ(t.model_seconds[0].stage, "trunk");
  EXPECT_EQ(t.iterations, 3);
  EXPECT_EQ(t.n_seq, 508);
  EXPECT_EQ(t.n_extra, 5120);
  EXPECT_EQ(t.mean_plddt, 71.5);
  ASSERT_TRUE(t.ptm.has_value());
  EXPECT_EQ(*t.ptm, 0.62);
  EXPECT_EQ(t.planned_bytes, 1000u);
  EXPECT_EQ(t.peak_rss_bytes, 2000u);
  EXPECT_EQ(t.predicted_peak_bytes, 1500u);
  EXPECT_EQ(t.chunk, 64);
}

TEST(RunRecordTest, NoPtmWithoutPaeHead) {
  RenderedPrediction r;
  r.ptm = 0.62;  // what a renderer would not set without a PAE head; ignored either way
  EXPECT_FALSE(run_timing(ModelRunInfo{}, finished_run(false), r).ptm.has_value());
  EXPECT_FALSE(run_summary(1.0, finished_run(false), r).has_pae);
}

TEST(RunRecordTest, SummaryForTheDoneLine) {
  RenderedPrediction r;
  r.mean_plddt = 71.5;
  r.ptm = 0.62;
  const RunSummary s = run_summary(2.5, finished_run(true), r);
  EXPECT_EQ(s.seconds, 2.5);
  EXPECT_EQ(s.iterations, 3);
  EXPECT_EQ(s.mean_plddt, 71.5);
  EXPECT_TRUE(s.has_pae);
  EXPECT_EQ(s.ptm, 0.62);
  EXPECT_EQ(s.peak_rss_bytes, 2000u);
  EXPECT_EQ(s.predicted_peak_bytes, 1500u);
}

}  // namespace
}  // namespace cpufold
