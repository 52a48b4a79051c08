// Bad inputs to `cpufold predict`: each job fails alone with a message naming the file and
// line, the others are folded, and the exit status says something failed.
#include <gtest/gtest.h>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;
using testing::write_file;

// The line of `output` that reports job `name` as failed.
std::string failure_of(const std::string& output, const std::string& name) {
  const std::string key = "] " + name + ": FAILED: ";
  const std::size_t at = output.find(key);
  if (at == std::string::npos) return "(no failure reported for " + name + ")";
  return output.substr(at + key.size(), output.find('\n', at) - at - key.size());
}

TEST(PredictErrorsE2eTest, EachBadInputFailsAloneNamingFileAndLine) {
  ScratchDir dir;
  const fs::path in = dir / "in";
  const fs::path msas = dir / "msas";
  fs::create_directories(in);
  fs::create_directories(msas / "stonoquery");
  const std::string good = "MKTAYIAKQRQISFVK";
  write_file(in / "good.fasta", ">good\n" + good + "\n");
  write_file(in / "empty.fasta", "");
  write_file(in / "noheader.fasta", "MKTAYIAK\n");
  write_file(in / "emptyseq.fasta", "\n>nothing here\n\n");
  write_file(in / "invalid.fasta", ">x\nMKTA\nYI1K\n");
  write_file(in / "badrows.a3m", ">q\nMKTAYIAK\n>hit1\nMKTAYIAK\n>hit2\nMKTAYI\n");
  // Stockholm whose first row is not the query.
  write_file(in / "stonoquery.fasta", ">s\nMKTAYIAK\n");
  write_file(msas / "stonoquery" / "uniref90_hits.sto",
             "# STOCKHOLM 1.0\nother MKTAWIAK\nhit MKTAYIAR\n//\n");
  // A3M in --msa-dir whose query differs from the FASTA sequence.
  write_file(in / "mismatch.fasta", ">m\nMKTAYIAK\n");
  write_file(msas / "mismatch.a3m", ">m\nMKTAYLAK\n>hit\nMKTAYLAK\n");

  const fs::path out = dir / "out";
  const auto r = run_cpufold("predict '" + in.string() + "' '" + out.string() + "' --msa-dir '" +
                             msas.string() + "' " + testing::fast_predict_options("3"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "1 done, 0 skipped (already done), 7 failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "7 of 8 job(s) failed")) << r.output;

  // The good job is complete.
  EXPECT_TRUE(fs::exists(out / "good.done.txt"));
  EXPECT_EQ(testing::ranked_tags(out, "good").size(), 1u);

  const std::string empty = failure_of(r.output, "empty");
  EXPECT_TRUE(contains(empty, (in / "empty.fasta").string() + ":1: empty FASTA file")) << empty;
  const std::string noheader = failure_of(r.output, "noheader");
  EXPECT_TRUE(contains(noheader, (in / "noheader.fasta").string() + ":1: no FASTA header"))
      << noheader;
  const std::string emptyseq = failure_of(r.output, "emptyseq");
  EXPECT_TRUE(contains(emptyseq, (in / "emptyseq.fasta").string() + ":2: ")) << emptyseq;
  EXPECT_TRUE(contains(emptyseq, "empty sequence")) << emptyseq;
  const std::string invalid = failure_of(r.output, "invalid");
  EXPECT_TRUE(contains(invalid, (in / "invalid.fasta").string() + ":1: ")) << invalid;
  EXPECT_TRUE(contains(invalid, "invalid character '1' at residue 7")) << invalid;
  const std::string badrows = failure_of(r.output, "badrows");
  EXPECT_TRUE(contains(badrows, (in / "badrows.a3m").string() + ":5: ")) << badrows;
  EXPECT_TRUE(contains(badrows, "'hit2' has 6 match columns but the query has 8")) << badrows;
  const std::string sto = failure_of(r.output, "stonoquery");
  EXPECT_TRUE(contains(sto, (in / "stonoquery.fasta").string() + ":1: ")) << sto;
  EXPECT_TRUE(contains(sto, "uniref90_hits.sto")) << sto;
  EXPECT_TRUE(contains(sto, "first row must be the query")) << sto;
  const std::string mismatch = failure_of(r.output, "mismatch");
  EXPECT_TRUE(contains(mismatch, (in / "mismatch.fasta").string() + ":1: ")) << mismatch;
  EXPECT_TRUE(contains(mismatch, (msas / "mismatch.a3m").string())) << mismatch;
  EXPECT_TRUE(contains(mismatch, "residue 6 is 'L' where the query has 'I'")) << mismatch;

  // Failed jobs leave no outputs and no done marker; log.txt has the same report.
  for (const char* job :
       {"empty", "noheader", "emptyseq", "invalid", "badrows", "stonoquery", "mismatch"}) {
    EXPECT_TRUE(testing::ranked_tags(out, job).empty()) << job;
    EXPECT_FALSE(fs::exists(out / (std::string(job) + ".done.txt"))) << job;
  }
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "failed mismatch: ")) << log;
}

