// Confidence metrics from the heads' logits: pLDDT, predicted aligned error and pTM. Free
// functions over caller-provided tensors, so they are testable without weights.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/tensor.h"

namespace cpufold {

// AF2's predicted_aligned_error_head `max_error_bin` (OpenFold's tm.max_bin): the last break
// of the aligned-error histogram, in Å.
inline constexpr float kPaeMaxBin = 31.f;
// Regulariser of pTM's per-frame normalisation (OpenFold compute_tm eps, AF2 1e-8).
inline constexpr double kPtmEps = 1e-8;

// The pLDDT bin centres on [0, 1]: bins of width 1/n_bins, centre i is (i + 0.5) / n_bins.
std::vector<float> plddt_bin_centres(std::int64_t n_bins);

// AF2 Sec. 1.9.6 (on Alg. 29's output): pLDDT = 100 · Σ_b softmax(logits)_b · centre_b, per
// residue. logits: [n_res, n_bins] f32 (rows may be strided) -> plddt: [n_res] f32, any stride.
void compute_plddt(const Tensor& logits, const Tensor& plddt);

// The aligned-error histogram's bin centres in Å, as AF2's _calculate_bin_centers builds them:
// breaks = linspace(0, max_bin, n_bins - 1) with step s; centre_i = break_i + s/2 for the
// n_bins - 1 breaks, plus one more s beyond the last (so 64 bins, max_bin 31 give
// 0.25, 0.75, ..., 31.25, 31.75).
std::vector<float> aligned_error_bin_centres(std::int64_t n_bins, float max_bin = kPaeMaxBin);

// The largest expected error the histogram can express: its last bin centre (31.75 Å for
// AF2's 64 bins). This is AF2's max_predicted_aligned_error.
float max_predicted_aligned_error(std::int64_t n_bins, float max_bin = kPaeMaxBin);

// AF2 Sec. 1.9.7: aligned_confidence_probs = softmax(logits) and the expected aligned
// error PAE_ij = Σ_b p_ijb · centre_b.
// logits: [n_res, n_res, n_bins] f32 -> probs: the same shape (may be the logits tensor itself,
// then softmaxed in place), pae: [n_res, n_res] f32. Returns max_predicted_aligned_error.
float compute_predicted_aligned_error(const Tensor& logits, const Tensor& probs, const Tensor& pae,
                                      float max_bin = kPaeMaxBin);

// AF2 Sec. 1.9.7 (OpenFold compute_tm, AF2 predicted_tm_score): the predicted TM-score from
// aligned-error probabilities. With N = max(Σ w, 19), d0 = 1.24·(N − 15)^(1/3) − 1.8 and the
// per-bin term f_b = 1 / (1 + centre_b² / d0²):
//   per_frame_i = Σ_j (Σ_b p_ijb f_b) · w_i w_j / (eps + Σ_j w_i w_j),
// and pTM is per_frame at the first i maximising per_frame_i · w_i.
// probs: [n_res, n_res, n_bins] f32 (softmax output); residue_weights: [n_res] f32 (AF2 passes
// the sequence mask), or empty for all ones (OpenFold's inference default).
float compute_ptm(const Tensor& probs, const Tensor& residue_weights, float max_bin = kPaeMaxBin);

}  // namespace cpufold
