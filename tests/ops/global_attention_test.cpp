#include "ops/global_attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

// Keys folded `block` at a time (0: all at once), as a module streaming the rows of an MSA does.
std::vector<std::int64_t> block_starts(std::int64_t n_key, std::int64_t block) {
  std::vector<std::int64_t> starts;
  for (std::int64_t k0 = 0; k0<n_key; k0 += block> 0 ? block : n_key) starts.push_back(k0);
  return starts;
}

std::vector<float> folded_mean(const Buffer& x, const Buffer& mask, std::int64_t block) {
  const std::int64_t n_batch = x.view.dim(0), n_key = x.view.dim(1), c = x.view.dim(2);
  Buffer sum(Shape{n_batch, c}), count(Shape{n_batch});
  for (const std::int64_t k0 : block_starts(n_key, block)) {
    const std::int64_t k1 = block > 0 ? std::min(n_key, k0 + block) : n_key;
    masked_sum_fold(x.view.slice(1, k0, k1), mask.view.slice(1, k0, k1), sum.view, count.view);
  }
  masked_mean_finish(sum.view, count.view);
  return sum.data;
}

TEST(GlobalAttention, FoldedMaskedMeanMatchesAf2MaskMeanWhateverTheBlocks) {
  for (std::int64_t n_key : {1, 7, 33}) {
    const std::int64_t n_batch = 5, c = 19;
    Buffer x(Shape{n_batch, n_key, c}), mask(Shape{n_batch, n_key});
    fill_normal(x.data, 70);
    for (std::size_t i = 0; i < mask.data.size(); ++i) mask.data[i] = i % 4 == 1 ? 0.f : 1.f;
    std::fill_n(mask.data.begin(), n_key, 0.f);  // batch row 0 fully masked: mean is 0
    std::vector<double> want(static_cast<std::size_t>(n_batch * c));
    for (std::int64_t b = 0; b < n_batch; ++b) {
      double total = 0.0;
      for (std::int64_t k = 0; k < n_key; ++k) total += at(mask.view, {b, k});
      for (std::int64_t j = 0; j < c; ++j) {
        double s = 0.0;
        for (std::int64_t k = 0; k < n_key; ++k) s += at(mask.view, {b, k}) * at(x.view, {b, k, j});
        want[static_cast<std::size_t>(b * c + j)] = s / (total + 1e-10);
      }
    }
    const std::vector<float> whole = folded_mean(x, mask, 0);
    expect_close(whole, want, kF32Elementwise, "masked mean n_key " + std::to_string(n_key));
    for (const std::int64_t block : {1, 3}) {
      EXPECT_EQ(folded_mean(x, mask, block), whole)
          << "n_key " << n_key << " in blocks of " << block << " changed bits";
    }
  }
}

// Keys in blocks of 1, 5 and all at once, against a double softmax over all of them. Later keys
// are scaled up, so the largest logit tends to come late and the running maximum moves (the
// earlier blocks' sums rescaled); one batch row is fully masked (a uniform softmax, as AF2's).
TEST(GlobalAttention, FoldedBlocksMatchDoubleReference) {
  Arena arena = test_arena();
  for (std::int64_t n_key : {1, 7, 33, 255}) {
    for (bool with_mask : {false, true}) {
      for (const std::int64_t block : {0, 1, 5}) {
        const std::int64_t n_batch = 6, n_head = 8, c = 8;
        Buffer q(Shape{n_batch, n_head, c}), k(Shape{n_batch, n_key, c}),
            v(Shape{n_batch, n_key, c}), mask(Shape{n_batch, n_key});
        fill_normal(q.data, 71);
        fill_normal(k.data, 72);
        fill_normal(v.data, 73);
        for (std::int64_t b = 0; b < n_batch; ++b) {
          for (std::int64_t j = 0; j < n_key; ++j) {
            for (std::int64_t d = 0; d < c; ++d)
              k.data[static_cast<std::size_t>((b * n_key + j) * c + d)] *= 1.f + 0.05f * j;
          }
        }
        for (std::size_t i = 0; i < mask.data.size(); ++i) mask.data[i] = i % 3 == 2 ? -1e9f : 0.f;
        std::fill_n(mask.data.begin() + n_key, n_key, -1e9f);  // batch row 1 fully masked
        const auto bias = [&](std::int64_t k0, std::int64_t k1) {
          return with_mask ? mask.view.slice(1, k0, k1) : Tensor();
        };
        Buffer max(Shape{n_batch, n_head}), sum(Shape{n_batch, n_head}),
            acc(Shape{n_batch, n_head, c});
        const GlobalAttentionRunning running{max.view, sum.view, acc.view};
        global_attention_start(running);
        for (const std::int64_t k0 : block_starts(n_key, block)) {
          const std::int64_t k1 = block > 0 ? std::min(n_key, k0 + block) : n_key;
          global_attention_fold(q.view, k.view.slice(1, k0, k1), v.view.slice(1, k0, k1),
                                bias(k0, k1), running, arena);
          EXPECT_EQ(arena.used(), 0u);
        }
        global_attention_finish(running);

        std::vector<double> want(acc.data.size()), w(static_cast<std::size_t>(n_key));
        for (std::int64_t b = 0; b < n_batch; ++b)
          for (std::int64_t h = 0; h < n_head; ++h) {
            double top = -INFINITY, total = 0.0;
            for (std::int64_t j = 0; j < n_key; ++j) {
              double l = 0.0;
              for (std::int64_t d = 0; d < c; ++d)
                l += at(q.view, {b, h, d}) * at(k.view, {b, j, d});
              // Rounded to float as the biased logit is stored: -1e9 swallows the logit of a
              // masked key, so a fully masked row's softmax is uniform.
              l = static_cast<float>(l / std::sqrt(static_cast<double>(c)) +
                                     (with_mask ? at(mask.view, {b, j}) : 0.0));
              top = std::max(top, l);
              w[static_cast<std::size_t>(j)] = l;
            }
            for (double& l : w) total += l = std::exp(l - top);
            for (std::int64_t d = 0; d < c; ++d) {
              double o = 0.0;
              for (std::int64_t j = 0; j < n_key; ++j)
                o += w[static_cast<std::size_t>(j)] / total * at(v.view, {b, j, d});
              want[static_cast<std::size_t>((b * n_head + h) * c + d)] = o;
            }
          }
        expect_close(acc.data, want, kF32Matmul,
                     "global attention n_key " + std::to_string(n_key) + " blocks of " +
                         std::to_string(block) + (with_mask ? " +mask" : ""));
      }
    }
  }
}

}  // namespace
}  // namespace cpufold::testing
