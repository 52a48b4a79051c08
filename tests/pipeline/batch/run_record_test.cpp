// What timings.json keeps of one model run: the caller's part of the record completed from the
// run's Prediction.
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
  p.plan.chosen.chunks = ChunkSizes::all(64);
  return p;
}

RenderedPrediction rendered(double mean_plddt, double ptm) {
  RenderedPrediction r;
  r.mean_plddt = mean_plddt;
  r.ptm = ptm;
  return r;
}

TEST(RunRecordTest, KeepsTheCallersFieldsAndAddsThePredictions) {
  RunTiming known;
  known.model = "model_3";
  known.load_seconds = 1.25;
  known.n_extra = 5120;
  const RunTiming t = run_timing(known, finished_run(true), rendered(71.5, 0.62));
  EXPECT_EQ(t.model, "model_3");
  EXPECT_EQ(t.load_seconds, 1.25);
  EXPECT_EQ(t.n_extra, 5120);
  ASSERT_EQ(t.model_seconds.size(), 1u);
  EXPECT_EQ(t.model_seconds[0].stage, "trunk");
  EXPECT_EQ(t.iterations, 3);
  EXPECT_EQ(t.mean_plddt, 71.5);
  ASSERT_TRUE(t.ptm.has_value());
  EXPECT_EQ(*t.ptm, 0.62);
  EXPECT_EQ(t.planned_bytes, 1000u);
  EXPECT_EQ(t.peak_rss_bytes, 2000u);
  EXPECT_EQ(t.predicted_peak_bytes, 1500u);
  EXPECT_EQ(t.chunks, ChunkSizes::all(64));
}

TEST(RunRecordTest, NoPtmWithoutPaeHead) {
  // A pTM the renderer would not set without a PAE head is ignored either way.
  EXPECT_FALSE(run_timing(RunTiming{}, finished_run(false), rendered(70, 0.62)).ptm.has_value());
}

}  // namespace
}  // namespace cpufold
