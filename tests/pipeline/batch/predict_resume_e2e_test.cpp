// A `cpufold predict` batch killed with SIGKILL mid-run resumes: finished jobs are skipped,
// the others are folded, and no temporary or half-written file is left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::ScratchDir;

std::size_t count_done(const fs::path& out) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 9 && name.substr(name.size() - 9) == ".done.txt") ++n;
  }
  return n;
}

// Waits (at most a minute) until `reached` holds, then kills `pid` with SIGKILL and reaps it.
// Fails the test when the process ended first.
void kill_when(pid_t pid, const std::function<bool()>& reached, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (!reached() && std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ADD_FAILURE() << what << " ended before it could be killed (status " << status << ")";
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << what << " was not ended by the kill";
}

TEST(PredictResumeE2eTest, KilledBatchResumesWithFinishedJobsSkipped) {
  ScratchDir dir;
  const fs::path fasta = dir / "batch.fasta";
  const fs::path out = dir / "out";
  std::mt19937 rng(5);
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  std::string text;
  for (int j = 0; j < 20; ++j) {
    text += ">job" + std::to_string(j) + "\n";
    for (int i = 0; i < 40 + 4 * j; ++i) text += letters[rng() % letters.size()];
    text += "\n";
  }
  testing::write_file(fasta, text);

  // Run the binary directly (not through a shell) so the kill hits cpufold itself.
  const pid_t pid = testing::spawn_cpufold({"predict", fasta.string(), out.string(), "--data",
                                            testing::test_data_dir().string(), "--model-order", "3",
                                            "--num-models", "1", "--num-recycle", "0", "--threads",
                                            "1", "--quiet", "--msa-mode", "single_sequence"});
  ASSERT_GT(pid, 0);

  kill_when(
      pid, [&] { return count_done(out) >= 3; }, "the batch");
  ASSERT_FALSE(HasFailure());
  const std::size_t done_before = count_done(out);
  ASSERT_GE(done_before, 3u);
  ASSERT_LT(done_before, 20u) << "killed too late to test anything";

  // Rerun: the finished jobs are skipped, every job ends done.
  const auto r = testing::run_cpufold("predict '" + fasta.string() + "' '" + out.string() +
                                      "' --data '" + testing::test_data_dir().string() +
                                      "' --model-order 3 --num-models 1 --num-recycle 0 --threads 1"
                                      " --msa-mode single_sequence");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, std::to_string(20 - done_before) + " done, " +
                                     std::to_string(done_before) + " skipped"))
      << r.output;
  EXPECT_EQ(count_done(out), 20u);

  // Exactly the expected files: nothing temporary, nothing stale, nothing half-written.
  std::set<std::string> expected = {"cite.bibtex", "config.json", "log.txt", "logs",
                                    "timings.json"};
  std::set<std::string> own_records = {"batch.lock"};
  for (int j = 0; j < 20; ++j) {
    const std::string job = "job" + std::to_string(j);
    const std::vector<std::string> tags = testing::ranked_tags(out, job);
    ASSERT_EQ(tags.size(), 1u) << job;
    const auto files = testing::job_files(job, tags);
    expected.insert(files.begin(), files.end());
    own_records.insert(job + ".timings.json");
    const std::string pdb = testing::read_file(out / (job + "_unrelaxed_" + tags[0] + ".pdb"));
    EXPECT_TRUE(contains(pdb, "\nEND")) << job << " has a truncated PDB";
  }
  EXPECT_EQ(testing::file_names(out), expected);
  EXPECT_EQ(testing::file_names(out / "logs"), own_records);
  // The jobs the killed run finished are in timings.json too, from their records under logs/.
  const auto timings = nlohmann::json::parse(testing::read_file(out / "timings.json"));
  ASSERT_EQ(timings["jobs"].size(), 20u) << timings.dump(1);
  for (const auto& [job, record] : timings["jobs"].items()) {
    EXPECT_EQ(record["status"], "done") << job;
    EXPECT_EQ(record["runs"].size(), 1u) << job;
  }
}

std::size_t count_finished_runs(const fs::path& out) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out / "logs", ec))
    n += entry.path().extension() == ".finished";
  return n;
}

// Killed after the first of three seeds of one job: the rerun keeps that seed's results and
// runs only the other two, and every file is the same as an uninterrupted run's.
TEST(PredictResumeE2eTest, AJobKilledBetweenModelsResumesAtTheModelInFlight) {
  ScratchDir dir;
  std::mt19937 rng(9);
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  std::string seq;
  for (int i = 0; i < 90; ++i) seq += letters[rng() % letters.size()];
  testing::write_file(dir / "q.fasta", ">q\n" + seq + "\n");
  const std::vector<std::string> options = {"--data",        testing::test_data_dir().string(),
                                            "--model-order", "3",
                                            "--num-models",  "1",
                                            "--num-seeds",   "3",
                                            "--num-recycle", "3",
                                            "--threads",     "1",
                                            "--msa-mode",    "single_sequence",
                                            "--quiet"};
  const auto args = [&](const fs::path& out) {
    std::vector<std::string> a = {"predict", (dir / "q.fasta").string(), out.string()};
    a.insert(a.end(), options.begin(), options.end());
    return a;
  };
  const auto command = [&](const fs::path& out) {
    std::string c;
    for (const std::string& a : args(out)) c += (c.empty() ? "" : " ") + ("'" + a + "'");
    return c.substr(c.find(' ') + 1);  // without "predict"'s quotes doubled
  };

  const pid_t pid = testing::spawn_cpufold(args(dir / "killed"));
  ASSERT_GT(pid, 0);
  kill_when(
      pid, [&] { return count_finished_runs(dir / "killed") >= 1; }, "the job");
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(count_done(dir / "killed"), 0u) << "killed too late to test anything";
  const std::size_t kept = count_finished_runs(dir / "killed");
  ASSERT_GE(kept, 1u);
  ASSERT_LT(kept, 3u);

  const auto resumed = testing::run_cpufold("predict " + command(dir / "killed"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const std::string log = testing::read_file(dir / "killed" / "log.txt");
  EXPECT_TRUE(contains(log, "model_3 seed 000: finished by an earlier run that was stopped"))
      << log;
  EXPECT_EQ(count_finished_runs(dir / "killed"), 0u) << "records are removed once the job is done";

  const auto plain = testing::run_cpufold("predict " + command(dir / "plain"));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  std::size_t compared = 0;
  for (const std::string& name : testing::file_names(dir / "plain")) {
    if (name == "log.txt" || name == "timings.json" || name == "logs" || name == "q.done.txt")
      continue;
    EXPECT_EQ(testing::read_file(dir / "killed" / name), testing::read_file(dir / "plain" / name))
        << name;
    ++compared;
  }
  EXPECT_GE(compared, 10u);
  const auto timings = nlohmann::json::parse(testing::read_file(dir / "killed" / "timings.json"));
  EXPECT_EQ(timings["jobs"]["q"]["runs"].size(), 3u) << timings.dump(1);
}

}  // namespace
}  // namespace cpufold
