#include "ops/softmax.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/row_kernels.h"
#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

// Double softmax over the rows of a row-major [rows, n] buffer.
std::vector<double> reference_softmax(const std::vector<float>& x, std::int64_t n) {
  std::vector<double> out(x.begin(), x.end());
  for (std::size_t r = 0; r < out.size() / static_cast<std::size_t>(n); ++r) {
    double* row = out.data() + r * static_cast<std::size_t>(n);
    double max = -INFINITY, sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) max = std::max(max, row[i]);
    for (std::int64_t i = 0; i < n; ++i) sum += row[i] = std::exp(row[i] - max);
    for (std::int64_t i = 0; i < n; ++i) row[i] /= sum;
  }
  return out;
}

TEST(Softmax, MatchesDoubleReferenceOverOddShapes) {
  for (std::int64_t rows : {1, 7, 33}) {
    for (std::int64_t n : {1, 7, 8, 9, 33, 255, 1024}) {
      Buffer x(Shape{rows, n});
      fill_normal(x.data, 1, 3.f);
      const auto want = reference_softmax(x.data, n);
      softmax_inplace(x.view);
      expect_close(x.data, want, kF32Elementwise, "softmax " + x.view.describe());
    }
  }
}

TEST(Softmax, LargeMagnitudesStayFinite) {
  Buffer x(Shape{4, 33});
  fill_normal(x.data, 2, 1e4f);
  x.data[5] = 3e38f;  // max so large that an unshifted exp would overflow
  x.data[40] = -3e38f;
  const auto want = reference_softmax(x.data, 33);
  softmax_inplace(x.view);
  expect_close(x.data, want, kF32Elementwise, "softmax of large logits");
}

TEST(Softmax, MaskedEntriesGetZeroAndFullyMaskedRowsAreUniform) {
  const std::int64_t n = 37;
  Buffer x(Shape{3, n});
  fill_normal(x.data, 3);
  for (std::int64_t i = 0; i < n; i += 3) x.data[static_cast<std::size_t>(i)] -= 1e9f;
  for (std::int64_t i = 0; i < n; ++i) x.data[static_cast<std::size_t>(2 * n + i)] = -1e9f;
  const auto want = reference_softmax(x.data, n);
  softmax_inplace(x.view);
  expect_close(x.data, want, kF32Elementwise, "masked softmax");
  for (std::int64_t i = 0; i < n; i += 3) EXPECT_EQ(x.data[static_cast<std::size_t>(i)], 0.f);
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(x.data[static_cast<std::size_t>(2 * n + i)], 1.0 / n, 1e-7);
  }
}

TEST(Softmax, StridedRowsLeaveTheGapsAlone) {
  Buffer wide(Shape{5, 3, 20});
  fill_normal(wide.data, 4);
  const auto before = wide.data;
  const Tensor cols = wide.view.slice(2, 4, 15);  // [5, 3, 11] with row stride 20
  std::vector<float> dense = gather(cols);
  const auto want = reference_softmax(dense, 11);
  softmax_inplace(cols);
  expect_close(gather(cols), want, kF32Elementwise, "strided softmax");
  for (std::size_t i = 0; i < before.size(); ++i) {
    const auto col = static_cast<std::int64_t>(i % 20);
    if (col < 4 || col >= 15) {
      EXPECT_EQ(wide.data[i], before[i]) << "gap element " << i;
    }
  }
}

TEST(RowKernels, Avx2AgreesWithGeneric) {
  const auto* avx2 = detail::avx2_row_kernels();
  if (!avx2) {
    GTEST_SKIP() << "CPU without AVX2: only the generic kernels run here";
  }
  const auto& generic = detail::generic_row_kernels();
  for (std::int64_t n : {1, 3, 8, 13, 64, 255}) {
    std::vector<float> x(static_cast<std::size_t>(n)), a(x.size()), b(x.size());
    fill_normal(x, 5, 4.f);
    fill_normal(a, 6);
    fill_normal(b, 7, 1e3f);
    auto y1 = x, y2 = x;
    avx2->softmax(y1.data(), a.data(), b.data(), n);
    generic.softmax(y2.data(), a.data(), b.data(), n);
    std::vector<double> want(y2.begin(), y2.end());
    expect_close(y1, want, kF32Elementwise, "softmax n=" + std::to_string(n));

    y1 = x, y2 = x;
    avx2->sigmoid(y1.data(), n);
    generic.sigmoid(y2.data(), n);
    want.assign(y2.begin(), y2.end());
    expect_close(y1, want, kF32Elementwise, "sigmoid n=" + std::to_string(n));

    avx2->layer_norm(x.data(), y1.data(), a.data(), b.data(), 1e-5f, n);
    generic.layer_norm(x.data(), y2.data(), a.data(), b.data(), 1e-5f, n);
    want.assign(y2.begin(), y2.end());
    expect_close(y1, want, {1e-3, 1e-5}, "layer_norm n=" + std::to_string(n));

    // relu, mul, add and scale are exact in both.
    y1 = x, y2 = x;
    for (const auto* t : {avx2, &generic}) {
      auto& y = t == avx2 ? y1 : y2;
      t->relu(y.data(), n);
      t->mul(y.data(), a.data(), n);
      t->add(y.data(), b.data(), n);
      t->scale(y.data(), 0.5f, n);
    }
    EXPECT_EQ(y1, y2) << "n=" << n;
  }
}

