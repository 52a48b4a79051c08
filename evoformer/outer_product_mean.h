// Outer product mean (AF2 supplement Alg. 10): the MSA's per-residue projections multiplied
// pairwise and averaged over sequences become an update of the pair representation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"
#include "ops/row_view.h"
#include "ops/run_context.h"

namespace cpufold {

// AF2 Alg. 10
class OuterProductMean {
 public:
  // Added to the mask count before dividing (AF2 and OpenFold).
  static constexpr float kEpsilon = 1e-3f;

  // scope: `evoformer/evoformer_iteration/outer_product_mean` (or the extra-MSA stack's) with its
  // block index; holds layer_norm_input [c_m], left_projection / right_projection
  // [c_m, c_hidden] + bias, output_w [c_hidden, c_hidden, c_z] + output_b [c_z].
  OuterProductMean(const ParamScope& scope, std::int64_t c_m, std::int64_t c_z,
                   std::int64_t c_hidden);

  // m: [n_seq, n_res, c_m] (contiguous rows), read only.
  // msa_mask: [n_seq, n_res] f32 (any strides).
  // z: [n_res, n_res, c_z] (contiguous rows); updated in place:
  //   z[i, j] += (Linear_out(Σ_s a[s, i] ⊗ b[s, j]) ) / (Σ_s mask[s, i]·mask[s, j] + 1e-3)
  // with a = mask ⊙ left(LayerNorm(m)), b = mask ⊙ right(LayerNorm(m)); the output bias is added
  // before the division, as in AF2 and OpenFold.
  // Unchunked (ctx.chunk <= 0), the projections a, b ([n_seq, n_res, c_hidden] each) are built
  // for the whole MSA and the outer products of all pairs formed with one GEMM. With a chunk,
  // the outer products are formed for ctx.chunk residues i at a time, the sum over sequences
  // accumulated at most 8·chunk·c_hidden sequences at a time, so the transients are
  // O(chunk·n_res·c_hidden²) whatever n_seq is: b is computed once for a shallower MSA, and
  // recomputed for each slab for a deeper one (c_m/(chunk·c_hidden) of the outer products' work).
  void forward(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
               const RunContext& ctx) const;

  // Scratch bytes forward() takes from ctx.arena().
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;
  // How many times forward() reads all of m: the right projection's pass (once, or once per slab
  // of residues when it is not kept, see sequence_block) and the slabs' left projections.
  std::int64_t msa_reads(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;

 private:
  // forward() without chunking, Alg. 10 lines 1-2: `mask` = msa_mask made contiguous; a and b
  // [n_seq, n_res, c] = mask ⊙ left / right projections of LayerNorm(m).
  void project_masked(const Tensor& m, const Tensor& msa_mask, const Tensor& mask, const Tensor& a,
                      const Tensor& b, Arena& arena) const;
  // forward() with ctx.chunk > 0, over its buffers (Slabs, in the .cpp): the right projection,
  // each slab's left projection, the outer sums and the update.
  void forward_in_slabs(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
                        const RunContext& ctx) const;
  struct Slabs;
  Slabs allocate_slabs(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                       Arena& arena) const;
  void right_rows(const Slabs& w, const Tensor& m, const Tensor& msa_mask, std::int64_t first,
                  std::int64_t end, Arena& arena) const;
  void left_rows(const Slabs& w, const Tensor& slab, std::int64_t i0, std::int64_t ni,
                 std::int64_t s0, std::int64_t sb, Arena& arena) const;
  // scratch_bytes() with a chunk: the Slabs' buffers and the largest of the projections' and
  // the update's scratch; without: the whole MSA's projections and a slab's outer products.
  std::size_t slabs_scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;
  std::size_t slab_projection_bytes(const Slabs& w) const;
  std::size_t slab_update_bytes(const Slabs& w) const;
  std::size_t whole_msa_scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                      std::int64_t chunk) const;
  // Sequences whose right projections a chunked forward() holds at once: all of them (computed
  // once) or a block (recomputed per slab), whichever the .cpp's rule finds cheaper.
  std::int64_t sequence_block(std::int64_t n_seq, std::int64_t slab_rows) const;
  // The outer products run in bf16 when the projections compute in bf16 (the trunk's stacks).
  bool bf16_outer() const { return left_.compute() == DType::bf16; }
  // The projections read LayerNorm(m) as bf16 rows it rounded as it stored them: what the bf16
  // Linears would round it to anyway, without an fp32 copy and a conversion pass.
  bool bf16_norm() const {
    return bf16_outer() && right_.compute() == DType::bf16 && c_m_ <= LayerNorm::kMaxBf16Channels;
  }
  DType norm_type() const { return bf16_norm() ? DType::bf16 : DType::f32; }
  // The reordered outer products the output projection reads: bf16 rows where it computes in
  // bf16 (it would round fp32 rows itself, in a pass of its own).
  DType projected_type() const {
    return output_.compute() == DType::bf16 ? DType::bf16 : DType::f32;
  }
  // Alg. 10 lines 3-4 for residues i0..i0+ni: z[i, j] += Linear_out(outer[i, j]) / (norm[i, j] +
  // eps), outer: [ni·c, n_res·c] (overwritten), norm: [ni, n_res]; p: room for [g, n_res, c²],
  // the rows of residues reordered and projected at a time (g <= ni).
  void add_update(float* outer, const float* norm, const Tensor& p, const RowView& vz,
                  std::int64_t i0, std::int64_t ni, std::int64_t n_res, Arena& arena) const;

  std::int64_t c_m_, c_z_, c_;
  LayerNorm norm_;
  Linear left_;    // [c_m] -> [c]
  Linear right_;   // [c_m] -> [c]
  Linear output_;  // [c, c] -> [c_z]
};

}  // namespace cpufold