TEST(PredictErrorsE2eTest, MultimerRecordFailsAloneInAFastaFile) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">complex\nMKTAYIAK:GGSGGS\n>single\nMKTAYIAK\n");
  const auto r = run_cpufold("predict '" + (dir / "q.fasta").string() + "' '" +
                             (dir / "out").string() + "' " + testing::fast_predict_options("3"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(failure_of(r.output, "complex"), "q.fasta:1: ")) << r.output;
  EXPECT_TRUE(contains(failure_of(r.output, "complex"), "multimer not supported yet"));
  EXPECT_TRUE(fs::exists(dir / "out" / "single.done.txt"));
}

TEST(PredictErrorsE2eTest, SummaryAndFailuresArePrintedWhenTimingsCannotBeWritten) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">complex\nMKTAYIAK:GGSGGS\n>single\nMKTAYIAK\n");
  fs::create_directories(dir / "out" / "timings.json");  // a directory: it cannot be replaced
  const auto r = run_cpufold("predict '" + (dir / "q.fasta").string() + "' '" +
                             (dir / "out").string() + "' " + testing::fast_predict_options("3"));
  EXPECT_EQ(r.exit_code, 2) << r.output;  // for the failed job, as without the warning
  EXPECT_TRUE(contains(r.output, "warning: timings.json not written")) << r.output;
  EXPECT_TRUE(contains(r.output, "summary: 1 done, 0 skipped (already done), 1 failed"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "  failed complex: ")) << r.output;
  EXPECT_TRUE(fs::exists(dir / "out" / "single.done.txt"));
}

TEST(PredictErrorsE2eTest, MissingParamsFileStopsBeforeAnyWork) {
  ScratchDir dir;
  fs::create_directories(dir / "data" / "params");
  write_file(dir / "q.fasta", ">a\nMKTAYIAK\n");
  const auto r =
      run_cpufold("predict '" + (dir / "q.fasta").string() + "' '" + (dir / "out").string() +
                  "' --data '" + (dir / "data").string() + "' --num-models 1");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, (dir / "data" / "params" / "params_model_1_ptm.npz").string()))
      << r.output;
  EXPECT_TRUE(contains(r.output, "alphafold_params_2022-12-06.tar")) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out")) << "nothing is written when the weights are missing";
}

TEST(PredictErrorsE2eTest, DuplicateJobNamesAndBadOptionsAreRefused) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">a b\nMKTA\n>a_b\nMKTAY\n");
  const auto dup = run_cpufold("predict '" + (dir / "q.fasta").string() + "' '" +
                               (dir / "out").string() + "' " + testing::fast_predict_options("3"));
  EXPECT_EQ(dup.exit_code, 2) << dup.output;
  EXPECT_TRUE(contains(dup.output, "two jobs are named 'a_b'")) << dup.output;

  write_file(dir / "ok.fasta", ">a\nMKTA\n");
  const auto order =
      run_cpufold("predict '" + (dir / "ok.fasta").string() + "' '" + (dir / "out").string() +
                  "' --data '" + testing::test_data_dir().string() + "' --model-order 1,x");
  EXPECT_EQ(order.exit_code, 2) << order.output;
  EXPECT_TRUE(contains(order.output, "--model-order")) << order.output;
}

TEST(PredictErrorsE2eTest, QuietHidesProgressButNeverFailures) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">good\nMKTAYIAK\n>bad\nMKTA1K\n");
  const auto r =
      run_cpufold("predict '" + (dir / "q.fasta").string() + "' '" + (dir / "out").string() + "' " +
                  testing::fast_predict_options("3") + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(contains(r.output, "start, elapsed")) << "progress shown:\n" << r.output;
  EXPECT_TRUE(contains(r.output, "failed bad: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "invalid character '1'")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 of 2 job(s) failed (listed above")) << r.output;
}

TEST(PredictErrorsE2eTest, FatalErrorIsAppendedToTheLog) {
  ScratchDir dir;
  fs::create_directories(dir / "data" / "params");
  write_file(dir / "data" / "params" / "params_model_1_ptm.npz", "not a zip archive\n");
  write_file(dir / "q.fasta", ">a\nMKTAYIAK\n");
  const fs::path out = dir / "out";
  const auto r =
      run_cpufold("predict '" + (dir / "q.fasta").string() + "' '" + out.string() + "' --data '" +
                  (dir / "data").string() +
                  "' --num-models 1 --num-recycle 0 --threads 1 --msa-mode single_sequence");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "error: ")) << log;
  EXPECT_TRUE(contains(log, "params_model_1_ptm.npz")) << log;
  EXPECT_TRUE(contains(r.output, "params_model_1_ptm.npz")) << r.output;
}

}  // namespace
}  // namespace cpufold
