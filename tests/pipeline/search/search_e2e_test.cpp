// `cpufold search` end to end: tiny AF2-layout databases, the MSAs it writes folded by
// `predict --msa-dir` with the tiny test weights, a rerun that searches nothing, and the exit
// statuses of a missing database and a missing program.
#include <gtest/gtest.h>

#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_search_databases.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::FastaRecord;
using testing::run_cpufold;
using testing::ScratchDir;
using testing::shell_word;

std::size_t a3m_rows(const fs::path& file) {
  const std::string text = testing::read_file(file);
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    n += text[i] == '>' && (i == 0 || text[i - 1] == '\n');
  return n;
}

TEST(SearchE2eTest, SearchWritesAf2LayoutThatPredictFoldsAndARerunSearchesNothing) {
  ScratchDir dir;
  const std::vector<FastaRecord> uniref90 = testing::mutated_database(12, 20, 7);
  const std::vector<FastaRecord> mgnify = testing::mutated_database(6, 10, 8);
  testing::write_fasta(dir / "db" / "uniref90" / "uniref90.fasta", uniref90);
  testing::write_fasta(dir / "db" / "mgnify" / "mgy_clusters_2022_05.fa", mgnify);
  testing::write_file(dir / "q.fasta", ">villin_HP35\nLSDEDFKAVFGMTRSAFANLPLWKQQNLKKEKGLF\n");
  // Relative paths: the programs run in a scratch directory, the paths must still hold.
  const std::string search = "cd " + shell_word(dir.path()) +
                             " && '" CPUFOLD_BINARY
                             "' search q.fasta msas --databases db --method jackhmmer --threads 1";
  const auto r = testing::run_command(search);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "searched without: small_bfd")) << r.output;
  EXPECT_TRUE(contains(
      r.output,
      "uniref90_hits.sto: " + std::to_string(1 + testing::mutants_of(uniref90, "villin_HP35")) +
          " sequences"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "1 searched, 0 kept")) << r.output;
  EXPECT_TRUE(fs::is_regular_file(dir / "msas" / "villin_HP35" / "msas" / "mgnify_hits.sto"));

  const auto again = testing::run_command(search);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "0 searched, 1 kept")) << again.output;
  EXPECT_FALSE(contains(again.output, "jackhmmer on")) << again.output;

  const fs::path out = dir / "out";
  const auto p =
      run_cpufold("predict " + shell_word(dir / "q.fasta") + " " + shell_word(out) + " --msa-dir " +
                  shell_word(dir / "msas") + " " + testing::fast_predict_options("3"));
  ASSERT_EQ(p.exit_code, 0) << p.output;
  const std::string log = testing::read_file(out / "log.txt");
  EXPECT_TRUE(contains(log, "MSAs from AlphaFold2 output directory")) << log;
  // predict's MSA: uniref90's rows then mgnify's, the query once (AF2 drops duplicates).
  EXPECT_GT(a3m_rows(out / "villin_HP35.a3m"), testing::mutants_of(uniref90, "villin_HP35"));
}

TEST(SearchE2eTest, MissingDatabasesAndAMissingProgramExit2BeforeAnySearch) {
  ScratchDir dir;
  testing::write_file(dir / "q.fasta", ">trp\nNLYIQWLKDGGPSSGRPPPS\n");
  fs::create_directories(dir / "db");
  const auto none =
      run_cpufold("search " + shell_word(dir / "q.fasta") + " " + shell_word(dir / "msas") +
                  " --databases " + shell_word(dir / "db") + " --method mmseqs2");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_TRUE(contains(none.output, "no ColabFold UniRef30 database")) << none.output;
  EXPECT_FALSE(fs::exists(dir / "msas"));

  testing::write_fasta(dir / "db" / "uniref90" / "uniref90.fasta", {{"a", "NLYIQWLKDG"}});
  const auto no_program = testing::run_command(
      "PATH=/nonexistent '" CPUFOLD_BINARY "' search " + shell_word(dir / "q.fasta") + " " +
      shell_word(dir / "msas") + " --databases " + shell_word(dir / "db"));
  EXPECT_EQ(no_program.exit_code, 2) << no_program.output;
  EXPECT_TRUE(contains(no_program.output, "jackhmmer: program not found on PATH"))
      << no_program.output;
  EXPECT_TRUE(contains(no_program.output, "apt-get install hmmer")) << no_program.output;
  EXPECT_FALSE(fs::exists(dir / "msas"));
}

}  // namespace
}  // namespace cpufold
