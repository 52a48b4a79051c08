// Inputs that used to crash, stop or mislead `cpufold predict`: over-long headers, invalid
// UTF-8 quoted in messages, classic-Mac line ends and byte-order marks, bad CSV quoting,
// queries of only unknown residues. Each must end in exit 0 or 2 with a clear message and a
// complete summary, never in an internal error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/text_safety.h"
#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_cpufold;
using testing::ScratchDir;
using testing::write_file;

testing::CommandResult predict(const fs::path& input, const fs::path& out,
                               const std::string& extra = "") {
  return run_cpufold("predict '" + input.string() + "' '" + out.string() + "' " +
                     testing::fast_predict_options("1") + " " + extra);
}

TEST(PredictInputsE2eTest, OverlongHeadersAreCutAndEveryJobRuns) {
  ScratchDir dir;
  // 300 characters: past NAME_MAX on their own; the two share their first 290.
  const std::string prefix(290, 'h');
  write_file(dir / "q.fasta", ">" + prefix + "_version_1\nMKTAYIAK\n>" + prefix +
                                  "_version_2\nMKTAYIAKQ\n>short\nMKTAYI\n");
  const fs::path out = dir / "out";
  const auto r = predict(dir / "q.fasta", out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "3 done, 0 skipped (already done), 0 failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "q.fasta:1: job name of 300 characters cut to")) << r.output;
  EXPECT_TRUE(contains(r.output, "q.fasta:3: job name of 300 characters cut to")) << r.output;
  std::size_t done = 0;
  for (const std::string& name : testing::file_names(out)) {
    EXPECT_LE(name.size(), 255u) << name;
    if (name.size() > 9 && name.substr(name.size() - 9) == ".done.txt") ++done;
  }
  EXPECT_EQ(done, 3u);
  EXPECT_TRUE(fs::exists(out / "short.done.txt"));
  EXPECT_TRUE(contains(testing::read_file(out / "log.txt"), "job name of 300 characters cut"));

  // A rerun finds the same names and skips all three.
  const auto again = predict(dir / "q.fasta", out);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "0 done, 3 skipped")) << again.output;
}

TEST(PredictInputsE2eTest, InvalidUtf8QuotedFromAStockholmFileIsEscapedEverywhere) {
  ScratchDir dir;
  fs::create_directories(dir / "msas");
  write_file(dir / "q.fasta", ">q\nMKTAYIAK\n>other\nMKTAYI\n");
  // A row name of invalid UTF-8 and a control byte, quoted by the error on its sequence.
  write_file(dir / "msas" / "q.sto",
             "# STOCKHOLM 1.0\nq MKTAYIAK\nh\xFF\xFE\x1B[2J MKT1YIAK\n//\n");
  const fs::path out = dir / "out";
  const auto r = predict(dir / "q.fasta", out, "--msa-dir '" + (dir / "msas").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "1 done, 0 skipped (already done), 1 failed")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "q.sto:3: invalid character '1' in Stockholm row "
                       "'h\\xFF\\xFE\\x1B[2J'"))
      << r.output;
  EXPECT_TRUE(text::is_valid_utf8(r.output)) << r.output;

  const std::string timings = testing::read_file(out / "timings.json");
  const auto json = nlohmann::json::parse(timings, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << timings;
  EXPECT_EQ(json["jobs"]["q"]["status"], "failed");
  EXPECT_TRUE(contains(json["jobs"]["q"]["error"].get<std::string>(), "'h\\xFF\\xFE\\x1B[2J'"));
  EXPECT_EQ(json["jobs"]["other"]["status"], "done");
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(text::is_valid_utf8(log));
  EXPECT_FALSE(contains(log, "\x1B")) << "no raw control bytes in the log";
  EXPECT_TRUE(contains(log, "summary: 1 done")) << log;
}

TEST(PredictInputsE2eTest, InputPathOfInvalidUtf8IsWrittenSafelyToConfigJson) {
  ScratchDir dir;
  const fs::path input = dir / "q\xE9.fasta";  // Latin-1 'é': not UTF-8
  write_file(input, ">q\nMKTAYIAK\n");
  const fs::path out = dir / "out";
  const auto r = predict(input, out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto config =
      nlohmann::json::parse(testing::read_file(out / "config.json"), nullptr, false);
  ASSERT_FALSE(config.is_discarded());
  EXPECT_TRUE(contains(config["input"].get<std::string>(), "q\\xE9.fasta"));
  EXPECT_TRUE(fs::exists(out / "q.done.txt"));
}

TEST(PredictInputsE2eTest, BatchErrorQuotingInvalidUtf8IsEscapedOnStderr) {
  ScratchDir dir;
  const auto r = predict(dir / "missing\xFF\x1B[2J.fasta", dir / "out");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "missing\\xFF\\x1B[2J.fasta: no such file or directory"))
      << r.output;
  EXPECT_TRUE(text::is_valid_utf8(r.output)) << r.output;
}

