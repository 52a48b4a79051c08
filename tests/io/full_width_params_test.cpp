// Full-width reference parameters (real AF2 widths, ~27 MB): read from CPUFOLD_REFERENCE_DIR,
// never committed. With the variable set, a missing file FAILS the test.
#include <gtest/gtest.h>

#include <cstring>

#include "io/convert_params.h"
#include "io/weight_store.h"
#include "tests/io/params_test_helpers.h"

namespace cpufold {
namespace {

class WeightStoreFullWidthTest : public ::testing::TestWithParam<const char*> {};

TEST_P(WeightStoreFullWidthTest, KeysAndShapesMatchKeysTxtInBothFormats) {
  if (!testing::reference_dir()) {
    GTEST_SKIP() << "CPUFOLD_REFERENCE_DIR is not set; set it to the shared reference directory "
                    "to check the full-width parameter files";
  }
  const std::string name = std::string("params_") + GetParam();
  const auto npz = testing::require_reference_file("full_width/params/" + name + ".npz");
  const auto keys_txt = testing::require_reference_file("full_width/params/" + name + ".keys.txt");
  if (npz.empty() || keys_txt.empty()) return;  // require_reference_file recorded the failure

  const auto expected = testing::read_keys_txt(keys_txt);
  const testing::ScratchDir dir;
  convert_params(npz, dir / (name + ".h5"), GetParam());
  const WeightStore from_npz = WeightStore::open(npz);
  const WeightStore from_h5 = WeightStore::open(dir / (name + ".h5"));
  for (const WeightStore* store : {&from_npz, &from_h5}) {
    ASSERT_EQ(store->keys().size(), expected.size()) << store->path();
    std::int64_t count = 0;
    for (const auto& ks : expected) {
      ASSERT_TRUE(store->contains(ks.key)) << ks.key << " in " << store->path();
      EXPECT_EQ(store->shape_of(ks.key), ks.shape) << ks.key << " in " << store->path();
      count += ks.shape.numel();
    }
    EXPECT_EQ(store->parameter_count(), count) << store->path();
  }
  for (const auto& ks : expected) {
    const Tensor a = from_npz.get(ks.key), b = from_h5.get(ks.key);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << ks.key;
  }
}

INSTANTIATE_TEST_SUITE_P(WeightStore, WeightStoreFullWidthTest,
                         ::testing::Values("model_1_ptm", "model_3_ptm"));

}  // namespace
}  // namespace cpufold
