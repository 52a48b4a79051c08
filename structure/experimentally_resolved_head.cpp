#include "structure/experimentally_resolved_head.h"

#include "structure/head_checks.h"

namespace cpufold {

ExperimentallyResolvedHead::ExperimentallyResolvedHead(const ParamScope& scope, std::int64_t c_s,
                                                       std::int64_t n_atoms)
    : c_s_(c_s), n_atoms_(n_atoms), logits_((scope / "logits").linear({c_s, n_atoms})) {}

void ExperimentallyResolvedHead::forward(const Tensor& single, const Tensor& logits,
                                         const RunContext& ctx) const {
  const std::int64_t n_res = single.rank() == 2 ? single.dim(0) : -1;
  detail::require_head_tensor(single, {n_res, c_s_}, "ExperimentallyResolvedHead", "single");
  detail::require_head_tensor(logits, {n_res, n_atoms_}, "ExperimentallyResolvedHead",
                              "experimentally_resolved logits");
  if (n_res == 0) return;
  {
    ArenaScope scope(ctx.arena());
    logits_.forward(single, logits, ctx.arena());
  }
  ctx.trace("experimentally_resolved_head", "logits", logits);
}

std::size_t ExperimentallyResolvedHead::scratch_bytes(std::int64_t n_res) const {
  return logits_.scratch_bytes(n_res);
}

}  // namespace cpufold
