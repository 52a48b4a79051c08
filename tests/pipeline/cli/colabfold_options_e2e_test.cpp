// colabfold_batch command lines run by `cpufold predict`: every option name is accepted, each
// unsupported one fails before any work, and the implemented ones change what they should.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/hdf5_tensor_file.h"
#include "io/npy.h"
#include "pipeline/cli/colabfold_options.h"
#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/support/png_decode.h"

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

// `--data` and one tiny model, leaving out the option under test.
std::string base_options(std::string_view except) {
  std::string args = "--data " + quoted(testing::test_data_dir());
  if (except != "--model-order") args += " --model-order 1";
  if (except != "--num-models") args += " --num-models 1";
  return args;
}

std::vector<std::string> split(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    out.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

TEST(ColabfoldOptionsE2eTest, EveryAcceptedColabfoldOptionIsParsed) {
  ScratchDir dir;
  for (const ColabfoldOption& o : colabfold_batch_options()) {
    if (o.status == OptionStatus::unsupported || o.name == "--data") continue;
    SCOPED_TRACE(std::string(o.name));
    const std::string value = o.flag ? "" : " '" + std::string(o.accepted_value) + "'";
    // A missing INPUT is the first thing predict reports: the options passed every check.
    const auto r =
        run_cpufold("predict " + quoted(dir / "missing.fasta") + " " + quoted(dir / "out") + " " +
                    base_options(o.name) + " " + std::string(o.name) + value + " --quiet");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "missing.fasta: no such file or directory")) << r.output;
  }
}

TEST(ColabfoldOptionsE2eTest, UnsupportedOptionsFailBeforeAnyWorkSayingWhatToDo) {
  ScratchDir dir;
  const fs::path input = testing::examples_dir() / "tautomerase.a3m";
  int refusals = 0;
  for (const ColabfoldOption& o : colabfold_batch_options()) {
    if (o.refused_values.empty()) continue;
    for (const std::string& value : split(o.refused_values)) {
      SCOPED_TRACE(std::string(o.name) + " " + value);
      const fs::path out = dir / ("out" + std::to_string(refusals++));
      const std::string arg = o.flag ? std::string(o.name) : std::string(o.name) + " " + value;
      const auto r = run_cpufold("predict " + quoted(input) + " " + quoted(out) + " " +
                                 base_options(o.name) + " " + arg);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_TRUE(contains(r.output, "cpufold does not support " + std::string(o.name)))
          << r.output;
      EXPECT_TRUE(contains(r.output, std::string(o.instead))) << r.output;
      EXPECT_FALSE(fs::exists(out)) << "work started before the refusal";
    }
  }
  EXPECT_GE(refusals, 13);  // the refused values of the table (templates and relax flags accepted)
}

json read_json(const fs::path& path) {
  return json::parse(testing::read_file(path));
}

// The tiny weights, one thread, quiet; `recycles` recycles.
std::string fast(const std::string& models = "1", int recycles = 1) {
  const int count = static_cast<int>(models.size() + 1) / 2;
  return "--data " + quoted(testing::test_data_dir()) + " --model-order " + models +
         " --num-models " + std::to_string(count) + " --num-recycle " + std::to_string(recycles) +
         " --threads 1 --quiet --msa-mode single_sequence";
}

TEST(ColabfoldOptionsE2eTest, ColabfoldExtraFilesAreWritten) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " + fast());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The MSA the job used: its own A3M.
  EXPECT_EQ(testing::read_file(dir / "out" / "tautomerase.a3m"), testing::read_file(a3m));
  const testing::DecodedPng png =
      testing::decode_png(testing::read_file(dir / "out" / "tautomerase_coverage.png"));
  EXPECT_GT(png.width, 100);
  EXPECT_GT(png.height, 100);
  const std::string bib = testing::read_file(dir / "out" / "cite.bibtex");
  EXPECT_TRUE(contains(bib, "10.1038/s41586-021-03819-2")) << bib;  // AlphaFold2
  EXPECT_TRUE(contains(bib, "10.1038/s41592-022-01488-1")) << bib;  // ColabFold

  // Single-sequence jobs: the query alone under ColabFold's header.
  ScratchDir single;
  testing::write_file(single / "q.fasta", ">q\nMKTAYIAKQR\n");
  ASSERT_EQ(run_cpufold("predict " + quoted(single / "q.fasta") + " " + quoted(single / "out") +
                        " " + fast())
                .exit_code,
            0);
  EXPECT_EQ(testing::read_file(single / "out" / "q.a3m"), ">101\nMKTAYIAKQR\n");
}

