#include "evoformer/template_pair_block.h"

#include <string>

namespace cpufold {

TemplatePairBlock::TemplatePairBlock(const ParamScope& block, const ModelConfig& config)
    : TemplatePairBlock(block, config.c_t, config.template_triangle_attention,
                        config.template_c_hidden_tri_mul, config.template_pair_transition_factor) {}

TemplatePairBlock::TemplatePairBlock(const ParamScope& block, std::int64_t c_t,
                                     const AttentionDims& attention, std::int64_t c_hidden_mul,
                                     std::int64_t transition_factor)
    : c_t_(c_t),
      updates_(block, c_t, attention, c_hidden_mul, transition_factor,
               PairStackUpdates::Order::attention_first) {}

void TemplatePairBlock::forward(const Tensor& t, const Tensor& pair_mask,
                                const RunContext& ctx) const {
  if (t.rank() == 4) {
    for (std::int64_t k = 0; k < t.dim(0); ++k) updates_.forward(t.select(0, k), pair_mask, ctx);
  } else if (t.rank() == 3) {
    updates_.forward(t, pair_mask, ctx);
  } else {
    throw InternalError("TemplatePairBlock: t " + t.describe() + " must be [n_res, n_res, " +
                        std::to_string(c_t_) + "] or [n_templ, n_res, n_res, " +
                        std::to_string(c_t_) + "]");
  }
}

std::size_t TemplatePairBlock::scratch_bytes(std::int64_t n_res, std::int64_t chunk,
                                             bool edge_apart) const {
  return updates_.scratch_bytes(n_res, chunk, edge_apart);
}

}  // namespace cpufold
