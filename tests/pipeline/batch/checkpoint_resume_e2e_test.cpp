// Per-iteration checkpoints with --spill-dir: a run killed with SIGKILL right after a
// checkpoint and rerun with the same command resumes after that iteration and writes outputs
// bit-identical to an uninterrupted run; a corrupt checkpoint is reported once and the run
// starts over; a completed run leaves no checkpoint behind.
//
// The kill point comes from the test-only hook CPUFOLD_TEST_KILL_AFTER_ITERATION=K
// (pipeline/runner/run_checkpoint.cpp), which raises SIGKILL once iteration K's checkpoint is
// on disk.
#include <gtest/gtest.h>

#include <cstring>

#include "io/hdf5_tensor_file.h"
#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::ScratchDir;

constexpr int kKilled = 128 + 9;  // run_command's status of a SIGKILLed process

std::size_t count_matches(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  return files;
}

// Every dataset under outputs/ of two evaluate files, compared bit for bit.
void expect_identical_outputs(const fs::path& a, const fs::path& b) {
  const Hdf5TensorReader ra(a), rb(b);
  const std::vector<std::string> names = ra.datasets_under("outputs");
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(rb.datasets_under("outputs"), names);
  for (const std::string& name : names) {
    const std::vector<float> x = ra.read_f32(name), y = rb.read_f32(name);
    EXPECT_TRUE(x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * 4) == 0)
        << name << " differs after resuming";
  }
}

// evaluate on the tiny model_1_ptm reference with 4 iterations (2 templates, so template rows
// are part of the recycled state's history too).
std::string evaluate_args(const fs::path& out, const fs::path& spill) {
  std::string args = "evaluate --params '" + testing::tiny_params("model_1_ptm").string() +
                     "' --features '" +
                     testing::tiny_reference("model_1_ptm_r24_c8_e16_t2_rec3_s0.h5").string() +
                     "' --recycles 3 --chunk-size 4 --threads 1 --out '" + out.string() + "'";
  if (!spill.empty()) args += " --spill-dir '" + spill.string() + "'";
  return args;
}

std::string killed_after(int iteration) {
  return "env CPUFOLD_TEST_KILL_AFTER_ITERATION=" + std::to_string(iteration) + " '" +
         CPUFOLD_BINARY + "' ";
}

// Evaluate runs in one scratch directory: uninterrupted (plain.h5) and with --spill-dir
// (r.h5), killed after an iteration and rerun.
class EvaluateResume : public ::testing::Test {
 protected:
  void run_plain() {
    const auto plain = testing::run_cpufold(evaluate_args(dir_ / "plain.h5", {}));
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
  }
  // Kills the run right after the checkpoint of `iteration`; sets checkpoint_.
  void kill_after(int iteration) {
    fs::create_directory(spill_);
    const auto killed =
        testing::run_command(killed_after(iteration) + evaluate_args(dir_ / "r.h5", spill_));
    ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
    ASSERT_FALSE(fs::exists(dir_ / "r.h5"));
    const std::vector<fs::path> left = files_in(spill_);
    ASSERT_EQ(left.size(), 1u) << "expected one checkpoint file";
    EXPECT_EQ(left[0].extension(), ".checkpoint");
    checkpoint_ = left[0];
  }
  std::string args() const { return evaluate_args(dir_ / "r.h5", spill_); }
  void expect_outputs_of_an_uninterrupted_run() {
    expect_identical_outputs(dir_ / "plain.h5", dir_ / "r.h5");
  }

  ScratchDir dir_;
  const fs::path spill_ = dir_ / "spill";
  fs::path checkpoint_;
};

TEST_F(EvaluateResume, KilledAfterAnIterationResumesWithIdenticalOutputs) {
  run_plain();
  kill_after(2);
  const auto resumed = testing::run_cpufold(args());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(
      contains(resumed.output, "resuming after iteration 2 of 4 from " + checkpoint_.string()))
      << resumed.output;
  EXPECT_FALSE(contains(resumed.output, "iteration 1 of 4:")) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "iteration 3 of 4:")) << resumed.output;
  expect_outputs_of_an_uninterrupted_run();
  EXPECT_TRUE(files_in(spill_).empty()) << "the completed run left its checkpoint";
}

