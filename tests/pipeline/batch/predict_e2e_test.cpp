// `cpufold predict` as a user runs it on the shipped examples: every output file, its
// content read back with gemmi and nlohmann-json, ranking, done markers, rerun behaviour.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;

json read_json(const fs::path& path) {
  return json::parse(testing::read_file(path));
}

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Checks one finished job: the file set, the structures against the scores, the ranking.
void check_job(const fs::path& out, const std::string& job, const std::string& sequence,
               std::size_t n_predictions) {
  SCOPED_TRACE(job);
  const std::vector<std::string> tags = testing::ranked_tags(out, job);
  ASSERT_EQ(tags.size(), n_predictions);
  const std::set<std::string> present = testing::file_names(out);
  for (const std::string& name : testing::job_files(job, tags)) {
    EXPECT_TRUE(present.count(name)) << "missing " << name;
  }
  const std::size_t n = sequence.size();

  std::vector<double> ranking;
  for (std::size_t k = 0; k < tags.size(); ++k) {
    char rank[32];
    std::snprintf(rank, sizeof rank, "rank_%03zu_", k + 1);
    ASSERT_EQ(tags[k].rfind(rank, 0), 0u) << tags[k];
    const json scores = read_json(out / (job + "_scores_" + tags[k] + ".json"));
    ASSERT_TRUE(scores.contains("plddt") && scores.contains("pae") && scores.contains("max_pae") &&
                scores.contains("ptm"))
        << scores.dump().substr(0, 200);
    const auto plddt = scores["plddt"].get<std::vector<double>>();
    ASSERT_EQ(plddt.size(), n);
    ASSERT_EQ(scores["pae"].size(), n);
    for (const json& row : scores["pae"]) ASSERT_EQ(row.size(), n);
    ranking.push_back(mean(plddt));

    const fs::path pdb = out / (job + "_unrelaxed_" + tags[k] + ".pdb");
    const fs::path cif = out / (job + "_unrelaxed_" + tags[k] + ".cif");
    const auto r =
        testing::run_command(std::string(testing::kSystemPython) + " -c '" + testing::kGemmiReport +
                             "' '" + pdb.string() + "' '" + cif.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json report = json::parse(r.output);
    ASSERT_EQ(report.size(), 2u);
    for (const json& structure : report) {
      EXPECT_EQ(structure["models"], 1);
      EXPECT_EQ(structure["chains"], 1);
      ASSERT_EQ(structure["n"], n);
      EXPECT_EQ(structure["seq"], sequence);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_FALSE(structure["b"][i].empty()) << "residue " << i + 1 << " has no atoms";
        for (const json& b : structure["b"][i]) {
          ASSERT_NEAR(b.get<double>(), plddt[i], 0.0101) << "residue " << i + 1;
        }
      }
    }
    EXPECT_EQ(report[1]["qa_local"], n);
  }
  for (std::size_t k = 1; k < ranking.size(); ++k) {
    EXPECT_GE(ranking[k - 1] + 0.01, ranking[k]) << "rank " << k << " is below rank " << k + 1;
  }

  // As ColabFold: the rank-1 scores' pae and max_pae.
  const json pae = read_json(out / (job + "_predicted_aligned_error_v1.json"));
  const json rank1 = read_json(out / (job + "_scores_" + tags[0] + ".json"));
  ASSERT_TRUE(pae.is_object());
  EXPECT_EQ(pae["predicted_aligned_error"], rank1["pae"]);
  EXPECT_EQ(pae["max_predicted_aligned_error"], rank1["max_pae"]);
  for (const char* png : {"_plddt.png", "_pae.png"}) {
    const std::string bytes = testing::read_file(out / (job + png));
    EXPECT_EQ(bytes.substr(1, 3), "PNG") << job + png;
  }
}