TEST(ColabfoldOptionsE2eTest, SkipOutputLeavesOutMsaPlotsAndPaeJson) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " + fast() +
                             " --skip-output msa,plots,pae_json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto names = testing::file_names(dir / "out");
  for (const char* absent :
       {"tautomerase.a3m", "tautomerase_coverage.png", "tautomerase_plddt.png",
        "tautomerase_pae.png", "tautomerase_predicted_aligned_error_v1.json"}) {
    EXPECT_FALSE(names.count(absent)) << absent;
  }
  EXPECT_TRUE(names.count("tautomerase.done.txt"));
}

TEST(ColabfoldOptionsE2eTest, JobnamePrefixNamesJobsInRunOrder) {
  ScratchDir dir;
  const fs::path fasta = testing::examples_dir() / "proteins.fasta";
  const auto r = run_cpufold("predict " + quoted(fasta) + " " + quoted(dir / "out") + " " +
                             fast("1", 0) + " --jobname-prefix 'my run'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Shortest first; one digit for four jobs; the prefix made file-safe.
  EXPECT_EQ(testing::read_file(dir / "out" / "my_run_0.a3m"), ">101\nNLYIQWLKDGGPSSGRPPPS\n");
  for (const char* job : {"my_run_0", "my_run_1", "my_run_2", "my_run_3"}) {
    EXPECT_TRUE(fs::exists(dir / "out" / (std::string(job) + ".done.txt"))) << job;
  }
  EXPECT_FALSE(fs::exists(dir / "out" / "trp-cage.done.txt"));
}

// The query of each prefixed job, in run order.
std::vector<std::string> run_order(const fs::path& out) {
  std::vector<std::string> queries;
  for (int i = 0; i < 4; ++i) {
    const std::string a3m = testing::read_file(out / ("p_" + std::to_string(i) + ".a3m"));
    queries.push_back(a3m.substr(5));  // after ">101\n"
  }
  return queries;
}

TEST(ColabfoldOptionsE2eTest, SortQueriesByRandomIsReproducibleFromTheSeed) {
  ScratchDir dir;
  const fs::path fasta = testing::examples_dir() / "proteins.fasta";
  const auto order = [&](const std::string& name, const std::string& extra) {
    const auto r = run_cpufold("predict " + quoted(fasta) + " " + quoted(dir / name) + " " +
                               fast("1", 0) + " --jobname-prefix p " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return run_order(dir / name);
  };
  const auto by_length = order("length", "");
  const auto seed0 = order("r0", "--sort-queries-by random --random-seed 0");
  EXPECT_EQ(order("r0_again", "--sort-queries-by random --random-seed 0"), seed0);
  bool shuffled = seed0 != by_length;
  for (int seed = 1; seed < 4 && !shuffled; ++seed) {
    const std::string n = std::to_string(seed);
    shuffled = order(std::string("r").append(n),
                     std::string("--sort-queries-by random --random-seed ").append(n)) != by_length;
  }
  EXPECT_TRUE(shuffled) << "random order equals length order for seeds 0-3";
}

TEST(ColabfoldOptionsE2eTest, MaxMsaSetsClusterAndExtraRows) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " + fast() +
                             " --max-seq 20 --max-msa 4:8");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json run = read_json(dir / "out" / "timings.json")["jobs"]["tautomerase"]["runs"][0];
  EXPECT_EQ(run["n_seq"], 4);
  EXPECT_EQ(run["n_extra"], 8);
}

