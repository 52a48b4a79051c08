// `cpufold bench calibrate` measures this machine's time model, and plans follow it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ops/compute_precision.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::run_command;

std::string q(const std::filesystem::path& p) {
  return std::string("'").append(p.string()).append("'");
}

std::string with_time_model(const std::filesystem::path& file, const std::string& args) {
  return "CPUFOLD_TIME_MODEL=" + q(file) + " '" + CPUFOLD_BINARY + "' " + args;
}

std::string tiny_params() {
  return q(testing::test_data_dir() / "params" / "params_model_1_ptm.npz");
}

nlohmann::json plan_of_tiny_features(const std::filesystem::path& time_model) {
  const auto r =
      run_command(with_time_model(time_model, "plan --params " + tiny_params() + " --features " +
                                                  q(testing::test_data_dir() / "reference" /
                                                    "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5") +
                                                  " --format json --quiet"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output.substr(r.output.find('{')))["jobs"][0];
}

TEST(BenchCalibrate, WritesTheTimeModelThatLaterPlansUse) {
  const testing::ScratchDir dir;
  const auto file = dir / "time_model.json";
  const auto r = run_command(with_time_model(
      file, "bench calibrate --params " + tiny_params() +
                " --n-res 16 --msa-rows 8 --extra-rows 12 --threads 1 --rounds 1 --spill-dir " +
                q(dir.path())));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("saved to " + file.string()), std::string::npos) << r.output;
  std::ifstream in(file);
  const nlohmann::json saved = nlohmann::json::parse(in);
  EXPECT_EQ(saved["isa"], bf16_support().isa);
  for (const char* chunk : {"0", "8", "4", "2", "1"}) {
    EXPECT_GE(saved["chunk_factor"][chunk].get<double>(), 1.0) << chunk;
    EXPECT_GE(saved["extra_msa_chunk_factor"][chunk].get<double>(), 1.0) << chunk;
  }
  EXPECT_FALSE(saved["chunk_factor"].contains("16")) << "16 covers the block's 16 residues";
  EXPECT_TRUE(saved["extra_msa_chunk_factor"].contains("8"));
  EXPECT_GE(saved["spill_outputs"].get<double>(), saved["spill_activations"].get<double>());
  const nlohmann::json plan = plan_of_tiny_features(file);
  EXPECT_NE(plan["time_model"].get<std::string>().find("calibrated on this machine"),
            std::string::npos)
      << plan;
  // Nothing of the spill measurement stays behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path(), file);
}

TEST(BenchCalibrate, MeasuredFactorsDecideTheChunkThePlanTakes) {
  const testing::ScratchDir dir;
  // As built in, slicing costs time, so a small run is planned unsliced...
  const nlohmann::json builtin = plan_of_tiny_features(dir / "absent.json");
  EXPECT_EQ(builtin["chunk_size"], 0) << builtin;
  // ...but on a machine where the unsliced block measured 5x slower, the plan slices.
  nlohmann::json model = {{"cpu", "?"},
                          {"isa", bf16_support().isa},
                          {"threads", 1},
                          {"chunk_factor", {{"0", 5.0}, {"16", 5.0}, {"8", 1.0}, {"1", 1.0}}}};
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      model["cpu"] = line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
      break;
    }
  }
  std::ofstream(dir / "measured.json") << model.dump();
  const nlohmann::json planned = plan_of_tiny_features(dir / "measured.json");
  EXPECT_NE(planned["chunk_size"], 0) << planned;
  EXPECT_LE(planned["relative_time"].get<double>(), 1.03) << planned;
}

}  // namespace
}  // namespace cpufold
