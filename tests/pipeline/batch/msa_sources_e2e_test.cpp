// Where `cpufold predict` jobs get their MSA: a batch with no MSA source is refused before any
// work unless single-sequence mode is asked for, a --msa-dir lacking a job's MSA fails that job
// alone, MMseqs2's NUL-separated A3M folds, and scores JSON and log.txt state each job's MSA
// source and depth.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;

std::string quoted(const fs::path& p) {
  return std::string("'").append(p.string()).append("'");
}

// The tiny model 3 and nothing about MSAs.
std::string no_msa_options() {
  return "--data " + quoted(testing::test_data_dir()) +
         " --model-order 3 --num-models 1 --num-recycle 0 --threads 1";
}

json scores(const fs::path& out, const std::string& job) {
  return json::parse(
      testing::read_file(out / (job + "_scores_rank_001_alphafold2_ptm_model_3_seed_000.json")));
}

void expect_ways_out(const std::string& output) {
  for (const char* way : {"--msa-dir DIR", "--databases DIR", "--msa-mode single_sequence"})
    EXPECT_TRUE(contains(output, way)) << way << "\n" << output;
}

TEST(MsaSourcesE2eTest, FastaWithoutMsaSourceIsRefusedBeforeAnyWork) {
  ScratchDir dir;
  const fs::path fasta = testing::examples_dir() / "proteins.fasta";
  int run = 0;
  // ColabFold's default (the MSA server), said explicitly or not, or a server URL.
  for (const std::string& extra : {std::string(), std::string(" --msa-mode mmseqs2_uniref_env"),
                                   std::string(" --host-url https://api.colabfold.com")}) {
    SCOPED_TRACE(extra);
    const fs::path out = dir / ("out" + std::to_string(run++));
    const auto r = run_cpufold("predict " + quoted(fasta) + " " + quoted(out) + " " +
                               no_msa_options() + extra);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "4 of 4 job(s) have no MSA (")) << r.output;
    expect_ways_out(r.output);
    EXPECT_FALSE(fs::exists(out)) << "work started before the refusal";
  }
  const auto plan = run_cpufold("plan " + quoted(fasta) + " " + no_msa_options());
  EXPECT_EQ(plan.exit_code, 2) << plan.output;
  expect_ways_out(plan.output);
  EXPECT_EQ(run_cpufold("plan " + quoted(fasta) + " " + no_msa_options() +
                        " --msa-mode single_sequence --quiet")
                .exit_code,
            0);
  const auto bad = run_cpufold("predict " + quoted(fasta) + " " + quoted(dir / "bad") + " " +
                               no_msa_options() + " --msa-mode server");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--msa-mode 'server': expected single_sequence")) << bad.output;
}

TEST(MsaSourcesE2eTest, MsaDirLackingOneJobsMsaFailsThatJobAlone) {
  ScratchDir dir;
  testing::write_file(dir / "q.fasta", ">a\nMKTAYIAKQRQISFVK\n>b\nGSHMSLFDFFKNKG\n");
  fs::create_directories(dir / "msas");
  testing::write_file(dir / "msas" / "a.a3m",
                      ">101\nMKTAYIAKQRQISFVK\n>h1\nMKTAYIAKQRQISFVR\n>h2\nMKTAYIAKQRQISFVR\n");
  const fs::path out = dir / "out";
  const auto r = run_cpufold("predict " + quoted(dir / "q.fasta") + " " + quoted(out) + " " +
                             no_msa_options() + " --msa-dir " + quoted(dir / "msas"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "1 of 2 job(s) failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "no MSA for this job in " + (dir / "msas").string())) << r.output;
  EXPECT_TRUE(fs::exists(out / "a.done.txt"));
  EXPECT_FALSE(fs::exists(out / "b.done.txt"));
  // a's MSA: 3 rows read, 2 after removing the duplicate.
  const json msa = scores(out, "a")["msa"];
  EXPECT_EQ(msa["source"], "msa_dir");
  ASSERT_EQ(msa["files"].size(), 1u);
  EXPECT_EQ(msa["files"][0]["path"], (dir / "msas" / "a.a3m").string());
  EXPECT_EQ(msa["files"][0]["rows"], 3);
  EXPECT_EQ(msa["rows"], 2);
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "a.a3m: 3 row(s) read")) << log;
  EXPECT_TRUE(contains(log, "MSA source msa_dir, 2 row(s) used")) << log;
  EXPECT_EQ(json::parse(testing::read_file(out / "config.json"))["msa_mode"], "msa_dir");

  // Asked for, the job --msa-dir has nothing for folds from its query alone.
  const fs::path alone = dir / "alone";
  const auto asked = run_cpufold("predict " + quoted(dir / "q.fasta") + " " + quoted(alone) + " " +
                                 no_msa_options() + " --msa-dir " + quoted(dir / "msas") +
                                 " --msa-mode single_sequence");
  EXPECT_EQ(asked.exit_code, 0) << asked.output;
  EXPECT_EQ(scores(alone, "b")["msa"],
            json::parse(R"({"source":"single_sequence","files":[],"rows":1})"));
  EXPECT_EQ(scores(alone, "a")["msa"]["source"], "msa_dir");
}

// ColabFold's A3M as MMseqs2 writes it: "#len\tcard", then records each followed by a NUL
// byte before the next '>', here the example's hits split into two such records.
TEST(MsaSourcesE2eTest, Mmseqs2NulSeparatedA3mFolds) {
  ScratchDir dir;
  const std::string text = testing::read_file(testing::examples_dir() / "tautomerase.a3m");
  const std::size_t query_end = text.find('>', 1);
  const std::size_t half = text.find('>', text.size() / 2);
  ASSERT_NE(half, std::string::npos);
  const std::string query = text.substr(0, query_end);
  const std::string nul(1, '\0');
  testing::write_file(dir / "mm.a3m",
                      "#59\t1\n" + text.substr(0, half) + nul + query + text.substr(half) + nul);
  const fs::path out = dir / "out";
  const auto r =
      run_cpufold("predict " + quoted(dir / "mm.a3m") + " " + quoted(out) + " " + no_msa_options());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json msa = scores(out, "mm")["msa"];
  EXPECT_EQ(msa["source"], "input_a3m");
  EXPECT_EQ(msa["files"][0]["rows"], 30);  // 29 records and the second query
  EXPECT_EQ(msa["rows"], 29);              // the query once
  EXPECT_TRUE(contains(testing::read_file(out / "log.txt"), "MSA source input_a3m, 29 row(s)"));
}

TEST(MsaSourcesE2eTest, SingleSequenceByRequestIsStated) {
  ScratchDir dir;
  testing::write_file(dir / "q.fasta", ">q\nMKTAYIAKQRQISFVK\n");
  const fs::path out = dir / "out";
  const auto r = run_cpufold("predict " + quoted(dir / "q.fasta") + " " + quoted(out) + " " +
                             no_msa_options() + " --msa-mode single_sequence");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(scores(out, "q")["msa"],
            json::parse(R"({"source":"single_sequence","files":[],"rows":1})"));
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "single-sequence mode (--msa-mode single_sequence)")) << log;
  EXPECT_TRUE(contains(log, "MSA source single_sequence, 1 row(s) used")) << log;
  EXPECT_EQ(json::parse(testing::read_file(out / "config.json"))["msa_mode"], "single_sequence");
}

}  // namespace
}  // namespace cpufold
