// The pair half of an Evoformer or extra-MSA block (AF2 Alg. 6 lines 6-10): triangle
// multiplications, triangle attentions and the pair transition, in the reference's order.
#pragma once

#include "evoformer/param_scope.h"
#include "evoformer/run_context.h"
#include "evoformer/transition.h"
#include "evoformer/triangle_attention.h"
#include "evoformer/triangle_multiplication.h"

namespace cpufold {

class PairStackUpdates {
 public:
  // block: the block's scope (e.g. `evoformer/evoformer_iteration` with its index).
  PairStackUpdates(const ParamScope& block, std::int64_t c_z, const AttentionDims& attention,
                   std::int64_t c_hidden_mul, std::int64_t transition_factor);
  // z: [n_res, n_res, c_z], updated in place; pair_mask: [n_res, n_res].
  void forward(const Tensor& z, const Tensor& pair_mask, const RunContext& ctx) const;
  std::size_t scratch_bytes(std::int64_t n_res, std::int64_t chunk) const;

 private:
  TriangleMultiplication outgoing_, incoming_;
  TriangleAttention starting_, ending_;
  Transition transition_;
};

}  // namespace cpufold
