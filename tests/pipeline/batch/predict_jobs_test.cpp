// Job discovery for `cpufold predict`: FASTA, A3M, CSV/TSV and directory inputs.
#include "pipeline/batch/predict_jobs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <climits>

#include "memory/error.h"
#include "pipeline/output/job_outputs.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::ScratchDir;
using testing::write_file;

const PredictJob& find(const JobList& list, const std::string& name) {
  for (const PredictJob& job : list.jobs) {
    if (job.name == name) return job;
  }
  ADD_FAILURE() << "no job named " << name;
  static const PredictJob none;
  return none;
}

// The jobs of the file `name` in `dir`, written with `text` first.
JobList jobs_of(const ScratchDir& dir, const std::string& name, const std::string& text,
                QueryOrder order = QueryOrder::none,
                std::size_t max_length = kDefaultMaxQueryLength) {
  write_file(dir / name, text);
  return discover_jobs(dir / name, order, max_length);
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(PredictJobsTest, FastaGivesOneJobPerRecordNamedByTheWholeHeaderSortedByLength) {
  ScratchDir dir;
  const JobList list =
      jobs_of(dir, "q.fasta", ">long one|x\r\nMKTAY\r\nIAKQR\r\n>short\nggs\n", QueryOrder::length);
  ASSERT_EQ(list.jobs.size(), 2u);
  EXPECT_EQ(list.jobs[0].name, "short");
  EXPECT_EQ(list.jobs[0].sequence, "GGS");
  EXPECT_EQ(list.jobs[0].line, 4u);
  EXPECT_EQ(list.jobs[1].name, "long_one_x");
  EXPECT_EQ(list.jobs[1].sequence, "MKTAYIAKQR");
  EXPECT_TRUE(list.jobs[1].a3m.empty());
  for (const PredictJob& job : list.jobs) EXPECT_EQ(job.error, "") << job.name;
}

TEST(PredictJobsTest, SortNoneKeepsFileOrder) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "q.fasta", ">b\nMKTAYIAK\n>a\nGG\n");
  ASSERT_EQ(list.jobs.size(), 2u);
  EXPECT_EQ(list.jobs[0].name, "b");
  EXPECT_EQ(list.jobs[1].name, "a");
}

TEST(PredictJobsTest, BadRecordsFailAloneWithFileAndLine) {
  ScratchDir dir;
  const std::string file = (dir / "q.fasta").string();
  const JobList list = jobs_of(
      dir, "q.fasta", ">good\nMKTA\n>empty\n>digits\nMK1A\n>complex\nMKT:AAA\n>gap\nMK-A\n");
  ASSERT_EQ(list.jobs.size(), 5u);
  EXPECT_EQ(find(list, "good").error, "");
  EXPECT_TRUE(contains(find(list, "empty").error, file + ":3: ")) << find(list, "empty").error;
  EXPECT_TRUE(contains(find(list, "empty").error, "empty sequence"));
  EXPECT_TRUE(contains(find(list, "digits").error, file + ":4: "));
  EXPECT_TRUE(contains(find(list, "digits").error, "'1' at residue 3"));
  EXPECT_TRUE(contains(find(list, "complex").error, "multimer not supported yet"));
  EXPECT_TRUE(contains(find(list, "gap").error, "'-'"));
}

TEST(PredictJobsTest, TooLongQueryFailsAlone) {
  ScratchDir dir;
  const JobList list =
      jobs_of(dir, "q.fasta", ">ok\nMKTA\n>long\nMKTAYIAKQR\n", QueryOrder::none, 8);
  EXPECT_EQ(find(list, "ok").error, "");
  EXPECT_TRUE(contains(find(list, "long").error, "more than the limit of 8"));
}

TEST(PredictJobsTest, UnreadableFastaFailsAsOneJobNamedByTheFile) {
  ScratchDir dir;
  write_file(dir / "empty.fasta", "");
  write_file(dir / "noheader.fasta", "MKTAYIAK\n");
  const JobList empty = discover_jobs(dir / "empty.fasta", QueryOrder::length);
  ASSERT_EQ(empty.jobs.size(), 1u);
  EXPECT_EQ(empty.jobs[0].name, "empty");
  EXPECT_TRUE(contains(empty.jobs[0].error, (dir / "empty.fasta").string() + ":1: empty"));
  const JobList noheader = discover_jobs(dir / "noheader.fasta", QueryOrder::length);
  ASSERT_EQ(noheader.jobs.size(), 1u);
  EXPECT_TRUE(contains(noheader.jobs[0].error, ":1: no FASTA header"));
}

