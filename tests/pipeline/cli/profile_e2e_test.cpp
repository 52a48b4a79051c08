// `cpufold profile` with the tiny test weights: the CSV row per length and its columns, the
// plot, a length that fails alone, and the options it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "io/delimited_table.h"
#include "ops/compute_precision.h"
#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/support/png_decode.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::run_cpufold;

// A path as one shell word.
std::string q(const std::filesystem::path& p) {
  std::string word = "'";
  word += p.string();
  return word + "'";
}

std::string params(const char* model = "params_model_1_ptm.npz") {
  return "--params " + q(testing::test_data_dir() / "params" / model);
}

// Small MSAs keep each child well under a second.
constexpr const char* kSmall = " --msa-rows 8 --extra-rows 16 --templates 2 --threads 1";

// Rows of profile.csv as column -> value.
std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path) {
  const Table t = parse_table(testing::read_file(path), path.string(), ',');
  std::vector<std::map<std::string, std::string>> rows;
  for (const TableRow& r : t.rows) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.fields.size(), t.header.size()) << "line " << r.line;
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < std::min(r.fields.size(), t.header.size()); ++i)
      row[t.header[i]] = r.fields[i];
    rows.push_back(row);
  }
  return rows;
}

double number(const std::map<std::string, std::string>& row, const std::string& column) {
  const auto it = row.find(column);
  EXPECT_NE(it, row.end()) << column;
  return it == row.end() || it->second.empty() ? 0 : std::stod(it->second);
}