TEST(PredictE2eTest, FastaSingleSequenceTwoModelsTwoSeeds) {
  ScratchDir dir;
  const fs::path out = dir / "out";
  const fs::path fasta = testing::examples_dir() / "proteins.fasta";
  // The tiny models 1 and 3 share their weights, so seeds (masked-MSA choices) make the
  // predictions differ and the ranking mean something.
  const auto r = run_cpufold("predict '" + fasta.string() + "' '" + out.string() + "' " +
                             testing::fast_predict_options("1,3") + " --num-seeds 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "single-sequence mode")) << r.output;
  EXPECT_TRUE(contains(r.output, "[1/4] trp-cage (20 aa)")) << r.output;
  EXPECT_TRUE(contains(r.output, "left")) << r.output;
  EXPECT_TRUE(contains(r.output, "4 done, 0 skipped")) << r.output;

  check_job(out, "trp-cage", "NLYIQWLKDGGPSSGRPPPS", 4);
  check_job(out, "villin_HP35", "LSDEDFKAVFGMTRSAFANLPLWKQQNLKKEKGLF", 4);
  check_job(out, "GB1", "MTYKLILNGKTLKGETTTEAVDAATAEKVFKQYANDNGVDGEWTYDDATKTFTVTE", 4);
  check_job(out, "ubiquitin",
            "MQIFVKTLTGKTITLEVEPSDTIENVKAKIQDKEGIPPDQQRLIFAGKQLEDGRTLSDYNIQKESTLHLVLRLRGG", 4);

  const json config = read_json(out / "config.json");
  EXPECT_EQ(config["model_type"], "alphafold2_ptm");
  EXPECT_EQ(config["num_models"], 2);
  EXPECT_EQ(config["num_recycles"], 1);
  EXPECT_EQ(config["rank_by"], "plddt");
  const json timings = read_json(out / "timings.json");
  ASSERT_EQ(timings["jobs"].size(), 4u);
  const json& ubiquitin = timings["jobs"]["ubiquitin"];
  EXPECT_EQ(ubiquitin["status"], "done");
  ASSERT_EQ(ubiquitin["runs"].size(), 4u);
  EXPECT_TRUE(ubiquitin["runs"][0]["model_seconds"].contains("trunk"));
  EXPECT_GT(ubiquitin["runs"][0]["peak_rss_mib"].get<double>(), 0);
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "summary: 4 done")) << log;

  // A rerun skips every finished job and says so; --overwrite-existing-results redoes them.
  const auto again = run_cpufold("predict '" + fasta.string() + "' '" + out.string() + "' " +
                                 testing::fast_predict_options("1,3") + " --num-seeds 2");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "0 done, 4 skipped")) << again.output;
  EXPECT_TRUE(contains(again.output, "skipped, already done")) << again.output;
  EXPECT_FALSE(contains(again.output, "loaded model_")) << "no weights loaded for nothing";
  const auto redo =
      run_cpufold("predict '" + fasta.string() + "' '" + out.string() + "' " +
                  testing::fast_predict_options("3") + " --overwrite-existing-results");
  ASSERT_EQ(redo.exit_code, 0) << redo.output;
  EXPECT_TRUE(contains(redo.output, "4 done, 0 skipped")) << redo.output;
  // Redone with one model: the earlier run's second rank is gone, not left stale.
  check_job(out, "trp-cage", "NLYIQWLKDGGPSSGRPPPS", 1);
  EXPECT_TRUE(contains(testing::read_file(out / "log.txt"), "summary: 0 done, 4 skipped"));
}

TEST(PredictE2eTest, A3mInputUsesItsMsaAndSeedsNameTheFiles) {
  ScratchDir dir;
  const fs::path out = dir / "out";
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r =
      run_cpufold("predict '" + a3m.string() + "' '" + out.string() + "' " +
                  testing::fast_predict_options("3") + " --num-seeds 2 --random-seed 7 --rank ptm");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "MSA " + a3m.string())) << r.output;
  EXPECT_FALSE(contains(r.output, "single-sequence")) << r.output;
  const std::vector<std::string> tags = testing::ranked_tags(out, "tautomerase");
  ASSERT_EQ(tags.size(), 2u);
  const std::set<std::string> seeds = {tags[0].substr(tags[0].size() - 3),
                                       tags[1].substr(tags[1].size() - 3)};
  EXPECT_EQ(seeds, (std::set<std::string>{"007", "008"}));
  // Ranked by pTM.
  const json first = read_json(out / ("tautomerase_scores_" + tags[0] + ".json"));
  const json second = read_json(out / ("tautomerase_scores_" + tags[1] + ".json"));
  EXPECT_GE(first["ptm"].get<double>() + 0.005, second["ptm"].get<double>());
  const json timings = read_json(out / "timings.json");
  EXPECT_GT(timings["jobs"]["tautomerase"]["msa_rows"].get<int>(), 1);
}

TEST(PredictE2eTest, MsaDirInAlphaFold2Layout) {
  ScratchDir dir;
  const std::string seq = "MKTAYIAKQRQISFVKSHFS";
  testing::write_file(dir / "q.fasta", ">my query\n" + seq + "\n");
  fs::create_directories(dir / "msas" / "my_query" / "msas");
  testing::write_file(dir / "msas" / "my_query" / "msas" / "uniref90_hits.sto",
                      "# STOCKHOLM 1.0\nq " + seq + "\nh1 MKTAYIAKQRQISFVKAHFS\n//\n");
  testing::write_file(dir / "msas" / "my_query" / "msas" / "bfd_uniref_hits.a3m",
                      ">q\n" + seq + "\n>h2\nMKTAYLAKQRQISFVKSHF-\n");
  const auto r = run_cpufold("predict '" + (dir / "q.fasta").string() + "' '" +
                             (dir / "out").string() + "' --msa-dir '" + (dir / "msas").string() +
                             "' " + testing::fast_predict_options("1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "uniref90_hits.sto, bfd_uniref_hits.a3m")) << r.output;
  EXPECT_TRUE(contains(r.output, "MSA source msa_dir, 3 row(s) used")) << r.output;
  check_job(dir / "out", "my_query", seq, 1);
}

TEST(PredictE2eTest, HelpReadsLikeAManual) {
  const auto r = run_cpufold("predict --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* needle : {"INPUT", "OUTPUT_DIR", "--msa-dir", "uniref90_hits.sto",
                             "alignments/JOB/", "params_model_N_ptm.npz", "done.txt", "EXIT STATUS",
                             "EXAMPLE", "--overwrite-existing-results"}) {
    EXPECT_TRUE(contains(r.output, needle)) << needle;
  }
}

}  // namespace
}  // namespace cpufold
