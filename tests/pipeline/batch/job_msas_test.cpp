// Which MSAs a predict job uses, and what the log says about the choice.
#include "pipeline/batch/job_msas.h"

#include <gtest/gtest.h>

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

TEST(JobMsas, OwnA3mComesFirst) {
  ScratchDir dir;
  write_file(dir / "own.a3m", ">q\nMKV\n>h\nMRV\n");
  write_file(dir / "j.a3m", ">q\nMKV\n");
  Said said;
  const JobMsas m = load_job_msas(job("j", dir / "own.a3m"), dir.path(), said.fn());
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_EQ(m.files[0], dir / "own.a3m");
  ASSERT_EQ(m.msas.size(), 1u);
  EXPECT_EQ(m.msas[0].sequences.size(), 2u);
  EXPECT_TRUE(said.any("MSA " + (dir / "own.a3m").string()));
}

TEST(JobMsas, MsaDirectoryThenSingleSequence) {
  ScratchDir dir;
  write_file(dir / "j.a3m", ">q\nMKV\n");
  Said said;
  EXPECT_EQ(load_job_msas(job("j"), dir.path(), said.fn()).files.size(), 1u);
  EXPECT_TRUE(said.any("MSAs from"));
  const JobMsas none = load_job_msas(job("other"), dir.path(), said.fn());
  EXPECT_TRUE(none.files.empty());
  EXPECT_TRUE(said.any("no MSA for this job in " + dir.path().string()));
  EXPECT_TRUE(load_job_msas(job("j"), {}, said.fn()).files.empty());
  EXPECT_TRUE(said.any("no --msa-dir and not an A3M input"));
}

}  // namespace
}  // namespace cpufold
