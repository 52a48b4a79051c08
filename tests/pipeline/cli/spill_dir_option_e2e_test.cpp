// --spill-dir on predict, evaluate and plan: a directory that is missing, not a directory or
// not writable is refused before any work (exit 2, naming the option and the path); an
// existing writable one is accepted, and --help documents it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/pipeline/batch/predict_test_helpers.h"
#include "tests/support/parity.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::contains;

// `path` in single quotes, for a shell command line.
std::string quoted(const fs::path& path) {
  std::string q = "'";
  q += path.string();
  q += "'";
  return q;
}

struct Commands {
  testing::ScratchDir dir;
  Commands() { testing::write_file(dir / "q.fasta", ">q\nMKTAYIAKQRQISFVK\n"); }
  // Quick command lines of each command that take --spill-dir, writing under dir.
  std::vector<std::string> all() const {
    const std::string predict_input =
        quoted(dir / "q.fasta") + " --data " + quoted(testing::test_data_dir()) +
        " --model-order 3 --num-models 1 --num-recycle 0" + " --msa-mode single_sequence";
    return {"predict " + predict_input + " " + quoted(dir / "out"),
            "evaluate --params " + quoted(testing::tiny_params("model_3_ptm")) + " --features " +
                quoted(testing::tiny_reference("model_3_ptm_r24_c8_e16_t0_rec1_s0.h5")) +
                " --out " + quoted(dir / "out.h5"),
            "plan " + predict_input};
  }
  void expect_refused(const fs::path& spill, const std::string& why) const {
    for (const std::string& command : all()) {
      const auto r = testing::run_cpufold(command + " --spill-dir " + quoted(spill));
      EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
      EXPECT_TRUE(contains(r.output, "--spill-dir")) << r.output;
      EXPECT_TRUE(contains(r.output, spill.string())) << r.output;
      EXPECT_TRUE(contains(r.output, why)) << r.output;
      EXPECT_FALSE(fs::exists(dir / "out")) << command << " did work";
      EXPECT_FALSE(fs::exists(dir / "out.h5")) << command << " did work";
    }
  }
};

TEST(SpillDirOption, MissingDirectoryIsRefusedBeforeAnyWork) {
  Commands c;
  c.expect_refused(c.dir / "no-such-dir", "create it first");
}

TEST(SpillDirOption, RegularFileIsRefusedBeforeAnyWork) {
  Commands c;
  testing::write_file(c.dir / "a-file", "x");
  c.expect_refused(c.dir / "a-file", "not an existing directory");
}

TEST(SpillDirOption, UnwritableDirectoryIsRefusedBeforeAnyWork) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can write to any directory";
  Commands c;
  fs::create_directory(c.dir / "ro");
  ::chmod((c.dir / "ro").c_str(), 0555);
  c.expect_refused(c.dir / "ro", "cannot create files");
  ::chmod((c.dir / "ro").c_str(), 0755);
}

TEST(SpillDirOption, WritableDirectoryIsAcceptedAndDocumented) {
  Commands c;
  fs::create_directory(c.dir / "spill");
  const auto plan = testing::run_cpufold(c.all()[2] + " --spill-dir " + quoted(c.dir / "spill"));
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  for (const char* command : {"predict", "evaluate", "plan"}) {
    const auto help = testing::run_cpufold(std::string(command) + " --help");
    EXPECT_TRUE(contains(help.output, "--spill-dir")) << command;
    EXPECT_TRUE(contains(help.output, "checkpoints")) << command;
  }
}

}  // namespace
}  // namespace cpufold
