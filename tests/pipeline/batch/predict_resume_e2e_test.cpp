// A `cpufold predict` batch killed with SIGKILL mid-run resumes: finished jobs are skipped,
// the others are folded, and no temporary or half-written file is left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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
                                            "1", "--quiet"});
  ASSERT_GT(pid, 0);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool exited = false;
  int status = 0;
  while (count_done(out) < 3 && std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_FALSE(exited) << "the batch ended before it could be killed (status " << status << ")";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::size_t done_before = count_done(out);
  ASSERT_GE(done_before, 3u);
  ASSERT_LT(done_before, 20u) << "killed too late to test anything";

  // Rerun: the finished jobs are skipped, every job ends done.
  const auto r =
      testing::run_cpufold("predict '" + fasta.string() + "' '" + out.string() + "' --data '" +
                           testing::test_data_dir().string() +
                           "' --model-order 3 --num-models 1 --num-recycle 0 --threads 1");
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

}  // namespace
}  // namespace cpufold
