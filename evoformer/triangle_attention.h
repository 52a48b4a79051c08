// Triangular gated self-attention of the pair representation around the starting node (along
// rows) and the ending node (along columns), supplement section 1.6.6.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/gated_attention.h"
#include "io/model_config.h"
#include "memory/buffer_list.h"
#include "memory/tensor.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/row_view.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 13 (starting node) and Alg. 14 (ending node)
// Starting node, for every row i of the pair representation:
//   x = LayerNorm(z);  bias[h, j, k] = x[j, k]·w_h  (feat_2d_weights, no bias)
//   z[i, j] += W_o · (sigmoid(W_g x[i, j] + b_g) ⊙ Σ_k softmax_k(q[i,j]·k[i,k]/√d + bias[h,j,k]
//              + inf·(mask[i,k] - 1))·v[i,k]) + b_o,   q, k, v = W_{q,k,v} x[i, ·] (no bias)
// The ending node is the same on the transposed pair representation (i and j swapped), done
// here through transposed views rather than a transposed copy of z.
class TriangleAttention {
 public:
  enum class Node { starting, ending };

  // scope: the module, e.g. ParamScope(store, "evoformer/evoformer_iteration", block, n_blocks)
  //   / "triangle_attention_starting_node"; c_z: pair width; dims: heads and per-head width
  //   (ModelConfig::triangle_attention); inf: the mask bias magnitude (AF2 and OpenFold: 1e9).
  TriangleAttention(const ParamScope& scope, std::int64_t c_z, const AttentionDims& dims, Node node,
                    float inf = 1e9f);

  // z: [n_res, n_res, c_z] (rows of c_z must collapse to one stride, e.g. contiguous), updated
  // in place: z += TriangleAttention(z). pair_mask: [n_res, n_res], 1 for valid pairs.
  // Rows (starting) or columns (ending) are processed ctx.chunk at a time (<= 0: all at once);
  // the result does not depend on the chunk size beyond fp32 rounding.
  void forward(const Tensor& z, const Tensor& pair_mask, const RunContext& ctx) const;

  // Scratch bytes forward() takes with the current OpenMP thread count: the Biases it holds
  // throughout plus the larger of the bias pass (a BiasBlock and the projection's scratch) and
  // the attention pass (a Slice of `chunk` rows and GatedAttention's scratch).
  std::size_t scratch_bytes(std::int64_t n_res, std::int64_t chunk) const;

  Node node() const { return node_; }

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them.
  struct Biases {
    Tensor mask;  // [n, n]: inf·(mask - 1) per (batch row, key)
    Tensor pair;  // [n_head, n, n]: the triangle bias
  };
  struct BiasBlock {
    Tensor x;          // a block of normed z rows [rows·n, c_z]
    Tensor projected;  // their bias projection [rows·n, n_head]
  };
  struct Slice {
    Tensor x;   // the slice's normed rows (ending node: its gathered columns) [rows, n, c_z]
    Tensor xn;  // ending node in bf16 only: the normed copy of x
  };
  BufferList<Biases> bias_buffers(std::int64_t n) const;
  BufferList<BiasBlock> bias_block_buffers(std::int64_t n) const;
  BufferList<Slice> slice_buffers(std::int64_t rows, std::int64_t n) const;

  // The phases of forward() on z's rows (zr) and the mask bias: the triangle bias
  // [n_head, n, n] from the whole normed z, then the gated attention slice by slice.
  void triangle_bias(const Tensor& z_rows, std::int64_t n, const Tensor& bias, Arena& arena) const;
  void attend(const Tensor& z, const RowView& zr, const Tensor& bias, const Tensor& mask_bias,
              std::int64_t chunk, Arena& arena, GemmCache* gemm) const;

  std::int64_t c_z_, n_head_;
  Node node_;
  float inf_;
  LayerNorm query_norm_;
  Linear triangle_bias_;      // feat_2d_weights: c_z -> n_head, no bias; f32 in every precision
  GatedAttention attention_;  // the `attention` scope: q, k, v, gate, output projection
};

}  // namespace cpufold
