#include "ops/layer_norm.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/row_kernels.h"
#include "tests/support/tensor_test_util.h"

namespace cpufold::testing {
namespace {

std::vector<double> reference_layer_norm(const std::vector<float>& x,
                                         const std::vector<float>& scale,
                                         const std::vector<float>& offset, double eps) {
  const std::size_t c = scale.size();
  std::vector<double> out(x.size());
  for (std::size_t r = 0; r < x.size() / c; ++r) {
    double mean = 0.0, var = 0.0;
    for (std::size_t i = 0; i < c; ++i) mean += x[r * c + i];
    mean /= static_cast<double>(c);
    for (std::size_t i = 0; i < c; ++i) var += (x[r * c + i] - mean) * (x[r * c + i] - mean);
    var /= static_cast<double>(c);
    for (std::size_t i = 0; i < c; ++i) {
      out[r * c + i] = (x[r * c + i] - mean) / std::sqrt(var + eps) * scale[i] + offset[i];
    }
  }
  return out;
}

struct Params {
  Buffer scale, offset;
  explicit Params(std::int64_t c) : scale(Shape{c}), offset(Shape{c}) {
    fill_normal(scale.data, 11, 0.1f, 1.f);
    fill_normal(offset.data, 12, 0.1f);
  }
};

TEST(LayerNorm, MatchesDoubleReferenceOverOddShapes) {
  for (std::int64_t c : {1, 7, 33, 64, 255, 256, 384}) {
    Params p(c);
    const LayerNorm ln(p.scale.view, p.offset.view);
    for (std::int64_t rows : {1, 7, 33, 1000}) {
      Buffer x(Shape{rows, c}), y(Shape{rows, c});
      fill_normal(x.data, 13, 2.f, 0.5f);
      ln.forward(x.view, y.view);
      expect_close(y.data, reference_layer_norm(x.data, p.scale.data, p.offset.data, 1e-5),
                   kF32Elementwise, "LayerNorm " + x.view.describe());
    }
  }
}

TEST(LayerNorm, InPlaceEqualsOutOfPlace) {
  Params p(33);
  const LayerNorm ln(p.scale.view, p.offset.view);
  Buffer x(Shape{2, 5, 33}), y(Shape{2, 5, 33});
  fill_normal(x.data, 14);
  ln.forward(x.view, y.view);
  ln.forward(x.view, x.view);
  EXPECT_EQ(x.data, y.data);
}

TEST(LayerNorm, StridedInputAndOutput) {
  Params p(16);
  const LayerNorm ln(p.scale.view, p.offset.view);
  Buffer src(Shape{9, 40}), dst(Shape{9, 50}, 7.f);
  fill_normal(src.data, 15, 3.f);
  const Tensor x = src.view.slice(1, 3, 19), y = dst.view.slice(1, 30, 46);
  ln.forward(x, y);
  expect_close(gather(y), reference_layer_norm(gather(x), p.scale.data, p.offset.data, 1e-5),
               kF32Elementwise, "strided LayerNorm");
  EXPECT_EQ(dst.data[0], 7.f);
  EXPECT_EQ(dst.data[29], 7.f);
  EXPECT_EQ(dst.data[46], 7.f);
}

TEST(LayerNorm, ConstantRowsGiveTheOffsetAndEpsIsUsed) {
  Params p(8);
  const LayerNorm ln(p.scale.view, p.offset.view, 0.5f);
  Buffer x(Shape{1, 8}, 3.f), y(Shape{1, 8});
  ln.forward(x.view, y.view);
  std::vector<double> want(p.offset.data.begin(), p.offset.data.end());
  expect_close(y.data, want, kF32Elementwise, "constant row");
  fill_normal(x.data, 16);
  ln.forward(x.view, y.view);
  expect_close(y.data, reference_layer_norm(x.data, p.scale.data, p.offset.data, 0.5),
               kF32Elementwise, "eps 0.5");
}

TEST(LayerNorm, AcceptsBf16ParametersAndRejectsMismatches) {
  std::vector<bf16> scale(4, bf16(1.5f)), offset(4, bf16(0.25f));
  const LayerNorm ln(Tensor(scale.data(), DType::bf16, Shape{4}),
                     Tensor(offset.data(), DType::bf16, Shape{4}));
  Buffer x(Shape{1, 4}), y(Shape{1, 4});
  x.data = {1.f, 2.f, 3.f, 4.f};
  ln.forward(x.view, y.view);
  EXPECT_NEAR(y.data[0], -1.3416 * 1.5 + 0.25, 1e-3);
  Buffer wrong(Shape{1, 5});
  EXPECT_THROW(ln.forward(wrong.view, wrong.view), InternalError);
  Buffer small(Shape{3});
  EXPECT_THROW(LayerNorm(Tensor(scale.data(), DType::bf16, Shape{4}), small.view), WeightsError);
}

// A bf16 stored representation is normalised as its exact fp32 widening, strided rows too.
TEST(LayerNorm, Bf16InputGivesTheSameBitsAsItsFp32Widening) {
  for (std::int64_t c : {7, 64, 256}) {
    Params p(c);
    const LayerNorm ln(p.scale.view, p.offset.view);
    const std::int64_t rows = 33, ld = c + 5;  // rows of a wider buffer
    Buffer wide(Shape{rows, ld}), want(Shape{rows, c}), got(Shape{rows, c});
    fill_normal(wide.data, 21, 2.f, 0.5f);
    std::vector<bf16> packed(wide.data.size());
    for (std::size_t i = 0; i < packed.size(); ++i) {
      packed[i] = bf16(wide.data[i]);
      wide.data[i] = static_cast<float>(packed[i]);
    }
    ln.forward(wide.view.slice(1, 0, c), want.view);
    ln.forward(Tensor(packed.data(), DType::bf16, Shape{rows, ld}).slice(1, 0, c), got.view);
    EXPECT_EQ(got.data, want.data) << "c " << c;
  }
  Params p(4);
  const LayerNorm ln(p.scale.view, p.offset.view);
  std::vector<bf16> x(8);
  Buffer x32(Shape{2, 4});
  EXPECT_THROW(ln.forward(x32.view, Tensor(x.data(), DType::bf16, Shape{2, 3})), InternalError);
  Buffer y(Shape{2, 5});
  EXPECT_THROW(ln.forward(Tensor(x.data(), DType::bf16, Shape{2, 4}), y.view), InternalError);
}

// A bf16 output (the input of a bf16 Linear) is the fp32 result rounded once, from f32 or bf16
// input.
TEST(LayerNorm, Bf16OutputIsTheFp32ResultRoundedOnce) {
  const std::int64_t c = 256, rows = 19;
  Params p(c);
  const LayerNorm ln(p.scale.view, p.offset.view);
  Buffer x(Shape{rows, c}), want(Shape{rows, c});
  fill_normal(x.data, 22, 1.5f, -0.5f);
  ln.forward(x.view, want.view);
  std::vector<bf16> got(x.data.size());
  ln.forward(x.view, Tensor(got.data(), DType::bf16, Shape{rows, c}));
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i].bits, bf16(want.data[i]).bits) << "element " << i;
  // bf16 in and out: the widened input's normalisation, rounded.
  std::vector<bf16> packed(x.data.size());
  for (std::size_t i = 0; i < packed.size(); ++i) {
    packed[i] = bf16(x.data[i]);
    x.data[i] = static_cast<float>(packed[i]);
  }
  ln.forward(x.view, want.view);
  ln.forward(Tensor(packed.data(), DType::bf16, Shape{rows, c}),
             Tensor(got.data(), DType::bf16, Shape{rows, c}));
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i].bits, bf16(want.data[i]).bits) << "element " << i;
}

