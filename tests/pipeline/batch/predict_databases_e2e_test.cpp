// `cpufold predict --databases DIR` from a FASTA file alone: the jobs' MSAs searched in tiny
// AlphaFold2-layout databases built in the test, templates found in the same directory, every
// job folded, and a rerun that searches nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/pipeline/templates/template_fixture.h"
#include "tests/support/tiny_search_databases.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;
using testing::shell_word;

struct DatabaseRun {
  ScratchDir dir;
  testing::TemplateDatabase db;  // its directory is the --databases DIR
  fs::path input = dir / "q.fasta";

  DatabaseRun() {
    db.add("2hom", "GS" + testing::mutated(testing::kUbiquitin, {4, 20, 40, 60}, 'A'));
    testing::write_fasta(db.path() / "uniref90" / "uniref90.fasta",
                         testing::mutated_database(12, 20, 7));
    testing::write_fasta(db.path() / "mgnify" / "mgy_clusters_2022_05.fa",
                         testing::mutated_database(6, 10, 8));
    testing::write_file(input, ">ubiquitin\n" + testing::kUbiquitin +
                                   "\n>villin_HP35\nLSDEDFKAVFGMTRSAFANLPLWKQQNLKKEKGLF\n");
  }

  testing::CommandResult predict(const fs::path& out, const std::string& extra = "") const {
    return run_cpufold("predict " + shell_word(input) + " " + shell_word(out) + " --data '" +
                       testing::test_data_dir().string() +
                       "' --model-order 1 --num-models 1 --num-recycle 1 --threads 1 --quiet "
                       "--databases " +
                       shell_word(db.path()) + " " + extra);
  }
};

TEST(PredictDatabasesE2eTest, FoldsAFastaWithSearchedMsasAndTemplatesAndARerunSearchesNothing) {
  const DatabaseRun run;
  const fs::path out = run.dir / "out";
  const auto r = run.predict(out, "--templates");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "search: 2 job(s) searched, 0 kept from an earlier run")) << log;
  EXPECT_TRUE(contains(log, "searched without: small_bfd")) << log;
  for (const std::string job : {"ubiquitin", "villin_HP35"}) {
    EXPECT_TRUE(fs::is_regular_file(out / "msas" / job / "msas" / "uniref90_hits.sto")) << job;
    const std::string scores =
        testing::read_file(out / (job + "_scores_rank_001_alphafold2_ptm_model_1_seed_000.json"));
    EXPECT_TRUE(contains(scores, "\"databases\"")) << scores;
  }
  // The query and its mutants: more than one row, the query first.
  EXPECT_TRUE(contains(log, "MSA source databases")) << log;
  EXPECT_FALSE(contains(log, "MSA source databases, 1 row(s)")) << log;
  EXPECT_TRUE(contains(log, "templates: 1 from")) << log;
  EXPECT_TRUE(contains(log, "(2hom_A)")) << log;
  EXPECT_TRUE(contains(testing::read_file(out / "timings.json"), "\"search_seconds\""));

  const auto again = run.predict(out, "--templates --overwrite-existing-results");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "search: 0 job(s) searched, 2 kept from an earlier run")) << log;
  EXPECT_TRUE(contains(log, "template hits kept from an earlier run")) << log;
}