TEST(ColabfoldOptionsE2eTest, NumEnsembleAveragesSeveralSamplesPerRecycle) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const std::string tag = "tautomerase_scores_rank_001_alphafold2_ptm_model_1_seed_000.json";
  std::vector<json> plddt;
  for (const char* n : {"1", "2"}) {
    const fs::path out = dir / (std::string("e") + n);
    const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(out) + " " + fast() +
                               " --num-ensemble " + n);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_json(out / "config.json")["num_ensemble"], std::stoi(n));
    plddt.push_back(read_json(out / tag)["plddt"]);
  }
  EXPECT_NE(plddt[0], plddt[1]) << "the second ensemble member changed nothing";
}

TEST(ColabfoldOptionsE2eTest, StopAtScoreEndsRecyclingAndSkipsTheRemainingModels) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " +
                             fast("1,3", 2) + " --num-seeds 2 --stop-at-score 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing::ranked_tags(dir / "out", "tautomerase"),
            std::vector<std::string>{"rank_001_alphafold2_ptm_model_1_seed_000"});
  const json runs = read_json(dir / "out" / "timings.json")["jobs"]["tautomerase"]["runs"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["iterations"], 1);
}

TEST(ColabfoldOptionsE2eTest, SaveRecyclesWritesTheStructureOfEveryRecycle) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " +
                             fast("1", 2) + " --save-recycles");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string stem =
      (dir / "out" / "tautomerase_unrelaxed_rank_001_alphafold2_ptm_model_1_seed_000").string();
  const std::string r0 = testing::read_file(stem + ".r0.pdb");
  const std::string r2 = testing::read_file(stem + ".r2.pdb");
  EXPECT_TRUE(fs::exists(stem + ".r1.pdb"));
  EXPECT_FALSE(fs::exists(stem + ".r3.pdb"));
  EXPECT_EQ(r2, testing::read_file(stem + ".pdb"));  // the last recycle is the prediction
  EXPECT_NE(r0, r2);
}

TEST(ColabfoldOptionsE2eTest, SaveAllWritesEveryOutputToHdf5PerPrediction) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " +
                             fast("1,3") + " --save-all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string& tag : testing::ranked_tags(dir / "out", "tautomerase")) {
    SCOPED_TRACE(tag);
    const json scores = read_json(dir / "out" / ("tautomerase_scores_" + tag + ".json"));
    const std::size_t n = scores["plddt"].size();
    Hdf5TensorReader h5(dir / "out" / ("tautomerase_all_" + tag + ".h5"));
    std::vector<float> plddt(n);
    h5.read("outputs/plddt", Tensor(plddt.data(), DType::f32, Shape{static_cast<std::int64_t>(n)}));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(plddt[i], scores["plddt"][i].get<double>(), 0.0051) << i;
    }
    EXPECT_TRUE(h5.has("outputs/pair"));
    EXPECT_TRUE(h5.has("outputs/predicted_aligned_error"));
  }
  EXPECT_EQ(testing::ranked_tags(dir / "out", "tautomerase").size(), 2u);
}

TEST(ColabfoldOptionsE2eTest, SaveRepresentationsWritesNpyPerPrediction) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " + fast() +
                             " --save-single-representations --save-pair-representations");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string tag = "rank_001_alphafold2_ptm_model_1_seed_000";
  const std::int64_t n = static_cast<std::int64_t>(
      read_json(dir / "out" / ("tautomerase_scores_" + tag + ".json"))["plddt"].size());
  for (const char* kind : {"single_repr", "pair_repr"}) {
    SCOPED_TRACE(kind);
    const std::string bytes =
        testing::read_file(dir / "out" / ("tautomerase_" + std::string(kind) + "_" + tag + ".npy"));
    const NpyView npy =
        parse_npy({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, kind);
    EXPECT_EQ(npy.header.dtype, DType::f32);
    ASSERT_EQ(npy.header.shape.rank(), std::string(kind) == "pair_repr" ? 3 : 2);
    EXPECT_EQ(npy.header.shape[0], n);
    if (std::string(kind) == "pair_repr") {
      EXPECT_EQ(npy.header.shape[1], n);
    }
  }
}

