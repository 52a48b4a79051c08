// Triangular multiplicative update of the pair representation ("outgoing" and "incoming"
// edges), supplement section 1.6.5.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/tensor.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 11 (outgoing) and Alg. 12 (incoming)
//   x = LayerNorm(z)
//   a = sigmoid(x·W_ag + b_ag) ⊙ (x·W_ap + b_ap) ⊙ mask,  b likewise
//   outgoing: p[i, j, c] = Σ_k a[i, k, c]·b[j, k, c]
//   incoming: p[i, j, c] = Σ_k a[k, i, c]·b[k, j, c]
//   z += sigmoid(x·W_g + b_g) ⊙ (LayerNorm(p)·W_o + b_o)
// In AF2's parameter names `a` is `left_*` for outgoing edges and `right_*` for incoming edges:
// DeepMind's incoming einsum is 'kjc,kic->ijc' over (left, right), so the right projection
// supplies the i index (OpenFold's importer swaps the names to get the same thing). The reference
// numbers confirm it.
class TriangleMultiplication {
 public:
  enum class Direction { outgoing, incoming };

  // scope: the module, e.g. ParamScope(store, "evoformer/evoformer_iteration", block, n_blocks)
  //   / "triangle_multiplication_outgoing"; c_z: pair width; c_hidden: projection width
  //   (ModelConfig::c_hidden_tri_mul).
  TriangleMultiplication(const ParamScope& scope, std::int64_t c_z, std::int64_t c_hidden,
                         Direction direction);

  // z: [n_res, n_res, c_z] (rows of c_z must collapse to one stride, e.g. contiguous), updated
  // in place: z += TriangleMultiplication(z). pair_mask: [n_res, n_res], 1 for valid pairs.
  // Transients come from ctx.arena() (scratch_bytes(n_res)); ctx.chunk is not used. The
  // triangle products are bitwise independent of the thread count; the projections (oneDNN
  // matmul) may differ in the last bits between thread counts.
  void forward(const Tensor& z, const Tensor& pair_mask, const RunContext& ctx) const;

  // Scratch bytes forward() takes for n_res residues with the current OpenMP thread count:
  // a and b channel-major (2·c_hidden·n_res² floats, the bulk), one n_res² product per thread
  // and fixed-size row blocks for the projections (LayerNorm(z) is recomputed per block rather
  // than kept).
  std::size_t scratch_bytes(std::int64_t n_res) const;

  std::int64_t c_z() const { return c_z_; }
  std::int64_t c_hidden() const { return c_; }
  Direction direction() const { return direction_; }

 private:
  // The channel-major a and b and the row-block buffers of one forward() call.
  struct Workspace;
  // Alg. 11/12 lines 1-2: a, b = sigmoid(LayerNorm(z)·W_g + b_g) ⊙ (LayerNorm(z)·W_p + b_p) ⊙
  // mask, block by block, stored channel-major in w.
  void project_edges(const Tensor& z_rows, const Workspace& w, Arena& arena) const;
  // Line 4: the triangle products, one n_res x n_res GEMM per channel, each replacing a_ch.
  void triangle_products(const Workspace& w, Arena& arena) const;
  // Lines 3 and 5: z += sigmoid(LayerNorm(z)·W_g + b_g) ⊙ (LayerNorm(p)·W_o + b_o), block by block.
  void gated_output(const Tensor& z_rows, const Workspace& w, Arena& arena) const;

  std::int64_t c_z_, c_;
  Direction direction_;
  LayerNorm layer_norm_input_;
  // [a_proj | b_proj | a_gate | b_gate]: c_z -> 4·c_hidden, one GEMM.
  Linear projections_;
  Linear gating_linear_;  // c_z -> c_z, sigmoid fused
  LayerNorm center_layer_norm_;
  Linear output_projection_;  // c_hidden -> c_z
};

}  // namespace cpufold