// The AVX-512 softmax numerators against the generic ones, f32 and bf16 outputs, over lengths
// with and without tails, with biases, masked (-1e9) entries and a NaN that must survive.
TEST(RowKernels, Avx512SoftmaxNumeratorsAgreeWithGeneric) {
  const auto* avx512 = detail::avx512_row_kernels();
  if (!avx512) GTEST_SKIP() << "CPU without AVX-512: its table cannot run here";
  const auto& generic = detail::generic_row_kernels();
  for (std::int64_t n : {1, 5, 16, 17, 31, 32, 33, 100, 512}) {
    std::vector<float> x(static_cast<std::size_t>(n)), a(x.size()), b(x.size());
    fill_normal(x, 8, 4.f);
    fill_normal(a, 9);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = i % 3 == 2 ? -1e9f : 0.f;
    auto y1 = x, y2 = x;
    const float s1 = avx512->softmax_numerator(y1.data(), a.data(), b.data(), n);
    const float s2 = generic.softmax_numerator(y2.data(), a.data(), b.data(), n);
    EXPECT_NEAR(s1, s2, 1e-5 * s2) << "n=" << n;
    std::vector<double> want(y2.begin(), y2.end());
    expect_close(y1, want, kF32Elementwise, "avx512 softmax numerator n=" + std::to_string(n));
    std::vector<bf16> w1(x.size()), w2(x.size());
    y1 = x, y2 = x;
    avx512->softmax_numerator_bf16(y1.data(), a.data(), nullptr, n, w1.data());
    generic.softmax_numerator_bf16(y2.data(), a.data(), nullptr, n, w2.data());
    for (std::int64_t i = 0; i < n; ++i) {
      const float u = static_cast<float>(w1[i]), v = static_cast<float>(w2[i]);
      EXPECT_NEAR(u, v, 0x1p-7 * v + 1e-30) << "bf16 weight " << i << " of n=" << n;
    }
  }
}

// The AVX-512 bf16 weights (their own exp, and vcvtneps2bf16 where the CPU has AVX512-BF16) are
// exp(x - max) rounded once to bf16, and their sum is the exact sum to fp32 accuracy. Weights
// whose exact value lies within 1e-6 of a rounding boundary may round either way.
TEST(RowKernels, Avx512Bf16WeightsAreTheCorrectlyRoundedExp) {
  const auto* avx512 = detail::avx512_row_kernels();
  if (!avx512) GTEST_SKIP() << "CPU without AVX-512: its table cannot run here";
  for (std::int64_t n : {1, 7, 16, 33, 512, 1000}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    fill_normal(x, 21, 6.f);
    for (std::size_t i = 5; i < x.size(); i += 7) x[i] = -1e9f;    // masked keys
    for (std::size_t i = 3; i < x.size(); i += 11) x[i] -= 100.f;  // under the cut: 0
    std::vector<float> y = x;
    std::vector<bf16> w(x.size());
    const float sum = avx512->softmax_numerator_bf16(y.data(), nullptr, nullptr, n, w.data());
    const double max = *std::max_element(x.begin(), x.end());
    double want_sum = 0.0;
    int checked = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double d = x[i] - max;
      const double e = d < -87.3 ? 0.0 : std::exp(d);
      want_sum += e;
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(static_cast<float>(e));
      const double boundary = std::bit_cast<float>((bits & 0xffff0000u) | 0x8000u);
      if (e > 0.0 && std::abs(e - boundary) < 1e-6 * e) continue;
      ++checked;
      EXPECT_EQ(w[i].bits, bf16(static_cast<float>(e)).bits)
          << "weight " << i << " of n=" << n << ": exp(" << d << ") = " << e << ", got "
          << static_cast<float>(w[i]);
    }
    EXPECT_GT(checked, n / 2);
    EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum) << "n=" << n;
  }
}

