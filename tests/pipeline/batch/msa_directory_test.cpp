// --msa-dir layouts: ColabFold's flat A3M, AlphaFold2's msas/, OpenFold's alignments/.
#include "pipeline/batch/msa_directory.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;
using testing::write_file;

std::vector<std::string> names(const JobMsaFiles& found) {
  std::vector<std::string> out;
  for (const fs::path& p : found.files) out.push_back(p.filename().string());
  return out;
}

TEST(MsaDirectoryTest, FlatA3mFileOfTheJob) {
  ScratchDir dir;
  write_file(dir / "job1.a3m", ">q\nMK\n");
  const JobMsaFiles found = find_job_msas(dir.path(), "job1");
  ASSERT_EQ(found.files.size(), 1u);
  EXPECT_EQ(found.files[0], dir / "job1.a3m");
  EXPECT_TRUE(find_job_msas(dir.path(), "job2").files.empty());
}

TEST(MsaDirectoryTest, AlphaFold2LayoutInAf2OrderThenOthersSorted) {
  ScratchDir dir;
  const fs::path msas = dir / "job" / "msas";
  fs::create_directories(msas);
  for (const char* f : {"mgnify_hits.sto", "bfd_uniref_hits.a3m", "uniref90_hits.sto",
                        "pdb_hits.sto", "z_extra.a3m", "a_extra.sto", "notes.txt"}) {
    write_file(msas / f, "x\n");
  }
  const JobMsaFiles found = find_job_msas(dir.path(), "job");
  EXPECT_EQ(names(found),
            (std::vector<std::string>{"uniref90_hits.sto", "bfd_uniref_hits.a3m", "mgnify_hits.sto",
                                      "a_extra.sto", "z_extra.a3m"}));
  ASSERT_EQ(found.skipped.size(), 1u);
  EXPECT_NE(found.skipped[0].find("pdb_hits.sto"), std::string::npos);
  EXPECT_NE(found.layout.find("AlphaFold2"), std::string::npos);
}

TEST(MsaDirectoryTest, JobDirectoryWithoutMsasSubdirectoryAndSmallBfd) {
  ScratchDir dir;
  fs::create_directories(dir / "job");
  write_file(dir / "job" / "small_bfd_hits.sto", "x\n");
  write_file(dir / "job" / "uniref90_hits.sto", "x\n");
  write_file(dir / "job" / "uniref90_hits.a3m", "x\n");
  const JobMsaFiles found = find_job_msas(dir.path(), "job");
  EXPECT_EQ(names(found), (std::vector<std::string>{"uniref90_hits.sto", "small_bfd_hits.sto"}));
  ASSERT_EQ(found.skipped.size(), 1u);
  EXPECT_NE(found.skipped[0].find("uniref90_hits.a3m"), std::string::npos);
}

TEST(MsaDirectoryTest, OpenFoldAlignmentsLayout) {
  ScratchDir dir;
  const fs::path a = dir / "alignments" / "T1050";
  fs::create_directories(a);
  write_file(a / "bfd_uniclust_hits.a3m", "x\n");
  write_file(a / "mgnify_hits.a3m", "x\n");
  write_file(a / "uniref90_hits.a3m", "x\n");
  write_file(a / "uniprot_hits.sto", "x\n");
  const JobMsaFiles found = find_job_msas(dir.path(), "T1050");
  EXPECT_EQ(names(found), (std::vector<std::string>{"uniref90_hits.a3m", "bfd_uniclust_hits.a3m",
                                                    "mgnify_hits.a3m"}));
  EXPECT_NE(found.layout.find("OpenFold"), std::string::npos);
}

TEST(MsaDirectoryTest, NothingFoundMeansSingleSequence) {
  ScratchDir dir;
  fs::create_directories(dir / "job");  // exists but holds no MSA
  write_file(dir / "job" / "readme.txt", "x\n");
  const JobMsaFiles found = find_job_msas(dir.path(), "job");
  EXPECT_TRUE(found.files.empty());
  EXPECT_TRUE(found.layout.empty());
}

TEST(MsaDirectoryTest, Af2HitLimitsTruncateRowsQueryFirst) {
  EXPECT_EQ(af2_hit_limit("x/uniref90_hits.sto"), 10000);
  EXPECT_EQ(af2_hit_limit("x/mgnify_hits.a3m"), 501);
  EXPECT_EQ(af2_hit_limit("x/bfd_uniref_hits.a3m"), 0);
  ScratchDir dir;
  std::string text;
  for (int i = 0; i < 600; ++i) text += ">s" + std::to_string(i) + "\nMKTA\n";
  write_file(dir / "mgnify_hits.a3m", text);
  const Msa msa = read_msa_file(dir / "mgnify_hits.a3m");
  ASSERT_EQ(msa.sequences.size(), 501u);
  EXPECT_EQ(msa.descriptions.front(), "s0");
  EXPECT_EQ(msa.deletions.size(), 501u);
}

TEST(MsaDirectoryTest, StockholmByExtension) {
  ScratchDir dir;
  write_file(dir / "x.sto", "# STOCKHOLM 1.0\nq MK-TA\nh MKLTA\n//\n");
  const Msa msa = read_msa_file(dir / "x.sto");
  ASSERT_EQ(msa.sequences.size(), 2u);
  EXPECT_EQ(msa.sequences[0], "MKTA");
  EXPECT_EQ(msa.deletions[1][2], 1);
}

}  // namespace
}  // namespace cpufold
