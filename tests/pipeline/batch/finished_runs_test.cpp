// A finished model run kept for a resume: used only by a run with the same key.
#include "pipeline/batch/finished_runs.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

RawFeatures raw_of(const std::string& query) {
  RawFeatures raw;
  raw.sequence = query;
  raw.n_res = static_cast<std::int64_t>(query.size());
  raw.aatype.assign(query.size(), 3);
  raw.n_msa = 1;
  raw.msa.assign(query.size(), 3);
  raw.deletion_matrix.assign(query.size(), 0);
  return raw;
}

FinishedRun a_run() {
  FinishedRun run;
  RenderedPrediction& r = run.prediction;
  r.model_number = 3;
  r.seed = 1;
  r.tag = "alphafold2_ptm_model_3_seed_001";
  r.mean_plddt = 71.5;
  r.has_pae = true;
  r.ptm = 0.61;
  r.max_pae = 31.75f;
  r.score = 71.5;
  r.pdb = "ATOM ...\nEND\n";
  r.cif = "data_q\n";
  r.scores = "{}";
  r.pae_v1 = "[]";
  r.plddt = {70.f, 73.f};
  r.pae = {0.f, 1.f, 2.f, 3.f};
  r.recycle_pdbs = {"r0", "r1"};
  r.unranked = {{"all", ".h5"}};
  run.timing.model = "model_3";
  run.timing.seed = 1;
  run.timing.model_seconds = {{"trunk", 2.5}};
  run.timing.iterations = 4;
  run.timing.ptm = 0.61;
  run.timing.chunks = ChunkSizes::all(8);
  return run;
}

TEST(FinishedRuns, RoundTripKeepsEveryResultAndTiming) {
  const testing::ScratchDir dir;
  const std::string key = finished_run_key("{}", "xxh3-128:1", features_hash(raw_of("MKTA")), 3, 1);
  const auto path = finished_run_path(dir.path(), "q", a_run().prediction.tag);
  save_finished_run(path, key, a_run());
  const std::optional<FinishedRun> back = load_finished_run(path, key);
  ASSERT_TRUE(back);
  const RenderedPrediction& r = back->prediction;
  EXPECT_EQ(r.tag, "alphafold2_ptm_model_3_seed_001");
  EXPECT_EQ(r.pdb, a_run().prediction.pdb);
  EXPECT_EQ(r.pae, a_run().prediction.pae);
  EXPECT_EQ(r.recycle_pdbs, a_run().prediction.recycle_pdbs);
  EXPECT_EQ(r.unranked.size(), 1u);
  EXPECT_FLOAT_EQ(r.max_pae, 31.75f);
  EXPECT_EQ(back->timing.iterations, 4);
  EXPECT_EQ(back->timing.chunks, ChunkSizes::all(8));
  EXPECT_DOUBLE_EQ(*back->timing.ptm, 0.61);
}

TEST(FinishedRuns, OtherSettingsWeightsFeaturesOrSeedAreNotUsed) {
  const testing::ScratchDir dir;
  const std::string key =
      finished_run_key("{\"num_recycles\":3}", "w1", features_hash(raw_of("MKTA")), 3, 1);
  const auto path = finished_run_path(dir.path(), "q", "t");
  save_finished_run(path, key, a_run());
  for (const std::string& other :
       {finished_run_key("{\"num_recycles\":1}", "w1", features_hash(raw_of("MKTA")), 3, 1),
        finished_run_key("{\"num_recycles\":3}", "w2", features_hash(raw_of("MKTA")), 3, 1),
        finished_run_key("{\"num_recycles\":3}", "w1", features_hash(raw_of("MKTV")), 3, 1),
        finished_run_key("{\"num_recycles\":3}", "w1", features_hash(raw_of("MKTA")), 3, 2)}) {
    EXPECT_NE(other, key);
    EXPECT_FALSE(load_finished_run(path, other));
  }
  std::string bytes = testing::read_file(path);
  bytes.resize(bytes.size() / 2);
  testing::write_file(path, bytes);
  EXPECT_FALSE(load_finished_run(path, key)) << "a truncated record was used";
}

TEST(FinishedRuns, RemovingAJobsRecordsSparesJobsWithLongerNames) {
  const testing::ScratchDir dir;
  save_finished_run(finished_run_path(dir.path(), "a", "t1"), "k", a_run());
  save_finished_run(finished_run_path(dir.path(), "a.b", "t1"), "k", a_run());
  remove_finished_runs(dir.path(), "a");
  EXPECT_FALSE(std::filesystem::exists(finished_run_path(dir.path(), "a", "t1")));
  EXPECT_TRUE(std::filesystem::exists(finished_run_path(dir.path(), "a.b", "t1")));
}

}  // namespace
}  // namespace cpufold
