#include "ops/row_view.h"

#include <gtest/gtest.h>

#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

TEST(RowView, CollapsesContiguousAndSlicedTensors) {
  Buffer b(Shape{4, 6, 10});
  RowView v = row_view(b.view, "t");
  EXPECT_EQ(v.rows, 24);
  EXPECT_EQ(v.cols, 10);
  EXPECT_EQ(v.ld, 10);

  v = row_view(b.view.slice(2, 2, 7), "column range");
  EXPECT_EQ(v.rows, 24);
  EXPECT_EQ(v.cols, 5);
  EXPECT_EQ(v.ld, 10);
  EXPECT_EQ(v.data, b.data.data() + 2);

  v = row_view(b.view, "two inner axes", 60);
  EXPECT_EQ(v.rows, 4);
  EXPECT_EQ(v.cols, 60);
  EXPECT_EQ(v.ld, 60);

  v = row_view(b.view.select(1, 3), "one row per batch");  // [4, 10] with stride 60
  EXPECT_EQ(v.rows, 4);
  EXPECT_EQ(v.ld, 60);

  v = row_view(b.view.slice(0, 1, 2).slice(1, 2, 3), "single row");
  EXPECT_EQ(v.rows, 1);
  EXPECT_EQ(v.data, b.data.data() + 60 + 20);
}

TEST(RowView, RejectsLayoutsThatAreNotRows) {
  Buffer b(Shape{4, 6, 10});
  EXPECT_THROW(row_view(b.view.transpose(1, 2), "transposed"), InternalError);
  EXPECT_THROW(row_view(b.view.transpose(0, 1), "outer transpose"), InternalError);
  EXPECT_THROW(row_view(b.view.slice(2, 0, 5), "sliced inner axes", 30), InternalError);
  EXPECT_THROW(row_view(b.view, "no such split", 7), InternalError);
  std::vector<std::int32_t> ints(4);
  EXPECT_THROW(row_view(Tensor(ints.data(), DType::i32, Shape{4}), "ints"), InternalError);
}

}  // namespace
}  // namespace cpufold::testing
