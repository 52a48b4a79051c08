#include "ops/row_view.h"

#include <string>

#include "memory/error.h"

namespace cpufold {
namespace {

[[noreturn]] void fail(const Tensor& t, const char* what, const std::string& why) {
  throw InternalError(std::string(what) + " " + t.describe() + " (strides " + t.strides().str() +
                      ") " + why);
}

}  // namespace

RowView row_view(const Tensor& t, const char* what, std::int64_t row_size) {
  if (t.dtype() != DType::f32) fail(t, what, "must be f32");
  const RowShape s = row_shape(t, what, row_size);
  return RowView{static_cast<float*>(t.data()), s.rows, s.cols, s.ld};
}

RowShape row_shape(const Tensor& t, const char* what, std::int64_t row_size) {
  if (t.rank() == 0) fail(t, what, "must have at least one axis");
  RowShape v;

  // Inner axes: from the last axis outwards until they hold row_size elements, contiguous.
  int axis = t.rank() - 1;
  v.cols = 1;
  for (;; --axis) {
    if (axis < 0 || (row_size >= 0 && v.cols > row_size)) {
      fail(t, what, "has no trailing axes of " + std::to_string(row_size) + " elements");
    }
    if (t.dim(axis) > 1 && t.stride(axis) != v.cols) fail(t, what, "has non-contiguous rows");
    v.cols *= t.dim(axis);
    if (row_size < 0 || v.cols == row_size) break;
  }

  // Outer axes collapse into rows; size-1 axes carry no stride information.
  v.rows = 1;
  v.ld = v.cols;
  bool have_ld = false;
  std::int64_t expected = 0;  // stride the next outer axis must have to collapse
  for (--axis; axis >= 0; --axis) {
    const std::int64_t n = t.dim(axis);
    if (n == 1) continue;
    if (!have_ld) {
      v.ld = t.stride(axis);
      have_ld = true;
    } else if (t.stride(axis) != expected) {
      fail(t, what, "cannot be viewed as rows with one stride");
    }
    expected = t.stride(axis) * n;
    v.rows *= n;
  }
  return v;
}

}  // namespace cpufold
