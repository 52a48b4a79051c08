#include "structure/distogram_head.h"

#include "ops/parallel_rows.h"
#include "structure/head_checks.h"

namespace cpufold {

DistogramHead::DistogramHead(const ParamScope& scope, std::int64_t c_z, std::int64_t n_bins)
    : c_z_(c_z), n_bins_(n_bins), half_logits_((scope / "half_logits").linear({c_z, n_bins})) {}

void DistogramHead::forward(const Tensor& pair, const Tensor& logits, const RunContext& ctx) const {
  const std::int64_t n = pair.rank() == 3 ? pair.dim(0) : -1;
  detail::require_head_tensor(pair, {n, n, c_z_}, "DistogramHead", "pair");
  detail::require_head_tensor(logits, {n, n, n_bins_}, "DistogramHead", "distogram logits");
  if (n == 0) return;
  if (logits.stride(2) != 1) {
    throw InternalError("DistogramHead: logits need a contiguous last axis, got strides " +
                        logits.strides().str());
  }
  {
    ArenaScope scope(ctx.arena());
    half_logits_.forward(pair, logits, ctx.arena());
  }

  // In place: logits_ij = logits_ji = half_ij + half_ji; the diagonal doubles.
  float* base = static_cast<float*>(logits.data());
  const std::int64_t s0 = logits.stride(0), s1 = logits.stride(1), bins = n_bins_;
  detail::for_each_row(n, n * bins, [&](std::int64_t i) {
    for (std::int64_t j = i; j < n; ++j) {
      float* ij = base + i * s0 + j * s1;
      float* ji = base + j * s0 + i * s1;
      for (std::int64_t b = 0; b < bins; ++b) {
        const float sum = ij[b] + ji[b];
        ij[b] = sum;
        ji[b] = sum;
      }
    }
  });
  ctx.trace("distogram_head", "logits", logits);
}

std::size_t DistogramHead::scratch_bytes(std::int64_t n_res) const {
  return half_logits_.scratch_bytes(n_res * n_res);
}

}  // namespace cpufold
