// MSA row-wise gated self-attention with pair bias (AF2 supplement Alg. 7): every MSA row
// (sequence) attends over residues, biased by a per-head projection of the pair representation.
// Used by the Evoformer (c_m) and the extra-MSA stack (c_e) with their own scopes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/gated_attention.h"
#include "io/model_config.h"
#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 7
class MsaRowAttentionWithPairBias {
 public:
  // AF2 and OpenFold mask bias: inf * (mask - 1) with inf = 1e9 (config evoformer_stack.inf).
  static constexpr float kInf = 1e9f;

  // scope: `evoformer/evoformer_iteration/msa_row_attention_with_pair_bias` (or the extra-MSA
  // stack's) with its block index. Holds query_norm [c_m], feat_2d_norm [c_z],
  // feat_2d_weights [c_z, n_head] and attention/ (see GatedAttention).
  MsaRowAttentionWithPairBias(const ParamScope& scope, std::int64_t c_m, std::int64_t c_z,
                              AttentionDims dims);

  // m: [n_seq, n_res, c_m], contiguous rows; updated in place: m += MsaRowAttention(m, z).
  // z: [n_res, n_res, c_z] (rows unit-stride, leading axes collapsible), read only.
  // msa_mask: [n_seq, n_res] f32 (any strides); masked residues get logit bias -1e9 as keys,
  // as in both DeepMind's and OpenFold's code.
  // ctx.chunk MSA rows are normalised, projected and attended at a time (<= 0: all); the pair
  // bias [n_head, n_res, n_res] is built once, normalising ctx.chunk pair rows at a time.
  void forward(const Tensor& m, const Tensor& z, const Tensor& msa_mask,
               const RunContext& ctx) const;

  // Scratch bytes forward() takes from ctx.arena().
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                            DType m_type = DType::f32) const;
  std::int64_t c_m() const { return c_m_; }
  std::int64_t c_z() const { return c_z_; }

 private:
  // forward()'s buffers by phase, each stated once in the list that both allocates and sizes
  // them: the pair bias held throughout; a block of z rows while the bias is built; then the
  // mask bias and a chunk of MSA rows at a time.
  struct PairBias {
    Tensor bias;  // [n_head, n_res, n_res]: LayerNorm(z)·feat_2d_weights, head axis first
  };
  struct PairBlock {
    Tensor normed;     // LayerNorm of ni rows of z [ni, n_res, c_z]
    Tensor projected;  // their per-head projection [ni, n_res, n_head]
  };
  struct MaskBias {
    Tensor bias;  // [n_seq, n_res]: inf·(mask - 1) per key
  };
  struct RowChunk {
    Tensor x;  // LayerNorm of ns MSA rows [ns, n_res, c_m] in the attention's input type
  };
  BufferList<PairBias> pair_bias_buffers(std::int64_t n_res) const;
  BufferList<PairBlock> pair_block_buffers(std::int64_t ni, std::int64_t n_res) const;
  BufferList<MaskBias> mask_bias_buffers(std::int64_t n_seq, std::int64_t n_res) const;
  BufferList<RowChunk> row_chunk_buffers(std::int64_t ns, std::int64_t n_res) const;

  std::int64_t c_m_, c_z_;
  AttentionDims dims_;
  LayerNorm query_norm_;
  LayerNorm feat_2d_norm_;
  Linear feat_2d_;  // [c_z] -> [n_head], no bias; f32 in every precision (the pair bias)
  GatedAttention attention_;
};

}  // namespace cpufold
