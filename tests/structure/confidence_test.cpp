// Unit tests of the confidence metrics (pLDDT, PAE, pTM) on distributions whose values are
// known in closed form.
#include "structure/confidence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "memory/error.h"

namespace cpufold {
namespace {

// An owned f32 buffer with a contiguous view.
struct Buf {
  std::vector<float> data;
  Tensor view;
  explicit Buf(const Shape& shape, float fill = 0.f)
      : data(static_cast<std::size_t>(shape.numel()), fill), view(data.data(), DType::f32, shape) {}
};

// AF2's aligned-error bins for 64 bins up to 31 Å: centre_b = 0.5·b + 0.25.
double pae_centre(int b) {
  return 0.5 * b + 0.25;
}

// pTM's per-bin term for an effective length n (before clipping at 19).
double tm_term(double n, int bin) {
  const double d0 = 1.24 * std::cbrt(std::max(n, 19.0) - 15.0) - 1.8;
  const double c = pae_centre(bin);
  return 1.0 / (1.0 + c * c / (d0 * d0));
}

// logits of an [n, n, 64] tensor that put all probability on bin(i, j).
template <typename F>
void one_hot_logits(Buf& logits, std::int64_t n, F bin) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (int b = 0; b < 64; ++b) logits.view.at<float>({i, j, b}) = b == bin(i, j) ? 1e4f : 0.f;
}

TEST(Plddt, BinCentresAreMidpointsOfEqualBins) {
  const std::vector<float> c = plddt_bin_centres(50);
  ASSERT_EQ(c.size(), 50u);
  for (std::size_t i = 0; i < c.size(); ++i)
    EXPECT_FLOAT_EQ(c[i], (static_cast<float>(i) + 0.5f) / 50.f);
}

TEST(Plddt, UniformDistributionGivesFifty) {
  Buf logits(Shape{3, 50}, 0.f), plddt(Shape{3});
  for (std::int64_t b = 0; b < 50; ++b) logits.view.at<float>({1, b}) = 7.5f;  // any constant
  compute_plddt(logits.view, plddt.view);
  for (float v : plddt.data) EXPECT_NEAR(v, 50.f, 1e-4f);
}

TEST(Plddt, OneHotGivesTheBinCentre) {
  Buf logits(Shape{50, 50}, 0.f), plddt(Shape{50});
  for (std::int64_t k = 0; k < 50; ++k) logits.view.at<float>({k, k}) = 1e4f;
  compute_plddt(logits.view, plddt.view);
  for (std::int64_t k = 0; k < 50; ++k) {
    EXPECT_NEAR(plddt.data[static_cast<std::size_t>(k)], 2.0 * static_cast<double>(k) + 1.0, 1e-4);
  }
}

TEST(Plddt, WritesAStridedOutput) {
  Buf logits(Shape{4, 50}, 0.f), out(Shape{4, 2}, -1.f);
  compute_plddt(logits.view, out.view.select(1, 1));
  for (std::int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(out.view.at<float>({i, 1}), 50.f, 1e-4f);
    EXPECT_EQ(out.view.at<float>({i, 0}), -1.f);
  }
}

TEST(Plddt, RejectsMismatchedShapes) {
  Buf logits(Shape{4, 50}), plddt(Shape{5});
  EXPECT_THROW(compute_plddt(logits.view, plddt.view), InternalError);
}

TEST(AlignedError, BinCentresFollowAf2) {
  const std::vector<float> c = aligned_error_bin_centres(64, 31.f);
  ASSERT_EQ(c.size(), 64u);
  for (int b = 0; b < 64; ++b) EXPECT_FLOAT_EQ(c[static_cast<std::size_t>(b)], pae_centre(b));
  EXPECT_FLOAT_EQ(max_predicted_aligned_error(64, 31.f), 31.75f);
}

TEST(AlignedError, OneHotAndUniformDistributions) {
  const std::int64_t n = 5;
  Buf logits(Shape{n, n, 64}), probs(Shape{n, n, 64}), pae(Shape{n, n});
  one_hot_logits(logits, n, [](std::int64_t i, std::int64_t j) { return i == j ? 0 : int(i + j); });
  const float max_pae = compute_predicted_aligned_error(logits.view, probs.view, pae.view);
  EXPECT_FLOAT_EQ(max_pae, 31.75f);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      EXPECT_NEAR(pae.view.at<float>({i, j}), pae_centre(i == j ? 0 : int(i + j)), 1e-5);
      const int hot = i == j ? 0 : int(i + j);
      EXPECT_EQ(probs.view.at<float>({i, j, hot}), 1.f);
    }

  // Uniform: the mean of the centres, (0.5·2016 + 64·0.25) / 64 = 16 Å; in place.
  Buf flat(Shape{n, n, 64}, 3.f);
  compute_predicted_aligned_error(flat.view, flat.view, pae.view);
  for (float v : pae.data) EXPECT_NEAR(v, 16.f, 1e-4f);
  for (float p : flat.data) EXPECT_NEAR(p, 1.f / 64.f, 1e-7f);
}

TEST(Ptm, OneHotAtBinZeroIsAnalytic) {
  for (const std::int64_t n : {std::int64_t{10}, std::int64_t{24}}) {
    SCOPED_TRACE("n_res " + std::to_string(n));
    Buf logits(Shape{n, n, 64}), probs(Shape{n, n, 64}), pae(Shape{n, n});
    one_hot_logits(logits, n, [](std::int64_t, std::int64_t) { return 0; });
    compute_predicted_aligned_error(logits.view, probs.view, pae.view);
    // n = 10 is clipped to 19 residues: d0 = 1.24·4^(1/3) − 1.8.
    const double want = tm_term(static_cast<double>(n), 0);
    EXPECT_NEAR(compute_ptm(probs.view, Tensor()), want, 1e-6);
    Buf ones(Shape{n}, 1.f);
    EXPECT_NEAR(compute_ptm(probs.view, ones.view), want, 1e-6);
  }
}

TEST(Ptm, ResidueWeightsExcludeFramesAndResidues) {
  // Frames 0..2 put residues 0..2 in bins 10, 2, 5 and the masked residue 3 in bin 0; the
  // masked frame 3 is perfect. With the weights the best unmasked frame (1) wins; without,
  // frame 3 does.
  const std::int64_t n = 4;
  const int frame_bin[] = {10, 2, 5, 0};
  Buf logits(Shape{n, n, 64}), probs(Shape{n, n, 64}), pae(Shape{n, n});
  one_hot_logits(logits, n,
                 [&](std::int64_t i, std::int64_t j) { return j == 3 ? 0 : frame_bin[i]; });
  compute_predicted_aligned_error(logits.view, probs.view, pae.view);
  Buf weights(Shape{n}, 1.f);
  weights.data[3] = 0.f;
  EXPECT_NEAR(compute_ptm(probs.view, weights.view), tm_term(3.0, 2) * 3.0 / (3.0 + 1e-8), 1e-6);
  EXPECT_NEAR(compute_ptm(probs.view, Tensor()), tm_term(4.0, 0), 1e-6);
}

TEST(Ptm, RejectsMismatchedWeights) {
  Buf probs(Shape{3, 3, 64}, 1.f / 64.f), weights(Shape{4}, 1.f);
  EXPECT_THROW(compute_ptm(probs.view, weights.view), InternalError);
}

}  // namespace
}  // namespace cpufold
