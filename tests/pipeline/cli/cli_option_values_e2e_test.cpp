// Every numeric option of every `cpufold` command refuses a bad value before any work: exit 2
// and a message naming the option, the value and the valid range.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_cpufold;

struct BadValues {
  std::string option;
  std::vector<std::string> values;
};

std::string tiny_params(const char* preset) {
  return (testing::test_data_dir() / "params" / (std::string("params_") + preset + ".npz"))
      .string();
}

// A command line that would succeed quickly, without `option` (so the test never gives an
// option twice).
std::string predict_base(const fs::path& in, const fs::path& out, const std::string& option) {
  std::string args = "predict '" + in.string() + "' '" + out.string() + "' --data '" +
                     testing::test_data_dir().string() + "'";
  if (option != "--model-order") args += " --model-order 3";
  if (option != "--num-models") args += " --num-models 1";
  if (option != "--num-recycle") args += " --num-recycle 0";
  if (option != "--threads") args += " --threads 1";
  if (option != "--msa-mode") args += " --msa-mode single_sequence";
  return args;
}

void expect_refused(const std::string& args, const std::string& option, const std::string& value,
                    const fs::path& out) {
  const auto r = run_cpufold(args + " " + option + " '" + value + "'");
  EXPECT_EQ(r.exit_code, 2) << option << " '" << value << "':\n" << r.output;
  EXPECT_TRUE(contains(r.output, option)) << r.output;
  EXPECT_TRUE(contains(r.output, "'" + value + "'")) << r.output;
  EXPECT_TRUE(contains(r.output, "expected")) << option << " '" << value << "':\n" << r.output;
  if (!out.empty()) {
    EXPECT_FALSE(fs::exists(out)) << option << " '" << value << "' did work";
  }
}

TEST(CliOptionValuesE2eTest, PredictRefusesEveryOutOfRangeOrMalformedNumber) {
  testing::ScratchDir dir;
  testing::write_file(dir / "q.fasta", ">q\nMKTAYIAKQRQISFVK\n");
  const std::vector<BadValues> table = {
      {"--threads", {"0", "-1", "100000", "abc", "5x", "1.5", ""}},
      {"--num-models", {"0", "6", "-1", "2x"}},
      {"--model-order", {"0", "6", "1,1", "3,", "x", ""}},
      {"--num-recycle", {"-1", "1001", "1e3", "99999999999999999999"}},
      {"--recycle-early-stop-tolerance", {"-1", "nan", "inf", "-inf", "101", "0.5x", "0x1p3"}},
      {"--num-seeds", {"0", "-1", "10001"}},
      {"--random-seed", {"-1", "18446744073709551615", "99999999999999999999999", "0x10"}},
      {"--max-seq", {"0", "-5", "1000001"}},
      {"--max-extra-seq", {"-1", "1000001", "ten"}},
      {"--chunk-size", {"-1", "1000001"}},
      {"--num-ensemble", {"0", "101"}},
      {"--stop-at-score", {"nan", "-1", "101"}},
      {"--max-msa", {"5:x", "0:5", "5:-1", "99999999999:1"}},
      {"--recompile-padding", {"-1"}},
      {"--relax-max-iterations", {"1.5"}},
      {"--relax-tolerance", {"abc"}},
  };
  for (const BadValues& row : table) {
    for (const std::string& value : row.values) {
      const fs::path out = dir / "out";
      expect_refused(predict_base(dir / "q.fasta", out, row.option), row.option, value, out);
    }
  }
}

TEST(CliOptionValuesE2eTest, ThreadLimitIsExplained) {
  const auto r = run_cpufold("predict in out --threads 100000");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "hardware threads of this machine")) << r.output;
}

TEST(CliOptionValuesE2eTest, EvaluateAndBenchRefuseBadNumbers) {
  testing::ScratchDir dir;
  const std::string evaluate =
      "evaluate --params '" + tiny_params("model_3_ptm") + "' --features '" +
      (testing::test_data_dir() / "reference" / "model_3_ptm_r24_c8_e16_t0_rec1_s0.h5").string() +
      "' --out '" + (dir / "o.h5").string() + "'";
  for (const BadValues& row : std::vector<BadValues>{
           {"--recycles", {"-1", "1001"}},
           {"--recycle-early-stop-tolerance", {"nan", "-0.5"}},
           {"--chunk-size", {"-1"}},
           {"--threads", {"0"}},
       }) {
    for (const std::string& value : row.values) {
      expect_refused(evaluate, row.option, value, dir / "o.h5");
    }
  }
  const std::string block = "bench block --params '" + tiny_params("model_3_ptm") + "'";
  for (const BadValues& row : std::vector<BadValues>{
           {"--n-res", {"0", "-4"}},
           {"--msa-rows", {"0"}},
           {"--n-seq", {"0"}},  // the old spelling, refused under the name typed
           {"--chunk-size", {"-1"}},
           {"--repeat", {"0", "-1"}},
           {"--threads", {"0"}},
       }) {
    for (const std::string& value : row.values) expect_refused(block, row.option, value, {});
  }
  for (const BadValues& row : std::vector<BadValues>{
           {"--n-res", {"0"}},
           {"--msa-rows", {"0"}},
           {"--n-msa", {"0"}},
           {"--repeat", {"0"}},
           {"--threads", {"-1"}},
       }) {
    std::string features = "bench features";
    for (const char* option : {"--n-res", "--msa-rows", "--repeat"}) {
      // The MSA depth once, under whichever spelling the row tests.
      if (row.option != option && !(option == std::string("--msa-rows") && row.option == "--n-msa"))
        features += std::string(" ") + option + " 4";
    }
    for (const std::string& value : row.values) expect_refused(features, row.option, value, {});
  }
}

// A value CLI11 alone would read in another base ("010" as octal 8) is decimal here.
TEST(CliOptionValuesE2eTest, NumbersAreDecimal) {
  testing::ScratchDir dir;
  testing::write_file(dir / "q.fasta", ">q\nMKTAYIAK\n");
  const fs::path out = dir / "out";
  const auto r = run_cpufold(predict_base(dir / "q.fasta", out, "--random-seed") +
                             " --random-seed 010 --skip-output msa,plots,pae_json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(testing::read_file(out / "config.json"), "\"random_seed\": 10"))
      << testing::read_file(out / "config.json");
}

}  // namespace
}  // namespace cpufold
