// The pair updates shared by the Evoformer and extra-MSA blocks (AF2 Alg. 6 lines 6-10) and
// the template pair stack (AF2 Alg. 16): triangle multiplications, triangle attentions and
// the pair transition. The Evoformer multiplies first; the template stack attends first
// (AF2's and OpenFold's monomer order, tri_mul_first = False).
#pragma once

#include "evoformer/transition.h"
#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

class PairStackUpdates {
 public:
  enum class Order { multiplication_first, attention_first };

  // block: the block's scope (e.g. `evoformer/evoformer_iteration` with its index).
  PairStackUpdates(const ParamScope& block, std::int64_t c_z, const AttentionDims& attention,
                   std::int64_t c_hidden_mul, std::int64_t transition_factor,
                   Order order = Order::multiplication_first);
  // z: [n_res, n_res, c_z], updated in place; pair_mask: [n_res, n_res]. The transition gets
  // no mask, as in AF2 and in OpenFold with _mask_trans off (the reference's setting).
  void forward(const Tensor& z, const Tensor& pair_mask, const RunContext& ctx) const;
  // edge_apart: the triangle multiplications' right edges are in ctx.activations (their
  // edge_bytes), not counted here.
  std::size_t scratch_bytes(std::int64_t n_res, std::int64_t chunk, bool edge_apart = false) const;
  std::size_t edge_bytes(std::int64_t n_res) const;

 private:
  Order order_;
  TriangleMultiplication outgoing_, incoming_;
  TriangleAttention starting_, ending_;
  Transition transition_;
};

}  // namespace cpufold