TEST(ProfileE2eTest, WritesOneCsvRowPerLengthWithPredictedMeasuredAndStagePeaks) {
  testing::ScratchDir dir;
  const auto r =
      run_cpufold("profile " + params() + " --lengths 32,16" + kSmall + " --out " + q(dir / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = read_csv(dir / "out" / "profile.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("n_res"), "16");  // ascending
  EXPECT_EQ(rows[1].at("n_res"), "32");
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok") << row.at("error");
    EXPECT_EQ(row.at("msa_rows"), "8");
    EXPECT_EQ(row.at("extra_rows"), "16");
    EXPECT_EQ(row.at("templates"), "2");
    const double predicted = number(row, "predicted_peak_bytes");
    const double measured = number(row, "measured_peak_bytes");
    EXPECT_GT(predicted, 0);
    EXPECT_GT(measured, 0);
    EXPECT_NEAR(number(row, "ratio"), measured / predicted, 1e-4);
    double stage_max = 0, planned = 0;
    for (const char* stage : {"load", "features", "trunk", "structure", "heads"}) {
      const double peak = number(row, std::string(stage) + "_peak_bytes");
      EXPECT_GT(peak, 0) << stage;
      EXPECT_GE(number(row, std::string(stage) + "_seconds"), 0) << stage;
      stage_max = std::max(stage_max, peak);
    }
    EXPECT_EQ(stage_max, measured) << "the run's peak is its largest stage's";
    for (const auto& [column, value] : row) {
      if (column.starts_with("planned_")) planned += std::stod(value);
    }
    EXPECT_EQ(planned, predicted) << "the planned blocks add up to the prediction";
    EXPECT_TRUE(row.at("stage_peak_method") == "clear_refs" ||
                row.at("stage_peak_method") == "sampled");
  }
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("mode"), "model");
    EXPECT_EQ(row.at("plan_peak_bytes"), row.at("predicted_peak_bytes"));
    EXPECT_EQ(row.at("evoformer_block_peak_bytes"), "") << "no block ran alone";
    EXPECT_EQ(row.at("extra_msa_block_predicted_bytes"), "");
  }
  EXPECT_TRUE(contains(r.output, "[1/2] N_res 16: predicted ")) << r.output;
  EXPECT_TRUE(contains(r.output, "ratio ")) << r.output;

  const std::string png = testing::read_file(dir / "out" / "profile.png");
  ASSERT_GT(png.size(), 10000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const auto image = testing::decode_png(png);
  EXPECT_EQ(image.width, 1000);
  EXPECT_EQ(image.height, 720);
}

// --blocks-only: the same plan per length, then one extra-MSA and one Evoformer block, each
// with its measured and predicted peak; the row's prediction is a block's, the plan's peak is
// kept in its own column. No test asserts times: only that they are there.
TEST(ProfileE2eTest, BlocksOnlyRunsOneBlockOfEachStackAtThePlansChunks) {
  testing::ScratchDir dir;
  const auto r = run_cpufold("profile " + params() + " --lengths 32,16 --blocks-only" + kSmall +
                             " --out " + q(dir / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = read_csv(dir / "out" / "profile.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("n_res"), "16");
  EXPECT_EQ(rows[1].at("n_res"), "32");
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok") << row.at("error");
    EXPECT_EQ(row.at("mode"), "blocks");
    // The plan, recorded as a whole run records it.
    EXPECT_NE(row.at("chunk"), "");
    const double plan = number(row, "plan_peak_bytes");
    double planned = 0;
    for (const auto& [column, value] : row) {
      if (column.starts_with("planned_")) planned += std::stod(value);
    }
    EXPECT_GT(plan, 0);
    EXPECT_EQ(planned, plan) << "the planned blocks add up to the whole run's plan";
    // Each block: measured, predicted from the plan's resident bytes and its own arenas.
    const double resident = number(row, "block_resident_bytes");
    EXPECT_GT(resident, 0);
    double largest = 0, its_peak = 0;
    for (const std::string block : {"extra_msa", "evoformer"}) {
      const double peak = number(row, block + "_block_peak_bytes");
      const double predicted = number(row, block + "_block_predicted_bytes");
      EXPECT_GT(peak, 0) << block;
      EXPECT_GT(predicted, resident) << block;
      EXPECT_LT(predicted, plan) << block << ": one block holds less than the whole run";
      EXPECT_EQ(predicted, resident + number(row, block + "_block_activations_bytes") +
                               number(row, block + "_block_scratch_bytes"))
          << block;
      EXPECT_NEAR(number(row, block + "_block_ratio"), peak / predicted, 1e-4) << block;
      EXPECT_GE(number(row, block + "_block_seconds"), 0) << block;
      EXPECT_NE(row.at(block + "_block_seconds"), "") << block;
      if (predicted > largest) {
        largest = predicted;
        its_peak = peak;
      }
    }
    // The row's prediction and measurement are those of the block predicted the larger.
    EXPECT_EQ(number(row, "predicted_peak_bytes"), largest);
    EXPECT_EQ(number(row, "measured_peak_bytes"), its_peak);
    EXPECT_NEAR(number(row, "ratio"), its_peak / largest, 1e-4);
    EXPECT_GT(number(row, "load_peak_bytes"), 0);
    EXPECT_EQ(row.at("trunk_peak_bytes"), "") << "the model did not run";
  }
  EXPECT_TRUE(contains(r.output, "[1/2] N_res 16: extra-MSA block (16 rows, chunk ")) << r.output;
  EXPECT_TRUE(contains(r.output, "[1/2] N_res 16: Evoformer block (10 rows, chunk ")) << r.output;
  EXPECT_TRUE(contains(r.output, "[2/2] N_res 32: larger block predicted ")) << r.output;
  EXPECT_TRUE(contains(r.output, "whole-run plan ")) << r.output;

  const std::string png = testing::read_file(dir / "out" / "profile.png");
  ASSERT_GT(png.size(), 10000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

// A length whose plan does not fit the budget fails alone with exit 4, as a whole run would.
TEST(ProfileE2eTest, BlocksOnlyALengthOverTheBudgetFailsAndTheOthersRun) {
  testing::ScratchDir dir;
  const auto first = run_cpufold("profile " + params() + " --lengths 16 --blocks-only" + kSmall +
                                 " --out " + q(dir / "a"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto budget = static_cast<std::size_t>(
                          number(read_csv(dir / "a" / "profile.csv").at(0), "plan_peak_bytes")) +
                      (std::size_t{1} << 20);
  const auto r = run_cpufold("profile " + params() + " --lengths 16,64 --blocks-only" + kSmall +
                             " --mem-budget " + std::to_string(budget) + " --out " + q(dir / "b"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "N_res 64: FAILED")) << r.output;
  const auto rows = read_csv(dir / "b" / "profile.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[1].at("status"), "failed");
  EXPECT_EQ(rows[1].at("mode"), "blocks");
  EXPECT_TRUE(contains(rows[1].at("error"), "budget")) << rows[1].at("error");
  EXPECT_GT(number(rows[1], "plan_peak_bytes"), static_cast<double>(budget));
  EXPECT_GT(number(rows[1], "evoformer_block_predicted_bytes"), 0) << "predicted before it ran";
  EXPECT_EQ(rows[1].at("evoformer_block_peak_bytes"), "");
  EXPECT_TRUE(std::filesystem::exists(dir / "b" / "profile.png"));
}

// --precision reaches the children: a bf16 profile plans (and maps) the trunk's weights packed
// in bf16, and its plot says bf16.
TEST(ProfileE2eTest, Bf16ProfilesTheBf16Trunk) {
  if (!bf16_support().native) GTEST_SKIP() << "no native bf16 (" << bf16_support().isa << ")";
  testing::ScratchDir dir;
  const auto weights = [&](const std::string& precision) {
    const auto out = dir / precision;
    const auto r = run_cpufold("profile " + params() + " --lengths 16" + kSmall + " --out " +
                               q(out) + " --precision " + precision);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto rows = read_csv(out / "profile.csv");
    EXPECT_EQ(rows.size(), 1u);
    return rows.empty() ? 0.0 : number(rows[0], "planned_shared_weights_bytes");
  };
  const double fp32 = weights("fp32"), bf16 = weights("bf16");
  EXPECT_GT(bf16, 0);
  EXPECT_LT(bf16, fp32);
}

TEST(ProfileE2eTest, ALengthThatFailsIsRecordedAndTheOthersStillRun) {
  testing::ScratchDir dir;
  const auto first =
      run_cpufold("profile " + params() + " --lengths 16" + kSmall + " --out " + q(dir / "a"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // A budget just above length 16's plan: length 64's outputs alone do not fit in it.
  const auto budget = static_cast<std::size_t>(number(read_csv(dir / "a" / "profile.csv").at(0),
                                                      "predicted_peak_bytes")) +
                      (std::size_t{1} << 20);
  const auto r = run_cpufold("profile " + params() + " --lengths 16,64" + kSmall +
                             " --mem-budget " + std::to_string(budget) + " --out " + q(dir / "b"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_TRUE(contains(r.output, "1 of 2 length(s) failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "N_res 64: FAILED")) << r.output;
  const auto rows = read_csv(dir / "b" / "profile.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[1].at("status"), "failed");
  EXPECT_TRUE(contains(rows[1].at("error"), "budget")) << rows[1].at("error");
  EXPECT_GT(number(rows[1], "predicted_peak_bytes"), static_cast<double>(budget));
  EXPECT_EQ(rows[1].at("measured_peak_bytes"), "");
  EXPECT_TRUE(std::filesystem::exists(dir / "b" / "profile.png"));
}

TEST(ProfileE2eTest, BadLengthsAreRefusedWithExit2) {
  testing::ScratchDir dir;
  // 46341: the pair's N x N rows pass oneDNN's matmul row limit (it was an internal error).
  for (const char* lengths : {"''", "0", "16,abc", "16,16", "16,,32", "-4", "12x", "46341"}) {
    const auto r =
        run_cpufold("profile " + params() + " --lengths " + lengths + " --out " + q(dir / "out"));
    EXPECT_EQ(r.exit_code, 2) << lengths << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "--lengths")) << lengths << "\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "out" / "profile.csv")) << lengths;
  }
  EXPECT_TRUE(contains(run_cpufold("profile " + params() + " --lengths 16,16").output,
                       "16 is given twice"));
}

TEST(ProfileE2eTest, TemplatesForAModelWithoutTemplatesAreRefused) {
  testing::ScratchDir dir;
  const auto r = run_cpufold("profile " + params("params_model_3_ptm.npz") +
                             " --lengths 16 --templates 2 --out " + q(dir / "out"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "no template embedding; give --templates 0")) << r.output;
  // Without --templates such a model is profiled without them.
  const auto ok = run_cpufold("profile " + params("params_model_3_ptm.npz") +
                              " --lengths 16 --msa-rows 8 --extra-rows 16 --out " + q(dir / "out"));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(read_csv(dir / "out" / "profile.csv").at(0).at("templates"), "0");
}

TEST(ProfileE2eTest, AnOutputDirectoryThatCannotBeMadeIsRefusedBeforeAnyRun) {
  testing::ScratchDir dir;
  testing::write_file(dir / "file", "not a directory");
  const auto r = run_cpufold("profile " + params() + " --lengths 16" + kSmall + " --out " +
                             q(dir / "file" / "out"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(contains(r.output, "N_res 16")) << "no length runs: " << r.output;
}

}  // namespace
}  // namespace cpufold
