#include "memory/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace cpufold {
namespace {

TEST(Tensor, ContiguousViewHasRowMajorStrides) {
  std::vector<float> buf(2 * 3 * 4);
  Tensor t(buf.data(), DType::f32, {2, 3, 4});
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.strides(), Shape({12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 96u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.dim(-1), 4);
}

TEST(Tensor, SliceSelectAndTransposeShareMemory) {
  std::vector<float> buf(2 * 3 * 4);
  std::iota(buf.begin(), buf.end(), 0.0f);
  Tensor t(buf.data(), DType::f32, {2, 3, 4});

  Tensor s = t.slice(1, 1, 3);
  EXPECT_EQ(s.shape(), Shape({2, 2, 4}));
  EXPECT_EQ(s.at<float>({1, 0, 2}), t.at<float>({1, 1, 2}));
  EXPECT_FALSE(s.is_contiguous());

  Tensor row = t.select(0, 1);
  EXPECT_EQ(row.shape(), Shape({3, 4}));
  EXPECT_EQ(row.at<float>({2, 3}), 23.0f);

  Tensor tr = t.transpose(0, 2);
  EXPECT_EQ(tr.shape(), Shape({4, 3, 2}));
  EXPECT_EQ(tr.at<float>({3, 1, 0}), t.at<float>({0, 1, 3}));
  tr.at<float>({0, 0, 0}) = -1.0f;
  EXPECT_EQ(buf[0], -1.0f);
}

TEST(Tensor, ReshapeKeepsElementsAndRejectsMismatch) {
  std::vector<std::int32_t> buf(6);
  Tensor t(buf.data(), DType::i32, {2, 3});
  Tensor r = t.reshape({3, 2});
  r.at<std::int32_t>({2, 1}) = 7;
  EXPECT_EQ(buf[5], 7);
  EXPECT_THROW(t.reshape({4, 2}), InternalError);
  EXPECT_THROW(t.transpose(0, 1).reshape({6}), InternalError);
}

TEST(Tensor, CheckedAccessRejectsWrongDtypeRankAndBounds) {
  std::vector<float> buf(6);
  Tensor t(buf.data(), DType::f32, {2, 3});
  EXPECT_THROW(t.at<std::int32_t>({0, 0}), InternalError);
  EXPECT_THROW(t.at<float>({0}), InternalError);
  EXPECT_THROW(t.at<float>({2, 0}), InternalError);
  EXPECT_THROW(t.at<float>({0, -1}), InternalError);
  EXPECT_THROW(t.slice(1, 2, 4), InternalError);
  EXPECT_THROW(t.dim(2), InternalError);
  EXPECT_THROW(t.data_as<std::int64_t>(), InternalError);
}

TEST(Tensor, ScalarHasOneElement) {
  float x = 3.0f;
  Tensor t(&x, DType::f32, Shape{});
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.at<float>({}), 3.0f);
}

TEST(Bf16, RoundsToNearestEvenAndKeepsSpecials) {
  EXPECT_EQ(static_cast<float>(bf16(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(bf16(-2.5f)), -2.5f);
  // 1 + 2^-8 is halfway between two bf16 values; ties go to the even mantissa (1.0).
  EXPECT_EQ(static_cast<float>(bf16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(static_cast<float>(bf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(static_cast<float>(bf16(INFINITY))));
}

}  // namespace
}  // namespace cpufold
