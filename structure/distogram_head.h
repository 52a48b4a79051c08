// The distogram head: Cβ-distance bin logits for every residue pair, from the pair
// representation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Sec. 1.9.8
class DistogramHead {
 public:
  // scope: `distogram_head`, holding half_logits [c_z, n_bins] + bias. AF2: n_bins 64
  // (ModelConfig distogram_bins).
  DistogramHead(const ParamScope& scope, std::int64_t c_z, std::int64_t n_bins);

  // pair: [n_res, n_res, c_z], the Evoformer pair output -> logits: [n_res, n_res, n_bins] =
  // half + halfᵀ with half = Linear(pair), so the bias counts twice, as in AF2 and OpenFold.
  // logits must not overlap pair; its last axis must be contiguous.
  void forward(const Tensor& pair, const Tensor& logits, const RunContext& ctx) const;

  // Scratch bytes forward() takes for n_res residues (the matmul's scratchpad only: the
  // half logits are symmetrised in place).
  std::size_t scratch_bytes(std::int64_t n_res) const;

  std::int64_t n_bins() const { return n_bins_; }

 private:
  std::int64_t c_z_, n_bins_;
  Linear half_logits_;  // [c_z] -> [n_bins]
};

}  // namespace cpufold
