#include "memory/tensor_copy.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace cpufold {
namespace {

TEST(TensorCopy, GathersATransposedSliceIntoContiguousMemory) {
  std::vector<float> src(3 * 4 * 5);
  std::iota(src.begin(), src.end(), 0.0f);
  Tensor s = Tensor(src.data(), DType::f32, {3, 4, 5}).slice(1, 1, 3).transpose(0, 2);  // [5,2,3]
  std::vector<float> dst(30);
  Tensor d(dst.data(), DType::f32, {5, 2, 3});
  copy_tensor(s, d);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(d.at<float>({i, j, k}), s.at<float>({i, j, k}));
}

TEST(TensorCopy, RejectsShapeAndDtypeMismatch) {
  std::vector<float> a(6), b(6);
  std::vector<std::int32_t> c(6);
  EXPECT_THROW(
      copy_tensor(Tensor(a.data(), DType::f32, {2, 3}), Tensor(b.data(), DType::f32, {3, 2})),
      InternalError);
  EXPECT_THROW(copy_tensor(Tensor(a.data(), DType::f32, {6}), Tensor(c.data(), DType::i32, {6})),
               InternalError);
}

TEST(TensorCopy, ConvertsIntegersToFloatThroughStrides) {
  std::vector<std::int64_t> src = {0, 1, 2, 3, 4, 5};
  std::vector<float> dst(6);
  Tensor s = Tensor(src.data(), DType::i64, {2, 3}).transpose(0, 1);
  convert_tensor(s, Tensor(dst.data(), DType::f32, {3, 2}));
  EXPECT_EQ(dst, (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

}  // namespace
}  // namespace cpufold
