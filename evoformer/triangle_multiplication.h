// Triangular multiplicative update of the pair representation ("outgoing" and "incoming"
// edges), supplement section 1.6.5.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/buffer_list.h"
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
  // Transients come from ctx.arena() (scratch_bytes(n_res, ctx.chunk)), except the c·n² right
  // edge, which a spilled plan places with its activations (ctx.activations, when set; the
  // edge's pages are then read back slab by slab). ctx.chunk is the slab:
  // rows of the pair matrix (outgoing) or columns (incoming) whose products are formed and
  // written back at once, clamped to [16, 64] (64 when unchunked) and raised to n_res/16 (at most
  // 256) at large n_res. The result does not depend on the chunk; the triangle products are bitwise
  // independent of the thread count; the projections (oneDNN matmul) may differ in the last bits
  // between thread counts.
  void forward(const Tensor& z, const Tensor& pair_mask, const RunContext& ctx) const;

  // Scratch bytes forward() takes for n_res residues, this chunk and the current OpenMP thread
  // count: the right edge over all pairs channel-major (c_hidden·n_res² floats, the bulk, which
  // no chunk reduces; not counted when `edge_apart`, for a context with ctx.activations), the
  // left edge of one slab (c_hidden·rows·n_res), one slab product per thread and fixed-size
  // pair blocks for the projections.
  std::size_t scratch_bytes(std::int64_t n_res, std::int64_t chunk, bool edge_apart = false) const;
  // The right edge alone: what forward() takes from ctx.activations when it is set.
  std::size_t edge_bytes(std::int64_t n_res) const;

  std::int64_t c_z() const { return c_z_; }
  std::int64_t c_hidden() const { return c_; }
  Direction direction() const { return direction_; }

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them: the
  // right edge (from ctx.activation_arena()) and the slab and block buffers (from ctx.arena()).
  // The edges are f32, or bf16 with bf16 compute.
  struct WholeEdge {
    Tensor edge;  // the right edge over all n² pairs, channel-major [c, cs] (cs: channel_stride)
  };
  struct SlabBuffers {
    Tensor edge;             // the left edge of one slab, channel-major [c, ss]
    Tensor slab_products;    // bf16 only: the slab's products [c, ss]
    Tensor thread_products;  // fp32 only: one slab-sized product per thread [threads, ss]
    Tensor x;                // a block of LayerNorm(z) rows [block, c_z]
    Tensor proj;             // [proj | gate] rows [block, 2·c], later LayerNorm(p) rows
    Tensor gate;             // the output gate [block, c_z]
    Tensor zc;               // z rows gathered from a column slab [block, c_z]
  };
  BufferList<WholeEdge> whole_edge_buffers(std::int64_t n) const;
  BufferList<SlabBuffers> slab_buffers(std::int64_t n, std::int64_t rows) const;

  // A channel-major edge buffer (channels `stride` apart) in f32 or bf16: a view of its tensor.
  struct Edge {
    float* f32 = nullptr;
    bf16* b16 = nullptr;
    std::int64_t stride = 0;
    static Edge of(const Tensor& edge);
  };
  // The edge buffers and pair-block buffers of one forward() call.
  struct Workspace;
  // The pairs of z one slab covers (its rows or its columns).
  struct Slab;
  // Alg. 11/12 lines 1-2 for the pairs of `slab`: sigmoid(LayerNorm(z)·W_g + b_g) ⊙
  // (LayerNorm(z)·W_p + b_p) ⊙ mask, block by block, stored channel-major in `edge`.
  void project_edge(const Linear& projection, const Slab& slab, const Edge& edge,
                    const Workspace& w, Arena& arena) const;
  // Line 4 for the slab's pairs: one GEMM per channel into Workspace::slab_products.
  void triangle_products(const Slab& slab, const Workspace& w) const;
  // Lines 3 and 5: z += sigmoid(LayerNorm(z)·W_g + b_g) ⊙ (LayerNorm(p)·W_o + b_o) on the
  // slab's pairs, block by block.
  void gated_output(const Slab& slab, const Workspace& w, Arena& arena) const;
  // Pairs q0..q0+nr of `slab` as rows of c_z: a view of z for a row slab, gathered into the
  // block buffer for a column slab (store_pairs writes them back).
  Tensor load_pairs(const Slab& slab, std::int64_t q0, std::int64_t nr, const Workspace& w) const;
  void store_pairs(const Slab& slab, std::int64_t q0, const Tensor& pairs,
                   const Workspace& w) const;

  std::int64_t c_z_, c_;
  Direction direction_;
  LayerNorm layer_norm_input_;
  // [proj | gate] of AF2's `right` edge (over all pairs) and of its `left` edge (per slab),
  // c_z -> 2·c_hidden each.
  Linear whole_projection_;
  Linear slab_projection_;
  Linear gating_linear_;  // c_z -> c_z, sigmoid fused
  LayerNorm center_layer_norm_;
  Linear output_projection_;  // c_hidden -> c_z
};

}  // namespace cpufold
