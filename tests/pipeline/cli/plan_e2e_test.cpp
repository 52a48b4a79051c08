// `cpufold plan` on predict's and evaluate's inputs: what it prints in each format, and that
// predict and evaluate then follow the plan it printed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "pipeline/batch/chunk_sizes_json.h"
#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;

std::string q(const std::filesystem::path& p) {
  return std::string("'").append(p.string()).append("'");  // GCC 12 -Wrestrict on "'" + ...
}

std::string proteins() {
  return q(testing::examples_dir() / "proteins.fasta");
}

std::string tiny_features() {
  return "--params " + q(testing::test_data_dir() / "params" / "params_model_1_ptm.npz") +
         " --features " +
         q(testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5");
}

nlohmann::json plan_json(const std::string& args) {
  const auto r = run_cpufold("plan " + args + " --format json --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto start = r.output.find('{');
  EXPECT_NE(start, std::string::npos) << r.output;
  return nlohmann::json::parse(r.output.substr(start));
}

TEST(PlanE2eTest, TextNamesEveryBlockThePeakAndTheSmallestBudget) {
  const auto r =
      run_cpufold("plan " + proteins() + " " + testing::fast_predict_options("1") + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* text :
       {"process (code, libraries, threads, heap)", "scratch arena", "outputs arena",
        "predicted peak (DRAM)", "chunk size", "smallest budget that fits"}) {
    EXPECT_TRUE(contains(r.output, text)) << text << " missing in\n" << r.output;
  }
}

TEST(PlanE2eTest, JsonHasTheFiguresScriptsReadPerJobAndForTheLargest) {
  const nlohmann::json j = plan_json(proteins() + " " + testing::fast_predict_options("1,3"));
  ASSERT_TRUE(j["jobs"].is_array());
  ASSERT_GE(j["jobs"].size(), 2u);
  std::size_t largest = 0;
  for (const auto& job : j["jobs"]) {
    for (const char* key : {"dram_peak_bytes", "spill_bytes", "fits", "min_budget_bytes",
                            "chunk_size", "n_res", "blocks"}) {
      EXPECT_TRUE(job.contains(key)) << key << " missing in " << job.dump();
    }
    const auto peak = job["dram_peak_bytes"].get<std::size_t>();
    std::size_t sum = 0;
    for (const auto& b : job["blocks"]) sum += b["bytes"].get<std::size_t>();
    EXPECT_EQ(sum, peak) << "the blocks add up to the peak";
    EXPECT_LE(job["min_budget_bytes"].get<std::size_t>(), peak);
    EXPECT_TRUE(job["fits"].get<bool>());
    largest = std::max(largest, peak);
  }
  EXPECT_EQ(j["dram_peak_bytes"].get<std::size_t>(), largest);
  EXPECT_EQ(j["spill_bytes"].get<std::size_t>(), 0u);
  EXPECT_TRUE(j["fits"].get<bool>());
}

TEST(PlanE2eTest, SlurmLineAsksForTheLargestPeakWithItsMargin) {
  const nlohmann::json j = plan_json(tiny_features());
  const auto r = run_cpufold("plan " + tiny_features() + " --format slurm");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("#SBATCH --mem=([0-9]+)M\n"))) << r.output;
  const double asked_mib = std::stod(m[1].str());
  const double peak_mib = j["dram_peak_bytes"].get<double>() / (1 << 20);
  EXPECT_GE(asked_mib, peak_mib * 1.15);
  EXPECT_LE(asked_mib, peak_mib * 1.15 + 1);
  EXPECT_TRUE(contains(r.output, "15% margin")) << r.output;
}

TEST(PlanE2eTest, BudgetBelowTheSmallestPlanExits4AndSaysWhatWouldFit) {
  const auto r = run_cpufold("plan " + tiny_features() + " --mem-budget 1M");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "does NOT fit the budget 1.00 MiB")) << r.output;
  EXPECT_TRUE(contains(r.output, "smallest budget that fits")) << r.output;
}

TEST(PlanE2eTest, NeedsInputOrFeaturesAndRefusesBadSizes) {
  EXPECT_EQ(run_cpufold("plan").exit_code, 2);
  const auto both = run_cpufold("plan " + proteins() + " " + tiny_features());
  EXPECT_EQ(both.exit_code, 2) << both.output;
  const auto bad = run_cpufold("plan " + tiny_features() + " --mem-budget 1.5X");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--mem-budget")) << bad.output;
}

TEST(PlanE2eTest, EvaluateFollowsThePlanItPrinted) {
  const ScratchDir dir;
  for (const std::string budget : {"", " --mem-budget 2G"}) {
    const nlohmann::json j = plan_json(tiny_features() + budget);
    const auto r =
        run_cpufold("evaluate " + tiny_features() + budget + " --out " + q(dir / "out.h5"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto chunks = j["jobs"][0]["chunk_sizes"].get<ChunkSizes>();
    EXPECT_EQ(j["jobs"][0]["chunk_size"], chunks.evoformer);
    const std::string said = describe_chunk_sizes(chunks);
    EXPECT_TRUE(contains(r.output, "; " + said + ";")) << said << " not in\n" << r.output;
  }
}

}  // namespace
}  // namespace cpufold
