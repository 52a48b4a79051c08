// The pLDDT head: per-residue lDDT-Cα bin logits from the structure module's final single
// representation, and the pLDDT score they imply.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 29
class PredictedLddtHead {
 public:
  // scope: `predicted_lddt_head`, holding input_layer_norm [c_s], act_0 [c_s, c_hidden],
  // act_1 [c_hidden, c_hidden], logits [c_hidden, n_bins] (each with a bias).
  // AF2: c_s 384, c_hidden 128, n_bins 50 (ModelConfig c_s, c_lddt_hidden, lddt_bins).
  PredictedLddtHead(const ParamScope& scope, std::int64_t c_s, std::int64_t c_hidden,
                    std::int64_t n_bins);

  // single: [n_res, c_s], the structure module's final single (OpenFold's sm/single, AF2's
  // structure_module representation) -> logits: [n_res, n_bins] = Linear(relu(Linear(relu(
  // Linear(LayerNorm(single)))))); plddt: [n_res] = compute_plddt(logits), or empty to skip.
  void forward(const Tensor& single, const Tensor& logits, const Tensor& plddt,
               const RunContext& ctx) const;

  // Scratch bytes forward() takes for n_res residues.
  std::size_t scratch_bytes(std::int64_t n_res) const;

  std::int64_t n_bins() const { return n_bins_; }

 private:
  struct Buffers {
    Tensor normed;  // LayerNorm(single) [n, c_s]
    Tensor h0, h1;  // the two hidden layers [n, c_hidden]
  };
  BufferList<Buffers> buffers(std::int64_t n) const;

  std::int64_t c_s_, c_hidden_, n_bins_;
  LayerNorm norm_;
  Linear act_0_;   // [c_s] -> [c_hidden], relu fused
  Linear act_1_;   // [c_hidden] -> [c_hidden], relu fused
  Linear logits_;  // [c_hidden] -> [n_bins]
};

}  // namespace cpufold
