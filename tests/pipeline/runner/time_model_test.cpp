// The planner's time model: monotone in the chunk, saved and found again on the same CPU only.
#include "pipeline/runner/time_model.h"

#include <gtest/gtest.h>

#include <fstream>

#include "pipeline/runner/run_plan.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TimeModel measured(std::map<std::int64_t, double> factors) {
  TimeModel m;
  m.chunk_factor = std::move(factors);
  m.cpu = this_cpu();
  m.isa = this_isa();
  m.threads = 2;
  return m;
}

TEST(TimeModel, MeasuredChunksTakeTheirFactorOthersTheNearestLargerOne) {
  // Unsliced slower than chunk 32, as measured at large N where slices stay in cache.
  const TimeModel m = measured({{0, 1.08}, {32, 1.0}, {16, 1.10}, {1, 3.0}});
  EXPECT_DOUBLE_EQ(m.relative_time(ChunkFamily::evoformer, 0), 1.08);
  EXPECT_DOUBLE_EQ(m.relative_time(ChunkFamily::evoformer, 32), 1.0);
  EXPECT_DOUBLE_EQ(m.relative_time(ChunkFamily::evoformer, 16), 1.10);
  EXPECT_DOUBLE_EQ(m.relative_time(ChunkFamily::evoformer, 1), 3.0);
  EXPECT_DOUBLE_EQ(m.relative_time(ChunkFamily::evoformer, 24), 1.0);    // as 32
  EXPECT_DOUBLE_EQ(m.relative_time(ChunkFamily::evoformer, 8), 1.10);    // as 16
  EXPECT_DOUBLE_EQ(m.relative_time(ChunkFamily::evoformer, 256), 1.08);  // as unsliced
}

TEST(TimeModel, BuiltInModelNeverPredictsASmallerChunkFaster) {
  const TimeModel m = builtin_time_model();
  double previous = m.relative_time(ChunkFamily::evoformer, 0);
  for (const std::int64_t chunk : kChunkCandidates) {
    if (chunk == 0) continue;
    EXPECT_GE(m.relative_time(ChunkFamily::evoformer, chunk), previous) << chunk;
    previous = m.relative_time(ChunkFamily::evoformer, chunk);
  }
}

TEST(TimeModel, SpillingOutputsIsNeverPredictedFasterThanSpillingActivations) {
  TimeModel m = measured({{0, 1.0}});
  m.spill_activations = 1.3;
  m.spill_outputs = 1.2;
  EXPECT_DOUBLE_EQ(m.spill_factor(SpillLevel::none), 1.0);
  EXPECT_DOUBLE_EQ(m.spill_factor(SpillLevel::activations), 1.3);
  EXPECT_DOUBLE_EQ(m.spill_factor(SpillLevel::outputs), 1.3);
}

TEST(TimeModel, SavedCalibrationIsFoundAgainOnThisCpu) {
  const testing::ScratchDir dir;
  TimeModel m = measured({{0, 1.0}, {64, 1.01}, {1, 4.5}});
  m.spill_activations = 1.4;
  save_time_model(m, dir / "sub" / "t.json");
  const TimeModel back = load_time_model(dir / "sub" / "t.json");
  EXPECT_EQ(back.chunk_factor, m.chunk_factor);
  EXPECT_DOUBLE_EQ(back.spill_activations, 1.4);
  EXPECT_NE(back.source.find("calibrated on this machine"), std::string::npos) << back.source;
}

TEST(TimeModel, CalibrationOfAnotherCpuIsNotUsed) {
  const testing::ScratchDir dir;
  TimeModel m = measured({{0, 1.0}, {1, 1.0}});
  m.cpu = "Some Other CPU 9000";
  save_time_model(m, dir / "t.json");
  const TimeModel back = load_time_model(dir / "t.json");
  EXPECT_DOUBLE_EQ(back.relative_time(ChunkFamily::evoformer, 1),
                   builtin_time_model().relative_time(ChunkFamily::evoformer, 1));
  EXPECT_NE(back.source.find("was measured on Some Other CPU 9000"), std::string::npos)
      << back.source;
}

TEST(TimeModel, UnreadableCalibrationFallsBackToTheBuiltInModelAndSaysSo) {
  const testing::ScratchDir dir;
  for (const std::string text :
       {"{not json", R"({"cpu": "x"})",
        R"({"cpu": "a", "isa": "b", "threads": 2, "chunk_factor": {"0": -1}})"}) {
    std::ofstream(dir / "t.json") << text;
    const TimeModel back = load_time_model(dir / "t.json");
    EXPECT_DOUBLE_EQ(back.relative_time(ChunkFamily::evoformer, 1),
                     builtin_time_model().relative_time(ChunkFamily::evoformer, 1))
        << text;
    EXPECT_NE(back.source.find("rerun `cpufold bench calibrate`"), std::string::npos)
        << back.source;
  }
}

TEST(TimeModel, NoFileMeansTheBuiltInModel) {
  const testing::ScratchDir dir;
  const TimeModel m = load_time_model(dir / "absent.json");
  EXPECT_EQ(m.source, builtin_time_model().source);
}

}  // namespace
}  // namespace cpufold
