#include "structure/masked_msa_head.h"

#include "structure/head_checks.h"

namespace cpufold {

MaskedMsaHead::MaskedMsaHead(const ParamScope& scope, std::int64_t c_m, std::int64_t n_classes)
    : c_m_(c_m), n_classes_(n_classes), logits_((scope / "logits").linear({c_m, n_classes})) {}

void MaskedMsaHead::forward(const Tensor& msa, const Tensor& logits, const RunContext& ctx) const {
  const bool rank3 = msa.rank() == 3;
  const std::int64_t n_seq = rank3 ? msa.dim(0) : -1, n_res = rank3 ? msa.dim(1) : -1;
  detail::require_head_tensor(msa, {n_seq, n_res, c_m_}, "MaskedMsaHead", "msa");
  detail::require_head_tensor(logits, {n_seq, n_res, n_classes_}, "MaskedMsaHead",
                              "masked_msa logits");
  if (logits.numel() == 0) return;
  {
    ArenaScope scope(ctx.arena());
    logits_.forward(msa, logits, ctx.arena());
  }
  ctx.trace("masked_msa_head", "logits", logits);
}

std::size_t MaskedMsaHead::scratch_bytes(std::int64_t n_seq, std::int64_t n_res) const {
  return logits_.scratch_bytes(n_seq * n_res);
}

}  // namespace cpufold
