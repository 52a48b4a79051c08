// The packed-weights cache seen from outside: `cpufold evaluate` writes it once and reuses it,
// with outputs bit-identical to a run without it; two processes on one .h5 map it shared, so
// its pages count once in their PSS, and neither keeps the .h5's pages resident, not even
// while building the model.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "io/convert_params.h"
#include "io/hdf5_tensor_file.h"
#include "io/model_config.h"
#include "io/weight_store.h"
#include "pipeline/runner/model_runner.h"
#include "pipeline/runner/synthetic_features.h"
#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> cache_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".weights") out.push_back(e.path());
  return out;
}

CommandResult evaluate(const std::string& env, const fs::path& params, const fs::path& out) {
  return run_command("OMP_NUM_THREADS=1 " + env + " '" CPUFOLD_BINARY "' evaluate --params '" +
                     params.string() + "' --features '" +
                     tiny_reference("model_1_ptm_r24_c8_e16_t2_rec1_s0.h5").string() +
                     "' --recycles 0 --out '" + out.string() + "'");
}

void expect_same_outputs(const fs::path& a, const fs::path& b) {
  const Hdf5TensorReader ra(a), rb(b);
  const auto names = ra.datasets_under("outputs");
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    EXPECT_EQ(ra.read_f32(name), rb.read_f32(name)) << name;
  }
}

TEST(WeightCacheE2e, EvaluateWritesTheCacheOnceAndMatchesARunWithoutIt) {
  const ScratchDir dir;
  const fs::path params = tiny_params("model_1_ptm");
  const std::string env = "CPUFOLD_CACHE_DIR='" + (dir / "cache").string() + "'";
  const auto off = evaluate("CPUFOLD_WEIGHT_CACHE=off", params, dir / "off.h5");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  const auto first = evaluate(env, params, dir / "first.h5");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto files = cache_files(dir / "cache");
  ASSERT_EQ(files.size(), 1u);
  struct stat before {};
  ASSERT_EQ(::stat(files[0].c_str(), &before), 0);

  const auto second = evaluate(env, params, dir / "second.h5");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("warning"), std::string::npos) << second.output;
  struct stat after {};
  ASSERT_EQ(::stat(files[0].c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_EQ(cache_files(dir / "cache").size(), 1u);
  expect_same_outputs(dir / "off.h5", dir / "first.h5");
  expect_same_outputs(dir / "off.h5", dir / "second.h5");
}

TEST(WeightCacheE2e, CorruptCacheIsRebuiltWithAWarningAndTheSameOutputs) {
  const ScratchDir dir;
  const fs::path params = tiny_params("model_1_ptm");
  const std::string env = "CPUFOLD_CACHE_DIR='" + (dir / "cache").string() + "'";
  ASSERT_EQ(evaluate(env, params, dir / "first.h5").exit_code, 0);
  const auto files = cache_files(dir / "cache");
  ASSERT_EQ(files.size(), 1u);
  fs::resize_file(files[0], fs::file_size(files[0]) / 2);
  const auto rebuilt = evaluate(env, params, dir / "rebuilt.h5");
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.output;
  EXPECT_NE(rebuilt.output.find("warning: weight cache"), std::string::npos) << rebuilt.output;
  expect_same_outputs(dir / "first.h5", dir / "rebuilt.h5");
  const auto again = evaluate(env, params, dir / "again.h5");
  EXPECT_EQ(again.output.find("warning"), std::string::npos) << again.output;
}

// Rss and Pss (kB) of the mappings of files whose name ends with `suffix` in process `pid`.
struct Resident {
  long rss = 0, pss = 0;
};
Resident resident(pid_t pid, const std::string& suffix) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps");
  Resident r;
  bool in_mapping = false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first.find('-') != std::string::npos && first.back() != ':') {  // a mapping's header
      std::string path = line.substr(line.find_last_of(' ') + 1);
      in_mapping = path.size() >= suffix.size() &&
                   path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    } else if (in_mapping && (first == "Rss:" || first == "Pss:")) {
      long kb = 0;
      words >> kb;
      (first == "Rss:" ? r.rss : r.pss) += kb;
    }
  }
  return r;
}