TEST_F(EvaluateResume, CorruptCheckpointIsReportedOnceAndTheRunStartsOver) {
  run_plain();
  kill_after(1);
  std::string bytes = testing::read_file(checkpoint_);
  bytes[bytes.size() - 100] ^= 0x01;  // one bit of the stored state
  testing::write_file(checkpoint_, bytes);

  const auto again = testing::run_cpufold(args());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(count_matches(again.output, "ignoring checkpoint " + checkpoint_.string()), 1u)
      << again.output;
  EXPECT_FALSE(contains(again.output, "resuming")) << again.output;
  EXPECT_TRUE(contains(again.output, "iteration 1 of 4:")) << again.output;
  expect_outputs_of_an_uninterrupted_run();
  EXPECT_TRUE(files_in(spill_).empty());
}

TEST_F(EvaluateResume, CheckpointOfOtherOptionsIsNotUsed) {
  kill_after(1);
  // Another chunk size changes the numbers: the other run's checkpoint must not be resumed.
  std::string other_args = args();
  other_args.replace(other_args.find("--chunk-size 4"), 14, "--chunk-size 8");
  const auto other = testing::run_cpufold(other_args);
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_FALSE(contains(other.output, "resuming")) << other.output;
  EXPECT_FALSE(contains(other.output, "ignoring")) << other.output;
  EXPECT_EQ(files_in(spill_).size(), 1u) << "the other run's checkpoint is kept";
}

// predict with `options` (recycles and ensemble), killed after iteration `kill_after` of
// `iterations` and rerun, writes the files of an uninterrupted run byte for byte.
void expect_predict_resumes(const std::string& options, int kill_after, int iterations) {
  ScratchDir dir;
  const fs::path fasta = dir / "q.fasta";
  testing::write_file(fasta, ">q\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQ\n");
  const fs::path spill = dir / "spill";
  fs::create_directory(spill);
  const std::string common =
      " --data '" + testing::test_data_dir().string() +
      "' --model-order 3 --num-models 1 --threads 1 --chunk-size 4 --skip-output plots"
      " --msa-mode single_sequence"
      " --save-single-representations --save-pair-representations " +
      options;
  auto predict = [&](const std::string& prefix, const fs::path& out, bool with_spill) {
    std::string cmd = prefix + "predict '" + fasta.string() + "' '" + out.string() + "'" + common;
    if (with_spill) cmd += " --spill-dir '" + spill.string() + "'";
    return testing::run_command(cmd);
  };
  std::string binary = "'";
  binary += CPUFOLD_BINARY;
  binary += "' ";

  const auto plain = predict(binary, dir / "plain", false);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const auto killed = predict(killed_after(kill_after), dir / "r", true);
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  ASSERT_EQ(files_in(spill).size(), 1u);
  const auto resumed = predict(binary, dir / "r", true);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "resuming after iteration " + std::to_string(kill_after) +
                                           " of " + std::to_string(iterations)))
      << resumed.output;
  EXPECT_TRUE(files_in(spill).empty());

  std::size_t compared = 0;
  for (const fs::path& file : files_in(dir / "plain")) {
    const std::string name = file.filename().string();
    const std::string ext = file.extension().string();
    if (ext != ".pdb" && ext != ".npy" && name.find("_scores_") == std::string::npos) continue;
    ++compared;
    EXPECT_EQ(testing::read_file(dir / "r" / name), testing::read_file(file))
        << name << " differs after resuming";
  }
  EXPECT_GE(compared, 4u);  // structure, scores, single and pair representations
}

TEST(CheckpointResumeE2e, PredictKilledMidProteinResumesWithIdenticalFiles) {
  expect_predict_resumes("--num-recycle 3", 2, 4);
}

TEST(CheckpointResumeE2e, PredictWithEnsembleResumesWithIdenticalFiles) {
  expect_predict_resumes("--num-recycle 2 --num-ensemble 2", 1, 3);
}

}  // namespace
}  // namespace cpufold
