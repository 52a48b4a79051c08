// search_msas on tiny databases made from mutants of the example proteins: each method's MSA
// depth, the query as row 1, files kept on a rerun, and a failing program leaving no file.
#include "pipeline/search/msa_search.h"

#include <gtest/gtest.h>

#include "io/a3m.h"
#include "io/stockholm.h"
#include "pipeline/search/external_program.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_search_databases.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::FastaRecord;
using testing::ScratchDir;

std::vector<SearchQuery> queries(std::size_t n) {
  std::vector<SearchQuery> out;
  for (const FastaRecord& p : testing::example_proteins()) {
    if (out.size() < n) out.push_back({p.name, p.sequence});
  }
  return out;
}

Msa read_msa(const fs::path& file) {
  return file.extension() == ".sto" ? read_stockholm(file) : read_a3m(file);
}

SearchOptions options_for(const fs::path& msa_dir, std::vector<std::string>* lines = nullptr) {
  SearchOptions o;
  o.msa_dir = msa_dir;
  o.threads = 1;
  o.say = [lines](const std::string& line) {
    if (lines != nullptr) lines->push_back(line);
  };
  return o;
}

TEST(MsaSearchTest, JackhmmerFindsEachProteinsMutantsWithTheQueryFirstAndKeepsThemOnRerun) {
  ScratchDir dir;
  const std::vector<FastaRecord> uniref90 = testing::mutated_database(30, 40, 1);
  const std::vector<FastaRecord> mgnify = testing::mutated_database(10, 20, 2);
  const std::vector<FastaRecord> small_bfd = testing::mutated_database(5, 10, 3);
  testing::write_af2_fasta_databases(dir / "db", uniref90, mgnify, small_bfd);
  const SearchPlan plan = plan_search(SearchMethod::jackhmmer, dir / "db");
  const std::vector<SearchQuery> q = queries(2);  // ubiquitin, GB1
  const SearchSummary first = search_msas(q, plan, options_for(dir / "msas"));
  EXPECT_EQ(first.searched, 2u);
  ASSERT_EQ(first.files.size(), 2u);
  const std::vector<std::pair<std::string, const std::vector<FastaRecord>*>> expected = {
      {"uniref90_hits.sto", &uniref90},
      {"small_bfd_hits.sto", &small_bfd},
      {"mgnify_hits.sto", &mgnify}};
  for (std::size_t i = 0; i < q.size(); ++i) {
    ASSERT_EQ(first.files[i].size(), 3u);
    for (std::size_t f = 0; f < 3; ++f) {
      const SearchedFile& file = first.files[i][f];
      EXPECT_EQ(file.path, dir / "msas" / q[i].name / "msas" / expected[f].first);
      const Msa msa = read_msa(file.path);
      EXPECT_EQ(msa.sequences.size(), file.depth);
      EXPECT_EQ(msa.sequences[0], q[i].sequence) << file.path;  // the query is row 1
      // Every mutant (65-95% identical) is found, and nothing else.
      EXPECT_EQ(file.depth, 1 + testing::mutants_of(*expected[f].second, q[i].name)) << file.path;
    }
  }
  std::vector<std::string> lines;
  const SearchSummary again = search_msas(q, plan, options_for(dir / "msas", &lines));
  EXPECT_EQ(again.searched, 0u);
  EXPECT_EQ(again.skipped, 2u);
  EXPECT_TRUE(again.files[0][0].skipped);
  // Nothing but the jobs' directories is left in MSA_DIR (no scratch, no temporaries).
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "msas")) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"GB1", "ubiquitin"}));
}

