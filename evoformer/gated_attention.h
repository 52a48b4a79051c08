// GatedAttention: the gated multi-head self-attention inside AF2's MSA row / column attention
// and triangle attention (supplement Alg. 7, 8, 13, 14, lines "q, k, v = LinearNoBias(x)",
// "g = sigmoid(Linear(x))", "o = g ⊙ Σ a v", "out = Linear(o)"). Haiku's `attention` scope.
// The caller normalises the input, builds the biases, and chunks the batch rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/model_config.h"
#include "memory/arena.h"
#include "memory/buffer_list.h"
#include "memory/tensor.h"
#include "ops/attention.h"
#include "ops/linear.h"
#include "ops/param_scope.h"

namespace cpufold {

// AF2 Alg. 7 / 8 / 13 / 14 (attention core with gating and output projection)
class GatedAttention {
 public:
  // scope: the `.../attention` scope holding query_w, key_w, value_w [c_in, n_head, c_hidden]
  // (no bias), gating_w [c_in, n_head, c_hidden] + gating_b [n_head, c_hidden], output_w
  // [n_head, c_hidden, c_out] + output_b [c_out]. q, k and v are fused into one projection.
  GatedAttention(const ParamScope& scope, std::int64_t c_in, AttentionDims dims,
                 std::int64_t c_out);

  // x: [n_batch, n_seq, c_in] (already normalised, contiguous) of input_type()
  // dst: [n_batch, n_seq, c_out] whose leading axes collapse to rows (a row slice of the MSA, or
  //      a contiguous buffer); dst += out when `accumulate`, else dst = out. dst may alias x
  //      (x is no longer read when the output projection runs). dst may be bf16 (a bf16 stored
  //      MSA) for a residual add with bf16 compute: the sum is rounded once.
  // bias.pair: [n_head, n_seq, n_seq] or empty; bias.mask: [n_batch, n_seq] or empty.
  // Every batch row is attended at once: the caller bounds n_batch (its chunk).
  // gemm: the attention's tile primitives (RunContext::gemm; null: made for the call).
  void forward(const Tensor& x, const AttentionBias& bias, const Tensor& dst, bool accumulate,
               Arena& scratch, GemmCache* gemm) const;

  // Scratch bytes forward() takes for n_batch x n_seq rows into a dst of type `dst`.
  std::size_t scratch_bytes(std::int64_t n_batch, std::int64_t n_seq, bool accumulate,
                            DType dst = DType::f32) const;

  // The type x must have: bf16 when the projections compute in bf16 (the caller's LayerNorm
  // then writes it rounded once, and both projections read it in place), else f32.
  DType input_type() const;

  std::int64_t c_in() const { return c_in_; }
  std::int64_t c_out() const { return c_out_; }
  const AttentionDims& dims() const { return dims_; }

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them.
  struct Buffers {
    Tensor qkv;  // [n_batch, n_seq, 3, n_head, c] in the projection's type: q, k, v side by side
    Tensor o;    // [n_batch, n_seq, n_head, c]: the attention output
    Tensor g;    // [n_batch, n_seq, n_head·c] of gate_type(): the gated output
  };
  BufferList<Buffers> buffers(std::int64_t n_batch, std::int64_t n_seq) const;

  // The type of the gated attention output g: bf16 when both the gating and the output
  // projection compute in bf16, else f32.
  DType gate_type() const;

  std::int64_t c_in_, c_out_;
  AttentionDims dims_;
  Linear qkv_;     // [c_in] -> [3, n_head, c_hidden]
  Linear gating_;  // [c_in] -> [n_head, c_hidden], sigmoid, times the attention output
  Linear output_;  // [n_head, c_hidden] -> [c_out]
};

}  // namespace cpufold
