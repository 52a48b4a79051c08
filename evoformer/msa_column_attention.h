// MSA column-wise gated self-attention (AF2 supplement Alg. 8): every residue column of the MSA
// attends over the sequences, with no pair bias.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/gated_attention.h"
#include "evoformer/transition.h"
#include "io/model_config.h"
#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 8
class MsaColumnAttention {
 public:
  static constexpr float kInf = 1e9f;  // mask bias inf * (mask - 1), config evoformer_stack.inf

  // scope: `evoformer/evoformer_iteration/msa_column_attention` with its block index; holds
  // query_norm [c_m] and attention/ (see GatedAttention).
  MsaColumnAttention(const ParamScope& scope, std::int64_t c_m, AttentionDims dims);

  // m: [n_seq, n_res, c_m] (unit-stride rows); updated in place: m += MsaColumnAttention(m).
  // msa_mask: [n_seq, n_res] f32 (any strides); masked sequences get logit bias -1e9 as keys.
  // detail::chunk_columns(n_res, n_seq, ctx.chunk) residue columns at a time (<= 0: all;
  // a power of two making at most about ctx.chunk·n_res rows) are gathered into a contiguous
  // [columns, n_seq, c_m] buffer, normalised, attended and added back. With `then` (the block's
  // MSA transition, Alg. 9, which works on each MSA entry alone) the updated columns are gathered
  // again and go through it before they are written back: a spilled m is read and written once
  // for both modules instead of twice.
  void forward(const Tensor& m, const Tensor& msa_mask, const RunContext& ctx,
               const Transition* then = nullptr) const;

  // Scratch bytes forward() takes from ctx.arena() (with `then` as forward's). m_type, as
  // MsaColumnGlobalAttention's, changes nothing: the transition runs on the gathered f32 columns.
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                            const Transition* then = nullptr, DType m_type = DType::f32) const;
  // The most forward()'s column pass over a spilled m holds at once (memory/spill_window.h).
  std::size_t spill_window_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                 DType m_type) const;
  // Bytes forward() moves from and to a spilled m: a read and a write.
  std::size_t spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res, DType m_type) const;

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them: the
  // mask bias held throughout and a chunk of nj columns at a time.
  struct MaskBias {
    Tensor bias;  // [n_res, n_seq]: column j's key bias over the sequences
  };
  struct ColumnChunk {
    Tensor x;   // the gathered columns [nj, n_seq, c_m]; the update overwrites them
    Tensor xn;  // bf16 attention only: their bf16 normalised copy
  };
  BufferList<MaskBias> mask_bias_buffers(std::int64_t n_seq, std::int64_t n_res) const;
  BufferList<ColumnChunk> column_chunk_buffers(std::int64_t nj, std::int64_t n_seq) const;

  std::int64_t c_m_;
  LayerNorm query_norm_;
  GatedAttention attention_;
};

}  // namespace cpufold
