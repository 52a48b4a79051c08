// `cpufold bench model` with the tiny test weights: the JSON report's keys and that its numbers
// are sane and consistent (no time is asserted), and the sizes it refuses.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "ops/compute_precision.h"
#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::run_cpufold;
using testing::shell_word;

std::string params(const char* model) {
  return "--params " + shell_word(testing::test_data_dir() / "params" / model);
}

constexpr const char* kSmall =
    " --n-res 16 --msa-rows 8 --extra-rows 16 --recycles 1 --peak-size 128 --threads 1";

TEST(BenchModelE2eTest, Bf16RunReportsBf16AndTheBf16MatmulPeakWhereOneDnnHasIt) {
  if (!bf16_support().available) GTEST_SKIP() << "no oneDNN bf16 matmul on this CPU";
  testing::ScratchDir dir;
  const auto r =
      run_cpufold("bench model " + params("params_model_1_ptm.npz") + kSmall +
                  " --templates 2 --precision bf16 --json " + shell_word(dir / "bench.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "of the bf16 matmul peak")) << r.output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(dir / "bench.json"));
  EXPECT_EQ(j["precision"], "bf16");
  // The peak is a bf16 product: with native bf16 oneDNN names a bf16 kernel (emulated on
  // plain AVX-512 it is "gemm:jit").
  if (bf16_support().native) {
    EXPECT_NE(j["matmul_impl"].get<std::string>().find("bf16"), std::string::npos)
        << j["matmul_impl"];
  }
  EXPECT_GT(j["matmul_peak_gflops_per_s"].get<double>(), 0);
}

// `bench model` of model_1_ptm at the small sizes with two templates and `options`: its output,
// and its JSON report (null when the run failed).
struct SmallRun {
  std::string output;
  nlohmann::json report;
};
SmallRun small_run(const testing::ScratchDir& dir, const std::string& options) {
  const auto r =
      run_cpufold("bench model " + params("params_model_1_ptm.npz") + kSmall + " --templates 2" +
                  options + " --json " + shell_word(dir / "bench.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return {r.output, nullptr};
  return {r.output, nlohmann::json::parse(testing::read_file(dir / "bench.json"))};
}

TEST(BenchModelE2eTest, JsonReportsEveryStageAndTheMatmulPeakOfTheSameRun) {
  testing::ScratchDir dir;
  const SmallRun r = small_run(dir, "");
  ASSERT_FALSE(r.report.is_null());
  EXPECT_TRUE(contains(r.output, "of the fp32 matmul peak")) << r.output;
  const nlohmann::json& j = r.report;
  for (const char* key : {"seconds", "model_gflop", "model_gflops_per_s",
                          "matmul_peak_gflops_per_s", "peak_rss_bytes", "percent_of_peak"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GT(j[key].get<double>(), 0) << key;
  }
  EXPECT_EQ(j["precision"], "fp32");
  // The peak kept is the higher of the measurements before and after the model.
  const auto both = j["matmul_peak_before_after_gflops_per_s"];
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(j["matmul_peak_gflops_per_s"].get<double>(),
            std::max(both[0].get<double>(), both[1].get<double>()));
  EXPECT_FALSE(j["isa"].get<std::string>().empty());
  EXPECT_EQ(j["iterations"], 2);
  EXPECT_EQ(j["sizes"]["templates"], 2);
  EXPECT_NEAR(j["model_gflops_per_s"].get<double>(),
              j["model_gflop"].get<double>() / j["seconds"].get<double>(),
              1e-9 * j["model_gflops_per_s"].get<double>());

  // Every stage ran and has FLOPs (features: none); their FLOPs add up to the model's and
  // their times to the forward's.
  std::set<std::string> names;
  double gflop = 0, seconds = 0;
  for (const auto& s : j["stages"]) {
    const std::string name = s["name"];
    names.insert(name);
    EXPECT_GT(s["seconds"].get<double>(), 0) << name;
    if (name == "features") {
      EXPECT_EQ(s["gflop"].get<double>(), 0);
      continue;
    }
    EXPECT_GT(s["gflop"].get<double>(), 0) << name;
    gflop += s["gflop"].get<double>();
    seconds += s["seconds"].get<double>();
  }
  EXPECT_EQ(names, (std::set<std::string>{"features", "embedders", "templates", "extra_msa",
                                          "evoformer", "structure", "heads"}));
  EXPECT_NEAR(gflop, j["model_gflop"].get<double>(), 1e-9 * gflop);
  EXPECT_NEAR(seconds, j["seconds"].get<double>(), 1e-9 * seconds);
}

// --modules: the modules of the Evoformer and extra-MSA blocks are timed over every block of
// every iteration, and the modules of a stage take no more than the stage.
TEST(BenchModelE2eTest, ModulesAreTimedPerBlockWithinTheirStage) {
  testing::ScratchDir dir;
  const SmallRun r = small_run(dir, " --modules");
  ASSERT_FALSE(r.report.is_null());
  EXPECT_TRUE(contains(r.output, "(outside the modules)")) << r.output;
  const nlohmann::json& j = r.report;
  ASSERT_TRUE(j.contains("modules"));
  std::map<std::string, double> stage_seconds, module_seconds;
  for (const auto& s : j["stages"]) stage_seconds[s["name"]] = s["seconds"];
  std::map<std::pair<std::string, std::string>, std::int64_t> blocks;
  for (const auto& m : j["modules"]) {
    blocks[{m["stage"], m["module"]}] = m["blocks"];
    module_seconds[m["stage"]] += m["seconds"].get<double>();
    EXPECT_GE(m["seconds"].get<double>(), 0);
  }
  for (const auto& [stage, secs] : module_seconds) {
    ASSERT_TRUE(stage_seconds.count(stage)) << stage;
    EXPECT_LE(secs, stage_seconds[stage] + 1e-6) << stage;
  }
  // The tiny weights' depths, times two iterations (--recycles 1).
  const nlohmann::json config = nlohmann::json::parse(
      run_cpufold("info " +
                  shell_word(testing::test_data_dir() / "params" / "params_model_1_ptm.npz") +
                  " --json")
          .output);
  const std::int64_t iterations = 2;
  EXPECT_EQ((blocks[{"evoformer", "msa_row_attention"}]),
            iterations * config["evoformer_blocks"].get<std::int64_t>());
  EXPECT_EQ((blocks[{"evoformer", "outer_product_mean"}]),
            iterations * config["evoformer_blocks"].get<std::int64_t>());
  EXPECT_EQ((blocks[{"extra_msa", "msa_column_global_attention"}]),
            iterations * config["extra_msa_blocks"].get<std::int64_t>());
  EXPECT_EQ((blocks[{"extra_msa", "pair_transition"}]),
            iterations * config["extra_msa_blocks"].get<std::int64_t>());
}

TEST(BenchModelE2eTest, TemplatesForAModelWithoutThemAreRefused) {
  const auto r =
      run_cpufold("bench model " + params("params_model_3_ptm.npz") + kSmall + " --templates 2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--templates 0")) << r.output;
}

TEST(BenchModelE2eTest, ModelWithoutTemplatesDefaultsToNone) {
  testing::ScratchDir dir;
  const auto r = run_cpufold("bench model " + params("params_model_3_ptm.npz") + kSmall +
                             " --json " + shell_word(dir / "bench.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(dir / "bench.json"));
  EXPECT_EQ(j["sizes"]["templates"], 0);
  for (const auto& s : j["stages"]) {
    if (s["name"] == "templates") {
      EXPECT_EQ(s["gflop"].get<double>(), 0);
    }
  }
}

}  // namespace
}  // namespace cpufold
