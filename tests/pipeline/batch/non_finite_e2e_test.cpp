// NaN or Inf must never become a "successful" job: non-finite parameters are refused when the
// file is loaded (exit 3), and outputs that went non-finite with finite parameters (here:
// weights huge enough to overflow fp32) fail the job before anything is written.
#include <gtest/gtest.h>

#include "tests/io/params_test_helpers.h"
#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;
using testing::tiny_params;
using testing::write_file;

std::string predict_into(const ScratchDir& dir) {
  return "predict '" + (dir / "q.fasta").string() + "' '" + (dir / "out").string() + "' --data '" +
         (dir / "data").string() +
         "' --model-order 1 --num-models 1 --num-recycle 0 --threads 1"
         " --msa-mode single_sequence";
}

bool any_done_marker(const fs::path& out) {
  if (!fs::exists(out)) return false;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().string().ends_with(".done.txt")) return true;
  return false;
}

TEST(NonFiniteE2eTest, NanAndInfInWeightsFailWithExit3NamingKeyAndMarkNothingDone) {
  const ScratchDir dir;
  fs::create_directories(dir / "data" / "params");
  const fs::path params = dir / "data" / "params" / "params_model_1_ptm.npz";
  const std::string key = testing::write_poisoned_npz(tiny_params("model_1_ptm"), params, 5, 1, 2);
  write_file(dir / "q.fasta", ">a\nMKTAYIAK\n>b\nGSHMKL\n");

  const auto r = run_cpufold(predict_into(dir));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, params.string())) << r.output;
  EXPECT_TRUE(contains(r.output, "'" + key + "'")) << r.output;
  EXPECT_TRUE(contains(r.output, "2 non-finite values (1 NaN, 1 Inf)")) << r.output;
  EXPECT_FALSE(any_done_marker(dir / "out"));

  const auto e = run_cpufold(
      "evaluate --params '" + params.string() + "' --features '" +
      (testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec3_s0.h5").string() +
      "' --out '" + (dir / "eval.h5").string() + "' --recycles 0");
  EXPECT_EQ(e.exit_code, 3) << e.output;
  EXPECT_TRUE(contains(e.output, "'" + key + "'")) << e.output;
  EXPECT_FALSE(fs::exists(dir / "eval.h5"));
}

TEST(NonFiniteE2eTest, OverflowingFiniteWeightsFailEachJobNamingOutputsAndWriteNothing) {
  const ScratchDir dir;
  fs::create_directories(dir / "data" / "params");
  const fs::path params = dir / "data" / "params" / "params_model_1_ptm.npz";
  // Every weight of preprocess_1d (entry 0, [22, 32]) at 3e38: finite, but the first
  // activations overflow fp32.
  std::vector<std::pair<std::size_t, float>> huge;
  for (std::size_t i = 0; i < 22 * 32; ++i) huge.emplace_back(i, 3e38f);
  testing::write_npz_with_values(tiny_params("model_1_ptm"), params, 0, huge);
  write_file(dir / "q.fasta", ">a\nMKTAYIAK\n>b\nGSHMKL\n");

  const auto r = run_cpufold(predict_into(dir));
  EXPECT_EQ(r.exit_code, 2) << r.output;  // jobs failed, the batch ran to its summary
  EXPECT_TRUE(contains(r.output, "] a: FAILED: model_1 seed 000: non-finite outputs")) << r.output;
  EXPECT_TRUE(contains(r.output, "] b: FAILED: model_1 seed 000: non-finite outputs")) << r.output;
  EXPECT_TRUE(contains(r.output, "atom positions f32[")) << r.output;
  EXPECT_TRUE(contains(r.output, "2 failed")) << r.output;
  EXPECT_FALSE(any_done_marker(dir / "out"));
  for (const auto& entry : fs::directory_iterator(dir / "out")) {
    const std::string name = entry.path().filename().string();
    // Only the batch's own files: nothing of either job.
    EXPECT_TRUE(name == "config.json" || name == "log.txt" || name == "timings.json" ||
                name == "cite.bibtex" || name == "logs")
        << name;
  }

  const auto e = run_cpufold(
      "evaluate --params '" + params.string() + "' --features '" +
      (testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec3_s0.h5").string() +
      "' --out '" + (dir / "eval.h5").string() + "' --recycles 0");
  EXPECT_EQ(e.exit_code, 5) << e.output;
  EXPECT_TRUE(contains(e.output, "non-finite outputs, nothing written")) << e.output;
  EXPECT_TRUE(contains(e.output, "final_atom_positions")) << e.output;
  EXPECT_FALSE(fs::exists(dir / "eval.h5"));
}

}  // namespace
}  // namespace cpufold
