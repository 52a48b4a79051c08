// Outer product mean (AF2 supplement Alg. 10): the MSA's per-residue projections multiplied
// pairwise and averaged over sequences become an update of the pair representation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/buffer_list.h"
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
  // recomputed for each slab for a deeper one (c_m/(chunk·c_hidden) of the outer products' work),
  // unless ctx.activations is set (a spilled plan) and a step of it is small enough to stage
  // (kApartStepBytes): there it is kept whole, written once and read back once per slab, half of
  // m's bytes (c_hidden = c_m/2) and none of the recomputation. With ctx.activations set, the
  // left projection is kept there whenever the right one is made once (kept whole in scratch or
  // there), written in the same pass in tiles of a slab's residues, so that no slab reads
  // columns of m (a run of a few KiB per sequence, the slowest reads of a spill file) and m is
  // read once. Where both paths exist, every bit of z is the same.
  void forward(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
               const RunContext& ctx) const;

  // Scratch bytes forward() takes from ctx.arena(); apart: with ctx.activations set.
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                            bool apart = false) const;
  // Bytes forward() takes from ctx.activations when it is set: the left projection, tiled, with
  // the whole right projection when the chunk is too fine to keep that one in scratch.
  std::size_t apart_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk) const;
  // Bytes forward() moves in the spill tier with m (of m_type) and ctx.activations spilled: its
  // passes over m unless m is at most cache_bytes (FileTier::set_cache_bytes; the caller counts a
  // cached m), then the projections apart: the right one (if apart) written once and read once
  // per slab of residues (written and read once when it is at most cache_bytes), the left one
  // written and read once.
  std::size_t spill_traffic_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                  DType m_type, std::size_t cache_bytes) const;
  // The most forward()'s staged passes (memory/spill_window.h) hold at once with m spilled and
  // ctx.activations set: the slabs' column pass over m beside a row pass over m (the right
  // projection recomputed), or, with the projections apart, the pass that writes them beside its
  // pass over m, then the passes that read them back (the left one's alone when the right one is
  // kept in scratch).
  std::size_t spill_window_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                 DType m_type) const;

 private:
  // forward()'s buffers, each stated once in the list that both allocates and sizes them.
  // Unchunked: the whole MSA's projections held throughout, LayerNorm(m) while they are
  // computed, then a slab's outer products.
  struct Projections {
    Tensor mask;  // msa_mask made contiguous [n_seq, n_res]
    Tensor a;     // mask ⊙ left projection [n_seq, n_res, c]
    Tensor b;     // mask ⊙ right projection [n_seq, n_res, c]
    Tensor a16;   // bf16 outer products only: a and b rounded
    Tensor b16;
  };
  struct Normed {
    Tensor x;  // LayerNorm(m) [n_seq, n_res, c_m] of norm_type()
  };
  struct Products {
    Tensor outer;  // Σ_s a ⊗ b for ni residues i [ni·c, n_res·c]
    Tensor norm;   // Σ_s mask·mask [ni, n_res]
    Tensor p;      // the outer products reordered for the output projection [ni, n_res, c²]
  };
  // Chunked: the sizes and buffers of forward_in_slabs(), allocated once for every slab.
  struct Slabs {
    // The sizes for `op` over an MSA of n_seq x n_res with `chunk`; no buffers yet.
    // spilled: ctx.activations is set, where projections not kept in scratch are kept.
    Slabs(const OuterProductMean& op, std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
          bool spilled);
    // bf16: a rounded (null in fp32).
    bf16* a16() const { return use_bf16 ? a_bf16.data_as<bf16>() : nullptr; }

    std::int64_t n_seq, n_res;
    std::int64_t ni_max;  // residues i per slab
    std::int64_t sb_max;  // sequences per accumulation step: all of them when b is kept
    std::int64_t xb_max;  // sequences per LayerNorm block of the left projection
    std::int64_t rb_max;  // sequences per LayerNorm block of the right projection
    bool use_bf16;
    DType b_type;             // of the right projection the outer products read
    std::size_t b_row_bytes;  // one sequence of it
    bool keep_right;          // the whole right projection held in scratch
    bool apart;  // both projections held whole in ctx.activations (Kept), the left one tiled
    // The left projection held there, tiled: with apart, and beside a kept right projection in
    // a spilled plan, so that no slab reads columns of m (a run of a few residues per sequence).
    bool left_apart;
    std::int64_t tiles;  // slabs of residues
    Tensor x;            // LayerNorm(m[s]) for the right projection
    Tensor b;       // fp32: the right projection of the step's sequences (not when apart); bf16:
                    // one call's rows
    Tensor xa;      // m[s, slab] for the left projection (not left_apart)
    Tensor a;       // the left projection [sb_max, ni_max, c] (not left_apart)
    Tensor a_rows;  // left_apart: the left projection of right_rows' block [rb_max, n_res, c]
    Tensor mb;      // the step's mask rows [sb_max, n_res]
    Tensor outer;   // [ni_max·c, n_res·c]
    Tensor norm;    // [ni_max, n_res]
    Tensor p;       // the reordered outer products, add_update's room
    Tensor a_bf16;  // bf16 only: a and b rounded
    Tensor b_bf16;
  };
  // With apart / left_apart, in ctx.activations: the masked projections of every sequence, bf16
  // when the outer products are.
  struct Kept {
    Tensor b;  // [n_seq, n_res, c] (apart)
    Tensor a;  // [tiles, n_seq, ni_max, c]: tile t holds the residues of slab t (left_apart)
  };
  // add_update's output projection of g residues, where it cannot land in the outer buffer.
  struct Update {
    Tensor u;  // [g, n_res, c_z]
  };
  BufferList<Projections> projection_buffers(std::int64_t n_seq, std::int64_t n_res) const;
  BufferList<Normed> normed_buffers(std::int64_t n_seq, std::int64_t n_res) const;
  BufferList<Products> product_buffers(std::int64_t ni, std::int64_t n_res) const;
  BufferList<Slabs> slab_buffers(const Slabs& w) const;
  BufferList<Kept> kept_buffers(const Slabs& w) const;
  // For g of a slab's ni residues: u unless g = ni and c_z <= c² (then it reuses outer).
  BufferList<Update> update_buffers(std::int64_t g, std::int64_t ni, std::int64_t n_res) const;

  // forward() without chunking, Alg. 10 lines 1-2: `mask` = msa_mask made contiguous; a and b
  // [n_seq, n_res, c] = mask ⊙ left / right projections of LayerNorm(m).
  void project_masked(const Tensor& m, const Tensor& msa_mask, const Tensor& mask, const Tensor& a,
                      const Tensor& b, Arena& arena) const;
  // forward() with ctx.chunk > 0, over its Slabs: the right projection, each slab's left
  // projection, the outer sums and the update.
  void forward_in_slabs(const Tensor& m, const Tensor& msa_mask, const Tensor& z,
                        const RunContext& ctx) const;
  // out: where the rows [first, end) of the masked right projection go (of w.b_type), any
  // tier; their mask rows are w.mb's first (mask_block). left_out (w.left_apart): Kept::a's
  // rows [first, end), where their masked left projection goes.
  void right_rows(const Slabs& w, const Tensor& m, std::int64_t first, std::int64_t end,
                  const Tensor& out, Arena& arena, const Tensor& left_out = Tensor()) const;
  // left_out[t, s, i] = w.a_rows[s, t·ni_max + i] for the block's ns sequences, rounded to
  // left_out's type.
  void tile_left_rows(const Slabs& w, std::int64_t ns, const Tensor& left_out) const;
  // The step's mask rows: w.mb = msa_mask[first, end).
  void mask_block(const Slabs& w, const Tensor& msa_mask, std::int64_t first,
                  std::int64_t end) const;
  void left_rows(const Slabs& w, const Tensor& slab, std::int64_t i0, std::int64_t ni,
                 std::int64_t s0, std::int64_t sb, Arena& arena) const;
  // scratch_bytes() with a chunk: the Slabs' buffers and the largest of the projections' and
  // the update's scratch; without: the whole MSA's projections and a slab's outer products.
  std::size_t slabs_scratch_bytes(std::int64_t n_seq, std::int64_t n_res, std::int64_t chunk,
                                  bool apart) const;
  std::size_t slab_projection_bytes(const Slabs& w) const;
  std::size_t whole_msa_scratch_bytes(std::int64_t n_seq, std::int64_t n_res,
                                      std::int64_t chunk) const;
  // add_update's scratch for a slab of ni residues, p holding `group` of them at a time.
  std::size_t update_bytes(std::int64_t ni, std::int64_t group, std::int64_t n_res) const;
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
