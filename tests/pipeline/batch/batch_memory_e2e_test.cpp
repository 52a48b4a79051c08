// A batch in one process keeps its memory flat: whatever a length builds (oneDNN primitives,
// Linear plans) is bounded, not kept for every length seen, and what it keeps per job does not
// grow with the number of jobs.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::ScratchDir;

// The first ten jobs are the longest, so they reach the largest activations; the thirty after
// them are shorter and every one a new length. Before the plans were bounded, each new length
// added ≈ 2.5 MiB here (75 MiB over thirty), against ≈ 60 MiB after the first ten.
std::vector<int> batch_lengths() {
  std::vector<int> lengths;
  for (int n = 149; n >= 140; --n) lengths.push_back(n);
  for (int n = 50; n < 140; n += 3) lengths.push_back(n);
  return lengths;
}

std::string random_sequence(int length, std::mt19937& rng) {
  static const std::string kAminoAcids = "ACDEFGHIKLMNPQRSTVWY";
  std::uniform_int_distribution<std::size_t> pick(0, kAminoAcids.size() - 1);
  std::string s;
  for (int i = 0; i < length; ++i) s += kAminoAcids[pick(rng)];
  return s;
}

// The peak RSS (MiB) `cpufold predict` reports after each job, in job order.
std::vector<int> peak_rss_per_job(const std::string& log) {
  static const std::regex kLine("peak RSS ([0-9]+) MiB");
  std::vector<int> peaks;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), kLine); it != std::sregex_iterator();
       ++it) {
    peaks.push_back(std::stoi((*it)[1].str()));
  }
  return peaks;
}

TEST(BatchMemoryE2eTest, PeakRssStaysFlatOverManyDistinctLengths) {
  const ScratchDir dir;
  const std::vector<int> lengths = batch_lengths();
  std::mt19937 rng(7);
  std::string fasta;
  for (int n : lengths) fasta += ">len" + std::to_string(n) + "\n" + random_sequence(n, rng) + "\n";
  testing::write_file(dir / "batch.fasta", fasta);

  const auto r = testing::run_command(
      "OMP_NUM_THREADS=1 '" CPUFOLD_BINARY "' predict '" + (dir / "batch.fasta").string() + "' '" +
      (dir / "out").string() + "' --data '" + testing::test_data_dir().string() +
      "' --model-order 1 --num-models 1 --num-recycle 0 --threads 1 --sort-queries-by none"
      " --msa-mode single_sequence");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<int> peaks = peak_rss_per_job(r.output);
  ASSERT_EQ(peaks.size(), lengths.size()) << r.output;

  // 10% of the RSS after the first ten, plus 8 MiB for allocator slack (glibc keeps freed
  // blocks of jit code and plans in its free lists, in pieces that differ from run to run).
  const int after_ten = peaks[9];
  const int allowed = after_ten + after_ten / 10 + 8;
  EXPECT_LE(peaks.back(), allowed)
      << "peak RSS " << after_ten << " MiB after ten jobs, " << peaks.back() << " MiB after "
      << peaks.size() << " (each new length keeps memory)";
}

// Many jobs of one length: nothing the batch keeps per job may grow with their number. Before
// timings.json was streamed (issue 33 #5) the whole file was held and copied in memory, ≈ 6 KiB
// of peak RSS per job: 9 MiB over the 1,500 jobs measured here.
TEST(BatchMemoryE2eTest, PeakRssStaysFlatOverManyJobs) {
  const ScratchDir dir;
  constexpr int kJobs = 1800, kWarm = 300;
  std::mt19937 rng(11);
  std::string fasta;
  for (int j = 0; j < kJobs; ++j)
    fasta += ">j" + std::to_string(j) + "\n" + random_sequence(12, rng) + "\n";
  testing::write_file(dir / "batch.fasta", fasta);

  const auto r = testing::run_command(
      "OMP_NUM_THREADS=1 '" CPUFOLD_BINARY "' predict '" + (dir / "batch.fasta").string() + "' '" +
      (dir / "out").string() + "' --data '" + testing::test_data_dir().string() +
      "' --model-order 3 --num-models 1 --num-recycle 0 --threads 1 --sort-queries-by none "
      "--msa-mode single_sequence "
      "--skip-output msa,plots,pae_json 2>&1 | grep -E 'peak RSS|summary|error'");
  const std::vector<int> peaks = peak_rss_per_job(r.output);
  ASSERT_EQ(peaks.size(), static_cast<std::size_t>(kJobs)) << r.output.substr(0, 2000);
  // 4 MiB: the allocator's plateau after warm-up (≈ 1 MiB measured), well under the old growth.
  EXPECT_LE(peaks.back(), peaks[kWarm - 1] + 4)
      << "peak RSS " << peaks[kWarm - 1] << " MiB after " << kWarm << " jobs, " << peaks.back()
      << " MiB after " << kJobs;
}

}  // namespace
}  // namespace cpufold
