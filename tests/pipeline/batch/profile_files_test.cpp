// profile.csv: every row has the header's columns, a failed length keeps its plan and quotes
// its reason, and the planned blocks get one column each.
#include "pipeline/batch/profile_files.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "io/delimited_table.h"

namespace cpufold {
namespace {

LengthProfile measured(std::int64_t n) {
  LengthProfile p;
  p.sizes = {n, 512, 5120, 4, 0};
  p.planned = true;
  p.chunks = ChunkSizes::all(64);
  p.predicted_peak_bytes = 1000;
  p.blocks = {{"process (code, libraries, threads, heap)", 400}, {"scratch arena", 600}};
  p.ok = true;
  p.measured_peak_bytes = 1100;
  p.stages = {{"load", 500, 1.5}, {"trunk", 1100, 20.25}};
  p.stage_method = "clear_refs";
  return p;
}

TEST(ProfileCsv, RowsMatchTheHeaderAndAFailedLengthKeepsItsPlanAndReason) {
  LengthProfile failed = measured(2500);
  failed.ok = false;
  failed.error = "killed by signal 9 (Killed): out of memory, \"OOM\"?";
  const LengthProfile rows[] = {measured(64), failed};
  const Table t = parse_table(profile_csv(rows), "profile.csv", ',');
  ASSERT_EQ(t.rows.size(), 2u);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(t.header.begin(), t.header.end(), name);
    EXPECT_NE(it, t.header.end()) << name;
    return static_cast<std::size_t>(it - t.header.begin());
  };
  for (const TableRow& r : t.rows) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_EQ(r.fields.size(), t.header.size());
  }
  const auto& ok = t.rows[0].fields;
  EXPECT_EQ(ok[column("ratio")], "1.1000");
  EXPECT_EQ(ok[column("trunk_peak_bytes")], "1100");
  EXPECT_EQ(ok[column("trunk_seconds")], "20.250");
  EXPECT_EQ(ok[column("features_peak_bytes")], "") << "a stage not measured stays empty";
  EXPECT_EQ(ok[column("planned_process_bytes")], "400");
  EXPECT_EQ(ok[column("planned_scratch_arena_bytes")], "600");
  EXPECT_EQ(ok[column("status")], "ok");
  const auto& bad = t.rows[1].fields;
  EXPECT_EQ(bad[column("n_res")], "2500");
  EXPECT_EQ(bad[column("predicted_peak_bytes")], "1000");
  EXPECT_EQ(bad[column("measured_peak_bytes")], "");
  EXPECT_EQ(bad[column("ratio")], "");
  EXPECT_EQ(bad[column("status")], "failed");
  EXPECT_EQ(bad[column("error")], failed.error);
}

// Blocks-only: the mode, the whole run's plan in its own column, each block's columns; a block
// that did not run keeps its prediction only.
TEST(ProfileCsv, BlocksOnlyRowsGiveEachBlockAndThePlanApart) {
  LengthProfile p = measured(4000);
  p.blocks_only = true;
  p.plan_peak_bytes = 5000;
  p.block_runs = {{"extra_msa", 5120, 32, {300, 900, 700}, true, 1950, 812.5},
                  {"evoformer", 516, 64, {300, 1000, 800}, false, 0, 0}};
  p.predicted_peak_bytes = 2100;
  p.measured_peak_bytes = 0;
  p.ok = false;
  p.error = "killed by signal 9";
  LengthProfile model = measured(64);
  model.plan_peak_bytes = model.predicted_peak_bytes;
  const LengthProfile rows[] = {model, p};
  const Table t = parse_table(profile_csv(rows), "profile.csv", ',');
  ASSERT_EQ(t.rows.size(), 2u);
  const auto cell = [&](std::size_t row, const std::string& name) {
    const auto it = std::find(t.header.begin(), t.header.end(), name);
    EXPECT_NE(it, t.header.end()) << name;
    return it == t.header.end() ? std::string("?") : t.rows[row].fields.at(it - t.header.begin());
  };
  EXPECT_EQ(cell(0, "mode"), "model");
  EXPECT_EQ(cell(0, "plan_peak_bytes"), "1000");
  EXPECT_EQ(cell(0, "evoformer_block_predicted_bytes"), "");
  EXPECT_EQ(cell(0, "block_resident_bytes"), "");
  EXPECT_EQ(cell(1, "mode"), "blocks");
  EXPECT_EQ(cell(1, "predicted_peak_bytes"), "2100");
  EXPECT_EQ(cell(1, "plan_peak_bytes"), "5000");
  EXPECT_EQ(cell(1, "block_resident_bytes"), "300");
  EXPECT_EQ(cell(1, "extra_msa_block_seconds"), "812.500");
  EXPECT_EQ(cell(1, "extra_msa_block_peak_bytes"), "1950");
  EXPECT_EQ(cell(1, "extra_msa_block_predicted_bytes"), "1900");
  EXPECT_EQ(cell(1, "extra_msa_block_activations_bytes"), "900");
  EXPECT_EQ(cell(1, "extra_msa_block_scratch_bytes"), "700");
  EXPECT_EQ(cell(1, "extra_msa_block_ratio"), "1.0263");
  EXPECT_EQ(cell(1, "evoformer_block_predicted_bytes"), "2100");
  EXPECT_EQ(cell(1, "evoformer_block_peak_bytes"), "") << "it did not run";
  EXPECT_EQ(cell(1, "evoformer_block_seconds"), "");
  EXPECT_EQ(cell(1, "status"), "failed");
}

}  // namespace
}  // namespace cpufold
