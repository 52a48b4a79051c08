// A worker's command line (pipeline/batch/worker_process.h): the parent's options without those
// the scheduler sets per worker.
#include "pipeline/batch/worker_process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

namespace cpufold {
namespace {

TEST(WorkerProcessTest, DropsTheNamedOptionsInBothSpellingsAndKeepsTheRest) {
  const std::vector<std::string> args{
      "predict", "in.fa",         "out", "--instances=2",   "--threads", "4",
      "--quiet", "--num-recycle", "1",   "--mem-budget=8G", "--",        "--threads"};
  EXPECT_EQ(without_options(args, {"--instances", "--threads", "--mem-budget"}, {"--quiet"}),
            (std::vector<std::string>{"predict", "in.fa", "out", "--num-recycle", "1", "--",
                                      "--threads"}));
}

TEST(WorkerProcessTest, DescribesHowAWorkerEnded) {
  EXPECT_EQ(describe_exit(4 << 8), "exit 4");
  EXPECT_EQ(exit_code_of(4 << 8), 4);
  const int killed = SIGKILL;  // waitpid's status of a process killed by SIGKILL
  EXPECT_TRUE(killed_by_signal(killed));
  EXPECT_EQ(exit_code_of(killed), 137);
  EXPECT_NE(describe_exit(killed).find("out of memory"), std::string::npos);
}

TEST(WorkerProcessTest, OwnCommandLineStartsWithThisProgram) {
  const std::vector<std::string> args = own_command_line();
  ASSERT_FALSE(args.empty());
  EXPECT_NE(args[0].find("test"), std::string::npos) << args[0];
}

}  // namespace
}  // namespace cpufold