// `cpufold search --templates` keeps AF2's pdb_hits.sto beside the MSAs; predict --msa-dir
// --templates then takes the hits from there without a search of its own.
TEST(PredictDatabasesE2eTest, SearchWithTemplatesWritesPdbHitsThatPredictReads) {
  const DatabaseRun run;
  const fs::path msas = run.dir / "msas";
  const std::string search = "search " + shell_word(run.input) + " " + shell_word(msas) +
                             " --databases " + shell_word(run.db.path()) +
                             " --templates --threads 1";
  const auto r = run_cpufold(search);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path hits = msas / "ubiquitin" / "msas" / "pdb_hits.sto";
  ASSERT_TRUE(fs::is_regular_file(hits)) << r.output;
  EXPECT_TRUE(contains(testing::read_file(hits), "2hom_A")) << testing::read_file(hits);
  EXPECT_TRUE(contains(r.output, "profile of uniref90_hits.sto")) << r.output;
  const auto again = run_cpufold(search);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "ubiquitin: pdb_hits.sto kept from an earlier run"))
      << again.output;

  const fs::path out = run.dir / "out";
  const auto p =
      run_cpufold("predict " + shell_word(run.input) + " " + shell_word(out) + " --msa-dir " +
                  shell_word(msas) + " --templates --template-db " + shell_word(run.db.path()) +
                  " --data '" + testing::test_data_dir().string() +
                  "' --model-order 1 --num-models 1 --num-recycle 1 --threads 1 --quiet");
  ASSERT_EQ(p.exit_code, 0) << p.output;
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "templates: 1 from " + hits.string())) << log;
  EXPECT_FALSE(contains(log, "searching templates with hmmsearch")) << log;

  const auto mmseqs =
      run_cpufold("search " + shell_word(run.input) + " " + shell_word(run.dir / "m") +
                  " --databases " + shell_word(run.db.path()) + " --method mmseqs2 --templates");
  EXPECT_EQ(mmseqs.exit_code, 2) << mmseqs.output;
  EXPECT_TRUE(contains(mmseqs.output, "--method mmseqs2 does not write")) << mmseqs.output;
}

// With --instances each job's search (its templates' too) is a task of the scheduler on one
// instance, and its fold waits only on it; each job's search time reaches timings.json through
// its fold's worker.
TEST(PredictDatabasesE2eTest, InstancesSearchEachJobAsATaskThenFoldIt) {
  const DatabaseRun run;
  const fs::path out = run.dir / "out";
  const auto r =
      run.predict(out, "--templates --instances 2 --threads-per-instance 1 --search-memory 64M");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string timings = testing::read_file(out / "timings.json");
  std::size_t records = 0;
  for (std::size_t at = timings.find("\"search_seconds\""); at != std::string::npos;
       at = timings.find("\"search_seconds\"", at + 1)) {
    ++records;
  }
  EXPECT_EQ(records, 2u) << timings;
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "ubiquitin (76 aa): search started on instance")) << log;
  EXPECT_TRUE(contains(log, "counted as 64.0 MiB")) << log;
  EXPECT_TRUE(contains(log, "villin_HP35 (35 aa): search done in")) << log;
  const std::string batch = testing::read_file(out / "batch.json");
  EXPECT_TRUE(contains(batch, "\"search\": {\n        \"status\": \"done\"")) << batch;
  EXPECT_TRUE(contains(batch, "\"counted_mib\": 64.0")) << batch;
  const std::string search_log = testing::read_file(out / "logs" / "ubiquitin.search.log.txt");
  EXPECT_TRUE(contains(search_log, "uniref90_hits.sto")) << search_log;
  // The template search runs in the search task; the fold reads the hits it kept.
  EXPECT_TRUE(contains(search_log, "searching templates with hmmsearch")) << search_log;
  const std::string worker_log = testing::read_file(out / "logs" / "ubiquitin.log.txt");
  EXPECT_TRUE(contains(worker_log, "MSA source databases")) << worker_log;
  EXPECT_TRUE(contains(worker_log, "template hits kept from an earlier run")) << worker_log;
  EXPECT_TRUE(contains(worker_log, "(2hom_A)")) << worker_log;

  const auto again = run.predict(out, "--templates --instances 2 --threads-per-instance 1");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(testing::read_file(out / "log.txt"), "skipped, already done"));
}

