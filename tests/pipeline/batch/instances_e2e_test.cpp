// `cpufold predict --instances K`: worker processes pinned to their own cores, admitted by
// their planned peaks under --mem-budget; the same files as one instance; a killed worker loses
// only its job's attempt; SIGTERM stops the batch cleanly and a rerun resumes.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::ScratchDir;
using Json = nlohmann::json;

void write_jobs(const fs::path& fasta, const std::vector<std::pair<std::string, int>>& jobs) {
  std::mt19937 rng(11);
  const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
  std::string text;
  for (const auto& [name, length] : jobs) {
    text += ">" + name + "\n";
    for (int i = 0; i < length; ++i) text += letters[rng() % letters.size()];
    text += "\n";
  }
  testing::write_file(fasta, text);
}

std::string predict_args(const fs::path& fasta, const fs::path& out, const std::string& more) {
  return "predict " + testing::shell_word(fasta) + " " + testing::shell_word(out) + " --data " +
         testing::shell_word(testing::test_data_dir()) +
         " --model-order 3 --num-models 1 --msa-mode single_sequence " + more;
}

Json read_json(const fs::path& path) {
  return Json::parse(testing::read_file(path));
}

// PIDs of running workers of the batch writing to `out` (and folding `job`, when given).
std::vector<pid_t> workers_of(const fs::path& out, const std::string& job = "") {
  std::vector<pid_t> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (const dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::string(e->d_name) + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), {});
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (contains(cmd, out.string()) && contains(cmd, "--worker-job " + job)) pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

std::vector<std::string> spawn_args(const fs::path& fasta, const fs::path& out,
                                    const std::string& recycles) {
  return {"predict",
          fasta.string(),
          out.string(),
          "--data",
          testing::test_data_dir().string(),
          "--model-order",
          "3",
          "--num-models",
          "1",
          "--msa-mode",
          "single_sequence",
          "--num-recycle",
          recycles,
          "--instances",
          "2",
          "--threads-per-instance",
          "1",
          "--quiet"};
}

// Waits until `ready` holds (true) or 60 s pass (false).
template <class Fn>
bool wait_for(Fn ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(InstancesE2eTest, TwoInstancesWriteTheSameFilesAsOneBitForBit) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  ScratchDir dir;
  const fs::path examples = testing::examples_dir() / "proteins.fasta";
  const auto one = testing::run_cpufold(predict_args(
      examples, dir / "one", "--num-recycle 1 --instances 1 --threads-per-instance 1"));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto two = testing::run_cpufold(predict_args(
      examples, dir / "two", "--num-recycle 1 --instances 2 --threads-per-instance 1"));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_TRUE(contains(two.output, "2 instance(s) x 1 thread(s)")) << two.output;

  std::size_t compared = 0;
  for (const std::string& name : testing::file_names(dir / "one")) {
    if (name == "log.txt" || name == "timings.json" || name == "config.json") continue;
    EXPECT_EQ(testing::read_file(dir / "one" / name), testing::read_file(dir / "two" / name))
        << name;
    ++compared;
  }
  EXPECT_GT(compared, 30u);

  const Json batch = read_json(dir / "two" / "batch.json");
  EXPECT_EQ(batch["instances"], 2);
  std::set<std::string> cores;
  for (const Json& job : batch["jobs"]) {
    EXPECT_EQ(job["status"], "done") << job.dump();
    EXPECT_GT(job["measured_peak_mib"].get<double>(), 0) << job.dump();
    EXPECT_GT(job["predicted_peak_mib"].get<double>(), 0) << job.dump();
    cores.insert(job["cores"].get<std::string>());
    EXPECT_TRUE(fs::exists(dir / "two" / "logs" / (job["name"].get<std::string>() + ".log.txt")));
  }
  EXPECT_EQ(cores.size(), 2u) << "each instance has its own core";
  EXPECT_EQ(read_json(dir / "two" / "timings.json")["jobs"].size(), 4u);
}

TEST(InstancesE2eTest, AKilledWorkerLosesOnlyItsAttemptAndIsRetriedAlone) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  ScratchDir dir;
  const fs::path fasta = dir / "jobs.fasta";
  write_jobs(fasta, {{"big", 400}, {"a", 30}, {"b", 40}, {"c", 50}});
  const pid_t batch = testing::spawn_cpufold(spawn_args(fasta, dir / "out", "3"));
  ASSERT_GT(batch, 0);
  ASSERT_TRUE(wait_for([&] { return !workers_of(dir / "out", "big").empty(); }));
  for (pid_t w : workers_of(dir / "out", "big")) ::kill(w, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(batch, &status, 0), batch);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  const std::string log = testing::read_file(dir / "out" / "log.txt");
  EXPECT_EQ(WEXITSTATUS(status), 0) << log;
  EXPECT_TRUE(contains(log, "big: worker killed by signal 9")) << log;
  EXPECT_TRUE(contains(log, "retry, alone, leanest plan")) << log;
  for (const Json& job : read_json(dir / "out" / "batch.json")["jobs"]) {
    EXPECT_EQ(job["status"], "done") << job.dump();
    EXPECT_EQ(job["attempts"], job["name"] == "big" ? 2 : 1) << job.dump();
  }
  for (const char* job : {"big", "a", "b", "c"}) {
    EXPECT_TRUE(fs::exists(dir / "out" / (std::string(job) + ".done.txt"))) << job;
  }
}

