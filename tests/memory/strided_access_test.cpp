#include "memory/strided_access.h"

#include <gtest/gtest.h>

#include <string>

#include "memory/file_tier.h"
#include "tests/memory/spill_test_util.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::kMiB;
using testing::ScratchDir;
using testing::smaps_field;

// Whether the mapping holding `p` carries the kernel's random-read advice ("rr" in VmFlags).
bool random_read_advised(const void* p) {
  return (smaps_field(p, "VmFlags:") + " ").find(" rr ") != std::string::npos;
}

// A column slice of a spilled MSA-like tensor: while the guard lives, the pages from its first
// to its last element read without readahead; the rest of the file, and all of it after, keep
// the default readahead.
TEST(StridedAccess, AdvisesRandomReadsOverTheViewsPagesWhileItLives) {
  const ScratchDir dir;
  FileTier tier(dir.path());
  const Region r = tier.allocate(8 * kMiB);
  // Rows 64..191 of a [256, 8192] f32 matrix (8 MiB), columns 0..3: a column pass's view.
  const Tensor whole(r.data(), DType::f32, Shape{256, 8192});
  const Tensor columns = whole.slice(0, 64, 192).slice(1, 0, 4);
  const std::byte* first = static_cast<std::byte*>(columns.data());
  const std::byte* last = first + (127 * 8192 + 3) * sizeof(float);
  {
    const StridedAccess pass(columns);
    EXPECT_TRUE(random_read_advised(first));
    EXPECT_TRUE(random_read_advised(last));
    EXPECT_FALSE(random_read_advised(r.data())) << "pages before the view were advised";
    EXPECT_FALSE(random_read_advised(r.data() + r.size() - 1)) << "pages after the view";
  }
  EXPECT_FALSE(random_read_advised(first)) << "the advice outlived the pass";
  EXPECT_FALSE(random_read_advised(last));
}

}  // namespace
}  // namespace cpufold
