#include "structure/confidence.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/parallel_rows.h"
#include "ops/row_view.h"
#include "ops/softmax.h"

namespace cpufold {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InternalError(what);
}

void require_f32(const Tensor& t, const char* what, int rank) {
  require(!t.empty() && t.dtype() == DType::f32 && t.rank() == rank,
          std::string(what) + " must be a rank-" + std::to_string(rank) + " f32 tensor, got " +
              (t.empty() ? std::string("none") : t.describe()));
}

// Validates probs-like [n, n, n_bins] tensors and returns n.
std::int64_t square_bins(const Tensor& t, const char* what) {
  require_f32(t, what, 3);
  require(t.dim(0) == t.dim(1),
          std::string(what) + " must be [n_res, n_res, n_bins], got " + t.describe());
  require(t.dim(2) >= 2, std::string(what) + " needs at least 2 bins, got " + t.describe());
  return t.dim(0);
}

}  // namespace

std::vector<float> plddt_bin_centres(std::int64_t n_bins) {
  std::vector<float> centres(static_cast<std::size_t>(n_bins));
  const double width = 1.0 / static_cast<double>(n_bins);
  for (std::int64_t i = 0; i < n_bins; ++i) {
    centres[static_cast<std::size_t>(i)] =
        static_cast<float>((static_cast<double>(i) + 0.5) * width);
  }
  return centres;
}

void compute_plddt(const Tensor& logits, const Tensor& plddt) {
  require_f32(logits, "pLDDT logits", 2);
  require_f32(plddt, "pLDDT", 1);
  require(plddt.dim(0) == logits.dim(0),
          "pLDDT " + plddt.describe() + " does not match logits " + logits.describe());
  const RowView v = row_view(logits, "pLDDT logits");
  const std::vector<float> centres = plddt_bin_centres(v.cols);
  float* out = static_cast<float*>(plddt.data());
  const std::int64_t out_stride = plddt.stride(0);
  detail::for_each_row(v.rows, v.cols, [&](std::int64_t i) {
    const float* x = v.row(i);
    const float max = *std::max_element(x, x + v.cols);
    double sum = 0.0, expectation = 0.0;
    for (std::int64_t b = 0; b < v.cols; ++b) {
      const double e = std::exp(static_cast<double>(x[b] - max));
      sum += e;
      expectation += e * centres[static_cast<std::size_t>(b)];
    }
    out[i * out_stride] = static_cast<float>(100.0 * expectation / sum);
  });
}

std::vector<float> aligned_error_bin_centres(std::int64_t n_bins, float max_bin) {
  require(n_bins >= 3,
          "the aligned-error histogram needs at least 3 bins, got " + std::to_string(n_bins));
  // linspace(0, max_bin, n_bins - 1): n_bins - 2 steps.
  const double step = static_cast<double>(max_bin) / static_cast<double>(n_bins - 2);
  std::vector<float> centres(static_cast<std::size_t>(n_bins));
  for (std::int64_t i = 0; i < n_bins - 1; ++i) {
    centres[static_cast<std::size_t>(i)] =
        static_cast<float>(static_cast<double>(i) * step + step / 2);
  }
  // One more bin beyond the last break collects everything larger.
  centres[static_cast<std::size_t>(n_bins - 1)] =
      static_cast<float>(static_cast<double>(n_bins - 2) * step + step / 2 + step);
  return centres;
}

float max_predicted_aligned_error(std::int64_t n_bins, float max_bin) {
  return aligned_error_bin_centres(n_bins, max_bin).back();
}

