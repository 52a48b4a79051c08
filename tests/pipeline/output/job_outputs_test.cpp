// The files of one predict job: ColabFold's names, ranks, the done marker last, cleanup.
#include "pipeline/output/job_outputs.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;
using testing::write_file;

RenderedPrediction fake(int model, std::uint64_t seed, float plddt) {
  RenderedPrediction r;
  r.model_number = model;
  r.seed = seed;
  r.tag = "alphafold2_ptm_model_" + std::to_string(model) + "_seed_" + seed_tag(seed);
  r.plddt = {plddt, plddt, plddt};
  r.mean_plddt = plddt;
  r.has_pae = true;
  r.pae.assign(9, 1.5f);
  r.max_pae = 31.75f;
  r.pdb = "PDB " + r.tag;
  r.cif = "CIF " + r.tag;
  r.scores = "{}";
  r.pae_v1 = "[{\"rank1\": \"" + r.tag + "\"}]";
  return r;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

TEST(JobOutputsTest, Tags) {
  EXPECT_EQ(seed_tag(0), "000");
  EXPECT_EQ(seed_tag(42), "042");
  EXPECT_EQ(seed_tag(1234), "1234");
  EXPECT_EQ(rank_tag(1), "rank_001");
  EXPECT_EQ(rank_tag(12), "rank_012");
}

TEST(JobOutputsTest, WritesColabFoldNamesInRankOrderWithTheMarkerLast) {
  ScratchDir dir;
  const std::vector<RenderedPrediction> ranked = {fake(3, 1, 70), fake(1, 0, 60)};
  const auto written = write_job_outputs(dir.path(), "job", ranked);
  const std::set<std::string> expected = {
      "job_unrelaxed_rank_001_alphafold2_ptm_model_3_seed_001.pdb",
      "job_unrelaxed_rank_001_alphafold2_ptm_model_3_seed_001.cif",
      "job_scores_rank_001_alphafold2_ptm_model_3_seed_001.json",
      "job_unrelaxed_rank_002_alphafold2_ptm_model_1_seed_000.pdb",
      "job_unrelaxed_rank_002_alphafold2_ptm_model_1_seed_000.cif",
      "job_scores_rank_002_alphafold2_ptm_model_1_seed_000.json",
      "job_predicted_aligned_error_v1.json",
      "job_plddt.png",
      "job_pae.png",
      "job.done.txt"};
  EXPECT_EQ(names_in(dir.path()), expected);
  EXPECT_EQ(std::set<std::string>(written.begin(), written.end()), expected);
  EXPECT_EQ(written.back(), "job.done.txt");
  EXPECT_EQ(testing::read_file(dir / "job_unrelaxed_rank_001_alphafold2_ptm_model_3_seed_001.pdb"),
            "PDB alphafold2_ptm_model_3_seed_001");
  EXPECT_NE(
      testing::read_file(dir / "job_predicted_aligned_error_v1.json").find("model_3_seed_001"),
      std::string::npos)
      << "the PAE file is rank 1's";
  const std::string marker = testing::read_file(dir / "job.done.txt");
  EXPECT_NE(marker.find("job_pae.png"), std::string::npos) << marker;
}

TEST(JobOutputsTest, NoPaeFilesWithoutAPaeHead) {
  ScratchDir dir;
  RenderedPrediction r = fake(1, 0, 50);
  r.has_pae = false;
  r.pae.clear();
  r.pae_v1.clear();
  write_job_outputs(dir.path(), "j", {r});
  const auto names = names_in(dir.path());
  EXPECT_FALSE(names.count("j_pae.png"));
  EXPECT_FALSE(names.count("j_predicted_aligned_error_v1.json"));
  EXPECT_TRUE(names.count("j_plddt.png"));
  EXPECT_TRUE(names.count("j.done.txt"));
}

TEST(JobOutputsTest, RemoveTakesOnlyThatJobsFiles) {
  ScratchDir dir;
  for (const char* name : {"a.done.txt", "a_unrelaxed_rank_001_alphafold2_ptm_model_1_seed_000.pdb",
                           "a_scores_rank_004_alphafold2_ptm_model_1_seed_000.json", "a_plddt.png",
                           "a_pae.png", "a_predicted_aligned_error_v1.json", "a_b.done.txt",
                           "a_b_unrelaxed_rank_001_alphafold2_ptm_model_1_seed_000.pdb",
                           "a_b_plddt.png", "log.txt", "a.fasta"}) {
    write_file(dir / name, "x");
  }
  remove_job_outputs(dir.path(), "a");
  EXPECT_EQ(names_in(dir.path()),
            (std::set<std::string>{"a_b.done.txt",
                                   "a_b_unrelaxed_rank_001_alphafold2_ptm_model_1_seed_000.pdb",
                                   "a_b_plddt.png", "log.txt", "a.fasta"}));
}

}  // namespace
}  // namespace cpufold
