// `cpufold predict --templates` on a tiny template database built in the test (mmCIF files
// cpufold wrote for ubiquitin variants, their pdb_seqres.txt): the search, the log and
// timings, the rerun without search, the custom template path and the refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/pipeline/templates/template_fixture.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;
using testing::shell_word;

struct TemplateRun {
  ScratchDir dir;
  testing::TemplateDatabase db;
  fs::path input = dir / "ubiquitin.fasta";

  TemplateRun() {
    db.add("2hom", "GS" + testing::mutated(testing::kUbiquitin, {4, 20, 40, 60}, 'A'));
    db.add("4new", testing::mutated(testing::kUbiquitin, {6, 26, 46, 66}, 'S'), "2030-06-01");
    testing::write_file(input, ">ubiquitin\n" + testing::kUbiquitin + "\n");
  }

  testing::CommandResult predict(const fs::path& out, const std::string& extra) const {
    return run_cpufold("predict " + shell_word(input) + " " + shell_word(out) + " " +
                       testing::fast_predict_options("1,3") + " " + extra + " --quiet");
  }
};

TEST(PredictTemplatesE2eTest, SearchesTheTemplateDatabaseOnceAndFeedsModelOne) {
  const TemplateRun run;
  const fs::path out = run.dir / "out";
  const std::string options =
      "--templates --template-db " + shell_word(run.db.path()) + " --max-template-date 2025-01-01";
  const auto r = run.predict(out, options);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "searching templates with hmmsearch")) << log;
  EXPECT_TRUE(contains(log, "templates: 1 from")) << log;
  EXPECT_TRUE(contains(log, "(2hom_A)")) << log;
  EXPECT_TRUE(contains(log, "4new_A: released 2030-06-01")) << log;
  // Model 1 takes the template, model 3 (no template embedding) none.
  EXPECT_TRUE(contains(log, "model_1 seed 000: N_res 76, 1 MSA rows, 0 extra rows, 1 templates"))
      << log;
  EXPECT_TRUE(contains(log, "model_3 seed 000: N_res 76, 1 MSA rows, 0 extra rows, 0 templates"))
      << log;
  EXPECT_TRUE(fs::exists(out / "ubiquitin_env" / "pdb_hits.sto"));
  const auto timings = nlohmann::json::parse(testing::read_file(out / "timings.json"));
  const nlohmann::json& record = timings.at("jobs").at("ubiquitin");
  EXPECT_EQ(record.at("templates"), 1) << record.dump().substr(0, 400);
  EXPECT_EQ(record.at("template_source"), (out / "ubiquitin_env" / "pdb_hits.sto").string());
  RecordProperty("template_seconds", std::to_string(record.at("template_seconds").get<double>()));
  EXPECT_TRUE(fs::exists(out / "ubiquitin.done.txt"));
  const auto config = nlohmann::json::parse(testing::read_file(out / "config.json"));
  EXPECT_EQ(config["use_templates"], true);
  EXPECT_EQ(config["max_template_date"], "2025-01-01");

  // A rerun reads the kept hits and searches nothing.
  const auto again = run.predict(out, options + " --overwrite-existing-results");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const std::string log2 = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log2, "template hits kept from an earlier run")) << log2;
}

TEST(PredictTemplatesE2eTest, CustomTemplatePathSearchesItsMmcifFiles) {
  const TemplateRun run;
  const fs::path out = run.dir / "custom";
  const auto r = run.predict(out, "--custom-template-path " + shell_word(run.db.mmcif_dir()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "templates: 2 from")) << log;  // no date limit by default
}

TEST(PredictTemplatesE2eTest, TemplatesWithoutASourceAreRefusedBeforeAnyWork) {
  const TemplateRun run;
  const fs::path out = run.dir / "refused";
  const auto r = run.predict(out, "--templates");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--templates needs")) << r.output;
  EXPECT_TRUE(contains(r.output, "--template-db")) << r.output;
  EXPECT_FALSE(fs::exists(out));

  const auto bad_date = run.predict(out, "--templates --template-db " + shell_word(run.db.path()) +
                                             " --max-template-date 2025/01/01");
  EXPECT_EQ(bad_date.exit_code, 2) << bad_date.output;
  EXPECT_TRUE(contains(bad_date.output, "YYYY-MM-DD")) << bad_date.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(PredictTemplatesE2eTest, ReadsAlphaFold2sPdbHitsFromTheMsaDirectory) {
  const TemplateRun run;
  const fs::path first = run.dir / "first";
  ASSERT_EQ(run.predict(first, "--templates --template-db " + shell_word(run.db.path())).exit_code,
            0);
  // AlphaFold2's layout: JOB/msas/ with the uniref90 alignment (the query alone here) and the
  // template hits of an earlier search.
  const fs::path msas = run.dir / "msas" / "ubiquitin" / "msas";
  fs::create_directories(msas);
  fs::copy_file(first / "ubiquitin_env" / "pdb_hits.sto", msas / "pdb_hits.sto");
  testing::write_file(msas / "uniref90_hits.sto",
                      "# STOCKHOLM 1.0\n\nquery " + testing::kUbiquitin + "\n//\n");
  const fs::path out = run.dir / "from_msa_dir";
  const auto r = run.predict(out, "--templates --template-db " + shell_word(run.db.path()) +
                                      " --msa-dir " + shell_word(run.dir / "msas"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "templates: 2 from " + (msas / "pdb_hits.sto").string())) << log;
  EXPECT_FALSE(contains(log, "searching templates")) << log;
  EXPECT_FALSE(fs::exists(out / "ubiquitin_env"));
}

}  // namespace
}  // namespace cpufold
