// One block of the template pair stack: the pair updates of an Evoformer block applied to a
// template's pair activations (supplement section 1.7.1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/pair_stack_updates.h"
#include "io/model_config.h"
#include "memory/tensor.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 16 (lines 2-6, one iteration of the stack; the final LayerNorm is the embedder's)
//   t += TriangleAttentionStartingNode(t);  t += TriangleAttentionEndingNode(t)
//   t += TriangleMultiplicationOutgoing(t); t += TriangleMultiplicationIncoming(t)
//   t += PairTransition(t)
// The attention-first order is AF2's and OpenFold's for the monomer models (OpenFold's
// tri_mul_first = False); the Evoformer block multiplies first.
class TemplatePairBlock {
 public:
  // block: `evoformer/template_embedding/single_template_embedding/template_pair_stack/
  // __layer_stack_no_state` with the block index and block count (ModelConfig::
  // n_template_blocks); widths from ModelConfig (c_t, template_triangle_attention,
  // template_c_hidden_tri_mul, template_pair_transition_factor).
  TemplatePairBlock(const ParamScope& block, const ModelConfig& config);
  TemplatePairBlock(const ParamScope& block, std::int64_t c_t, const AttentionDims& attention,
                    std::int64_t c_hidden_mul, std::int64_t transition_factor);

  // t: one template [n_res, n_res, c_t], or all of them [n_templ, n_res, n_res, c_t], each
  // template processed on its own; updated in place.
  // pair_mask: [n_res, n_res], the Evoformer's pair mask (seq_mask ⊗ seq_mask), which is what
  // AF2 and OpenFold hand the template pair stack for every template (not the templates'
  // pseudo-beta masks). The triangle modules apply it; the transition gets no mask, as in AF2
  // and in OpenFold with _mask_trans off (the reference's setting).
  void forward(const Tensor& t, const Tensor& pair_mask, const RunContext& ctx) const;

  // Scratch bytes forward() takes (the largest of the five modules': they run one at a time).
  // edge_apart: as PairStackUpdates::scratch_bytes.
  std::size_t scratch_bytes(std::int64_t n_res, std::int64_t chunk, bool edge_apart = false) const;
  std::size_t edge_bytes(std::int64_t n_res) const { return updates_.edge_bytes(n_res); }

 private:
  std::int64_t c_t_;
  PairStackUpdates updates_;  // attention first
};

}  // namespace cpufold
