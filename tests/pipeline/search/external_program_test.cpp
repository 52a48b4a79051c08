// run_program: output captured or written to files, and each way a program can fail mapped to
// its error (not installed, non-zero exit with stderr, crash, SIGKILL as out of memory).
#include "pipeline/search/external_program.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

template <class E>
std::string message_of(const ExternalProgram& program) {
  return testing::thrown_message<E>([&] { run_program(program); });
}

TEST(ExternalProgramTest, CapturesStdoutAndStderrAndSetsTheEnvironment) {
  ExternalProgram p;
  p.argv = {"sh", "-c", "echo out $CPUFOLD_TEST_VALUE; echo err >&2"};
  p.environment = {{"CPUFOLD_TEST_VALUE", "42"}};
  const ProgramOutput out = run_program(p);
  EXPECT_EQ(out.out, "out 42\n");
  EXPECT_EQ(out.err, "err\n");
  EXPECT_GE(out.seconds, 0.0);
}

TEST(ExternalProgramTest, WritesToFilesInTheWorkingDirectory) {
  ScratchDir dir;
  ExternalProgram p;
  p.argv = {"sh", "-c", "pwd; echo warn >&2"};
  p.working_dir = dir.path();
  p.stdout_file = dir / "out.txt";
  p.stderr_file = dir / "err.txt";
  const ProgramOutput out = run_program(p);
  EXPECT_EQ(testing::read_file(dir / "out.txt"), fs::canonical(dir.path()).string() + "\n");
  EXPECT_EQ(testing::read_file(dir / "err.txt"), "warn\n");
  EXPECT_TRUE(out.out.empty());
  EXPECT_EQ(out.err, "warn\n");  // the tail of the file, for messages
}

TEST(ExternalProgramTest, MissingProgramNamesThePackage) {
  ExternalProgram p;
  p.argv = {"cpufold-no-such-program", "x"};
  p.package = "hmmer";
  const std::string message = message_of<InputError>(p);
  EXPECT_NE(message.find("cpufold-no-such-program: program not found on PATH"), std::string::npos)
      << message;
  EXPECT_NE(message.find("apt-get install hmmer"), std::string::npos) << message;
}

TEST(ExternalProgramTest, NonZeroExitGivesTheStatusAndTheTailOfStderr) {
  ExternalProgram p;
  p.argv = {"sh", "-c", "for i in $(seq 1 30); do echo line$i >&2; done; exit 3"};
  const std::string message = message_of<ExternalProgramError>(p);
  EXPECT_NE(message.find("sh failed with exit status 3"), std::string::npos) << message;
  EXPECT_NE(message.find("line30"), std::string::npos) << message;
  EXPECT_EQ(message.find("line1\n"), std::string::npos) << message;  // only the tail
  EXPECT_EQ(ExternalProgramError("").exit_code(), 6);
}

TEST(ExternalProgramTest, CrashIsSaid) {
  ExternalProgram p;
  p.argv = {"sh", "-c", "kill -SEGV $$"};
  const std::string message = message_of<ExternalProgramError>(p);
  EXPECT_NE(message.find("signal 11"), std::string::npos) << message;
  EXPECT_NE(message.find("crashed"), std::string::npos) << message;
}

TEST(ExternalProgramTest, SigkillIsReportedAsOutOfMemory) {
  ExternalProgram p;
  p.argv = {"sh", "-c", "kill -KILL $$"};
  const std::string message = message_of<BudgetError>(p);
  EXPECT_NE(message.find("ran out of memory"), std::string::npos) << message;
}

TEST(ExternalProgramTest, TextTailKeepsTheLastLines) {
  EXPECT_EQ(text_tail("a\nb\nc\n", 2), "\n    b\n    c");
  EXPECT_EQ(text_tail("", 2), "");
}

}  // namespace
}  // namespace cpufold