// The AVX-512 table's whole-row LayerNorm gives the bits of the row loop it replaces (widen,
// the table's layer_norm, to_bf16) for every input and output type, strided rows and in place.
// Special rows: zeros and negative zeros (the sign of a zero mean), huge and tiny values, a NaN,
// and constant rows, whose output is the offset: with a subnormal offset, a subnormal bf16.
TEST(LayerNorm, AvxRowsKernelGivesTheBitsOfTheRowLoop) {
  const auto* table = detail::avx512_row_kernels();
  if (table == nullptr) GTEST_SKIP() << "no AVX-512";
  ASSERT_NE(table->layer_norm_rows, nullptr);
  for (std::int64_t c : {16, 32, 64, 128, 256}) {
    ASSERT_TRUE(detail::norm_rows_width(c));
    Params p(c);
    const std::int64_t rows = 41, ld = c + 24;
    std::vector<float> x(static_cast<std::size_t>(rows * ld));
    fill_normal(x, 31, 2.f, 0.5f);
    for (std::int64_t i = 0; i < c; ++i) {
      x[static_cast<std::size_t>(0 * ld + i)] = i % 3 == 0 ? -0.f : 0.f;
      x[static_cast<std::size_t>(1 * ld + i)] = 3.25f;
      x[static_cast<std::size_t>(2 * ld + i)] *= 1e30f;
      x[static_cast<std::size_t>(3 * ld + i)] *= 1e-36f;
      x[static_cast<std::size_t>(5 * ld + i)] = -0.f;
    }
    x[static_cast<std::size_t>(4 * ld + c / 2)] = std::numeric_limits<float>::quiet_NaN();
    std::vector<bf16> x16(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x16[i] = bf16(x[i]);
    std::vector<float> tiny_offset(p.offset.data.size(), 1e-39f);
    for (const float* offset : {p.offset.data.data(), tiny_offset.data()}) {
      for (const bool in16 : {false, true}) {
        // The row loop's result, fp32 and rounded.
        std::vector<float> want(static_cast<std::size_t>(rows * c));
        std::vector<bf16> want16(want.size());
        for (std::int64_t r = 0; r < rows; ++r) {
          float* row = want.data() + r * c;
          for (std::int64_t i = 0; i < c; ++i) {
            const std::size_t at = static_cast<std::size_t>(r * ld + i);
            row[i] = in16 ? static_cast<float>(x16[at]) : x[at];
          }
          table->layer_norm(row, row, p.scale.data.data(), offset, 1e-5f, c);
          table->to_bf16(row, want16.data() + r * c, c);
        }
        const void* src = in16 ? static_cast<const void*>(x16.data()) : x.data();
        std::vector<float> got(want.size(), 7.f);
        table->layer_norm_rows({src, ld, in16, got.data(), c, false}, rows, p.scale.data.data(),
                               offset, 1e-5f, c);
        std::vector<bf16> got16(want.size());
        table->layer_norm_rows({src, ld, in16, got16.data(), c, true}, rows, p.scale.data.data(),
                               offset, 1e-5f, c);
        for (std::size_t i = 0; i < want.size(); ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
              << "c " << c << " bf16 in " << in16 << " element " << i;
          ASSERT_EQ(got16[i].bits, want16[i].bits)
              << "c " << c << " bf16 in " << in16 << " element " << i;
        }
        if (in16) continue;
        // In place over the strided rows.
        std::vector<float> inplace = x;
        table->layer_norm_rows({inplace.data(), ld, false, inplace.data(), ld, false}, rows,
                               p.scale.data.data(), offset, 1e-5f, c);
        for (std::int64_t r = 0; r < rows; ++r) {
          for (std::int64_t i = 0; i < c; ++i) {
            ASSERT_EQ(std::bit_cast<std::uint32_t>(inplace[static_cast<std::size_t>(r * ld + i)]),
                      std::bit_cast<std::uint32_t>(want[static_cast<std::size_t>(r * c + i)]))
                << "in place, c " << c;
          }
        }
      }
    }
  }
  for (std::int64_t c : {0, 8, 48, 96, 384, 512}) EXPECT_FALSE(detail::norm_rows_width(c)) << c;
}

}  // namespace
}  // namespace cpufold::testing