// A NaN logit (from NaN activations upstream) must reach the output, where the run's finite
// check catches it, not become a huge finite weight (the SIMD exp clamps its input).
TEST(RowKernels, SoftmaxNumeratorKeepsANaNLogitInEveryTable) {
  for (const auto* t :
       {&detail::generic_row_kernels(), detail::avx2_row_kernels(), detail::avx512_row_kernels()}) {
    if (t == nullptr) continue;
    for (std::int64_t n : {3, 40}) {
      std::vector<float> x(static_cast<std::size_t>(n), 0.5f);
      x[1] = NAN;
      std::vector<bf16> w(x.size());
      auto y = x;
      const float sum = t->softmax_numerator(x.data(), nullptr, nullptr, n);
      EXPECT_TRUE(std::isnan(x[1]) && std::isnan(sum)) << t->name << " hid a NaN logit, n=" << n;
      const float sum16 = t->softmax_numerator_bf16(y.data(), nullptr, nullptr, n, w.data());
      EXPECT_TRUE(std::isnan(static_cast<float>(w[1])) && std::isnan(sum16))
          << t->name << " (bf16 weights) hid a NaN logit, n=" << n;
    }
  }
}

// bf16 rounding is bit-exact in both tables: ties to even, overflow to infinity, NaN kept.
TEST(RowKernels, Bf16ConversionIsTheSameBitsInEveryTable) {
  std::vector<float> x(77);
  fill_normal(x, 11, 1e3f);
  const float special[] = {
      0.f, -0.f, 1.00390625f /* a tie */, 1.01171875f, 3.4e38f, -3.4e38f, INFINITY, -INFINITY, NAN};
  std::copy(std::begin(special), std::end(special), x.begin());
  // Subnormals away from the other special values: a vector holding one may be converted
  // apart (AVX512-BF16's instruction reads them as zero).
  x[40] = 1e-40f;
  x[41] = -3e-39f;
  std::vector<bf16> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = bf16(x[i]);
  std::vector<const detail::RowKernels*> tables = {&detail::generic_row_kernels()};
  if (const auto* avx2 = detail::avx2_row_kernels()) tables.push_back(avx2);
  if (const auto* avx512 = detail::avx512_row_kernels()) tables.push_back(avx512);
  for (const auto* t : tables) {
    for (std::int64_t n : {1, 7, 8, 9, 77}) {
      std::vector<bf16> got(static_cast<std::size_t>(n));
      t->to_bf16(x.data(), got.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i].bits, want[i].bits) << t->name << " n=" << n << " element " << i;
      }
    }
  }
  EXPECT_EQ(bf16(1.00390625f).bits, 0x3f80);  // the tie rounds to even
  EXPECT_TRUE(std::isnan(static_cast<float>(want[8])));
}

// Both transpositions in every table: each element lands in its column, the bf16 one rounded as
// bf16(float) (ties, subnormals, NaN), and nothing outside the block is written.
TEST(RowKernels, TransposeStoresEveryRowAsAColumnAndNothingElse) {
  std::vector<const detail::RowKernels*> tables = {&detail::generic_row_kernels()};
  if (const auto* avx2 = detail::avx2_row_kernels()) tables.push_back(avx2);
  if (const auto* avx512 = detail::avx512_row_kernels()) tables.push_back(avx512);
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},   {5, 3},   {16, 16}, {17, 33},
                                                          {64, 16}, {37, 20}, {16, 64}, {3, 40}};
  for (const auto& [rows, cols] : shapes) {
    const std::int64_t ld_x = cols + 3, ld_y = rows + 5;
    std::vector<float> x(static_cast<std::size_t>(rows * ld_x));
    fill_normal(x, 17, 10.f);
    const float special[] = {1.00390625f /* a tie */, 1e-40f, -3e-39f, NAN, -0.f, INFINITY};
    for (std::size_t s = 0; s < std::size(special) && s < x.size(); ++s) {
      x[(s * 7) % x.size()] = special[s];
    }
    const float sentinel = -12345.f;
    for (const auto* t : tables) {
      std::vector<float> y(static_cast<std::size_t>(cols * ld_y + 7), sentinel);
      std::vector<bf16> y16(y.size(), bf16(sentinel));
      t->transpose(x.data(), ld_x, rows, cols, y.data(), ld_y);
      t->transpose_to_bf16(x.data(), ld_x, rows, cols, y16.data(), ld_y);
      for (std::int64_t k = 0; k < cols; ++k) {
        for (std::int64_t i = 0; i < ld_y; ++i) {
          const std::size_t at = static_cast<std::size_t>(k * ld_y + i);
          const float want = i < rows ? x[static_cast<std::size_t>(i * ld_x + k)] : sentinel;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(y[at]), std::bit_cast<std::uint32_t>(want))
              << t->name << " " << rows << "x" << cols << " row " << i << " column " << k;
          ASSERT_EQ(y16[at].bits, bf16(want).bits)
              << t->name << " bf16 " << rows << "x" << cols << " row " << i << " column " << k;
        }
      }
      for (std::size_t at = static_cast<std::size_t>(cols * ld_y); at < y.size(); ++at) {
        ASSERT_EQ(y[at], sentinel) << t->name;
        ASSERT_EQ(y16[at].bits, bf16(sentinel).bits) << t->name;
      }
    }
  }
}

}  // namespace
}  // namespace cpufold::testing
