// plan_search: which databases of AF2's data directory or ColabFold's MMseqs2 set a method
// uses, what it says is missing, and the checks that refuse a missing or truncated database.
#include "pipeline/search/search_databases.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::ScratchDir;
using testing::thrown_message;
using testing::write_file;

void write_in(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  write_file(file, text);
}

// A well-formed (tiny) HH-suite database PREFIX_{a3m,cs219}.ff{data,index}.
void write_ffindex(const fs::path& prefix) {
  for (const char* part : {"_a3m", "_cs219"}) {
    write_in(prefix.string() + part + ".ffdata", std::string(">a\nMK\n") + '\0');
    write_in(prefix.string() + part + ".ffindex", "a\t0\t7\n");
  }
}

void write_mmseqs(const fs::path& prefix) {
  write_in(prefix.string() + ".dbtype", std::string("\0\0\0\0", 4));
  write_in(prefix.string(), std::string("MK\n") + '\0');
  write_in(prefix.string() + ".index", "0\t0\t4\n");
}

std::vector<std::string> outputs(const SearchPlan& plan) {
  std::vector<std::string> out;
  for (const MsaSearchStep& s : plan.steps) out.push_back(s.output);
  return out;
}

TEST(SearchDatabasesTest, JackhmmerUsesAf2FastaDatabasesAndSaysWhatIsMissing) {
  ScratchDir dir;
  write_in(dir / "uniref90" / "uniref90.fasta", ">a\nMK\n");
  write_in(dir / "mgnify" / "mgy_clusters_2022_05.fa", ">b\nMK\n");
  const SearchPlan plan = plan_search(SearchMethod::jackhmmer, dir.path());
  EXPECT_EQ(outputs(plan), (std::vector<std::string>{"uniref90_hits.sto", "mgnify_hits.sto"}));
  EXPECT_EQ(plan.steps[1].databases.front(), dir / "mgnify" / "mgy_clusters_2022_05.fa");
  ASSERT_EQ(plan.missing.size(), 1u);
  EXPECT_TRUE(contains(plan.missing[0], "small_bfd")) << plan.missing[0];
}

TEST(SearchDatabasesTest, HhblitsSearchesBfdAndUniref30TogetherAsAf2FullDbs) {
  ScratchDir dir;
  write_in(dir / "uniref90" / "uniref90.fasta", ">a\nMK\n");
  write_ffindex(dir / "bfd" / "bfd_metaclust_clu_complete_id30_c90_final_seq.sorted_opt");
  write_ffindex(dir / "uniref30" / "UniRef30_2021_03");
  const SearchPlan plan = plan_search(SearchMethod::hhblits, dir.path());
  EXPECT_EQ(outputs(plan), (std::vector<std::string>{"uniref90_hits.sto", "bfd_uniref_hits.a3m"}));
  EXPECT_EQ(plan.steps[1].tool, SearchTool::hhblits);
  EXPECT_EQ(plan.steps[1].databases,
            (std::vector<fs::path>{
                dir / "bfd" / "bfd_metaclust_clu_complete_id30_c90_final_seq.sorted_opt",
                dir / "uniref30" / "UniRef30_2021_03"}));
  ASSERT_EQ(plan.missing.size(), 1u);
  EXPECT_TRUE(contains(plan.missing[0], "mgnify")) << plan.missing[0];
}

TEST(SearchDatabasesTest, AMethodWithNoneOfItsDatabasesIsRefusedBeforeAnySearch) {
  ScratchDir dir;
  write_in(dir / "uniref90" / "uniref90.fasta", ">a\nMK\n");
  EXPECT_TRUE(
      contains(thrown_message<InputError>([&] { plan_search(SearchMethod::hhblits, dir.path()); }),
               "bfd/*_a3m.ffindex"));
  EXPECT_TRUE(
      contains(thrown_message<InputError>([&] { plan_search(SearchMethod::mmseqs2, dir.path()); }),
               "uniref30_*_db"));
  ScratchDir empty;
  EXPECT_TRUE(contains(
      thrown_message<InputError>([&] { plan_search(SearchMethod::jackhmmer, empty.path()); }),
      "uniref90/uniref90.fasta"));
  EXPECT_TRUE(contains(
      thrown_message<InputError>([&] { plan_search(SearchMethod::jackhmmer, empty / "nothing"); }),
      "not a directory"));
  EXPECT_TRUE(contains(thrown_message<InputError>([] { parse_search_method("blast"); }),
                       "jackhmmer, hhblits, mmseqs2"));
}

TEST(SearchDatabasesTest, ColabFoldDatabasesTheNewestUnirefAndTheEnvironmentalOne) {
  ScratchDir dir;
  for (const char* db : {"uniref30_2202_db", "uniref30_2302_db", "colabfold_envdb_202108_db"}) {
    for (const char* suffix : {"", "_seq", "_aln"}) write_mmseqs(dir / (std::string(db) + suffix));
  }
  const SearchPlan plan = plan_search(SearchMethod::mmseqs2, dir.path());
  EXPECT_EQ(plan.colabfold.uniref, dir / "uniref30_2302_db");
  EXPECT_EQ(plan.colabfold.env, dir / "colabfold_envdb_202108_db");
  EXPECT_FALSE(plan.colabfold.indexed);
  EXPECT_TRUE(plan.missing.empty());
}

TEST(SearchDatabasesTest, TruncatedOrForeignDatabasesAreRefusedAsCorrupt) {
  ScratchDir dir;
  write_in(dir / "uniref90" / "uniref90.fasta", "MKV\n");
  EXPECT_TRUE(contains(
      thrown_message<InputError>([&] { plan_search(SearchMethod::jackhmmer, dir.path()); }),
      "not a FASTA file"));

  ScratchDir hh;
  write_ffindex(hh / "bfd" / "bfd");
  write_in(hh / "bfd" / "bfd_cs219.ffindex", "a\t0\t7\nb\t7\t100\n");  // past the data's end
  const std::string truncated =
      thrown_message<InputError>([&] { plan_search(SearchMethod::hhblits, hh.path()); });
  EXPECT_TRUE(contains(truncated, "bfd_cs219.ffindex: the entry 'b' ends at byte 107"))
      << truncated;
  EXPECT_TRUE(contains(truncated, "corrupt")) << truncated;

  ScratchDir mm;
  write_mmseqs(mm / "uniref30_2302_db");
  write_mmseqs(mm / "uniref30_2302_db_seq");
  const std::string no_aln =
      thrown_message<InputError>([&] { plan_search(SearchMethod::mmseqs2, mm.path()); });
  EXPECT_TRUE(contains(no_aln, "uniref30_2302_db_aln.dbtype: missing")) << no_aln;
}

}  // namespace
}  // namespace cpufold
