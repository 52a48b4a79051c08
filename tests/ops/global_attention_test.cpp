#include "ops/global_attention.h"

#include <gtest/gtest.h>

#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

TEST(GlobalAttention, MaskedMeanMatchesAf2MaskMean) {
  for (std::int64_t n_key : {1, 7, 33}) {
    const std::int64_t n_batch = 5, c = 19;
    Buffer x(Shape{n_batch, n_key, c}), mask(Shape{n_batch, n_key}), out(Shape{n_batch, c});
    fill_normal(x.data, 70);
    for (std::size_t i = 0; i < mask.data.size(); ++i) mask.data[i] = i % 4 == 1 ? 0.f : 1.f;
    std::fill_n(mask.data.begin(), n_key, 0.f);  // batch row 0 fully masked: mean is 0
    masked_mean(x.view, mask.view, out.view);
    std::vector<double> want(out.data.size());
    for (std::int64_t b = 0; b < n_batch; ++b) {
      double total = 0.0;
      for (std::int64_t k = 0; k < n_key; ++k) total += at(mask.view, {b, k});
      for (std::int64_t j = 0; j < c; ++j) {
        double s = 0.0;
        for (std::int64_t k = 0; k < n_key; ++k) s += at(mask.view, {b, k}) * at(x.view, {b, k, j});
        want[static_cast<std::size_t>(b * c + j)] = s / (total + 1e-10);
      }
    }
    expect_close(out.data, want, kF32Elementwise, "masked_mean n_key " + std::to_string(n_key));
  }
}

TEST(GlobalAttention, MatchesDoubleReference) {
  Arena arena = test_arena();
  for (std::int64_t n_key : {1, 7, 33, 255}) {
    for (bool with_mask : {false, true}) {
      const std::int64_t n_batch = 6, n_head = 8, c = 8;
      Buffer q(Shape{n_batch, n_head, c}), k(Shape{n_batch, n_key, c}), v(Shape{n_batch, n_key, c}),
          mask(Shape{n_batch, n_key}), o(Shape{n_batch, n_head, c});
      fill_normal(q.data, 71);
      fill_normal(k.data, 72);
      fill_normal(v.data, 73);
      for (std::size_t i = 0; i < mask.data.size(); ++i) mask.data[i] = i % 3 == 2 ? -1e9f : 0.f;
      const Tensor bias = with_mask ? mask.view : Tensor();
      global_attention(q.view, k.view, v.view, bias, o.view, arena);
      std::vector<double> want(o.data.size()), w(static_cast<std::size_t>(n_key));
      for (std::int64_t b = 0; b < n_batch; ++b)
        for (std::int64_t h = 0; h < n_head; ++h) {
          double max = -INFINITY, sum = 0.0;
          for (std::int64_t j = 0; j < n_key; ++j) {
            double l = 0.0;
            for (std::int64_t d = 0; d < c; ++d) l += at(q.view, {b, h, d}) * at(k.view, {b, j, d});
            l = l / std::sqrt(static_cast<double>(c)) + (with_mask ? at(mask.view, {b, j}) : 0.0);
            max = std::max(max, l);
            w[static_cast<std::size_t>(j)] = l;
          }
          for (double& l : w) sum += l = std::exp(l - max);
          for (std::int64_t d = 0; d < c; ++d) {
            double acc = 0.0;
            for (std::int64_t j = 0; j < n_key; ++j)
              acc += w[static_cast<std::size_t>(j)] / sum * at(v.view, {b, j, d});
            want[static_cast<std::size_t>((b * n_head + h) * c + d)] = acc;
          }
        }
      expect_close(o.data, want, kF32Matmul,
                   "global attention n_key " + std::to_string(n_key) + (with_mask ? " +mask" : ""));
      EXPECT_EQ(arena.used(), 0u);
    }
  }
}

}  // namespace
}  // namespace cpufold::testing
