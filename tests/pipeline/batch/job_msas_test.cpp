// Which MSAs a predict job uses, what the log says about the choice, and the refusal of jobs
// without an MSA source.
#include "pipeline/batch/job_msas.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::ScratchDir;
using testing::write_file;

struct Said {
  std::vector<std::string> lines;
  std::function<void(const std::string&)> fn() {
    return [this](const std::string& l) { lines.push_back(l); };
  }
  bool any(const std::string& part) const {
    for (const std::string& l : lines)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

PredictJob job(const std::string& name, const std::filesystem::path& a3m = {}) {
  PredictJob j;
  j.name = name;
  j.sequence = "MKV";
  j.a3m = a3m;
  return j;
}

MsaSources in_dir(const std::filesystem::path& dir, bool single_sequence = false) {
  return {dir, {}, single_sequence};
}

TEST(JobMsas, OwnA3mComesFirst) {
  ScratchDir dir;
  write_file(dir / "own.a3m", ">q\nMKV\n>h\nMRV\n");
  write_file(dir / "j.a3m", ">q\nMKV\n");
  Said said;
  const JobMsas m = load_job_msas(job("j", dir / "own.a3m"), in_dir(dir.path()), said.fn());
  EXPECT_EQ(m.source, MsaSource::input_a3m);
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_EQ(m.files[0], dir / "own.a3m");
  ASSERT_EQ(m.msas.size(), 1u);
  EXPECT_EQ(m.msas[0].sequences.size(), 2u);
  EXPECT_TRUE(said.any("MSA " + (dir / "own.a3m").string()));
  EXPECT_TRUE(said.any("own.a3m: 2 row(s) read"));
}

TEST(JobMsas, MsaDirectoryLackingTheJobsFileIsTheJobsError) {
  ScratchDir dir;
  write_file(dir / "j.a3m", ">q\nMKV\n");
  Said said;
  const JobMsas found = load_job_msas(job("j"), in_dir(dir.path()), said.fn());
  EXPECT_EQ(found.source, MsaSource::msa_dir);
  EXPECT_EQ(found.files.size(), 1u);
  EXPECT_TRUE(said.any("MSAs from"));
  const std::string message = testing::thrown_message<InputError>(
      [&] { load_job_msas(job("other"), in_dir(dir.path()), said.fn()); });
  EXPECT_NE(message.find("no MSA for this job in " + dir.path().string()), std::string::npos)
      << message;
  EXPECT_NE(message.find("--msa-mode single_sequence"), std::string::npos) << message;
}

TEST(JobMsas, SingleSequenceOnlyWhenAskedFor) {
  ScratchDir dir;
  Said said;
  const std::string message =
      testing::thrown_message<InputError>([&] { load_job_msas(job("j"), in_dir({}), said.fn()); });
  for (const char* way : {"--msa-dir DIR", "--databases DIR", "--msa-mode single_sequence"})
    EXPECT_NE(message.find(way), std::string::npos) << message;

  const JobMsas asked = load_job_msas(job("j"), in_dir({}, true), said.fn());
  EXPECT_EQ(asked.source, MsaSource::single_sequence);
  EXPECT_TRUE(asked.files.empty());
  EXPECT_TRUE(said.any("single-sequence mode (--msa-mode single_sequence)"));
  // With --msa-dir too, a job it has no file for folds alone: that was asked for.
  const JobMsas missing = load_job_msas(job("j"), in_dir(dir.path(), true), said.fn());
  EXPECT_EQ(missing.source, MsaSource::single_sequence);
  EXPECT_TRUE(missing.files.empty());
}

TEST(MsaSource, BatchWithoutAnySourceIsRefusedNamingJobsAndWaysOut) {
  std::vector<PredictJob> jobs = {job("a"), job("b", "/x/b.a3m"), job("c"), job("d"), job("e")};
  jobs.push_back(job("bad"));
  jobs.back().error = "bad record";  // fails on its own
  const std::string message =
      testing::thrown_message<InputError>([&] { require_msa_sources(jobs, in_dir({})); });
  EXPECT_NE(message.find("4 of 6 job(s) have no MSA (a, c, d, ...)"), std::string::npos) << message;
  for (const char* way : {"--msa-dir DIR", "--databases DIR", "--msa-mode single_sequence"})
    EXPECT_NE(message.find(way), std::string::npos) << message;
  EXPECT_NO_THROW(require_msa_sources(jobs, in_dir({}, true)));
  EXPECT_NO_THROW(require_msa_sources(jobs, in_dir("/some/dir")));
  EXPECT_NO_THROW(require_msa_sources({job("b", "/x/b.a3m")}, in_dir({})));
  EXPECT_EQ(job_msa_source(job("a"), in_dir({})), MsaSource::none);
  EXPECT_EQ(msa_source_name(MsaSource::msa_dir), "msa_dir");
}

}  // namespace
}  // namespace cpufold
