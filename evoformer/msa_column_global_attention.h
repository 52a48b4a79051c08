// MSA column-wise gated global self-attention (AF2 supplement Alg. 19), the column attention of
// the extra-MSA stack: one query per residue column (the masked mean over sequences), a single
// key / value head shared by all query heads, and a per-sequence gate.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/model_config.h"
#include "memory/buffer_list.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 19
class MsaColumnGlobalAttention {
 public:
  static constexpr float kInf = 1e9f;  // key mask bias inf * (mask - 1), config extra_msa.inf

  // scope: `evoformer/extra_msa_stack/msa_column_global_attention` with its block index; holds
  // query_norm [c_e] and attention/ with query_w [c_e, n_head, c_hidden] (no bias), key_w and
  // value_w [c_e, c_hidden] (no bias, fused here), gating_w [c_e, n_head, c_hidden] + gating_b
  // [n_head, c_hidden], output_w [n_head, c_hidden, c_e] + output_b [c_e].
  MsaColumnGlobalAttention(const ParamScope& scope, std::int64_t c_e, AttentionDims dims);

  // m: [n_seq, n_res, c_e] (unit-stride rows); updated in place: m += GlobalAttention(m).
  // msa_mask: [n_seq, n_res] f32 (any strides): weights of the query mean and key mask bias.
  // The query mean divides by (mask count + 1e-10) as AF2's mask_mean does; OpenFold (the
  // reference) adds its config eps (1e-8) instead. Both round to the same float unless a
  // column is fully masked.
  // detail::chunk_columns(n_res, n_seq, ctx.chunk) residue columns at a time (<= 0: all;
  // about ctx.chunk·n_res rows) are gathered into a contiguous
  // [columns, n_seq, c_e] buffer, normalised, attended and added back.
  void forward(const Tensor& m, const Tensor& msa_mask, const RunContext& ctx) const;

  // Scratch bytes forward() takes from ctx.arena().
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them: the
  // masks held throughout and the buffers of a chunk of nj columns.
  struct Masks {
    Tensor mask;  // msa_mask transposed [n_res, n_seq]: the query mean's weights
    Tensor bias;  // [n_res, n_seq]: the key mask bias
  };
  struct Columns {
    Tensor x;     // the gathered columns [nj, n_seq, c_e], normalised; the update overwrites them
    Tensor mean;  // their masked mean over sequences [nj, c_e]
    Tensor q;     // its query projection [nj, n_head, c]
    Tensor kv;    // keys and values, one head shared by all query heads [nj, n_seq, 2, c]
    Tensor o;     // the attention output [nj, n_head, c]
    Tensor g;     // the gated output per sequence [nj, n_seq, n_head·c]
  };
  BufferList<Masks> mask_buffers(std::int64_t n_seq, std::int64_t n_res) const;
  BufferList<Columns> column_buffers(std::int64_t nj, std::int64_t n_seq) const;

  // AF2 Alg. 19 lines 2-7 for the columns gathered in w.x (mask_t [nj, n_seq] and its key
  // bias): the update overwrites w.x.
  void attend_columns(const Columns& w, const Tensor& mask_t, const Tensor& mask_bias,
                      Arena& arena) const;

  std::int64_t c_e_;
  AttentionDims dims_;
  LayerNorm query_norm_;
  Linear query_;   // [c_e] -> [n_head, c_hidden], applied to the masked mean
  Linear kv_;      // [c_e] -> [2, c_hidden]: key then value
  Linear gating_;  // [c_e] -> [n_head, c_hidden], sigmoid
  Linear output_;  // [n_head, c_hidden] -> [c_e]
};

}  // namespace cpufold
