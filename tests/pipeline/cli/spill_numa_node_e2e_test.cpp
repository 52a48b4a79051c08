// `--spill-numa-node NODE`: checked before any work, on every command that plans a run.
#include <gtest/gtest.h>

#include "tests/pipeline/batch/predict_test_helpers.h"

namespace cpufold {
namespace {

using testing::contains;
using testing::run_cpufold;

std::string plan_tiny(const std::string& options) {
  return "plan --params " +
         testing::shell_word(testing::test_data_dir() / "params" / "params_model_1_ptm.npz") +
         " --features " +
         testing::shell_word(testing::test_data_dir() / "reference" /
                             "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5") +
         " " + options;
}

TEST(SpillNumaNode, NodeThatDoesNotExistIsAUsageErrorNamingTheNodesThereAre) {
  const auto r = run_cpufold(plan_tiny("--spill-numa-node 999"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--spill-numa-node: NUMA node 999")) << r.output;
  EXPECT_TRUE(contains(r.output, "the nodes with memory are") ||
              contains(r.output, "no NUMA support"))
      << r.output;
}

TEST(SpillNumaNode, NotANodeNumberIsAUsageError) {
  for (const char* value : {"x", "0x", "-1"}) {
    const auto r = run_cpufold(plan_tiny(std::string("--spill-numa-node=") + value));
    EXPECT_EQ(r.exit_code, 2) << value << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "--spill-numa-node")) << r.output;
  }
}

TEST(SpillNumaNode, EveryCommandThatPlansARunTakesIt) {
  for (const char* command : {"predict", "evaluate", "plan"}) {
    const auto r = run_cpufold(std::string(command) + " --help");
    EXPECT_TRUE(contains(r.output, "--spill-numa-node")) << command;
  }
}

}  // namespace
}  // namespace cpufold
