// CPUFOLD_ROW_KERNELS picks the row kernels (auto, generic, avx2, avx512) so the suite can run
// every path on one machine; a value it does not know is refused before any work.
#include <gtest/gtest.h>

#include <string>
#include <utility>

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
  EXPECT_TRUE(
      contains(r.output, "CPUFOLD_ROW_KERNELS must be auto, generic, avx2 or avx512, not 'avx9'"))
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

// Each SIMD table runs where the CPU has it, and is refused by name where it does not.
TEST(RowKernelsEnvE2eTest, SimdTablesRunOrAreRefusedByName) {
  const ScratchDir dir;
  const std::pair<const char*, bool> tables[] = {
      {"avx2", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
      {"avx512", __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                     __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
                     __builtin_cpu_supports("fma")}};
  for (const auto& [kernels, supported] : tables) {
    const auto r = evaluate_with(kernels, dir);
    if (supported) {
      EXPECT_EQ(r.exit_code, 0) << kernels << ": " << r.output;
    } else {
      EXPECT_EQ(r.exit_code, 2) << kernels << ": " << r.output;
      EXPECT_TRUE(contains(r.output, std::string("CPUFOLD_ROW_KERNELS=") + kernels + ", but"))
          << r.output;
    }
  }
}

}  // namespace
}  // namespace cpufold