// A search that fails fails its own job; the other job is searched and folded, and the batch
// ends with the external program's status. Alike in one process and with --instances.
TEST(PredictDatabasesE2eTest, ASearchThatFailsFailsOnlyItsJob) {
  const DatabaseRun run;
  const fs::path bin = run.dir / "bin";
  fs::create_directories(bin);
  // jackhmmer that refuses villin's query (its second to last argument) and runs the real one
  // for every other.
  testing::write_file(bin / "jackhmmer",
                      "#!/bin/bash\n"
                      "query=\"${@: -2:1}\"\n"
                      "if grep -q LSDEDFKAVFGMTRSAFANLPLWKQQNLKKEKGLF \"$query\"; then\n"
                      "  echo 'fake jackhmmer: this query is refused' >&2; exit 3\n"
                      "fi\n"
                      "exec /usr/bin/jackhmmer \"$@\"\n");
  fs::permissions(bin / "jackhmmer", fs::perms::owner_all);
  for (const std::string mode : {"--threads 1", "--instances 2 --threads-per-instance 1"}) {
    SCOPED_TRACE(mode);
    const fs::path out = run.dir / ("out" + std::to_string(mode.size()));
    const auto r = testing::run_command(
        "PATH=" + shell_word(bin) + ":$PATH '" CPUFOLD_BINARY "' predict " + shell_word(run.input) +
        " " + shell_word(out) + " --data '" + testing::test_data_dir().string() +
        "' --model-order 1 --num-models 1 --num-recycle 1 --quiet --databases " +
        shell_word(run.db.path()) + " " + mode);
    EXPECT_EQ(r.exit_code, 6) << r.output;
    EXPECT_TRUE(contains(r.output, "1 of 2 job(s) failed in their search")) << r.output;
    const std::string log = testing::read_file(out / "log.txt");
    EXPECT_TRUE(contains(log, "villin_HP35: FAILED: search: ")) << log;
    EXPECT_TRUE(contains(log, "this query is refused")) << log;
    EXPECT_TRUE(fs::is_regular_file(out / "ubiquitin.done.txt")) << log;
    EXPECT_FALSE(fs::exists(out / "villin_HP35.done.txt")) << log;
    EXPECT_FALSE(fs::exists(out / "msas" / "villin_HP35" / "msas" / "uniref90_hits.sto"));
  }
}

// SIGTERM while the searches run stops them with the batch: their jobs are interrupted, no
// scratch directory is left, and a rerun searches and folds them.
TEST(PredictDatabasesE2eTest, SigtermStopsTheSearchWorkersAndARerunSearchesAgain) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  const DatabaseRun run;
  const fs::path bin = run.dir / "bin";
  fs::create_directories(bin);
  testing::write_file(bin / "jackhmmer", "#!/bin/sh\nexec sleep 120\n");  // a search that hangs
  fs::permissions(bin / "jackhmmer", fs::perms::owner_all);
  const fs::path out = run.dir / "out";
  const std::vector<std::string> args{"predict",
                                      run.input.string(),
                                      out.string(),
                                      "--data",
                                      testing::test_data_dir().string(),
                                      "--model-order",
                                      "1",
                                      "--num-models",
                                      "1",
                                      "--num-recycle",
                                      "1",
                                      "--quiet",
                                      "--databases",
                                      run.db.path().string(),
                                      "--instances",
                                      "2",
                                      "--threads-per-instance",
                                      "1"};
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", (bin.string() + ":" + path).c_str(), 1);
  const pid_t batch = testing::spawn_cpufold(args);
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_GT(batch, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto both_started = [&] {
    const std::string log = fs::exists(out / "log.txt") ? testing::read_file(out / "log.txt") : "";
    return contains(log, "ubiquitin (76 aa): search started") &&
           contains(log, "villin_HP35 (35 aa): search started");
  };
  while (!both_started() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(both_started());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the fake jackhmmer runs
  ::kill(batch, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(batch, &status, 0), batch);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "stopping: signal 15 (Terminated); 2 worker(s) told to stop")) << log;
  const std::string batch_json = testing::read_file(out / "batch.json");
  EXPECT_FALSE(contains(batch_json, "\"status\": \"done\"")) << batch_json;
  EXPECT_TRUE(contains(batch_json, "\"status\": \"interrupted\"")) << batch_json;
  for (const std::string& name : testing::file_names(out / "msas")) {
    EXPECT_FALSE(contains(name, ".cpufold-search.tmp.")) << name;
  }

  const auto rerun = run.predict(out, "--instances 2 --threads-per-instance 1");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  for (const std::string job : {"ubiquitin", "villin_HP35"}) {
    EXPECT_TRUE(fs::is_regular_file(out / (job + ".done.txt"))) << job;
  }
}

TEST(PredictDatabasesE2eTest, ADatabaseDirectoryWithoutTheMethodsDatabasesIsRefusedBeforeWork) {
  const DatabaseRun run;
  const fs::path out = run.dir / "out";
  const auto r = run.predict(out, "--search-method mmseqs2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "uniref30")) << r.output;
  EXPECT_FALSE(fs::exists(out / "msas")) << r.output;
}

}  // namespace
}  // namespace cpufold