TEST(PredictJobsTest, A3mInputIsOneJobWithItsOwnMsa) {
  ScratchDir dir;
  const JobList list =
      jobs_of(dir, "my prot.a3m", "#5\t1\n>query\nMKTAY\n>hit\nMK-aaAY\n", QueryOrder::length);
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_EQ(list.jobs[0].name, "my_prot");
  EXPECT_EQ(list.jobs[0].sequence, "MKTAY");
  EXPECT_EQ(list.jobs[0].line, 2u);
  EXPECT_EQ(list.jobs[0].a3m, dir / "my prot.a3m");
  EXPECT_EQ(list.jobs[0].error, "");
}

TEST(PredictJobsTest, A3mWithRowsOfDifferentLengthFailsNamingTheRow) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "bad.a3m", ">query\nMKTAY\n>hit\nMKT\n", QueryOrder::length);
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_TRUE(contains(list.jobs[0].error, (dir / "bad.a3m").string() + ":3: "))
      << list.jobs[0].error;
  EXPECT_TRUE(contains(list.jobs[0].error, "match columns"));
}

TEST(PredictJobsTest, CsvWithRelativeA3mPaths) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "tables" / "msas");
  write_file(dir / "tables" / "msas" / "a.a3m", ">a\nMKTA\n");
  write_file(dir / "tables" / "q.csv",
             "id,sequence,a3m_path\nalpha,MKTA,msas/a.a3m\nbeta,gg s,\ngamma,MKXZ1,\n");
  const JobList list = discover_jobs(dir / "tables" / "q.csv", QueryOrder::none);
  ASSERT_EQ(list.jobs.size(), 3u);
  EXPECT_EQ(list.jobs[0].name, "alpha");
  EXPECT_EQ(list.jobs[0].a3m, dir / "tables" / "msas" / "a.a3m");
  EXPECT_EQ(list.jobs[1].sequence, "GGS");
  EXPECT_TRUE(list.jobs[1].a3m.empty());
  EXPECT_TRUE(contains(list.jobs[2].error, "q.csv:4: ")) << list.jobs[2].error;
  EXPECT_TRUE(contains(list.jobs[2].error, "'1'"));
}

TEST(PredictJobsTest, TsvWithColabFoldColumnName) {
  ScratchDir dir;
  const JobList list =
      jobs_of(dir, "q.tsv", "id\tsequence\ta3mpath\none\tMKTA\t/nonexistent/x.a3m\n");
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_EQ(list.jobs[0].sequence, "MKTA");
  EXPECT_TRUE(contains(list.jobs[0].error, "/nonexistent/x.a3m does not exist"));
}

TEST(PredictJobsTest, TableWithoutHeaderColumnsFails) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "q.csv", "name,seq\na,MKTA\n");
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_EQ(list.jobs[0].name, "q");
  EXPECT_TRUE(contains(list.jobs[0].error,
                       "q.csv:1: the first row must name the columns 'id' "
                       "and 'sequence'"));
}

TEST(PredictJobsTest, DirectoryReadsFilesInNameOrderAndFastaFilesByStem) {
  ScratchDir dir;
  write_file(dir / "b.fasta", ">first\nMKTAYIAK\n>second\nGG\n");
  write_file(dir / "a.a3m", ">q\nMKTA\n");
  write_file(dir / "c.csv", "id,sequence\nfromcsv,MK\n");
  write_file(dir / "notes.txt", "hello\n");
  const JobList list = discover_jobs(dir.path(), QueryOrder::none);
  ASSERT_EQ(list.jobs.size(), 3u);
  EXPECT_EQ(list.jobs[0].name, "a");
  EXPECT_EQ(list.jobs[1].name, "b");
  EXPECT_EQ(list.jobs[1].sequence, "MKTAYIAK");
  EXPECT_EQ(list.jobs[2].name, "fromcsv");
  ASSERT_EQ(list.warnings.size(), 2u);
  EXPECT_TRUE(contains(list.warnings[0], "1 more record(s) ignored"));
  EXPECT_TRUE(contains(list.warnings[1], "notes.txt: skipped"));
}

