#include "pipeline/templates/external_program.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "pipeline/templates/hmmsearch_templates.h"
#include "pipeline/templates/scratch_directory.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(ExternalProgram, AMissingProgramNamesItsPackage) {
  const ScratchDirectory dir("program-test");
  const std::string message = testing::thrown_message<InputError>(
      [&] { run_program("cpufold-no-such-tool", {}, dir.path(), "hmmer"); });
  EXPECT_NE(message.find("cpufold-no-such-tool was not found on PATH"), std::string::npos)
      << message;
  EXPECT_NE(message.find("apt-get install hmmer"), std::string::npos) << message;
}

TEST(ExternalProgram, AFailingProgramQuotesItsStderr) {
  const ScratchDirectory dir("program-test");
  const std::string message = testing::thrown_message<InputError>([&] {
    run_program("sh", {"-c", "echo 'Error: database is corrupt' >&2; exit 3"}, dir.path(), "dash");
  });
  EXPECT_NE(message.find("exit status 3"), std::string::npos) << message;
  EXPECT_NE(message.find("database is corrupt"), std::string::npos) << message;
}

TEST(ExternalProgram, AKilledProgramIsNamedAsLikelyOutOfMemory) {
  const ScratchDirectory dir("program-test");
  const std::string message = testing::thrown_message<InputError>([&] {
    run_program("sh", {"-c", "kill -KILL $$"}, dir.path(), "dash");
  });
  EXPECT_NE(message.find("SIGKILL"), std::string::npos) << message;
  EXPECT_NE(message.find("out-of-memory"), std::string::npos) << message;
}

TEST(ExternalProgram, AMissingTemplateDatabaseIsNamed) {
  const std::string message = testing::thrown_message<InputError>([] {
    hmmsearch_pdb_seqres("MQIFVKTLTGKT", std::nullopt, {"/nonexistent/pdb_seqres.txt", 1});
  });
  EXPECT_NE(message.find("/nonexistent/pdb_seqres.txt"), std::string::npos) << message;
  EXPECT_NE(message.find("pdb_seqres/pdb_seqres.txt"), std::string::npos) << message;
}

TEST(ScratchDirectory, IsRemovedWithItsFiles) {
  std::filesystem::path kept;
  {
    const ScratchDirectory dir("program-test");
    kept = dir.path();
    testing::write_file(kept / "file", "x");
    EXPECT_TRUE(std::filesystem::exists(kept / "file"));
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

}  // namespace
}  // namespace cpufold
