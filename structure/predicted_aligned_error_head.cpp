#include "structure/predicted_aligned_error_head.h"

#include <algorithm>

#include "structure/head_checks.h"

namespace cpufold {
namespace {
constexpr const char* kHead = "PredictedAlignedErrorHead";
}  // namespace

PredictedAlignedErrorHead::PredictedAlignedErrorHead(const ParamScope& scope, std::int64_t c_z,
                                                     std::int64_t n_bins, float max_bin)
    : c_z_(c_z),
      n_bins_(n_bins),
      max_bin_(max_bin),
      logits_((scope / "logits").linear({c_z, n_bins})) {}

AlignedErrorScores PredictedAlignedErrorHead::forward(const Tensor& pair,
                                                      const Tensor& residue_weights,
                                                      const Tensor& logits, const Tensor& probs,
                                                      const Tensor& pae,
                                                      const RunContext& ctx) const {
  const std::int64_t n = pair.rank() == 3 ? pair.dim(0) : -1;
  detail::require_head_tensor(pair, {n, n, c_z_}, kHead, "pair");
  detail::require_head_tensor(logits, {n, n, n_bins_}, kHead, "tm logits");
  if (!probs.empty()) {
    detail::require_head_tensor(probs, {n, n, n_bins_}, kHead, "aligned_confidence_probs");
  }
  detail::require_head_tensor(pae, {n, n}, kHead, "predicted_aligned_error");
  if (!residue_weights.empty()) {
    detail::require_head_tensor(residue_weights, {n}, kHead, "residue weights");
  }

  Arena& arena = ctx.arena();
  ArenaScope scope(arena);
  AlignedErrorScores scores;
  scores.max_predicted_aligned_error = max_predicted_aligned_error(n_bins_, max_bin_);
  if (n == 0) return scores;
  logits_.forward(pair, logits, arena);
  const Tensor p = probs.empty() ? buffers(n, false).allocate(arena).probs : probs;
  compute_predicted_aligned_error(logits, p, pae, max_bin_);
  scores.ptm = compute_ptm(p, residue_weights, max_bin_);
  ctx.trace("predicted_aligned_error_head", "logits", logits);
  ctx.trace("predicted_aligned_error_head", "predicted_aligned_error", pae);
  return scores;
}

BufferList<PredictedAlignedErrorHead::Buffers> PredictedAlignedErrorHead::buffers(
    std::int64_t n, bool probs_given) const {
  return BufferList<Buffers>{}.add_if(!probs_given,
                                      {&Buffers::probs, DType::f32, Shape{n, n, n_bins_}});
}

std::size_t PredictedAlignedErrorHead::scratch_bytes(std::int64_t n_res, bool probs_given) const {
  // The matmul's scratchpad is released before probs is taken.
  return std::max(logits_.scratch_bytes(n_res * n_res), buffers(n_res, probs_given).bytes());
}

}  // namespace cpufold
