#include "ops/activations.h"

#include "ops/parallel_rows.h"
#include "ops/row_kernels.h"
#include "ops/row_view.h"

namespace cpufold {
namespace {

void check_same_shape(const Tensor& y, const Tensor& a, const char* op) {
  if (!(y.shape() == a.shape())) {
    throw InternalError(std::string(op) + ": operands " + y.describe() + " and " + a.describe() +
                        " differ in shape");
  }
}

}  // namespace

void apply_activation(Activation activation, const Tensor& x) {
  if (activation == Activation::none) return;
  const RowView v = row_view(x, "activation input");
  const auto& k = detail::row_kernels();
  const auto kernel = activation == Activation::relu ? k.relu : k.sigmoid;
  detail::for_each_row(v.rows, v.cols, [&](std::int64_t i) { kernel(v.row(i), v.cols); });
}

void multiply_inplace(const Tensor& y, const Tensor& a) {
  check_same_shape(y, a, "multiply_inplace");
  const RowView vy = row_view(y, "product destination"), va = row_view(a, "product factor");
  const auto kernel = detail::row_kernels().mul;
  detail::for_each_row(vy.rows, vy.cols,
                       [&](std::int64_t i) { kernel(vy.row(i), va.row(i), vy.cols); });
}

void add_inplace(const Tensor& y, const Tensor& a) {
  check_same_shape(y, a, "add_inplace");
  const RowView vy = row_view(y, "sum destination"), va = row_view(a, "summand");
  const auto kernel = detail::row_kernels().add;
  detail::for_each_row(vy.rows, vy.cols,
                       [&](std::int64_t i) { kernel(vy.row(i), va.row(i), vy.cols); });
}

}  // namespace cpufold