// What a model process reports once its model is built: the resident kB of the parameter
// file's and of the cache's mappings, before anything else reads them, and the kB of packed
// weights it maps from the cache.
struct Built {
  long params_rss = 0, cache_rss = 0, shared_kb = 0;
};

// A child that builds the model from `h5` and reports Built on `ready`, then runs it once on
// small random inputs (so that the forward reads every packed weight), says so on `ready`,
// and waits until `hold` closes.
pid_t start_model_process(const fs::path& h5, const int (&ready)[2], const int (&hold)[2]) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::close(ready[0]);
  ::close(hold[1]);  // so that the parent's close is the last and ends the read below
  int code = 0;
  try {
    WeightStore store = WeightStore::open(h5);
    const ModelConfig config = ModelConfig::from_weights(store);
    const ModelRunner runner(store, config);
    // Measured before release_values(): building the model must already have let go of the
    // pages it read, of the .h5 (packing) and of the cache (its check).
    const Built built{resident(::getpid(), ".h5").rss, resident(::getpid(), ".weights").rss,
                      static_cast<long>(runner.weight_residency().shared_bytes / 1024)};
    if (::write(ready[1], &built, sizeof built) != sizeof built) code = 4;
    store.release_values();
    if (built.shared_kb == 0) code = 3;
    RunOptions options;
    options.recycles = 0;
    runner.run(synthetic_feature_source({24, 8, 16, 2, 1}), options);
    char c = 'r';
    if (::write(ready[1], &c, 1) != 1) code = 4;
    while (::read(hold[0], &c, 1) > 0) {
    }
  } catch (...) {
    code = 2;
  }
  ::_exit(code);
}

TEST(WeightCacheE2e, TwoProcessesOnOneH5ShareTheCacheAndDropTheH5Pages) {
  const ScratchDir dir;
  const fs::path h5 = dir / "params_model_1_ptm.h5";
  convert_params(tiny_params("model_1_ptm"), h5, "model_1_ptm");
  ::setenv("CPUFOLD_CACHE_DIR", (dir / "cache").c_str(), 1);
  int ready[2], hold[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(hold), 0);
  std::vector<pid_t> children;
  std::vector<Built> built(2);
  for (int i = 0; i < 2; ++i) {  // one after the other: the first writes the cache
    children.push_back(start_model_process(h5, ready, hold));
    ASSERT_EQ(::read(ready[0], &built[i], sizeof(Built)), static_cast<ssize_t>(sizeof(Built)))
        << "model process " << i << " failed";
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1) << "model process " << i << " failed";
  }
  const auto files = cache_files(dir / "cache");
  ASSERT_EQ(files.size(), 1u);
  const long h5_kb = static_cast<long>(fs::file_size(h5) / 1024);
  std::vector<Resident> cache, params;
  for (pid_t pid : children) {
    cache.push_back(resident(pid, ".weights"));
    params.push_back(resident(pid, ".h5"));
  }
  ::close(hold[1]);
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  ::unsetenv("CPUFOLD_CACHE_DIR");
  for (std::size_t i = 0; i < children.size(); ++i) {
    SCOPED_TRACE("process " + std::to_string(i) + (i == 0 ? " (wrote the cache)" : ""));
    // Once built, neither the .h5 (the first process packed every weight from it) nor the
    // cache (which both checked whole) is resident: a first run holds its packed copies and
    // the file it packs them from at the same time only for the last few MB.
    EXPECT_LE(built[i].params_rss, h5_kb / 20 + 8);
    EXPECT_LE(built[i].cache_rss, 8);
    // After a forward, both map the packed weights ...
    EXPECT_GE(cache[i].rss, built[i].shared_kb * 9 / 10);
    // ... and none of the .h5's pages stay resident.
    EXPECT_LE(params[i].rss, h5_kb / 20 + 8);
  }
  // Shared: each process's PSS is half of its RSS, so together they count the file once.
  EXPECT_LE(cache[0].pss + cache[1].pss, std::max(cache[0].rss, cache[1].rss) + 8);
}

}  // namespace
}  // namespace cpufold::testing
