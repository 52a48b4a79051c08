// --mem-budget on predict and evaluate: a budget no plan meets is refused before any model
// work (exit 4, with the smallest budget that fits); a tight one that can be met is met, with
// the unbudgeted run's results. Under ../shared/tools/memlimit (when the reference directory
// is there and cgroups are writable) the tight run also completes in a cgroup of that size.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <regex>

#include "tests/memory/spill_test_util.h"
#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::memlimit_tool;
using testing::run_command;
using testing::run_cpufold;
using testing::ScratchDir;

std::string q(const std::filesystem::path& p) {
  return std::string("'").append(p.string()).append("'");  // GCC 12 -Wrestrict on "'" + ...
}

// A query long enough, with an MSA deep enough (512 cluster rows), that slicing matters for the
// tiny model's memory: its unsliced MSA transitions and attention then outweigh the heads'
// N²·bins outputs, which no chunk size changes. The MSA goes to DIR/msas/long.a3m (a --msa-dir).
std::filesystem::path long_query(const ScratchDir& dir) {
  std::mt19937 rng(7);
  const std::string aa = "ACDEFGHIKLMNPQRSTVWY";
  std::string seq;
  for (int i = 0; i < 300; ++i) seq += aa[rng() % aa.size()];
  std::string a3m = ">long\n" + seq + "\n";
  for (int k = 0; k < 520; ++k) {
    std::string row = seq;
    for (char& c : row)
      if (rng() % 10 < 3) c = aa[rng() % aa.size()];
    a3m += ">s" + std::to_string(k) + "\n" + row + "\n";
  }
  std::filesystem::create_directories(dir / "msas");
  testing::write_file(dir / "msas" / "long.a3m", a3m);
  const auto path = dir / "long.fasta";
  testing::write_file(path, ">long\n" + seq + "\n");
  return path;
}

std::string options(const ScratchDir& dir) {
  return "--data " + q(testing::test_data_dir()) + " --msa-dir " + q(dir / "msas") +
         " --max-msa 512:8 --model-order 1 --num-models 1 --num-recycle 0 --threads 1";
}

std::size_t peak_rss_mib(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("peak RSS ([0-9]+) MiB"))) return 0;
  return std::stoul(m[1].str());
}

std::vector<double> plddt(const std::filesystem::path& out) {
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name.find("_scores_rank_001") != std::string::npos) {
      return nlohmann::json::parse(testing::read_file(e.path()))["plddt"]
          .get<std::vector<double>>();
    }
  }
  ADD_FAILURE() << "no scores in " << out;
  return {};
}

TEST(MemBudgetE2eTest, PredictRefusesABudgetNoPlanMeetsBeforeAnyModelWork) {
  const ScratchDir dir;
  const auto r = run_cpufold("predict " + q(long_query(dir)) + " " + q(dir / "out") + " " +
                             options(dir) + " --mem-budget 20M");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "needs at least")) << r.output;
  EXPECT_TRUE(contains(r.output, "more than the memory budget 20.0 MiB")) << r.output;
  EXPECT_TRUE(contains(r.output, "give --mem-budget")) << r.output;
  EXPECT_FALSE(contains(r.output, "iteration 1")) << "the model ran:\n" << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "long.done.txt"));
}

TEST(MemBudgetE2eTest, EvaluateRefusesABudgetNoPlanMeetsWithExit4) {
  const ScratchDir dir;
  const auto r = run_cpufold(
      "evaluate --params " + q(testing::test_data_dir() / "params" / "params_model_1_ptm.npz") +
      " --features " +
      q(testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5") +
      " --out " + q(dir / "out.h5") + " --mem-budget 8M");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "give --mem-budget")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.h5"));
}

TEST(MemBudgetE2eTest, ASpillDirInMemoryIsNotUsedAndTheRefusalSaysWhy) {
  const ScratchDir dir;
  const testing::TmpfsMount ram(dir / "ram", std::size_t{64} << 20);
  if (!ram.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (not root)";
  const auto r = run_cpufold("predict " + q(long_query(dir)) + " " + q(dir / "out") + " " +
                             options(dir) + " --mem-budget 20M --spill-dir " + q(ram.dir()));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: --spill-dir " + ram.dir().string() +
                                     " is in memory (tmpfs or ramfs): spilling there would free "
                                     "nothing"))
      << r.output;
  // Not "add --spill-dir DIR" to a user who gave one.
  EXPECT_FALSE(contains(r.output, "or add --spill-dir DIR")) << r.output;
  EXPECT_TRUE(contains(r.output, "give a directory on a local SSD or a DAX mount")) << r.output;
}

