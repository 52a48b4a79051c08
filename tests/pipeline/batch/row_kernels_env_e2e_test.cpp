// CPUFOLD_ROW_KERNELS picks the row kernels (auto, generic, avx2) so the suite can run every
// path on one machine; a value it does not know is refused before any work.
#include <gtest/gtest.h>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::run_command;
using testing::ScratchDir;

testing::CommandResult evaluate_with(const std::string& kernels, const ScratchDir& dir) {
  return run_command(
      "CPUFOLD_ROW_KERNELS='" + kernels +
      "' OMP_NUM_THREADS=1 '" CPUFOLD_BINARY "' evaluate --quiet --params '" +
      (testing::test_data_dir() / "params" / "params_model_1_ptm.npz").string() + "' --features '" +
      (testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5").string() +
      "' --out '" + (dir / (kernels + ".h5")).string() + "'");
}

TEST(RowKernelsEnvE2eTest, UnknownValueIsRefusedNamingTheVariableAndTheChoices) {
  const ScratchDir dir;
  const auto r = evaluate_with("avx9", dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "CPUFOLD_ROW_KERNELS must be auto, generic or avx2, not 'avx9'"))
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "avx9.h5"));
}

TEST(RowKernelsEnvE2eTest, GenericAndAutoBothRun) {
  const ScratchDir dir;
  for (const char* kernels : {"generic", "auto"}) {
    const auto r = evaluate_with(kernels, dir);
    EXPECT_EQ(r.exit_code, 0) << kernels << ": " << r.output;
  }
}

}  // namespace
}  // namespace cpufold
