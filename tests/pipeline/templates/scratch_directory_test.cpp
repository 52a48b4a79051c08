#include "pipeline/templates/scratch_directory.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(ScratchDirectory, IsRemovedWithItsFiles) {
  std::filesystem::path kept;
  {
    const ScratchDirectory dir("scratch-test");
    kept = dir.path();
    testing::write_file(kept / "file", "x");
    EXPECT_TRUE(std::filesystem::exists(kept / "file"));
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

}  // namespace
}  // namespace cpufold
