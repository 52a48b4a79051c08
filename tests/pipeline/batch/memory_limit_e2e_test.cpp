// Under a hard address-space limit (`ulimit -v`) cpufold either fits or fails that job with
// the memory exit status (4) and a message saying what to do; it never dies of a signal.
// The limits span the range where oneDNN used to crash while building kernels (125-130 MB
// segfaulted in Linear::plan). No assertion depends on where exactly the run starts to fit.
#include <gtest/gtest.h>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::run_command;
using testing::ScratchDir;

const int kLimitsMib[] = {100, 115, 130, 145, 160, 190, 220, 4000};

testing::CommandResult run_limited(int limit_mib, const std::string& args) {
  return run_command("OMP_NUM_THREADS=1 bash -c \"ulimit -v " + std::to_string(limit_mib * 1024) +
                     "; exec '" CPUFOLD_BINARY "' " + args + "\"");
}

void expect_fits_or_fails_cleanly(const testing::CommandResult& r, int limit_mib) {
  EXPECT_LT(r.exit_code, 128) << "killed by signal " << r.exit_code - 128 << " at " << limit_mib
                              << " MiB:\n"
                              << r.output;
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << limit_mib << " MiB:\n" << r.output;
  if (r.exit_code == 4) {
    EXPECT_TRUE(contains(r.output, "out of memory")) << r.output;
    EXPECT_TRUE(contains(r.output, "--chunk-size")) << r.output;
  }
}

TEST(MemoryLimitE2eTest, PredictFitsOrFailsWithExit4AtEveryLimit) {
  CPUFOLD_SKIP_UNDER_ASAN_ULIMIT();
  const ScratchDir dir;
  int fitted = 0, failed = 0;
  for (int limit : kLimitsMib) {
    const auto out = dir / ("out" + std::to_string(limit));
    const auto r = run_limited(
        limit, "predict '" + (testing::examples_dir() / "proteins.fasta").string() + "' '" +
                   out.string() + "' --data '" + testing::test_data_dir().string() +
                   "' --model-order 1 --num-models 1 --num-recycle 0 --msa-mode single_sequence");
    expect_fits_or_fails_cleanly(r, limit);
    (r.exit_code == 0 ? fitted : failed)++;
  }
  EXPECT_GT(failed, 0) << "no limit was low enough to fail";
  EXPECT_GT(fitted, 0) << "4000 MiB should fit";
}

TEST(MemoryLimitE2eTest, EvaluateFitsOrFailsWithExit4AtEveryLimit) {
  CPUFOLD_SKIP_UNDER_ASAN_ULIMIT();
  const ScratchDir dir;
  int fitted = 0, failed = 0;
  for (int limit : kLimitsMib) {
    const auto r = run_limited(
        limit, "evaluate --params '" +
                   (testing::test_data_dir() / "params" / "params_model_1_ptm.npz").string() +
                   "' --features '" +
                   (testing::test_data_dir() / "reference" / "model_1_ptm_r24_c8_e16_t2_rec3_s0.h5")
                       .string() +
                   "' --out '" + (dir / "out.h5").string() + "' --quiet");
    expect_fits_or_fails_cleanly(r, limit);
    (r.exit_code == 0 ? fitted : failed)++;
  }
  EXPECT_GT(failed, 0) << "no limit was low enough to fail";
  EXPECT_GT(fitted, 0) << "4000 MiB should fit";
}

}  // namespace
}  // namespace cpufold