TEST(MemBudgetE2eTest, TightBudgetIsMetWithTheUnbudgetedResults) {
  const ScratchDir dir;
  const auto query = long_query(dir);
  const auto plan_of = [&](const std::string& extra) {
    const auto r = run_cpufold("plan " + q(query) + " " + options(dir) + extra + " --format json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output.substr(r.output.find('{')));
  };
  const auto unsliced = plan_of(" --chunk-size 0")["dram_peak_bytes"].get<std::size_t>();
  const auto smallest = plan_of("")["min_budget_bytes"].get<std::size_t>();
  ASSERT_LT(smallest, unsliced) << "slicing must save memory for this test to mean anything";
  const std::size_t budget_mib = (smallest >> 20) + 1;

  const auto free_run = run_cpufold("predict " + q(query) + " " + q(dir / "free") + " " +
                                    options(dir) + " --chunk-size 0");
  ASSERT_EQ(free_run.exit_code, 0) << free_run.output;
  const std::string budget = " --mem-budget " + std::to_string(budget_mib) + "M";
  const auto tight =
      run_cpufold("predict " + q(query) + " " + q(dir / "tight") + " " + options(dir) + budget);
  ASSERT_EQ(tight.exit_code, 0) << tight.output;
  // The plan's prediction holds within 10% of the measured peak (README, "Memory").
  EXPECT_LE(static_cast<double>(peak_rss_mib(tight.output)), 1.10 * budget_mib) << tight.output;
  // The budget made the planner slice (the unbudgeted default here is unsliced).
  EXPECT_TRUE(contains(free_run.output, "chunk size off (unsliced);")) << free_run.output;
  EXPECT_FALSE(contains(tight.output, "chunk size off (unsliced);")) << tight.output;

  const auto a = plddt(dir / "free"), b = plddt(dir / "tight");
  ASSERT_EQ(a.size(), b.size());
  // The scores file rounds pLDDT to 0.01 (as ColabFold); a value on a rounding edge may move by
  // one step.
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 0.0100001) << "residue " << i;

  if (const auto tool = memlimit_tool()) {
    const auto limited = run_command(q(*tool) + " " + std::to_string(budget_mib) +
                                     "M '" CPUFOLD_BINARY "' predict " + q(query) + " " +
                                     q(dir / "limited") + " " + options(dir) + budget);
    EXPECT_EQ(limited.exit_code, 0) << limited.output;
    EXPECT_TRUE(contains(limited.output, "oom_kill 0")) << limited.output;
  }
}

// The first file in `out` whose name holds `part`.
std::string file_with(const std::filesystem::path& out, const std::string& part) {
  for (const auto& e : std::filesystem::directory_iterator(out))
    if (e.path().filename().string().find(part) != std::string::npos)
      return testing::read_file(e.path());
  ADD_FAILURE() << "no file with '" << part << "' in " << out;
  return {};
}

// A budget below every plan held in DRAM is met by spilling the activations to --spill-dir;
// spilling moves bytes, not arithmetic, so the structure is the same to the last digit.
TEST(MemBudgetE2eTest, SpillDirMeetsABudgetNoPlanInDramMeetsWithIdenticalResults) {
  const ScratchDir dir;
  const auto query = long_query(dir);
  std::filesystem::create_directories(dir / "spill");
  const std::string fixed = " --chunk-size 8", spill = " --spill-dir " + q(dir / "spill");
  const auto plan_of = [&](const std::string& extra) {
    const auto r =
        run_cpufold("plan " + q(query) + " " + options(dir) + fixed + extra + " --format json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output.substr(r.output.find('{')));
  };
  const auto in_dram = plan_of("")["min_budget_bytes"].get<std::size_t>();
  const auto spilled = plan_of(spill)["min_budget_bytes"].get<std::size_t>();
  ASSERT_LT(spilled + (std::size_t{8} << 20), in_dram) << "spilling must save memory here";
  const std::string budget = " --mem-budget " + std::to_string((spilled >> 20) + 1) + "M";

  // Without a spill directory the budget is refused, with the hint.
  const auto refused = run_cpufold("predict " + q(query) + " " + q(dir / "refused") + " " +
                                   options(dir) + fixed + budget);
  EXPECT_EQ(refused.exit_code, 4) << refused.output;
  EXPECT_TRUE(contains(refused.output, "--spill-dir")) << refused.output;

  const auto free_run =
      run_cpufold("predict " + q(query) + " " + q(dir / "free") + " " + options(dir) + fixed);
  ASSERT_EQ(free_run.exit_code, 0) << free_run.output;
  const auto spill_run = run_cpufold("predict " + q(query) + " " + q(dir / "spilled") + " " +
                                     options(dir) + fixed + budget + spill);
  ASSERT_EQ(spill_run.exit_code, 0) << spill_run.output;
  EXPECT_TRUE(contains(spill_run.output, "spilling")) << spill_run.output;
  EXPECT_FALSE(contains(free_run.output, "spilling")) << free_run.output;
  EXPECT_EQ(file_with(dir / "spilled", "_unrelaxed_rank_001"),
            file_with(dir / "free", "_unrelaxed_rank_001"));
  EXPECT_EQ(file_with(dir / "spilled", "_scores_rank_001"),
            file_with(dir / "free", "_scores_rank_001"));
  // The spill files have no name: nothing is left in the directory.
  EXPECT_TRUE(std::filesystem::is_empty(dir / "spill"));

  if (const auto tool = memlimit_tool()) {
    const auto limited = run_command(
        q(*tool) + " " + std::to_string((spilled >> 20) + 1) + "M '" CPUFOLD_BINARY "' predict " +
        q(query) + " " + q(dir / "limited") + " " + options(dir) + fixed + budget + spill);
    EXPECT_EQ(limited.exit_code, 0) << limited.output;
    EXPECT_TRUE(contains(limited.output, "oom_kill 0")) << limited.output;
  }
}

}  // namespace
}  // namespace cpufold
