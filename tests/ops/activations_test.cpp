#include "ops/activations.h"

#include <gtest/gtest.h>

#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

TEST(Activations, ReluAndSigmoidMatchDoubleReference) {
  for (std::int64_t n : {1, 7, 33, 255}) {
    Buffer x(Shape{3, n});
    fill_normal(x.data, 21, 10.f);
    x.data[0] = 100.f;  // saturating both ways
    x.data[1 % x.data.size()] = -100.f;
    std::vector<double> relu(x.data.size()), sig(x.data.size());
    for (std::size_t i = 0; i < x.data.size(); ++i) {
      relu[i] = std::max(0.0, static_cast<double>(x.data[i]));
      sig[i] = 1.0 / (1.0 + std::exp(-static_cast<double>(x.data[i])));
    }
    Buffer y(Shape{3, n});
    y.data = x.data;
    relu_inplace(y.view);
    expect_close(y.data, relu, {0, 0}, "relu n=" + std::to_string(n));
    y.data = x.data;
    sigmoid_inplace(y.view);
    expect_close(y.data, sig, kF32Elementwise, "sigmoid n=" + std::to_string(n));
  }
}

TEST(Activations, MultiplyAndAddWithStridedOperands) {
  Buffer y(Shape{6, 10}), a(Shape{6, 24});
  fill_normal(y.data, 22);
  fill_normal(a.data, 23);
  const Tensor af = a.view.slice(1, 7, 17);
  const auto y0 = y.data;
  const auto av = gather(af);
  std::vector<double> prod(y0.size()), sum(y0.size());
  for (std::size_t i = 0; i < y0.size(); ++i) {
    prod[i] = static_cast<double>(y0[i]) * av[i];
    sum[i] = prod[i] + av[i];
  }
  multiply_inplace(y.view, af);
  expect_close(y.data, prod, kF32Elementwise, "multiply");
  add_inplace(y.view, af);
  expect_close(y.data, sum, kF32Elementwise, "add");
  EXPECT_THROW(add_inplace(y.view, a.view), InternalError);
}

}  // namespace
}  // namespace cpufold::testing