float compute_predicted_aligned_error(const Tensor& logits, const Tensor& probs, const Tensor& pae,
                                      float max_bin) {
  const std::int64_t n = square_bins(logits, "PAE logits");
  square_bins(probs, "aligned_confidence_probs");
  require(probs.shape() == logits.shape(), "aligned_confidence_probs " + probs.describe() +
                                               " does not match logits " + logits.describe());
  require_f32(pae, "predicted_aligned_error", 2);
  require(pae.dim(0) == n && pae.dim(1) == n,
          "predicted_aligned_error " + pae.describe() + " does not match " + logits.describe());

  const RowView src = row_view(logits, "PAE logits");
  const RowView dst = row_view(probs, "aligned_confidence_probs");
  if (src.data != dst.data) {
    detail::for_each_row(dst.rows, dst.cols, [&](std::int64_t r) {
      std::copy(src.row(r), src.row(r) + src.cols, dst.row(r));
    });
  }
  softmax_inplace(probs);

  const std::vector<float> centres = aligned_error_bin_centres(dst.cols, max_bin);
  float* out = static_cast<float*>(pae.data());
  const std::int64_t s0 = pae.stride(0), s1 = pae.stride(1);
  detail::for_each_row(dst.rows, dst.cols, [&](std::int64_t r) {
    const float* p = dst.row(r);
    double expectation = 0.0;
    for (std::int64_t b = 0; b < dst.cols; ++b)
      expectation += p[b] * centres[static_cast<std::size_t>(b)];
    out[(r / n) * s0 + (r % n) * s1] = static_cast<float>(expectation);
  });
  return centres.back();
}

float compute_ptm(const Tensor& probs, const Tensor& residue_weights, float max_bin) {
  const std::int64_t n = square_bins(probs, "aligned_confidence_probs");
  std::vector<double> w(static_cast<std::size_t>(n), 1.0);
  if (!residue_weights.empty()) {
    require_f32(residue_weights, "pTM residue weights", 1);
    require(residue_weights.dim(0) == n, "pTM residue weights " + residue_weights.describe() +
                                             " do not match " + probs.describe());
    const float* src = static_cast<const float*>(residue_weights.data());
    for (std::int64_t i = 0; i < n; ++i)
      w[static_cast<std::size_t>(i)] = src[i * residue_weights.stride(0)];
  }
  if (n == 0) return 0.f;

  const RowView v = row_view(probs, "aligned_confidence_probs");
  double weight_sum = 0.0;
  for (double x : w) weight_sum += x;
  // AF2 clips the length at 19 so that d0 stays positive (d0(19) ≈ 0.17 Å).
  const double clipped_n = std::max(weight_sum, 19.0);
  const double d0 = 1.24 * std::cbrt(clipped_n - 15.0) - 1.8;
  const std::vector<float> centres = aligned_error_bin_centres(v.cols, max_bin);
  std::vector<double> tm_per_bin(centres.size());
  for (std::size_t b = 0; b < centres.size(); ++b) {
    const double c = centres[b];
    tm_per_bin[b] = 1.0 / (1.0 + (c * c) / (d0 * d0));
  }

  // per_frame_i = Σ_j term_ij · w_i w_j / (eps + w_i Σ_j w_j): frame i aligns all residues j.
  std::vector<double> per_frame(static_cast<std::size_t>(n));
  detail::for_each_row(n, n * v.cols, [&](std::int64_t i) {
    const double wi = w[static_cast<std::size_t>(i)];
    double numerator = 0.0;
    for (std::int64_t j = 0; j < n; ++j) {
      const float* p = v.row(i * n + j);
      double term = 0.0;
      for (std::int64_t b = 0; b < v.cols; ++b)
        term += p[b] * tm_per_bin[static_cast<std::size_t>(b)];
      numerator += term * wi * w[static_cast<std::size_t>(j)];
    }
    per_frame[static_cast<std::size_t>(i)] = numerator / (kPtmEps + wi * weight_sum);
  });

  // The first frame with the largest weighted score, as AF2's argmax picks it.
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (per_frame[k] * w[k] >
        per_frame[static_cast<std::size_t>(best)] * w[static_cast<std::size_t>(best)]) {
      best = i;
    }
  }
  return static_cast<float>(per_frame[static_cast<std::size_t>(best)]);
}

}  // namespace cpufold