// nf-core/proteinfold passes --amber (and --num-relax): accepted with one warning, every
// structure written unrelaxed under ColabFold's unrelaxed names, no relaxed files.
TEST(ColabfoldOptionsE2eTest, AmberAndNumRelaxWarnOnceAndWriteUnrelaxedStructures) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " +
                             fast("1,3", 0) + " --amber --num-relax 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string log = testing::read_file(dir / "out" / "log.txt");
  std::size_t warnings = 0;
  for (std::size_t at = log.find("no Amber relaxation"); at != std::string::npos;
       at = log.find("no Amber relaxation", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << log;
  EXPECT_TRUE(contains(log, "warning: --amber / --num-relax 2")) << log;
  EXPECT_EQ(testing::ranked_tags(dir / "out", "tautomerase").size(), 2u);
  for (const std::string& name : testing::file_names(dir / "out"))
    EXPECT_FALSE(contains(name, "_relaxed_")) << name;
  EXPECT_TRUE(fs::exists(dir / "out" /
                         "tautomerase_unrelaxed_rank_001_alphafold2_ptm_model_1_seed_000.pdb") ||
              fs::exists(dir / "out" /
                         "tautomerase_unrelaxed_rank_001_alphafold2_ptm_model_3_seed_000.pdb"));
}

// ColabFold sorts --model-order before it takes the first --num-models.
TEST(ColabfoldOptionsE2eTest, ModelOrderIsSortedAsColabfoldSortsIt) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const auto r = run_cpufold("predict " + quoted(a3m) + " " + quoted(dir / "out") + " " +
                             base_options("--model-order") +
                             " --model-order 3,1 --num-recycle 0 --threads 1 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing::ranked_tags(dir / "out", "tautomerase"),
            std::vector<std::string>{"rank_001_alphafold2_ptm_model_1_seed_000"});
  EXPECT_EQ(read_json(dir / "out" / "config.json")["model_order"], json::parse("[1, 3]"));
}

TEST(ColabfoldOptionsE2eTest, ZipPacksTheJobAndMarksItDone) {
  ScratchDir dir;
  const fs::path a3m = testing::examples_dir() / "tautomerase.a3m";
  const std::string cmd =
      "predict " + quoted(a3m) + " " + quoted(dir / "out") + " " + fast() + " --zip";
  const auto r = run_cpufold(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing::file_names(dir / "out"),
            (std::set<std::string>{"cite.bibtex", "config.json", "log.txt", "logs", "timings.json",
                                   "tautomerase.result.zip"}));
  const auto listing = testing::run_command(
      std::string(testing::kSystemPython) +
      " -c 'import sys, zipfile; print(*zipfile.ZipFile(sys.argv[1]).namelist())' " +
      quoted(dir / "out" / "tautomerase.result.zip"));
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  for (const char* name : {"tautomerase.a3m", "tautomerase_coverage.png",
                           "tautomerase_unrelaxed_rank_001_alphafold2_ptm_model_1_seed_000.pdb",
                           "tautomerase_scores_rank_001_alphafold2_ptm_model_1_seed_000.json",
                           "tautomerase_predicted_aligned_error_v1.json", "tautomerase_plddt.png",
                           "cite.bibtex", "config.json"}) {
    EXPECT_TRUE(contains(listing.output, name)) << name << "\n" << listing.output;
  }
  EXPECT_EQ(run_cpufold(cmd).exit_code, 0);
  EXPECT_TRUE(contains(testing::read_file(dir / "out" / "log.txt"), "0 done, 1 skipped"));
}

}  // namespace
}  // namespace cpufold