TEST(InstancesE2eTest, SigtermStopsTheWorkersCleanlyAndARerunResumes) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  ScratchDir dir;
  const fs::path fasta = dir / "jobs.fasta";
  write_jobs(fasta, {{"x", 400}, {"y", 400}, {"z", 30}});
  const fs::path out = dir / "out";
  const pid_t batch = testing::spawn_cpufold(spawn_args(fasta, out, "3"));
  ASSERT_GT(batch, 0);
  ASSERT_TRUE(wait_for([&] { return workers_of(out).size() == 2; }));
  ::kill(batch, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(batch, &status, 0), batch);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_TRUE(workers_of(out).empty()) << "a worker outlived its batch";
  for (const std::string& name : testing::file_names(out)) {
    EXPECT_FALSE(contains(name, ".tmp.")) << name;
  }
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "stopped by signal 15")) << log;
  for (const Json& job : read_json(out / "batch.json")["jobs"]) {
    EXPECT_EQ(job["status"], "interrupted") << job.dump();
  }

  const auto rerun = testing::run_cpufold(
      predict_args(fasta, out, "--num-recycle 3 --instances 2 --threads-per-instance 1"));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  for (const char* job : {"x", "y", "z"}) {
    EXPECT_TRUE(fs::exists(out / (std::string(job) + ".done.txt"))) << job;
  }
}

TEST(InstancesE2eTest, RunningJobsPlannedPeaksStayUnderTheBudgetAndAJobLargerThanItFailsFirst) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  ScratchDir dir;
  const fs::path fasta = dir / "jobs.fasta";
  // Planned peaks on the tiny weights: about 40, 43, 46, 59 and 73 MiB; 1,500 residues 1.8 GiB.
  write_jobs(fasta, {{"s1", 30}, {"s2", 60}, {"s3", 90}, {"m1", 150}, {"m2", 200}, {"huge", 1500}});
  const auto r = testing::run_cpufold(
      predict_args(fasta, dir / "out",
                   "--num-recycle 1 --instances 2 --threads-per-instance 1 --mem-budget 120M"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "huge")) << r.output;
  EXPECT_TRUE(contains(r.output, "--mem-budget")) << r.output;

  const Json batch = read_json(dir / "out" / "batch.json");
  struct Span {
    double start, end, mib;
  };
  std::vector<Span> spans;
  for (const Json& job : batch["jobs"]) {
    if (job["name"] == "huge") {
      EXPECT_EQ(job["status"], "failed") << job.dump();
      EXPECT_FALSE(job.contains("instance")) << "it never started: " << job.dump();
      continue;
    }
    ASSERT_EQ(job["status"], "done") << job.dump();
    const double start = job["start_seconds"].get<double>();
    spans.push_back(
        {start, start + job["seconds"].get<double>(), job["predicted_peak_mib"].get<double>()});
  }
  // At every start, the peaks of the jobs running then (the weights, 1 MiB, counted once).
  for (const Span& at : spans) {
    double sum = 0;
    int running = 0;
    for (const Span& s : spans) {
      if (s.start <= at.start && at.start < s.end) {
        sum += s.mib;
        ++running;
      }
    }
    EXPECT_LE(sum, 120.0 + running) << running << " jobs at " << at.start;
  }
}

TEST(InstancesE2eTest, ShardsFoldEveryJobExactlyOnce) {
  ScratchDir dir;
  const fs::path fasta = dir / "jobs.fasta";
  std::vector<std::pair<std::string, int>> jobs;
  for (int i = 0; i < 7; ++i) jobs.push_back({"j" + std::to_string(i), 20 + 10 * i});
  write_jobs(fasta, jobs);
  std::size_t total = 0;
  for (int shard = 1; shard <= 3; ++shard) {
    // The second shard comes from Slurm's array variables, the others from --shard.
    const std::string how = shard == 2 ? "" : " --shard " + std::to_string(shard) + "/3";
    const std::string env = shard == 2 ? "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 "
                                         "SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=3 "
                                       : "";
    const auto r =
        testing::run_command(env + testing::shell_word(CPUFOLD_BINARY) + " " +
                             predict_args(fasta, dir / "out", "--num-recycle 0 --threads 1" + how));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "shard " + std::to_string(shard) + "/3")) << r.output;
    const std::size_t before = total;
    total = 0;
    for (const auto& [name, length] : jobs) total += fs::exists(dir / "out" / (name + ".done.txt"));
    EXPECT_GT(total, before) << "shard " << shard << " folded nothing";
    EXPECT_TRUE(contains(r.output, std::to_string(total - before) + " done, 0 skipped"))
        << r.output;
  }
  EXPECT_EQ(total, jobs.size());
}

}  // namespace
}  // namespace cpufold