TEST(PredictJobsTest, DirectorySkipsDanglingLinksAndDevicesWithAWarning) {
  ScratchDir dir;
  write_file(dir / "a.fasta", ">a\nMKTA\n");
  std::filesystem::create_symlink(dir / "gone.fasta", dir / "b.fasta");
  std::filesystem::create_directory(dir / "sub");
  ASSERT_EQ(::mkfifo((dir / "c.fasta").c_str(), 0600), 0);
  const JobList list = discover_jobs(dir.path(), QueryOrder::none);
  ASSERT_EQ(list.jobs.size(), 1u);
  ASSERT_EQ(list.warnings.size(), 2u);
  EXPECT_TRUE(contains(list.warnings[0], "b.fasta: skipped (a symbolic link to"))
      << list.warnings[0];
  EXPECT_TRUE(contains(list.warnings[0], "which does not exist")) << list.warnings[0];
  EXPECT_TRUE(contains(list.warnings[1], "c.fasta: skipped (not a regular file)"))
      << list.warnings[1];
}

TEST(PredictJobsTest, DeviceAsInputFailsItsJobWithoutReadingIt) {
  const JobList list = discover_jobs("/dev/zero", QueryOrder::none);
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_TRUE(contains(list.jobs[0].error, "not a file")) << list.jobs[0].error;
}

TEST(PredictJobsTest, DotHeadersGiveVisibleDistinctNames) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "q.fasta", ">.\nMK\n>..\nMKT\n");
  ASSERT_EQ(list.jobs.size(), 2u);
  EXPECT_EQ(list.jobs[0].name, "_");
  EXPECT_EQ(list.jobs[1].name, "__");
}

TEST(PredictJobsTest, DuplicateJobNamesAreRefused) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">a b\nMK\n>a_b\nMKT\n");
  const std::string message = testing::thrown_message<InputError>(
      [&] { discover_jobs(dir / "q.fasta", QueryOrder::length); });
  EXPECT_TRUE(contains(message, "two jobs are named 'a_b'")) << message;
  EXPECT_TRUE(contains(message, "q.fasta:1 and ")) << message;
  EXPECT_TRUE(contains(message, "q.fasta:3")) << message;
}

TEST(PredictJobsTest, MissingInputIsRefused) {
  ScratchDir dir;
  const std::string message = testing::thrown_message<InputError>(
      [&] { discover_jobs(dir / "nope.fasta", QueryOrder::length); });
  EXPECT_TRUE(contains(message, "nope.fasta: no such file or directory")) << message;
}

TEST(PredictJobsTest, LongHeadersAreCutToFitFileNamesAndStayDistinct) {
  ScratchDir dir;
  const std::string prefix(260, 'P');
  const JobList list = jobs_of(
      dir, "q.fasta", ">" + prefix + " first\nMKTA\n>" + prefix + " second\nMKTAY\n>short\nMK\n");
  ASSERT_EQ(list.jobs.size(), 3u);
  const std::string& a = list.jobs[0].name;
  const std::string& b = list.jobs[1].name;
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), max_job_name_bytes());
  EXPECT_EQ(b.size(), max_job_name_bytes());
  EXPECT_EQ(a.substr(0, 100), prefix.substr(0, 100));
  EXPECT_EQ(list.jobs[2].name, "short");
  ASSERT_EQ(list.warnings.size(), 2u);
  EXPECT_TRUE(contains(list.warnings[0], "q.fasta:1: job name of 266 characters cut to '" + a))
      << list.warnings[0];
  EXPECT_TRUE(contains(list.warnings[1], "q.fasta:3: ")) << list.warnings[1];
  // The same header always gives the same name (a rerun finds its done markers).
  EXPECT_EQ(discover_jobs(dir / "q.fasta", QueryOrder::none).jobs[0].name, a);
}

