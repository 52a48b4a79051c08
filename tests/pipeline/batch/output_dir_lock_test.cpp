// Two batches with different settings never write into one output directory at once; batches
// with the same settings (shards of one array) share it.
#include "pipeline/batch/output_dir_lock.h"

#include <gtest/gtest.h>

#include <optional>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

constexpr const char* kThree = R"({"model_type":"alphafold2_ptm","num_recycles":3})";
constexpr const char* kOne = R"({"model_type":"alphafold2_ptm","num_recycles":1})";

TEST(OutputDirLock, RunsWithTheSameSettingsShareTheDirectory) {
  const testing::ScratchDir dir;
  const OutputDirLock first(dir.path(), kThree);
  EXPECT_NO_THROW(OutputDirLock(dir.path(), kThree));
}

TEST(OutputDirLock, ARunWithOtherSettingsIsRefusedNamingWhatDiffers) {
  const testing::ScratchDir dir;
  std::optional<OutputDirLock> first;
  first.emplace(dir.path(), kThree);
  const std::string message =
      testing::thrown_message<InputError>([&] { OutputDirLock(dir.path(), kOne); });
  EXPECT_TRUE(testing::contains(message, "is in use by another cpufold predict (process "))
      << message;
  EXPECT_TRUE(testing::contains(message, "num_recycles 1 here, 3 there")) << message;
  EXPECT_TRUE(testing::contains(message, "give another OUTPUT_DIR")) << message;
  // Once the first run ends (or dies: the kernel drops its lock), the directory is free.
  first.reset();
  EXPECT_NO_THROW(OutputDirLock(dir.path(), kOne));
}

TEST(OutputDirLock, AShareHeldByAnyRunKeepsOtherSettingsOut) {
  const testing::ScratchDir dir;
  std::optional<OutputDirLock> first;
  first.emplace(dir.path(), kThree);
  const OutputDirLock second(dir.path(), kThree);
  first.reset();  // the second run still holds its share, with the first run's settings
  EXPECT_THROW(OutputDirLock(dir.path(), kOne), InputError);
}

}  // namespace
}  // namespace cpufold