TEST(PredictInputsE2eTest, PathOptionsTheFileSystemRefusesAreBadInputNotInternalErrors) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">q\nMKTAYIAK\n");
  const std::string too_long(300, 'n');  // one path component over NAME_MAX
  const std::string fasta = std::string("'").append((dir / "q.fasta").string()).append("' ");
  const std::string fast =
      "--model-order 1 --num-models 1 --num-recycle 0 --threads 1 --msa-mode single_sequence";
  const std::string data = " --data '" + testing::test_data_dir().string() + "'";
  for (const std::string& args : {fasta + "'" + (dir / "out").string() + "' --msa-dir '" +
                                      (dir / too_long).string() + "' " + fast + data,
                                  fasta + "'" + (dir / too_long).string() + "' " + fast + data,
                                  fasta + "'" + (dir / "out").string() + "' " + fast + " --data '" +
                                      (dir / too_long).string() + "'"}) {
    const auto r = run_cpufold("predict " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "cpufold predict: error: ")) << r.output;
    EXPECT_TRUE(contains(r.output, "File name too long")) << r.output;
    EXPECT_TRUE(contains(r.output, too_long)) << r.output;
  }
}

TEST(PredictInputsE2eTest, ClassicMacLineEndsAndByteOrderMarksAreRead) {
  ScratchDir dir;
  fs::create_directories(dir / "in");
  write_file(dir / "in" / "cr.fasta", ">cr\rMKTA\rYIAK\r");
  write_file(dir / "in" / "bom.fasta", "\xEF\xBB\xBF>bom\r\nMKTAYIAK\r\n");
  write_file(dir / "in" / "crmsa.a3m", "\xEF\xBB\xBF>crmsa\rMKTAYIAK\r>hit\rMKTAYIAR\r");
  write_file(dir / "in" / "t.csv", "\xEF\xBB\xBFid,sequence\rfromcsv,MKTAYIA\r");
  const fs::path out = dir / "out";
  const auto r = predict(dir / "in", out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "4 done, 0 skipped (already done), 0 failed")) << r.output;
  for (const char* job : {"cr", "bom", "crmsa", "fromcsv"}) {
    EXPECT_TRUE(fs::exists(out / (std::string(job) + ".done.txt"))) << job;
  }
  EXPECT_TRUE(contains(r.output, "cr (8 aa)")) << r.output;
  EXPECT_TRUE(contains(r.output, "crmsa (8 aa): MSA source input_a3m, 2 row(s) used")) << r.output;
}

TEST(PredictInputsE2eTest, BadCsvQuotingAndEmptyIdsFailTheirRowsInTableTerms) {
  ScratchDir dir;
  write_file(dir / "t.csv", "id,sequence\n\"foo,MKTAYIAK\n,MKTAYIAK\nok,MKTAYI\n");
  const fs::path out = dir / "out";
  const auto r = predict(dir / "t.csv", out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "1 done, 0 skipped (already done), 2 failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "t.csv:2: field 1 opens a quote that is never closed"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "t.csv:3: the 'id' field is empty")) << r.output;
  EXPECT_FALSE(contains(r.output, "_foo")) << r.output;
  EXPECT_FALSE(contains(r.output, "no name after '>'")) << r.output;
  EXPECT_TRUE(fs::exists(out / "ok.done.txt"));
}

TEST(PredictInputsE2eTest, QueryOfOnlyUnknownResiduesFailsInsteadOfWritingNoAtoms) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">allx\nXXXXXXXX\n>ok\nMKTAXIAK\n");
  const fs::path out = dir / "out";
  const auto r = predict(dir / "q.fasta", out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "q.fasta:1: record 'allx': every residue is unknown")) << r.output;
  EXPECT_TRUE(testing::ranked_tags(out, "allx").empty());
  EXPECT_TRUE(fs::exists(out / "ok.done.txt"));
}

}  // namespace
}  // namespace cpufold