TEST(MsaSearchTest, HhblitsOnAnHhsuiteDatabaseWritesAf2sBfdFile) {
  ScratchDir dir;
  const std::vector<FastaRecord> bfd = testing::mutated_database(20, 20, 4);
  ASSERT_EQ(testing::write_hhsuite_database(dir / "db" / "bfd" / "bfd", bfd, 10), "");
  const SearchPlan plan = plan_search(SearchMethod::hhblits, dir / "db");
  ASSERT_EQ(plan.steps.size(), 1u);  // no uniref90, mgnify, uniref30: said missing
  EXPECT_EQ(plan.missing.size(), 3u);
  const std::vector<SearchQuery> q = queries(1);
  const SearchSummary s = search_msas(q, plan, options_for(dir / "msas"));
  const fs::path a3m = dir / "msas" / "ubiquitin" / "msas" / "bfd_uniref_hits.a3m";
  ASSERT_EQ(s.files[0][0].path, a3m);
  const Msa msa = read_a3m(a3m);
  EXPECT_EQ(msa.sequences[0], q[0].sequence);
  // hhblits filters near-identical rows, so not every mutant survives; most do.
  EXPECT_GT(msa.sequences.size(), testing::mutants_of(bfd, "ubiquitin") / 2);
  EXPECT_LE(msa.sequences.size(), 1 + testing::mutants_of(bfd, "ubiquitin"));
}

// MMseqs2's prefilter builds a k-mer table of about 0.9 GB whatever the database's size (5-20 s
// per search iteration on a loaded machine), so this test searches UniRef30 alone (3
// iterations); the environmental database and mergedbs run the same code with one more
// database (checked by hand, README "cpufold search").
TEST(MsaSearchTest, Mmseqs2RunsColabFoldsStepsAndWritesOneA3mPerJob) {
  ScratchDir dir;
  const std::vector<FastaRecord> uniref = testing::mutated_database(20, 30, 5);
  ASSERT_EQ(testing::write_mmseqs_database(dir / "db", "uniref30_2302_db", uniref), "");
  const SearchPlan plan = plan_search(SearchMethod::mmseqs2, dir / "db");
  ASSERT_EQ(plan.missing.size(), 1u);
  EXPECT_TRUE(contains(plan.missing[0], "colabfold_envdb")) << plan.missing[0];
  const std::vector<SearchQuery> q = queries(2);
  const SearchSummary s = search_msas(q, plan, options_for(dir / "msas"));
  EXPECT_EQ(s.searched, 2u);
  for (std::size_t i = 0; i < q.size(); ++i) {
    const fs::path a3m = dir / "msas" / (q[i].name + ".a3m");
    EXPECT_EQ(s.files[i][0].path, a3m);
    const std::string text = testing::read_file(a3m);
    EXPECT_EQ(text.find('\0'), std::string::npos) << "NUL separators removed";
    EXPECT_EQ(text.rfind(">101\n" + q[i].sequence + "\n", 0), 0u) << text.substr(0, 200);
    const Msa msa = read_a3m(a3m);
    // The query, then every mutant of the protein (ColabFold's filters keep them all here).
    EXPECT_EQ(msa.sequences.size(), 1 + testing::mutants_of(uniref, q[i].name)) << a3m;
    EXPECT_EQ(s.files[i][0].depth, msa.sequences.size());
  }
}

TEST(MsaSearchTest, AProgramThatFailsLeavesNoFileAndSaysWhy) {
  ScratchDir dir;
  // Starts like FASTA (passes the cheap check), then is not: jackhmmer refuses it.
  testing::write_fasta(dir / "db" / "uniref90" / "uniref90.fasta", {{"a", "MKV"}});
  testing::write_file(dir / "db" / "uniref90" / "uniref90.fasta", ">a\nMKV\n>b\n\x01\x02\n");
  const SearchPlan plan = plan_search(SearchMethod::jackhmmer, dir / "db");
  const std::string message = testing::thrown_message<ExternalProgramError>(
      [&] { search_msas(queries(1), plan, options_for(dir / "msas")); });
  EXPECT_TRUE(contains(message, "jackhmmer failed with exit status")) << message;
  EXPECT_TRUE(contains(message, "uniref90.fasta")) << message;
  EXPECT_FALSE(fs::exists(dir / "msas" / "ubiquitin" / "msas" / "uniref90_hits.sto"));
  for (const auto& e : fs::recursive_directory_iterator(dir / "msas")) {
    EXPECT_TRUE(e.is_directory()) << "left behind: " << e.path();
  }
}

}  // namespace
}  // namespace cpufold