TEST(PredictJobsTest, CutJobNamesLeaveRoomForEveryOutputFileAndItsTemporary) {
  EXPECT_EQ(max_job_name_bytes() + longest_job_file_suffix(), std::size_t{NAME_MAX});
  const std::string job(max_job_name_bytes(), 'J');
  // The longest names a realistic batch writes, with the atomic writer's temporary name.
  const std::string tag =
      rank_tag(1000) + "_" + prediction_tag("alphafold2_ptm", 5, 123456789012ULL);
  for (const std::string& name :
       {job + "_unrelaxed_" + tag + ".pdb", job + "_scores_" + tag + ".json",
        job + "_predicted_aligned_error_v1.json"}) {
    EXPECT_LE(("." + name + ".tmp.4194304").size(), std::size_t{NAME_MAX}) << name;
  }
}

TEST(PredictJobsTest, FitJobNameKeepsShortNamesAndCutsLongOnesToTheLimit) {
  std::vector<std::string> warnings;
  PredictJob job;
  job.name = "short";
  fit_job_name(job, warnings);
  EXPECT_EQ(job.name, "short");
  EXPECT_TRUE(warnings.empty());
  job.name = std::string(max_job_name_bytes() - 10, 'a') + std::string(20, 'b');
  fit_job_name(job, warnings);
  EXPECT_EQ(job.name.size(), max_job_name_bytes());
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(PredictJobsTest, CsvRowWithUnbalancedQuoteFailsNamingFileAndLine) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "q.csv", "id,sequence\n\"foo,MKTA\nbar,MKTA\n");
  ASSERT_EQ(list.jobs.size(), 2u);
  EXPECT_EQ(list.jobs[0].name, "q_line_2") << "not '_foo'";
  EXPECT_TRUE(contains(list.jobs[0].error, "q.csv:2: field 1 opens a quote that is never closed"))
      << list.jobs[0].error;
  EXPECT_EQ(list.jobs[1].name, "bar");
  EXPECT_EQ(list.jobs[1].error, "");
}

TEST(PredictJobsTest, CsvQuotedFieldMayHoldTheDelimiter) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "q.csv", "id,sequence\n\"a,b\",MKTA\n");
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_EQ(list.jobs[0].name, "a_b");
  EXPECT_EQ(list.jobs[0].error, "");
}

TEST(PredictJobsTest, CsvRowWithEmptyIdSaysSoInTableTerms) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "q.csv", "id,sequence\n ,MKTA\n");
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_TRUE(contains(list.jobs[0].error, "q.csv:2: the 'id' field is empty"))
      << list.jobs[0].error;
  EXPECT_FALSE(contains(list.jobs[0].error, "'>'")) << list.jobs[0].error;
}

TEST(PredictJobsTest, OverlongA3mPathFailsItsRowNotTheBatch) {
  ScratchDir dir;
  const JobList list =
      jobs_of(dir, "q.csv",
              "id,sequence,a3m_path\nlong,MKTA," + std::string(300, 'm') + ".a3m\nok,MKTA,\n");
  ASSERT_EQ(list.jobs.size(), 2u);
  EXPECT_TRUE(contains(list.jobs[0].error, "q.csv:2: a3m_path ")) << list.jobs[0].error;
  EXPECT_TRUE(contains(list.jobs[0].error, "cannot be used: File name too long"))
      << list.jobs[0].error;
  EXPECT_EQ(list.jobs[1].error, "");
}

TEST(PredictJobsTest, ErrorsAndWarningsAreSafeToPrint) {
  ScratchDir dir;
  const JobList list = jobs_of(dir, "q.fasta", ">bad\xFF\x1B id\nMK1\n");
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_TRUE(contains(list.jobs[0].error, "record 'bad\\xFF\\x1B'")) << list.jobs[0].error;
}

TEST(PredictJobsTest, SortOrderNames) {
  EXPECT_EQ(parse_query_order("none"), QueryOrder::none);
  EXPECT_EQ(parse_query_order("length"), QueryOrder::length);
  EXPECT_EQ(parse_query_order("msa_depth"), QueryOrder::msa_depth);
  EXPECT_EQ(parse_query_order("random"), QueryOrder::random);
  EXPECT_THROW(parse_query_order("shortest"), InputError);
}

}  // namespace
}  // namespace cpufold
