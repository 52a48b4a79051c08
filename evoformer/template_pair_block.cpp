#include "evoformer/template_pair_block.h"

#include <algorithm>
#include <string>

namespace cpufold {

TemplatePairBlock::TemplatePairBlock(const ParamScope& block, const ModelConfig& config)
    : TemplatePairBlock(block, config.c_t, config.template_triangle_attention,
                        config.template_c_hidden_tri_mul, config.template_pair_transition_factor) {}

TemplatePairBlock::TemplatePairBlock(const ParamScope& block, std::int64_t c_t,
                                     const AttentionDims& attention, std::int64_t c_hidden_mul,
                                     std::int64_t transition_factor)
    : c_t_(c_t),
      starting_(block / "triangle_attention_starting_node", c_t, attention,
                TriangleAttention::Node::starting),
      ending_(block / "triangle_attention_ending_node", c_t, attention,
              TriangleAttention::Node::ending),
      outgoing_(block / "triangle_multiplication_outgoing", c_t, c_hidden_mul,
                TriangleMultiplication::Direction::outgoing),
      incoming_(block / "triangle_multiplication_incoming", c_t, c_hidden_mul,
                TriangleMultiplication::Direction::incoming),
      transition_(block / "pair_transition", c_t, transition_factor) {}

void TemplatePairBlock::forward(const Tensor& t, const Tensor& pair_mask,
                                const RunContext& ctx) const {
  if (t.rank() == 4) {
    for (std::int64_t k = 0; k < t.dim(0); ++k) forward_one(t.select(0, k), pair_mask, ctx);
  } else if (t.rank() == 3) {
    forward_one(t, pair_mask, ctx);
  } else {
    throw InternalError("TemplatePairBlock: t " + t.describe() + " must be [n_res, n_res, " +
                        std::to_string(c_t_) + "] or [n_templ, n_res, n_res, " +
                        std::to_string(c_t_) + "]");
  }
}

void TemplatePairBlock::forward_one(const Tensor& t, const Tensor& pair_mask,
                                    const RunContext& ctx) const {
  starting_.forward(t, pair_mask, ctx);
  ending_.forward(t, pair_mask, ctx);
  outgoing_.forward(t, pair_mask, ctx);
  incoming_.forward(t, pair_mask, ctx);
  transition_.forward(t, Tensor(), ctx);
}

std::size_t TemplatePairBlock::scratch_bytes(std::int64_t n_res, std::int64_t chunk) const {
  return std::max({starting_.scratch_bytes(n_res, chunk), ending_.scratch_bytes(n_res, chunk),
                   outgoing_.scratch_bytes(n_res), incoming_.scratch_bytes(n_res),
                   transition_.scratch_bytes(n_res, n_res, chunk, /*masked=*/false)});
}

}  // namespace cpufold
